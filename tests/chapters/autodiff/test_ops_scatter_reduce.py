"""scatter_reduce (ops.scatter_reduce) against torch: every reduction with
and without include_self, ties for amax/amin, 2-D and 0-d-free cases,
integer inputs, exception types; gradcheck and forward mode in float64."""

import numpy as np
import pytest
import torch

import chapters.autodiff as ad

from .parity import FLOAT32, FLOAT64, check_both

rng = np.random.default_rng(31)
REDUCTIONS = ["sum", "prod", "mean", "amax", "amin"]

X = np.float32([1.0, 5.0, 2.0, 0.5])
SRC = np.float32([5.0, 3.0, 7.0, 2.0, 2.0])       # ties with x[1] and within index 0
INDEX = np.array([1, 1, 2, 0, 0])


def away_from_zero(*shape):
    return np.asarray(rng.uniform(0.5, 2.0, shape) * rng.choice([-1, 1], shape),
                      dtype=np.float32)


X2 = away_from_zero(3, 4)
SRC2 = away_from_zero(3, 5)
INDEX2 = rng.integers(0, 4, (3, 5))


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", REDUCTIONS)
def test_1d_with_ties_matches_torch(reduce, include_self):
    check_both(lambda L, F, x, s, i: x.scatter_reduce(0, i, s, reduce, include_self=include_self),
               [X, SRC, INDEX])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", REDUCTIONS)
def test_2d_random_matches_torch(reduce, include_self, dtype):
    check_both(lambda L, F, x, s, i: L.scatter_reduce(x, 1, i, s, reduce,
                                                      include_self=include_self),
               [X2.astype(dtype), SRC2.astype(dtype), INDEX2],
               FLOAT32 if dtype == np.float32 else FLOAT64)


def test_dim0_with_a_smaller_index_matches_torch():
    check_both(lambda L, F, x, s, i: x.scatter_reduce(0, i, s, "sum"),
               [X2, SRC2[:2, :3], INDEX2[:2, :3] % 3])


@pytest.mark.parametrize("reduce", REDUCTIONS)
def test_integer_inputs_match_torch(reduce):
    x = rng.integers(-5, 6, (2, 4))
    src = rng.integers(-5, 6, (2, 3))
    check_both(lambda L, F, x, s, i: x.scatter_reduce(1, i, s, reduce, include_self=False),
               [x, src, INDEX2[:2, :3]], grad_mask=[False] * 3)
    check_both(lambda L, F, x, s, i: x.scatter_reduce(1, i, s, reduce),
               [x, src, INDEX2[:2, :3]], grad_mask=[False] * 3)


ERRORS = {
    "bad_reduce": (lambda L, x: x.scatter_reduce(0, L.tensor([0]), x[:1], "median")),
    "dtype_mismatch": (lambda L, x: x.scatter_reduce(0, L.tensor([0]), x[:1].double(), "sum")),
    "index_out_of_bounds": (lambda L, x: x.scatter_reduce(0, L.tensor([9]), x[:1], "sum")),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_have_torchs_exception_types(name):
    with pytest.raises(Exception) as expected:
        ERRORS[name](torch, torch.from_numpy(X))
    with pytest.raises(expected.type):
        ERRORS[name](ad, ad.tensor(X))


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("reduce", REDUCTIONS)
def test_gradcheck_float64(reduce, include_self):
    # distinct values: amax/amin are differentiable away from ties
    x = ad.tensor(away_from_zero(3, 4).astype(np.float64), requires_grad=True)
    s = ad.tensor(away_from_zero(3, 5).astype(np.float64), requires_grad=True)
    index = ad.tensor(INDEX2)
    assert ad.gradcheck(lambda a, b: a.scatter_reduce(1, index, b, reduce,
                                                      include_self=include_self), (x, s))


@pytest.mark.parametrize("reduce", REDUCTIONS)
def test_forward_mode_matches_reverse_mode(reduce):
    x, s = (ad.tensor(a.astype(np.float64)) for a in (X2, SRC2))
    tx, ts = (ad.tensor(rng.standard_normal(a.shape)) for a in (X2, SRC2))
    index = ad.tensor(INDEX2)
    fn = lambda a, b: a.scatter_reduce(1, index, b, reduce)  # noqa: E731
    _, tangent = ad.jvp(fn, (x, s), (tx, ts))
    xr, sr = x.detach().requires_grad_(), s.detach().requires_grad_()
    out = fn(xr, sr)
    cot = rng.standard_normal(out.shape)
    gx, gs = ad.grad(out, (xr, sr), ad.tensor(cot))
    # <cotangent, J t> = <J^T cotangent, t>
    lhs = float((tangent.numpy() * cot).sum())
    rhs = float((gx.numpy() * tx.numpy()).sum() + (gs.numpy() * ts.numpy()).sum())
    assert abs(lhs - rhs) < 1e-9 * max(1.0, abs(lhs))


def test_prod_gradient_through_a_zero_says_what_to_do():
    x = ad.tensor([1.0, 0.0], requires_grad=True)
    out = x.scatter_reduce(0, ad.tensor([0]), ad.tensor([2.0]), "prod")
    with pytest.raises(NotImplementedError, match="zero"):
        out.sum().backward()
