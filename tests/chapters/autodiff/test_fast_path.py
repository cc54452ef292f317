"""The dispatch core's shortcuts for the common case give what the general path gives.

The shortcuts: same-dtype binary ops skip type promotion, float32 inputs go
straight to the kernel (float16/bfloat16 ones are computed in float32), Python
ints next to a floating tensor become a weak scalar at once, backward sums two
gradients of one input with the core's add, grad_fn names of ops with one name
are cached, float32 erf is two fitted polynomials and GELU's Phi one tanh. Each test compares the
shortcut with the general path or with torch, and checks that the modes
(autocast hook, observers, create_graph) still see what they saw before."""

import operator

import numpy as np
import pytest
import torch
from scipy import special

import chapters.autodiff as ad
from chapters.autodiff import dtypes
from chapters.autodiff.core import operands, scalar
from chapters.autodiff.dispatch import set_autocast_hook
from chapters.autodiff.modes import OpObserver, observing
from chapters.autodiff.ops import erf_kernel
from chapters.autodiff.tensor import apply
from chapters.torchcheck import assert_close

RNG = np.random.default_rng(0)
PAIRS = [(np.float32, np.float32), (np.float32, np.float64), (np.int64, np.float32),
         (np.float16, np.float16), (np.int32, np.int64), (np.bool_, np.float32)]


@pytest.mark.parametrize("left, right", PAIRS)
@pytest.mark.parametrize("op", ["add", "mul", "sub"])
def test_binary_ops_equal_the_promoting_path(op, left, right):
    a = ad.tensor(RNG.integers(0, 3, 6).astype(left))
    b = ad.tensor(RNG.integers(1, 4, 6).astype(right))
    if op == "sub" and np.bool_ in (left, right):
        pytest.skip("torch refuses subtraction of bools")
    fn = getattr(operator, op)
    shortcut = fn(a, b)
    general = apply(op, operands(a, b))
    expected = fn(torch.from_numpy(a.data), torch.from_numpy(b.data))
    assert shortcut.dtype == general.dtype == np.dtype(str(expected.dtype).split(".")[1])
    assert np.array_equal(shortcut.data, general.data)
    assert np.array_equal(shortcut.data, expected.numpy())


@pytest.mark.parametrize("dtype", dtypes.FLOATING)
@pytest.mark.parametrize("value", [0, 3, -7, 2**40, 2**62, 1.5])
def test_python_numbers_become_the_tensors_floating_dtype(value, dtype):
    weak = scalar(value, dtype)
    assert weak.dtype == dtype
    assert weak == np.asarray(value).astype(dtype)  # the general path, written out


@pytest.mark.parametrize("value", [3, -7, 2**40])
def test_int_scalar_times_float_tensor_matches_torch(value):
    x = RNG.standard_normal(5).astype(np.float32)
    ours = ad.tensor(x) * value
    theirs = torch.from_numpy(x) * value
    assert ours.dtype == np.float32 and theirs.dtype == torch.float32
    assert np.array_equal(ours.data, theirs.numpy())


def test_low_precision_inputs_are_still_computed_in_float32():
    x = RNG.standard_normal(4096).astype(np.float16) * 50
    ours = ad.tensor(x).sum()
    theirs = torch.from_numpy(x).sum()
    assert ours.dtype == np.float16
    assert ours.item() == theirs.item() == float(np.float16(x.astype(np.float32).sum()))


def test_the_autocast_hook_still_sees_same_dtype_products():
    seen = []

    def to_float64(name, args):
        seen.append(name)
        return tuple(a.double() if isinstance(a, ad.Tensor) else a for a in args)

    a, b = ad.tensor(np.ones(3, np.float32)), ad.tensor(np.ones(3, np.float32))
    set_autocast_hook(to_float64)
    try:
        out = a * b
    finally:
        set_autocast_hook(None)
    assert seen == ["mul"] and out.dtype == np.float64


class _Names(OpObserver):
    def __init__(self):
        self.ops = []

    def op_ran(self, op, inputs, attrs, result):
        self.ops.append(op)


def _used_twice(lib, x, a, b):
    return (x * a + x * b).sum()


def test_summed_gradients_equal_the_sum_of_both_paths():
    arrays = [RNG.standard_normal(8).astype(np.float32) for _ in range(3)]
    x, a, b = (ad.tensor(v, requires_grad=True) for v in arrays)
    _used_twice(ad, x, a, b).backward()
    tx, ta, tb = (torch.tensor(v, requires_grad=True) for v in arrays)
    _used_twice(torch, tx, ta, tb).backward()
    assert x.grad.dtype == np.float32
    assert_close(x.grad, tx.grad, rtol=1e-6, atol=1e-7, what="x's gradient")
    assert np.array_equal(x.grad.data, arrays[1] + arrays[2])  # a + b, each path's term


def test_observers_see_the_gradient_sum_in_backward():
    x, a, b = (ad.tensor(RNG.standard_normal(4).astype(np.float32), requires_grad=True)
               for _ in range(3))
    loss = _used_twice(ad, x, a, b)
    names = _Names()
    with observing(names):
        loss.backward()
    assert "add" in names.ops, names.ops


def test_create_graph_records_the_gradient_sum_as_torch_does():
    values = [RNG.standard_normal(4).astype(np.float32) for _ in range(3)]
    x, a, b = (ad.tensor(v, requires_grad=True) for v in values)
    (gx,) = ad.grad(_used_twice(ad, x, a, b), (x,), create_graph=True)
    tx, ta, tb = (torch.tensor(v, requires_grad=True) for v in values)
    (tgx,) = torch.autograd.grad(_used_twice(torch, tx, ta, tb), (tx,), create_graph=True)
    assert gx.grad_fn is not None and gx.grad_fn.name() == tgx.grad_fn.name()
    gx.sum().backward()
    tgx.sum().backward()
    assert_close(a.grad, ta.grad, rtol=1e-6, atol=1e-7, what="second-order gradient")


def test_grad_fn_names_that_depend_on_the_call_still_vary():
    x = ad.tensor(np.ones((2, 3), np.float32), requires_grad=True)
    t = torch.ones(2, 3, requires_grad=True)
    for _ in range(2):  # the second round reads the names' cache
        assert x.sum().grad_fn.name() == t.sum().grad_fn.name()
        assert x.sum(0).grad_fn.name() == t.sum(0).grad_fn.name()
        assert (x * 2).grad_fn.name() == (t * 2).grad_fn.name()


@pytest.mark.parametrize("needs", [(True, True), (True, False), (False, True)])
def test_needs_input_grad_follows_the_edges(needs):
    a, b = (ad.tensor(np.ones(3, np.float32), requires_grad=n) for n in needs)
    node = (a * b).grad_fn
    assert node.needs_input_grad == needs
    assert node.needs_input_grad == tuple(n is not None for n, _ in node.next_functions)


# ------------------------------------------------------------------------- erf

def _ulps(approx: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """Distance in units of float32's last place at the exact value."""
    return np.abs(approx.astype(np.float64) - exact) / np.spacing(
        np.abs(exact).astype(np.float32)).astype(np.float64)


def test_float32_erf_is_accurate_to_float32_rounding():
    x = np.concatenate([np.linspace(-5, 5, 200_001), RNG.standard_normal(100_000),
                        np.geomspace(1e-38, 4, 10_000)]).astype(np.float32)
    exact = special.erf(x.astype(np.float64))
    ours = _ulps(erf_kernel.erf(x), exact)
    theirs = _ulps(torch.erf(torch.from_numpy(x)).numpy(), exact)
    assert ours.max() <= 1.5, f"max {ours.max():.2f} ulp at x = {x[ours.argmax()]}"
    assert ours.mean() <= theirs.mean() + 0.05, (ours.mean(), theirs.mean())


def test_float32_erf_edge_values_and_shapes():
    edges = np.array([0, -0.0, 1, -1, 4, -4, 30, -30, np.inf, -np.inf, np.nan], np.float32)
    out = erf_kernel.erf(edges)
    exact = special.erf(edges.astype(np.float64))
    assert np.array_equal(np.isnan(out), np.isnan(exact))
    assert (_ulps(out, exact)[~np.isnan(exact)] <= 1).all()
    assert list(out[[0, 1, 6, 7, 8, 9]]) == [0, 0, 1, -1, 1, -1] and np.signbit(out[1])
    for shape in [(), (0,), (3, 4, 5)]:
        x = RNG.standard_normal(shape).astype(np.float32)
        assert erf_kernel.erf(x).shape == shape and erf_kernel.erf(x).dtype == np.float32


def test_other_dtypes_keep_scipys_erf():
    x = RNG.standard_normal(100)
    assert np.array_equal(erf_kernel.erf(x), special.erf(x))


def test_exact_gelu_is_as_accurate_as_with_scipys_erf():
    x = (RNG.standard_normal((8, 32, 256)) * 3).astype(np.float32)
    ours = ad.functional.gelu(ad.tensor(x)).data
    exact = 0.5 * x * (1 + special.erf(x.astype(np.float64) / np.sqrt(2)))
    with_scipy = 0.5 * x * (1 + special.erf(x / np.float32(np.sqrt(2))))  # the float32 formula
    assert ours.dtype == np.float32
    assert np.abs(ours - exact).max() <= np.abs(with_scipy - exact).max() + 1e-7
    theirs = torch.nn.functional.gelu(torch.from_numpy(x))
    assert_close(ours, theirs, rtol=1e-6, atol=2e-6, what="gelu")  # torch errs by 1.1e-6


# ------------------------------------------------------------------ normal_cdf

def test_float32_normal_cdf_is_within_float32s_absolute_accuracy():
    x = np.concatenate([np.linspace(-8, 8, 400_001), RNG.standard_normal(100_000) * 3,
                        np.geomspace(1e-38, 8, 10_000), -np.geomspace(1e-38, 8, 10_000)])
    x = x.astype(np.float32)
    exact = special.ndtr(x.astype(np.float64))
    error = np.abs(erf_kernel.normal_cdf(x) - exact)
    assert error.max() <= 1e-7, f"{error.max():.3g} at x = {x[error.argmax()]}"
    gelu_error = np.abs(x * erf_kernel.normal_cdf(x) - x.astype(np.float64) * exact)
    assert gelu_error.max() <= 5e-7, f"{gelu_error.max():.3g} at x = {x[gelu_error.argmax()]}"


def test_normal_cdf_edge_values_shapes_and_dtypes():
    edges = np.array([0, -0.0, 1e-40, 30, -30, np.inf, -np.inf, np.nan], np.float32)
    out = erf_kernel.normal_cdf(edges)
    assert list(out[:7]) == [0.5, 0.5, 0.5, 1, 0, 1, 0] and np.isnan(out[7])
    for shape in [(), (0,), (3, 4, 5)]:
        x = RNG.standard_normal(shape).astype(np.float32)
        assert erf_kernel.normal_cdf(x).shape == shape
        assert erf_kernel.normal_cdf(x).dtype == np.float32
    x = RNG.standard_normal(100)
    assert np.array_equal(erf_kernel.normal_cdf(x), special.ndtr(x))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_normal_cdf_op_and_its_derivative_match_torchs_ndtr(dtype):
    x = (RNG.standard_normal(200) * 3).astype(dtype)
    ours = ad.tensor(x, requires_grad=True)
    theirs = torch.tensor(x, requires_grad=True)
    out, expected = apply("normal_cdf", (ours,)), torch.special.ndtr(theirs)
    # each float32 result may be up to one rounding off the true value, torch's too:
    # against float64 truth within 1e-7, against torch within two float32 steps at 1
    assert np.abs(out.data - special.ndtr(x.astype(np.float64))).max() <= 1e-7
    assert_close(out.data, expected, rtol=0, atol=2.4e-7, what="Phi vs torch")
    cotangent = RNG.standard_normal(200).astype(dtype)
    out.backward(ad.tensor(cotangent))
    expected.backward(torch.tensor(cotangent))
    assert_close(ours.grad.data, theirs.grad, rtol=1e-6, atol=1e-7, what="dPhi/dx")
