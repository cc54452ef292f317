"""The elementwise math of ops.transcendental, ops.binary_math and ops.aliases
against torch, for what an op-table row cannot say: gradients where torch
defines them at the edges (hypot and atan2 at the origin, xlogy at x = 0,
fmax/fmin at ties and NaN, nan_to_num where it replaces, sinc at 0, the
inverse hyperbolics at their domain's ends), second-order and forward-mode
derivatives, nan_to_num's per-dtype defaults, softmax's dtype= on integer
inputs, the in-place twins, and that an alias is the op it names."""

import math

import numpy as np
import pytest
import torch

import chapters.autodiff as ad
from chapters.torchcheck import assert_close, to_torch

from .parity import FLOAT64, check_both, raises_like_torch

NAN, INF = math.nan, math.inf

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

#: name -> (fn(lib, F, *tensors), float64 arrays at the edges)
EDGES = {
    "hypot-origin": (lambda L, F, a, b: L.hypot(a, b),
                     [np.array([0.0, -0.0, 3.0, 0.0]), np.array([0.0, 0.0, -4.0, 2.0])]),
    "atan2-origin-signed-zeros": (lambda L, F, a, b: L.atan2(a, b), [
        np.array([0.0, -0.0, 0.0, -0.0, 1.0, 0.0]), np.array([0.0, 0.0, -0.0, -0.0, 0.0, -1.0])]),
    "xlogy-x-zero": (lambda L, F, a, b: L.xlogy(a, b), [
        np.array([0.0, 0.0, 0.0, 0.0, 2.0, -1.0]), np.array([0.0, -1.0, 2.0, NAN, 0.0, 3.0])]),
    "fmax-ties-and-nan": (lambda L, F, a, b: L.fmax(a, b), [
        np.array([1.0, NAN, 2.0, NAN, 3.0, -0.0]), np.array([1.0, 2.0, NAN, NAN, 1.0, 0.0])]),
    "fmin-ties-and-nan": (lambda L, F, a, b: L.fmin(a, b), [
        np.array([1.0, NAN, 2.0, NAN, 3.0, -0.0]), np.array([1.0, 2.0, NAN, NAN, 1.0, 0.0])]),
    "logaddexp-infinities": (lambda L, F, a, b: L.logaddexp(a, b), [
        np.array([-INF, INF, 0.0, 1.0, -INF]), np.array([-INF, INF, -INF, 1.0, 2.0])]),
    "float_power-zero-base": (lambda L, F, a, b: L.float_power(a, b), [
        np.array([0.0, 0.0, 2.0, -1.0]), np.array([0.0, 2.0, 0.5, 2.0])]),
    "nan_to_num-replaced": (lambda L, F, a: L.nan_to_num(a, posinf=7.0),
                            [np.array([NAN, INF, -INF, 1.5, -0.0])]),
    "sinc-zero": (lambda L, F, a: L.sinc(a), [np.array([0.0, -0.0, 1.0, 0.5, 1e-9])]),
    "acosh-one": (lambda L, F, a: L.acosh(a), [np.array([1.0, 0.5, 2.0, INF])]),
    "atanh-ends": (lambda L, F, a: L.atanh(a), [np.array([1.0, -1.0, 0.5, 2.0])]),
    "asinh-infinities": (lambda L, F, a: L.asinh(a), [np.array([-INF, INF, 0.0])]),
    "reciprocal-zeros": (lambda L, F, a: L.reciprocal(a), [np.array([0.0, -0.0, INF, 2.0])]),
    "exp2-infinities": (lambda L, F, a: L.exp2(a), [np.array([-INF, INF, 0.0])]),
    "square-nan": (lambda L, F, a: L.square(a), [np.array([NAN, INF, -0.0])]),
}


@pytest.mark.parametrize("name", sorted(EDGES))
def test_values_and_gradients_at_the_edges_match_torch(name):
    fn, arrays = EDGES[name]
    check_both(fn, arrays, FLOAT64)


@pytest.mark.parametrize("name", sorted(EDGES))
def test_float32_edges_match_torch(name):
    fn, arrays = EDGES[name]
    check_both(fn, [a.astype(np.float32) for a in arrays])


#: smooth binary ops whose rules are written with tensor ops: second order works
SECOND_ORDER = {
    "atan2": lambda L, a, b: L.atan2(a, b),
    "hypot": lambda L, a, b: L.hypot(a, b),
    "xlogy": lambda L, a, b: L.xlogy(a, b),
    "logaddexp": lambda L, a, b: L.logaddexp(a, b),
    "sinc": lambda L, a, b: L.sinc(a) * b,
    "acosh": lambda L, a, b: L.acosh(a.abs() + 1.5) * b,
    "reciprocal": lambda L, a, b: L.reciprocal(a) * b,
}


def _second_order(lib, fn, arrays):
    """d/d(a, b) of sum(grad_a f + grad_b f), through create_graph."""
    if lib is torch:
        xs = [to_torch(a, requires_grad=True) for a in arrays]
        grad = torch.autograd.grad
    else:
        xs = [ad.tensor(a, requires_grad=True) for a in arrays]
        grad = ad.grad
    first = grad(fn(lib, *xs).sum(), xs, create_graph=True)
    return grad(sum(g.sum() for g in first), xs)


@pytest.mark.parametrize("name", sorted(SECOND_ORDER))
def test_second_order_gradients_match_torch(name):
    rng = np.random.default_rng(1)
    arrays = [rng.uniform(0.5, 2.0, (3, 4)), rng.uniform(-2.0, 2.0, (3, 4))]
    ours = _second_order(ad, SECOND_ORDER[name], arrays)
    theirs = _second_order(torch, SECOND_ORDER[name], arrays)
    for o, t in zip(ours, theirs, strict=True):
        assert_close(o, t, rtol=1e-10, atol=1e-12, what=f"{name} second order")


#: forward mode: (fn(lib, *tensors), domains of the inputs)
FORWARD = {
    "atan2": (lambda L, a, b: L.atan2(a, b), ((-2.0, 2.0), (-2.0, 2.0))),
    "hypot": (lambda L, a, b: L.hypot(a, b), ((-2.0, 2.0), (-2.0, 2.0))),
    "fmax": (lambda L, a, b: L.fmax(a, b), ((-2.0, 2.0), (-2.0, 2.0))),
    "fmin": (lambda L, a, b: L.fmin(a, b), ((-2.0, 2.0), (-2.0, 2.0))),
    "xlogy": (lambda L, a, b: L.xlogy(a, b), ((-2.0, 2.0), (0.5, 2.0))),
    "logaddexp": (lambda L, a, b: L.logaddexp(a, b), ((-2.0, 2.0), (-2.0, 2.0))),
    "sinh": (lambda L, a: L.sinh(a), ((-2.0, 2.0),)),
    "atanh": (lambda L, a: L.atanh(a), ((-0.9, 0.9),)),
    "sinc": (lambda L, a: L.sinc(a), ((-2.0, 2.0),)),
    "exp2": (lambda L, a: L.exp2(a), ((-2.0, 2.0),)),
}


@pytest.mark.parametrize("name", sorted(FORWARD))
def test_forward_mode_matches_torch(name):
    fn, domains = FORWARD[name]
    rng = np.random.default_rng(2)
    primals = [rng.uniform(*d, (3, 4)) for d in domains]
    primals[0][0, 0] = 0.0  # sinc's removable point, atan2/hypot away from the origin
    tangents = [rng.standard_normal((3, 4)) for _ in domains]
    out, tangent = ad.jvp(lambda *xs: fn(ad, *xs), primals, tangents)
    t_out, t_tangent = torch.func.jvp(lambda *xs: fn(torch, *xs),
                                      tuple(torch.from_numpy(p) for p in primals),
                                      tuple(torch.from_numpy(t) for t in tangents))
    assert_close(out, t_out, rtol=1e-12, atol=1e-12, what="primal out")
    assert_close(tangent, t_tangent, rtol=1e-10, atol=1e-12, what="tangent out")


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_nan_to_num_defaults_are_the_dtype_limits(dtype):
    values = np.array([NAN, INF, -INF, 2.0])
    ours = ad.nan_to_num(ad.tensor(values).to(getattr(ad, dtype)))
    theirs = torch.nan_to_num(torch.from_numpy(values).to(getattr(torch, dtype)))
    assert_close(ours, theirs, rtol=0.0, atol=0.0)


@pytest.mark.parametrize("op", ["softmax", "log_softmax"])
def test_softmax_dtype_casts_integer_input_first(op):
    ints = np.array([[1, 2, 3], [0, -1, 4]])
    ours = getattr(ad.tensor(ints), op)(1, dtype=ad.float32)
    theirs = getattr(torch.from_numpy(ints), op)(1, dtype=torch.float32)
    assert_close(ours, theirs, rtol=1e-6, atol=1e-7)
    raises_like_torch(lambda L, x: getattr(x, op)(1), [ints])
    raises_like_torch(lambda L, x: getattr(x, op)(1, dtype=L.int64), [ints.astype(np.float32)])


def test_softmax_dtype_gradient_comes_back_in_the_input_dtype():
    x = np.array([[0.5, -1.0, 2.0]], np.float32)
    both = check_both(lambda L, F, a: a.softmax(-1, dtype=L.float64), [x])
    assert both.engine_grads[0].dtype == ad.float32


@pytest.mark.parametrize("twin, args", [
    ("sinh_", ()), ("reciprocal_", ()), ("logical_not_", ()), ("nan_to_num_", ()),
    ("atan2_", (np.array([1.0, -2.0, 0.5, 0.0]),)), ("hypot_", (np.array([3.0, 0.0, 1.0, 2.0]),)),
    ("logical_and_", (np.array([0.0, 2.0, NAN, 1.0]),)),
    ("xlogy_", (np.array([2.0, 0.5, 1.0, 3.0]),)),
    ("divide_", (np.array([2.0, -4.0, 0.5, 3.0]),)),
])
def test_inplace_twins_write_torch_values_into_x(twin, args):
    values = np.array([0.5, -1.5, INF, NAN])
    ours, theirs = ad.tensor(values), torch.from_numpy(values.copy())
    assert getattr(ours, twin)(*(ad.tensor(a) for a in args)) is ours
    getattr(theirs, twin)(*(torch.from_numpy(a) for a in args))
    assert_close(ours, theirs, rtol=1e-12, atol=0.0)


@pytest.mark.parametrize("twin", ["sinh_", "reciprocal_", "exp2_", "atan2_", "hypot_"])
def test_inplace_twin_refuses_a_float_result_in_an_int_tensor(twin):
    ints = np.array([1, 2, 3])
    other = () if twin in ("sinh_", "reciprocal_", "exp2_") else (ints,)
    raises_like_torch(lambda L, x, *o: getattr(x, twin)(*o), [ints, *other])


def test_float_power_inplace_needs_a_float64_tensor_like_torch():
    """torch's float_power_ writes its float64 result only into a float64 x."""
    x, y = np.array([0.5, 2.0, 3.0]), np.array([2.0, 0.5, -1.0])
    ours, theirs = ad.tensor(x), torch.from_numpy(x.copy())
    assert ours.float_power_(ad.tensor(y)) is ours
    assert_close(ours, theirs.float_power_(torch.from_numpy(y)), rtol=1e-12, atol=0.0)
    raises_like_torch(lambda L, a, b: a.float_power_(b), [x.astype(np.float32), y])


@pytest.mark.parametrize("call", [
    lambda L, x: L.fmax(x, 2.0), lambda L, x: L.atan2(x, 1), lambda L, x: L.hypot(x, 1.0),
    lambda L, x: L.logical_or(x, 0), lambda L, x: L.logaddexp(x, 0.5),
    lambda L, x: L.true_divide(x, x, rounding_mode="trunc"),
    lambda L, x: L.nan_to_num(x, posinf="big"),
], ids=["fmax", "atan2", "hypot", "logical_or", "logaddexp", "true_divide", "nan_to_num"])
def test_wrong_argument_types_raise_type_error_like_torch(call):
    error = raises_like_torch(call, [np.ones(3, np.float32)])
    assert isinstance(error, TypeError)


@pytest.mark.parametrize("op", ["hypot", "logaddexp"])
def test_integer_inputs_are_refused_where_torch_has_no_kernel(op):
    error = raises_like_torch(lambda L, a: getattr(L, op)(a, a), [np.arange(3)])
    assert isinstance(error, NotImplementedError)


@pytest.mark.parametrize("alias, name", [
    ("multiply", "mul"), ("subtract", "sub"), ("divide", "div"), ("absolute", "abs"),
    ("negative", "neg"), ("greater", "gt"), ("less", "lt"), ("greater_equal", "ge"),
    ("less_equal", "le"), ("not_equal", "ne"), ("arctan2", "atan2"), ("arcsinh", "asinh"),
    ("arccosh", "acosh"), ("arctanh", "atanh"),
])
def test_an_alias_method_is_the_op_it_names(alias, name):
    assert getattr(ad.Tensor, alias) is getattr(ad.Tensor, name)
