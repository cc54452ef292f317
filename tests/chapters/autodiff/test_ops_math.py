"""Norms, matrix products and in-place twins against torch, for what an op-table
row cannot say: norm gradients at the zero vector, at zero elements and at
ties of the inf-norms; every matrix-norm order and linalg.norm's dispatch;
addmm/addmv with beta = 0 ignoring NaN in input; the forward-mode rule of
the p-norm; and every in-place twin (same values as torch, x itself
returned, its version bumped, views writing through, the refusal on a leaf
that requires grad)."""

import math

import numpy as np
import pytest
import torch

import chapters.autodiff as ad
from chapters.amp import autocast
from chapters.autodiff import inplace
from chapters.torchcheck import assert_close

from .parity import FLOAT64, Tol, check_both, raises_like_torch

INF = math.inf
#: float64 throughout; powers with fractional exponents lose a few more digits
NORMS = Tol(1e-12, 1e-12, 1e-9, 1e-12)

# ----------------------------------------------------------------- vector norms

VECTORS = {
    "zero-vector": np.zeros(4),
    "zero-elements": np.array([0.0, 1.0, -2.0, 0.0]),
    "ties": np.array([2.0, -2.0, 1.0, -1.0]),
    "all-tied": np.array([3.0, -3.0, 3.0]),
    "generic": np.array([0.5, -1.5, 2.5, -3.0]),
}
ORDS = [2, 1, INF, -INF, 3, 1.5, 0.5, -1, 0]


@pytest.mark.parametrize("ord", ORDS, ids=str)
@pytest.mark.parametrize("name", sorted(VECTORS))
def test_vector_norm_value_and_gradient_match_torch(name, ord):
    """At the zero vector and zero elements torch's gradient is 0 (never NaN);
    at ties of the inf-norms it is split evenly; p = 0 has no gradient."""
    check_both(lambda lib, F, x: lib.linalg.vector_norm(x, ord), [VECTORS[name]], NORMS)


def test_two_norm_of_the_zero_vector_has_zero_gradient():
    """The composition sqrt(sum(x^2)) would give 0 * inf = NaN here."""
    x = ad.zeros(3, dtype=ad.float64, requires_grad=True)
    ad.linalg.vector_norm(x).backward()
    assert np.array_equal(x.grad.data, np.zeros(3))


@pytest.mark.parametrize("ord", [2, 1, INF, 3, 0.5], ids=str)
def test_vector_norm_over_dims_with_zero_rows(ord):
    """One row all zeros, one row with a tie: each row's gradient on its own."""
    x = np.array([[0.0, 0.0, 0.0], [2.0, -2.0, 1.0], [1.0, 0.0, -3.0]])
    check_both(lambda lib, F, x: lib.linalg.vector_norm(x, ord, dim=1, keepdim=True), [x],
               NORMS)
    check_both(lambda lib, F, x: x.norm(ord, dim=(0, 1)), [x], NORMS)


@pytest.mark.parametrize("ord", [2, 3, 0.5, 1], ids=str)
def test_vector_norm_forward_mode_matches_torch_func_jvp(ord):
    x = np.array([[0.0, 1.0, -2.0], [0.5, 0.0, 3.0]])
    t = np.array([[1.0, -1.0, 0.5], [2.0, 1.0, -1.0]])
    _, ours = ad.jvp(lambda x: ad.linalg.vector_norm(x, ord, dim=1), (x,), (t,))
    _, theirs = torch.func.jvp(lambda x: torch.linalg.vector_norm(x, ord, dim=1),
                               (torch.from_numpy(x),), (torch.from_numpy(t),))
    assert_close(ours, theirs, rtol=1e-12, atol=1e-12, what="tangent")


_SMOOTH = np.array([[0.5, -1.5, 2.0], [1.0, 3.0, -0.25]])  # no zeros: the norm is smooth


@pytest.mark.parametrize("ord", [2, 3, 1.5, 0.5, -1], ids=str)
def test_vector_norm_gradient_passes_gradcheck(ord):
    x = ad.tensor(_SMOOTH, requires_grad=True)
    assert ad.gradcheck(lambda x: ad.linalg.vector_norm(x, ord, dim=1), (x,))


@pytest.mark.parametrize("ord", [2, 3, 0.5], ids=str)
def test_vector_norm_second_derivative_matches_torch(ord):
    """The rule is made of differentiable ops, so a second backward works:
    the Hessian times a vector, against torch's."""
    v = np.array([[1.0, -2.0, 0.5], [0.25, 1.0, -1.0]])
    x = ad.tensor(_SMOOTH, requires_grad=True)
    (g,) = ad.grad(ad.linalg.vector_norm(x, ord), x, create_graph=True)
    (ours,) = ad.grad((g * ad.tensor(v)).sum(), x)
    xt = torch.tensor(_SMOOTH, requires_grad=True)
    (gt,) = torch.autograd.grad(torch.linalg.vector_norm(xt, ord), xt, create_graph=True)
    (theirs,) = torch.autograd.grad((gt * torch.from_numpy(v)).sum(), xt)
    assert_close(ours, theirs, rtol=1e-10, atol=1e-12, what="Hessian-vector product")


# ----------------------------------------------------------------- matrix norms

MATRICES = {
    "zero": np.zeros((2, 3)),
    "tied-columns": np.array([[1.0, -1.0], [1.0, 1.0]]),
    "generic": np.array([[0.5, -1.5, 2.0], [3.0, 0.0, -0.25]]),
    "batch": np.arange(24.0).reshape(2, 3, 4) - 11.0,
}


@pytest.mark.parametrize("ord", ["fro", 1, -1, INF, -INF], ids=str)
@pytest.mark.parametrize("name", sorted(MATRICES))
def test_matrix_norm_matches_torch(name, ord):
    check_both(lambda lib, F, a: lib.linalg.matrix_norm(a, ord), [MATRICES[name]], NORMS)


@pytest.mark.parametrize("ord", ["fro", 1, -INF], ids=str)
def test_matrix_norm_dims_and_keepdim(ord):
    a = np.random.default_rng(1).standard_normal((3, 2, 4))
    check_both(lambda lib, F, a: lib.linalg.matrix_norm(a, ord, dim=(2, 0), keepdim=True),
               [a], NORMS)
    check_both(lambda lib, F, a: lib.linalg.matrix_norm(a, ord, dim=(0, -1)), [a], NORMS)


@pytest.mark.parametrize("ord", [1, -1, INF, -INF, "fro"], ids=str)
@pytest.mark.parametrize("shape", [(0, 3), (3, 0)], ids=str)
def test_matrix_norm_of_an_empty_matrix_as_torch(shape, ord):
    """0 when sums are picked from (a constant when there are none), and an
    IndexError for the min of no sums, as torch."""
    def fn(lib, F, a):
        return lib.linalg.matrix_norm(a, ord)

    picked_dim = 1 if ord in (1, -1) else 0  # 1: a column's sum, inf: a row's
    if ord in (-1, -INF) and shape[picked_dim] == 0:
        raises_like_torch(lambda lib, a: fn(lib, None, a), [np.zeros(shape)])
    else:
        check_both(fn, [np.zeros(shape)], FLOAT64)


LINALG_NORM = {
    "default": lambda lib, F, x: lib.linalg.norm(x),
    "vector-ord": lambda lib, F, x: lib.linalg.norm(x[0, 0], 3),
    "matrix-ord": lambda lib, F, x: lib.linalg.norm(x[0], INF),
    "one-dim": lambda lib, F, x: lib.linalg.norm(x, dim=1, keepdim=True),
    "two-dims": lambda lib, F, x: lib.linalg.norm(x, -1, dim=(0, 2)),
    "torch.norm-fro-dims": lambda lib, F, x: lib.norm(x, "fro", dim=(1, 2)),
    "torch.norm-p-none": lambda lib, F, x: x.norm(None, 0),
    "dist": lambda lib, F, x: lib.dist(x[0], x[1], 0.5),
    "vector_norm-dtype": lambda lib, F, x: lib.linalg.vector_norm(
        x.float(), dtype=lib.float64),
}


#: the float32 input's gradient is rounded to float32 (at different steps in each engine)
IN_FLOAT32 = Tol(1e-12, 1e-12, 1e-6, 1e-7)


@pytest.mark.parametrize("name", sorted(LINALG_NORM))
def test_norm_dispatch_matches_torch(name):
    x = np.random.default_rng(2).standard_normal((2, 3, 4))
    check_both(LINALG_NORM[name], [x], IN_FLOAT32 if name == "vector_norm-dtype" else NORMS)


NORM_ERRORS = {
    "ord without dim on 3-d": lambda lib, x: lib.linalg.norm(x, 2),
    "three dims": lambda lib, x: lib.linalg.norm(x, dim=(0, 1, 2)),
    "matrix norm of a vector": lambda lib, x: lib.linalg.matrix_norm(x[0, 0]),
    "unknown order": lambda lib, x: lib.linalg.matrix_norm(x, 3),
    "inf norm of no elements": lambda lib, x: lib.linalg.vector_norm(x[:, :0], INF),
    "negative norm over an empty dim": lambda lib, x: lib.linalg.vector_norm(x[:, :0], -1,
                                                                             dim=1),
    "integer dtype": lambda lib, x: lib.linalg.vector_norm(x, dtype=lib.int64),
    "integer input": lambda lib, x: lib.dist(x.long(), x.long()),
    "dim out of range": lambda lib, x: lib.linalg.vector_norm(x, dim=3),
    "ord a string": lambda lib, x: lib.linalg.vector_norm(x, "fro"),
    "one dim twice": lambda lib, x: lib.linalg.matrix_norm(x, dim=(1, -2)),
    "matrix dim out of range": lambda lib, x: lib.linalg.matrix_norm(x, 1, dim=(0, 5)),
}


@pytest.mark.parametrize("name", sorted(NORM_ERRORS))
def test_norm_errors_match_torch(name):
    raises_like_torch(NORM_ERRORS[name], [np.ones((2, 3, 4))])


@pytest.mark.parametrize("ord", ["nuc", 2, -2])
def test_spectral_matrix_norms_are_refused_with_a_reason(ord):
    """torch computes these from singular values; the engine says it does not."""
    with pytest.raises(NotImplementedError, match="singular values"):
        ad.linalg.matrix_norm(ad.ones(2, 2), ord)


# ----------------------------------------------------------------- products


@pytest.mark.parametrize("op", ["addmm", "addmv"])
def test_beta_zero_ignores_nan_and_inf_in_input(op):
    """0 * NaN is NaN; torch skips input when beta = 0, and so does the engine
    (the gradient of input is then 0)."""
    rng = np.random.default_rng(3)
    mat, other = rng.standard_normal((3, 4)), rng.standard_normal((4, 2) if op == "addmm" else 4)
    bias = np.full((3, 2) if op == "addmm" else 3, np.nan)
    bias[0] = np.inf
    both = check_both(lambda lib, F, c, a, b: getattr(lib, op)(c, a, b, beta=0, alpha=2),
                      [bias, mat, other], FLOAT64)
    assert np.isfinite(both.engine_out.data).all()


def test_integer_addmm_takes_integer_scalars_as_torch():
    """torch converts beta and alpha to the tensors' dtype: int(0.5) = 0."""
    arrays = [np.full((2, 2), 3), np.ones((2, 3), np.int64), np.ones((3, 2), np.int64)]
    check_both(lambda lib, F, c, a, b: lib.addmm(c, a, b, beta=0.5, alpha=2.7), arrays)


# ----------------------------------------------------------------- in-place twins

_M = np.array([[0.5, -1.2, 2.0, 0.0], [1.5, 2.5, -0.7, 3.0], [-2.0, 0.3, 1.1, -0.4]])
_INDEX = np.array([[0, 1, 2, 0], [2, 0, 1, 1]])
#: twin -> (x, call(lib, x, *operands), operands); the default is x.twin() on _M
_CALLS = {
    "log_": (np.abs(_M) + 0.5, None, ()), "log2_": (np.abs(_M) + 0.5, None, ()),
    "log10_": (np.abs(_M) + 0.5, None, ()), "log1p_": (np.abs(_M), None, ()),
    "sqrt_": (np.abs(_M), None, ()), "rsqrt_": (np.abs(_M) + 0.5, None, ()),
    **{n: (_M / 4, None, ()) for n in ("asin_", "acos_", "arcsin_", "arccos_")},
    "pow_": (np.abs(_M), lambda lib, x, y: x.pow_(y), (np.abs(_M[::-1]),)),
    **{n: (_M, lambda lib, x, y, n=n: getattr(x, n)(y), (_M[::-1] + 0.25,)) for n in (
        "remainder_", "fmod_", "floor_divide_", "copysign_", "eq_", "ne_", "lt_", "le_",
        "gt_", "ge_")},
    **{n: (_M.astype(np.int64), lambda lib, x, y, n=n: getattr(x, n)(y),
           (np.abs(_M[::-1]).astype(np.int64),)) for n in (
        "bitwise_and_", "bitwise_or_", "bitwise_xor_", "bitwise_left_shift_",
        "bitwise_right_shift_")},
    "bitwise_not_": (_M.astype(np.int64), None, ()),
    **{n: (_M, lambda lib, x, y, n=n: getattr(x, n)(y), (_M[::-1] + 0.25,)) for n in (
        "atan2_", "arctan2_", "hypot_", "logical_and_", "logical_or_", "logical_xor_",
        "multiply_", "subtract_", "divide_", "true_divide_", "greater_", "less_",
        "greater_equal_", "less_equal_", "not_equal_")},
    "xlogy_": (_M, lambda lib, x, y: x.xlogy_(y), (np.abs(_M[::-1]) + 0.5,)),
    "add_": (_M, lambda lib, x, y: x.add_(y, alpha=2), (_M[::-1] + 0.25,)),
    "sub_": (_M, lambda lib, x, y: x.sub_(y, alpha=0.5), (_M[0],)),  # broadcast
    "mul_": (_M, lambda lib, x, y: x.mul_(y), (_M[::-1] + 0.25,)),
    "div_": (_M, lambda lib, x, y: x.div_(y, rounding_mode="floor"), (_M[::-1] + 0.25,)),
    "clamp_": (_M, lambda lib, x: x.clamp_(-1, 1), ()),
    "clip_": (_M, lambda lib, x: x.clip_(-1, 1), ()),
    "clamp_min_": (_M, lambda lib, x: x.clamp_min_(0.5), ()),
    "clamp_max_": (_M, lambda lib, x: x.clamp_max_(-0.5), ()),
    "cumsum_": (_M, lambda lib, x: x.cumsum_(1), ()),
    "cumprod_": (_M, lambda lib, x: x.cumprod_(0), ()),
    "tril_": (_M, lambda lib, x: x.tril_(1), ()),
    "triu_": (_M, lambda lib, x: x.triu_(-1), ()),
    "masked_fill_": (_M, lambda lib, x, m: x.masked_fill_(m, 9.0), (_M > 0,)),
    **{n: (_M, lambda lib, x, src, i, n=n, e=extra: getattr(x, n)(0, i, src, *e),
           (_M[:2] * 10, _INDEX)) for n, extra in (
        ("scatter_", ()), ("scatter_add_", ()), ("scatter_reduce_", ("amax",)))},
    "addmm_": (_M[:, :2], lambda lib, x, a, b: x.addmm_(a, b, beta=0.5, alpha=2),
               (_M, _M.T[:, :2])),
    "addmv_": (_M[:, 0], lambda lib, x, a, v: x.addmv_(a, v), (_M, _M[0])),
    "baddbmm_": (np.stack([_M[:, :2]] * 2), lambda lib, x, a, b: x.baddbmm_(a, b),
                 (np.stack([_M] * 2), np.stack([_M.T[:, :2]] * 2))),
    "index_add_": (_M, lambda lib, x, src, i: x.index_add_(0, i, src, alpha=2),
                   (_M[:2] * 10, np.array([2, 0]))),
    "index_copy_": (_M, lambda lib, x, src, i: x.index_copy_(1, i, src),
                    (_M[:, :2] * 10, np.array([3, 1]))),
    "index_fill_": (_M, lambda lib, x, i: x.index_fill_(1, i, -1.5), (np.array([0, 2]),)),
    "index_put_": (_M, lambda lib, x, v, i, j: x.index_put_((i, j), v, accumulate=True),
                   (np.array([1.0, 2.0, 3.0]), np.array([0, 0, 2]), np.array([1, 1, 3]))),
}
TWINS = sorted(f"{n}_" for n in inplace.TWINS)


def _twin_case(name):
    x, call, operands = _CALLS.get(name, (_M, None, ()))
    return x, call or (lambda lib, x: getattr(x, name)()), operands


def _run_twin(lib, name):
    x, call, operands = _twin_case(name)
    tensor = lib.tensor if lib is ad else torch.tensor
    target = tensor(x.copy())
    version = target._version
    out = call(lib, target, *(tensor(o) for o in operands))
    assert out is target, f"{name} must return the tensor it changed"
    return target, target._version - version


@pytest.mark.parametrize("name", TWINS)
def test_inplace_twin_matches_torch(name):
    """Same values and dtype as torch's twin, written into x itself, with x's
    version counter bumped once."""
    ours, bumps = _run_twin(ad, name)
    theirs, _ = _run_twin(torch, name)
    assert_close(ours, theirs, rtol=1e-12, atol=1e-12, what=name)
    assert bumps == 1, f"{name} bumped the version {bumps} times"


def test_every_torch_twin_of_a_method_is_defined_or_named_as_left_out():
    """A Tensor method whose torch twin exists needs that twin here, apart from
    the shape-changing ones inplace.py leaves out (and says why)."""
    left_out = {"squeeze_", "unsqueeze_", "t_", "transpose_"}
    missing = sorted(n for n in dir(torch.Tensor) if n.endswith("_") and not n.startswith("_")
                     and hasattr(ad.Tensor, n[:-1]) and not hasattr(ad.Tensor, n))
    assert set(missing) == left_out, f"in-place twins still missing: {set(missing) - left_out}"


def test_inplace_twin_writes_through_a_view():
    base = ad.tensor([[1.0, 4.0], [9.0, 16.0]])
    before = base._version
    base[1].sqrt_()
    assert base.tolist() == [[1.0, 4.0], [3.0, 4.0]]
    assert base._version == before + 1


@pytest.mark.parametrize("name", ["exp_", "clamp_min_", "sigmoid_", "addmm_"])
def test_inplace_twin_refuses_a_leaf_that_requires_grad(name):
    """As torch: an in-place change to a leaf requiring grad would make its
    gradient meaningless; under no_grad (an optimizer step) it is allowed."""
    x, call, operands = _twin_case(name)
    for lib in (torch, ad):
        leaf = lib.tensor(x.copy(), requires_grad=True)
        args = [lib.tensor(o) for o in operands]
        with pytest.raises(RuntimeError, match="leaf"):
            call(lib, leaf, *args)
        with lib.no_grad():
            call(lib, leaf, *args)
    assert_close(leaf, _run_twin(torch, name)[0], rtol=1e-12, atol=1e-12, what=name)


def test_inplace_twin_keeps_integer_dtype_and_refuses_float_results():
    x = ad.tensor([-3, 4])
    assert x.abs_().tolist() == [3, 4] and x.dtype == ad.int64
    with pytest.raises(RuntimeError, match="can't be cast"):
        x.exp_()
    with pytest.raises(RuntimeError, match="broadcast shape"):
        ad.ones(3).mul(1).pow_(ad.ones(2, 3))


def test_inplace_twin_runs_outside_autocast_as_torch():
    """torch's autocast casts out-of-place ops only: addmm_ keeps float32."""
    third = np.full((2, 2), 1 / 3, np.float32)
    theirs = torch.ones(2, 2)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        theirs.addmm_(torch.from_numpy(third), torch.ones(2, 2))
    ours = ad.ones(2, 2)
    with autocast("cpu", dtype=ad.bfloat16):
        ours.addmm_(ad.tensor(third), ad.ones(2, 2))
    assert_close(ours, theirs, rtol=1e-6, atol=1e-6, what="addmm_ under autocast")
