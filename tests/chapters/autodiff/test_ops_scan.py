"""Scans and product/logical reductions (ops.scan) against torch: one lambda
per case, values, dtypes and gradients (random cotangent), over 0-d, empty,
non-contiguous and broadcast inputs and integer/bool dtypes; gradcheck in
float64, including products through zeros."""

import numpy as np
import pytest

import chapters.autodiff as ad

from .parity import FLOAT32, Tol, case_tests, check_both

rng = np.random.default_rng(77)


def normal(*shape):
    return np.asarray(rng.standard_normal(shape), dtype=np.float32)


def with_zeros(*shape):
    """Normal values with about a third of them exactly 0 (products through 0)."""
    x = normal(*shape)
    x[rng.random(shape) < 0.35] = 0
    return x


def ties(*shape):
    """Small integers as floats: running maxima with ties."""
    return rng.integers(-2, 3, shape).astype(np.float32)


CASES = {
    "cumsum": (lambda lib, F, a: a.cumsum(1), [normal(3, 4)]),
    "cumsum_dim0_neg": (lambda lib, F, a: lib.cumsum(a, dim=-2), [normal(3, 4)]),
    "cumsum_0d": (lambda lib, F, a: a.cumsum(0), [normal()]),
    "cumsum_empty": (lambda lib, F, a: a.cumsum(0), [normal(0, 3)]),
    "cumsum_noncontiguous": (lambda lib, F, a: a.t().cumsum(0), [normal(3, 4)]),
    "cumsum_dtype": (lambda lib, F, a: a.cumsum(0, dtype=lib.float64), [normal(5)]),
    "cumsum_of_broadcast": (lambda lib, F, a, b: (a + b).cumsum(0), [normal(3, 1), normal(4)]),
    "cumprod": (lambda lib, F, a: a.cumprod(1), [normal(3, 4)]),
    "cumprod_zeros": (lambda lib, F, a: lib.cumprod(a, 0), [with_zeros(6, 3)]),
    "cumprod_0d": (lambda lib, F, a: a.cumprod(-1), [normal()]),
    "cummax": (lambda lib, F, a: a.cummax(1).values, [normal(3, 5)]),
    "cummax_ties": (lambda lib, F, a: lib.cummax(a, 0)[0], [ties(8, 2)]),
    "cummin_ties": (lambda lib, F, a: a.cummin(dim=1).values, [ties(2, 8)]),
    "cummax_0d": (lambda lib, F, a: a.cummax(0).values, [normal()]),
    "cummax_empty": (lambda lib, F, a: a.cummax(0).values, [normal(0, 2)]),
    "prod_all": (lambda lib, F, a: a.prod(), [normal(3, 4)]),
    "prod_dim": (lambda lib, F, a: a.prod(1), [normal(3, 4)]),
    "prod_dim_keepdim": (lambda lib, F, a: lib.prod(a, 0, keepdim=True), [normal(3, 4)]),
    "prod_one_zero": (lambda lib, F, a: a.prod(1), [np.float32([[1.5, 0, 2], [0, 0, 3],
                                                               [2, -1, 4]])]),
    "prod_all_zeros": (lambda lib, F, a: a.prod(), [np.float32([1.5, 0, 2, -3])]),
    "prod_0d": (lambda lib, F, a: a.prod(0), [normal()]),
    "prod_empty": (lambda lib, F, a: a.prod(), [normal(0)]),
    "prod_noncontiguous": (lambda lib, F, a: a.t().prod(0), [normal(3, 4)]),
    "std_correction": (lambda lib, F, a: a.std(dim=1, correction=0), [normal(3, 4)]),
    "var_correction_2": (lambda lib, F, a: a.var(correction=2), [normal(3, 4)]),
    "logsumexp_tuple": (lambda lib, F, a: a.logsumexp((0, 2)), [normal(2, 3, 4)]),
}

TOLERANCES = {"cumprod_zeros": Tol(1e-5, 1e-6, 1e-4, 1e-5)}


test_op_matches_torch_float32, test_op_matches_torch_float64 = case_tests(
    CASES, overrides=TOLERANCES)


def ints(*shape):
    return rng.integers(-3, 4, shape).astype(np.int64)


FORWARD_ONLY = {
    "cumsum_int32": (lambda lib, F, a: a.int().cumsum(0), [ints(5)]),
    "cumsum_bool": (lambda lib, F, a: (a > 0).cumsum(0), [ints(5)]),
    "cumprod_int": (lambda lib, F, a: a.cumprod(0), [ints(5)]),
    "prod_int32": (lambda lib, F, a: a.int().prod(), [ints(5)]),
    "prod_bool_dim": (lambda lib, F, a: (a > 0).prod(1), [ints(3, 4)]),
    "cummax_indices": (lambda lib, F, a: a.cummax(0).indices, [ties(9, 2)]),
    "cummin_indices_int": (lambda lib, F, a: a.cummin(1)[1], [ints(2, 9)]),
    "cummax_nan": (lambda lib, F, a: a.cummax(0), [np.float32([1, np.nan, 3, np.nan, 0])]),
    "all": (lambda lib, F, a: a.all(), [ints(3, 4)]),
    "all_dim": (lambda lib, F, a: lib.all(a, dim=1), [ints(3, 4)]),
    "any_tuple_keepdim": (lambda lib, F, a: a.any(dim=(0, 2), keepdim=True), [ints(2, 3, 2)]),
    "any_float": (lambda lib, F, a: (a * 0).any(), [normal(4)]),
    "all_empty": (lambda lib, F, a: a.all(1), [ints(2, 0)]),
    "all_uint8": (lambda lib, F, a: (a > 0).to(lib.uint8).all(), [ints(4)]),
    "any_0d": (lambda lib, F, a: a.any(), [np.asarray(0, dtype=np.int64)]),
}


@pytest.mark.parametrize("name", sorted(FORWARD_ONLY))
def test_integer_bool_and_index_results_match_torch(name):
    fn, arrays = FORWARD_ONLY[name]
    check_both(fn, arrays, FLOAT32, grad_mask=[False] * len(arrays))


def test_prod_refuses_a_tuple_of_dims_as_torch():
    with pytest.raises(TypeError, match="one int"):
        ad.tensor([1.0, 2.0]).prod((0,))


GRADCHECK = {
    "cumsum": lambda x: x.cumsum(1),
    "cumprod": lambda x: x.cumprod(0),
    "cummax": lambda x: x.cummax(1).values,
    "prod_all": lambda x: x.prod(),
    "prod_dim": lambda x: x.prod(0, keepdim=True),
}


@pytest.mark.parametrize("name", sorted(GRADCHECK))
def test_gradcheck_float64(name):
    x = ad.tensor(normal(3, 4).astype(np.float64), requires_grad=True)
    assert ad.gradcheck(GRADCHECK[name], (x,))


@pytest.mark.parametrize(("fn", "expected"), [
    (lambda x: x.prod(1), [[0.0, 6.0, 0.0], [0.0, 0.0, 0.0]]),  # row 1 has two zeros
    (lambda x: x.prod(), [[0.0] * 3] * 2),                      # three zeros in all
    (lambda x: x[:1].prod(), [[0.0, 6.0, 0.0], [0.0] * 3]),
])
def test_prod_gradient_through_zeros_is_the_product_of_the_others(fn, expected):
    # at a group's only zero the gradient is the product of the other entries
    x = ad.tensor([[2.0, 0.0, 3.0], [0.0, 0.0, 5.0]], requires_grad=True)
    (g,) = ad.grad(fn(x).sum(), x)
    assert g.tolist() == expected


def test_second_derivative_of_prod():
    x = ad.tensor(normal(4).astype(np.float64), requires_grad=True)
    (g,) = ad.grad(x.prod(), x, create_graph=True)
    (h,) = ad.grad(g.sum(), x)
    # d/dx_j sum_i prod_{k != i} x_k = sum_{i != j} prod_{k != i, j} x_k
    xs = x.detach().numpy()
    expected = [sum(np.prod(np.delete(xs, [i, j])) for i in range(4) if i != j) for j in range(4)]
    np.testing.assert_allclose(h.numpy(), expected, rtol=1e-12)


AXIS_ALIAS = {
    "sum": lambda L, F, a: a.sum(axis=0),
    "mean_keepdim": lambda L, F, a: a.mean(axis=1, keepdim=True),
    "var": lambda L, F, a: a.var(axis=0),
    "std": lambda L, F, a: L.std(a, axis=1),
    "logsumexp": lambda L, F, a: a.logsumexp(axis=0),
    "max": lambda L, F, a: a.max(axis=0).values,
    "softmax": lambda L, F, a: a.softmax(axis=0),
    "cumsum": lambda L, F, a: a.cumsum(axis=1),
    "cumprod": lambda L, F, a: L.cumprod(a, axis=0),
    "prod": lambda L, F, a: a.prod(axis=1),
    "sort": lambda L, F, a: a.sort(axis=0).values,
    "topk": lambda L, F, a: a.topk(2, axis=0).values,
    "gather": lambda L, F, a: a.gather(axis=1, index=L.tensor([[0], [2], [1]])),
    "cat": lambda L, F, a: L.cat([a, a], axis=1),
    "unsqueeze": lambda L, F, a: a.unsqueeze(axis=0),
}


@pytest.mark.parametrize("name", sorted(AXIS_ALIAS))
def test_axis_is_an_alias_of_dim_as_in_torch(name):
    check_both(AXIS_ALIAS[name], [normal(3, 4)])


def test_all_any_accept_axis():
    check_both(lambda L, F, a: (a.all(axis=0), a.any(axis=1)), [normal(3, 4)],
               grad_mask=[False])
