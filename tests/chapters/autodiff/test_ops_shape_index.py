"""Shape and index ops (ops.rearrange, ops.select, ops.sorting) against torch:
one lambda per case; values, dtypes and gradients (random cotangent) over
0-d, empty, non-contiguous and broadcast inputs, integer and bool dtypes,
exception types, and gradcheck in float64."""

import numpy as np
import pytest

import chapters.autodiff as ad

from .parity import FLOAT32, case_tests, check_both, raises_like_torch

rng = np.random.default_rng(99)


def normal(*shape):
    return np.asarray(rng.standard_normal(shape), dtype=np.float32)


def distinct(*shape):
    """A random permutation of 0.5, 1.5, ...: no ties, so every sort agrees."""
    return (rng.permutation(int(np.prod(shape))) + 0.5).reshape(shape).astype(np.float32)


def ints(*shape, low=-5, high=6):
    return rng.integers(low, high, shape).astype(np.int64)


IDX_GATHER = np.array([[0, 2, 2], [1, 0, 3]])            # along dim 1 of (2, 4); dim 0 repeats
IDX_SCATTER = np.array([[0, 3], [2, 1]])                  # distinct along dim 1 per row
MASK = np.array([[True, False, True, False], [False, False, True, True]])

CASES = {
    # rearrange
    "flip": (lambda lib, F, a: a.flip(0), [normal(3, 4)]),
    "flip_dims": (lambda lib, F, a: lib.flip(a, (0, -1)), [normal(2, 3, 4)]),
    "flip_0d": (lambda lib, F, a: a.flip(0), [normal()]),
    "flip_noncontiguous": (lambda lib, F, a: a.t().flip(1), [normal(3, 4)]),
    "roll": (lambda lib, F, a: a.roll(1, 1), [normal(3, 4)]),
    "roll_flat": (lambda lib, F, a: a.roll(-2), [normal(3, 4)]),
    "roll_dims": (lambda lib, F, a: lib.roll(a, (1, 5), (0, 1)), [normal(3, 4)]),
    "roll_empty": (lambda lib, F, a: a.roll(1, 0), [normal(0, 2)]),
    "repeat": (lambda lib, F, a: a.repeat(2, 3), [normal(2, 3)]),
    "repeat_new_dims": (lambda lib, F, a: a.repeat(2, 1, 2), [normal(2, 3)]),
    "repeat_0d": (lambda lib, F, a: a.repeat(3), [normal()]),
    "tile": (lambda lib, F, a: a.tile((2,)), [normal(2, 3)]),
    "tile_function": (lambda lib, F, a: lib.tile(a, (2, 1, 1)), [normal(3)]),
    "tril": (lambda lib, F, a: a.tril(), [normal(4, 4)]),
    "tril_batched_offset": (lambda lib, F, a: lib.tril(a, -1), [normal(2, 3, 5)]),
    "triu": (lambda lib, F, a: a.triu(1), [normal(3, 5)]),
    "triu_noncontiguous": (lambda lib, F, a: a.t().triu(), [normal(3, 4)]),
    "diag_matrix": (lambda lib, F, a: a.diag(), [normal(3, 4)]),
    "diag_offset": (lambda lib, F, a: lib.diag(a, 1), [normal(3, 4)]),
    "diag_negative_offset": (lambda lib, F, a: a.diag(-2), [normal(3, 4)]),
    "diag_vector": (lambda lib, F, a: a.diag(), [normal(3)]),
    "diag_vector_offset": (lambda lib, F, a: lib.diag(a, -1), [normal(3)]),
    # select
    "gather": (lambda lib, F, a, i: a.gather(1, i), [normal(2, 4), IDX_GATHER]),
    "gather_smaller_index": (lambda lib, F, a, i: lib.gather(a, 1, i[:1, :2]),
                             [normal(3, 4), IDX_GATHER]),
    "gather_dim0": (lambda lib, F, a, i: a.gather(0, i % 2), [normal(2, 4), IDX_GATHER]),
    "scatter": (lambda lib, F, a, i, s: a.scatter(1, i, s), [normal(2, 4), IDX_SCATTER,
                                                             normal(2, 2)]),
    "scatter_smaller_index": (lambda lib, F, a, i, s: a.scatter(0, i[:1] % 2, s),
                              [normal(2, 4), IDX_SCATTER, normal(1, 2)]),
    "scatter_value": (lambda lib, F, a, i: a.scatter(1, i, value=2.5), [normal(2, 4),
                                                                        IDX_SCATTER]),
    "scatter_add": (lambda lib, F, a, i, s: a.scatter_add(1, i, s), [normal(2, 4), IDX_GATHER,
                                                                     normal(2, 3)]),
    "scatter_add_function": (lambda lib, F, a, i, s: lib.scatter_add(a, 0, i % 2, s),
                             [normal(2, 4), IDX_GATHER, normal(2, 3)]),
    "index_select": (lambda lib, F, a, i: a.index_select(1, i), [normal(3, 4),
                                                                 np.array([3, 0, 3])]),
    "index_select_dim0": (lambda lib, F, a, i: lib.index_select(a, 0, i), [normal(3, 4),
                                                                            np.array([2])]),
    "index_select_empty": (lambda lib, F, a, i: a.index_select(0, i),
                           [normal(3, 4), np.zeros(0, dtype=np.int64)]),
    "masked_fill": (lambda lib, F, a, m: a.masked_fill(m, -1.5), [normal(2, 4), MASK]),
    "masked_fill_broadcast": (lambda lib, F, a, m: lib.masked_fill(a, m[0], 0.0),
                              [normal(3, 4), MASK]),
    "masked_fill_tensor_value": (lambda lib, F, a, v, m: a.masked_fill(m, v),
                                 [normal(2, 4), normal(), MASK]),
    "where_method": (lambda lib, F, a, b: a.where(a > 0, b), [normal(3, 4), normal(4)]),
    "where_method_scalar": (lambda lib, F, a: a.where(a > 0, 0.5), [normal(3, 4)]),
    # sorting
    "sort": (lambda lib, F, a: a.sort().values, [distinct(3, 4)]),
    "sort_descending_dim0": (lambda lib, F, a: lib.sort(a, 0, descending=True)[0],
                             [distinct(3, 4)]),
    "sort_0d": (lambda lib, F, a: a.sort().values, [normal()]),
    "sort_noncontiguous": (lambda lib, F, a: a.t().sort(dim=1).values, [distinct(3, 4)]),
    "msort": (lambda lib, F, a: lib.msort(a), [distinct(3, 4)]),
    "topk": (lambda lib, F, a: a.topk(2).values, [distinct(3, 5)]),
    "topk_smallest": (lambda lib, F, a: lib.topk(a, 3, dim=0, largest=False)[0],
                      [distinct(4, 2)]),
    "topk_0": (lambda lib, F, a: a.topk(0).values, [distinct(3, 5)]),
}


test_op_matches_torch_float32, test_op_matches_torch_float64 = case_tests(CASES)


TIES = np.array([[2, 1, 2, 0, 1], [3, 3, 3, -1, 3]])

FORWARD_ONLY = {
    "flip_int": (lambda lib, F, a: a.flip(1), [ints(3, 4)]),
    "roll_bool": (lambda lib, F, a: (a > 0).roll(2), [ints(3, 4)]),
    "repeat_int": (lambda lib, F, a: a.repeat(1, 2), [ints(2, 3)]),
    "tril_bool": (lambda lib, F, a: (a > 0).tril(), [ints(3, 3)]),
    "diag_int": (lambda lib, F, a: a.diag(1), [ints(3)]),
    "gather_int": (lambda lib, F, a, i: a.gather(1, i), [ints(2, 4), IDX_GATHER]),
    "gather_int32_index": (lambda lib, F, a, i: a.gather(1, i.int()), [normal(2, 4), IDX_GATHER]),
    "scatter_int_float_value": (lambda lib, F, a, i: a.scatter(1, i, value=2.7),
                                [ints(2, 4), IDX_SCATTER]),
    "masked_fill_int_float_value": (lambda lib, F, a, m: a.masked_fill(m, 1.5), [ints(2, 4),
                                                                                 MASK]),
    "nonzero": (lambda lib, F, a: a.nonzero(), [ints(3, 4, low=-1, high=2)]),
    "nonzero_as_tuple": (lambda lib, F, a: lib.nonzero(a, as_tuple=True),
                         [ints(3, 4, low=-1, high=2)]),
    "nonzero_0d": (lambda lib, F, a: a.nonzero(), [np.asarray(3)]),
    "nonzero_empty": (lambda lib, F, a: a.nonzero(), [ints(0, 3)]),
    "sort_stable_ties": (lambda lib, F, a: a.sort(stable=True), [TIES]),
    "sort_stable_ties_descending": (lambda lib, F, a: a.sort(descending=True, stable=True),
                                    [TIES]),
    "argsort": (lambda lib, F, a: a.argsort(dim=0, stable=True), [TIES]),
    "argsort_descending": (lambda lib, F, a: lib.argsort(a, descending=True, stable=True),
                           [TIES]),
    "sort_nan_last": (lambda lib, F, a: a.sort(), [np.float32([2, np.nan, -1, 0])]),
    "sort_bool": (lambda lib, F, a: (a > 0).sort(stable=True), [ints(6)]),
    "topk_int": (lambda lib, F, a: a.topk(2), [np.array([[5, 1, 7, 3], [0, 9, 2, 4]])]),
    "unique": (lambda lib, F, a: lib.unique(a), [TIES]),
    "unique_inverse_counts": (lambda lib, F, a: a.unique(return_inverse=True,
                                                         return_counts=True), [TIES]),
    "unique_dim": (lambda lib, F, a: lib.unique(a, dim=0), [np.array([[1, 2], [0, 3],
                                                                      [1, 2]])]),
    "unique_float": (lambda lib, F, a: a.unique(), [np.float32([1.5, -1, 1.5, 0])]),
}


@pytest.mark.parametrize("name", sorted(FORWARD_ONLY))
def test_integer_bool_and_index_results_match_torch(name):
    fn, arrays = FORWARD_ONLY[name]
    check_both(fn, arrays, FLOAT32, grad_mask=[False] * len(arrays))


ERRORS = {
    "repeat_too_few": (lambda lib, a: a.repeat(2), [normal(2, 3)]),
    "tril_vector": (lambda lib, a: a.tril(), [normal(3)]),
    "diag_3d": (lambda lib, a: a.diag(), [normal(2, 2, 2)]),
    "gather_out_of_bounds": (lambda lib, a: a.gather(1, lib.tensor([[4]])), [normal(2, 4)]),
    "gather_float_index": (lambda lib, a: a.gather(1, a.long().float()), [normal(2, 4)]),
    "gather_wrong_rank": (lambda lib, a: a.gather(1, lib.tensor([1])), [normal(2, 4)]),
    "index_select_matrix": (lambda lib, a: a.index_select(1, lib.tensor([[1]])), [normal(2, 4)]),
    "masked_fill_vector_value": (lambda lib, a: a.masked_fill(a > 0, a[0]), [normal(2, 4)]),
    "masked_fill_int_mask": (lambda lib, a: a.masked_fill((a > 0).long(), 1.0), [normal(2, 4)]),
    "scatter_dtype_mismatch": (lambda lib, a: a.scatter(1, lib.tensor([[0]]), a.double()),
                               [normal(2, 4)]),
    "topk_too_many": (lambda lib, a: a.topk(5), [normal(2, 4)]),
    "roll_shift_dim_mismatch": (lambda lib, a: a.roll((1, 2), 0), [normal(2, 4)]),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_have_torchs_exception_types(name):
    raises_like_torch(*ERRORS[name])


GRADCHECK = {
    "flip_roll": lambda x: x.flip(1).roll(1, 0) * x,
    "repeat": lambda x: x.repeat(2, 1, 3),
    "tril_diag": lambda x: x.tril(1).diag() + x.diag(-1).diag()[:2, :2].sum(),
    "gather": lambda x: x.gather(1, ad.tensor(IDX_GATHER[:, :2] % 3)),
    "scatter": lambda x: x.scatter(1, ad.tensor([[0, 2], [2, 1]]), x[:, :2] * x[:, :2]),
    "scatter_add": lambda x: x.scatter_add(1, ad.tensor(IDX_GATHER % 3), x.exp()),
    "masked_fill": lambda x: x.masked_fill(x > 0, 0.5) * x,
    "sort_topk": lambda x: x.sort(1).values * x.topk(3, dim=1).values,
}


@pytest.mark.parametrize("name", sorted(GRADCHECK))
def test_gradcheck_float64(name):
    x = ad.tensor(distinct(2, 3).astype(np.float64) - 3, requires_grad=True)
    assert ad.gradcheck(GRADCHECK[name], (x,))


def test_results_are_copies_not_views():
    x = ad.tensor([[1.0, 2.0], [3.0, 4.0]])
    for out in (x.flip(0), x.roll(1), x.repeat(1, 1), x.tril(), x.sort().values):
        out.data[...] = 0
    assert x.tolist() == [[1.0, 2.0], [3.0, 4.0]]


def test_scatter_forward_mode_matches_reverse_mode():
    x = ad.tensor(normal(2, 4).astype(np.float64))
    s = ad.tensor(normal(2, 2).astype(np.float64))
    tx, ts = (ad.tensor(normal(*t.shape).astype(np.float64)) for t in (x, s))
    index = ad.tensor(IDX_SCATTER)
    out, tangent = ad.jvp(lambda a, b: a.scatter(1, index, b), (x, s), (tx, ts))
    np.testing.assert_array_equal(tangent.numpy(), tx.scatter(1, index, ts).numpy())
