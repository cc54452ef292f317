"""The cutting, counting and repeating ops beyond their op-table rows
(opdb_split.py): views that share memory and the version counter with their
base, tuples, gradients through several pieces used at once, the counting
ops' gradients checked against formulas of their own, and torch's errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chapters.autodiff as ad
from tests.chapters.autodiff.parity import FLOAT64, check_both

RNG = np.random.default_rng(7)
X = RNG.standard_normal((6, 4))

#: each op on a (6, 4) tensor, its pieces as a tuple
CUTS = {
    "chunk": lambda lib, x: lib.chunk(x, 4, dim=0),
    "split": lambda lib, x: x.split([1, 3], dim=1),
    "tensor_split": lambda lib, x: lib.tensor_split(x, [1, 4], dim=0),
    "unbind": lambda lib, x: x.unbind(1),
    "narrow": lambda lib, x: (x.narrow(0, 2, 3),),
    "unflatten": lambda lib, x: (lib.unflatten(x, 0, (2, 3)),),
    "movedim": lambda lib, x: (lib.movedim(x, 0, 1),),
    "moveaxis": lambda lib, x: (x.moveaxis(1, 0),),
}


@pytest.mark.parametrize("op", CUTS)
def test_pieces_are_views_that_see_writes_both_ways(op):
    """A write through a piece shows in the base and one into the base shows in
    the piece; both share one version counter, as torch's views do."""
    base = ad.tensor(X.copy())
    first = CUTS[op](ad, base)[0]
    assert np.shares_memory(first.data, base.data)
    first.add_(100.0)
    assert first._version == base._version == 1
    expected = torch.tensor(X.copy())
    CUTS[op](torch, expected)[0].add_(100.0)
    np.testing.assert_array_equal(base.data, expected.numpy())
    base.mul_(0.0)
    assert not first.data.any() and first._version == 2


@pytest.mark.parametrize("op", ["chunk", "split", "tensor_split", "unbind"])
def test_results_are_tuples_like_torch(op):
    ours, theirs = CUTS[op](ad, ad.tensor(X)), CUTS[op](torch, torch.tensor(X))
    assert type(ours) is tuple and len(ours) == len(theirs)
    assert [tuple(p.shape) for p in ours] == [tuple(p.shape) for p in theirs]


@pytest.mark.parametrize("op", CUTS)
def test_gradients_of_every_piece_land_in_their_slices(op):
    """All pieces used at once, each weighted differently, so a gradient written
    to the wrong slice (or a piece's gradient lost) changes the result."""
    def loss(lib, F, x):
        pieces = CUTS[op](lib, x)
        return sum((k + 1.0) * (p * p).sum() for k, p in enumerate(pieces))

    check_both(loss, [X], FLOAT64)


KEYWORDS = {  # torch's keyword spellings of the cut sizes
    "Tensor.split(split_size=)": lambda lib, x: x.split(split_size=4),
    "split(split_size_or_sections=)": lambda lib, x: lib.split(x, split_size_or_sections=[5, 1]),
    "tensor_split(sections=)": lambda lib, x: lib.tensor_split(x, sections=4),
    "Tensor.tensor_split(indices=)": lambda lib, x: x.tensor_split(indices=[2, 3], dim=1),
    "chunk(chunks=)": lambda lib, x: x.chunk(chunks=5),
    "unflatten(sizes=torch.Size)": lambda lib, x: (x.unflatten(0, lib.zeros(3, 2).shape),),
    "repeat_interleave(output_size=)": lambda lib, x: (lib.repeat_interleave(
        lib.tensor([1, 2]), output_size=3),),
}


@pytest.mark.parametrize("form", KEYWORDS)
def test_keyword_spellings_match_torch(form):
    ours, theirs = KEYWORDS[form](ad, ad.tensor(X)), KEYWORDS[form](torch, torch.tensor(X))
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(a.data, b.numpy())


def test_unbind_of_an_empty_dim_gives_no_pieces():
    assert ad.tensor(np.zeros((0, 3))).unbind() == ()
    assert len(ad.unbind(ad.tensor(np.zeros((0, 3))), 1)) == 3


def test_chunk_may_give_fewer_pieces_than_asked():
    """ceil(6 / 4) = 2 per piece: three pieces, as torch."""
    sizes = [p.shape[0] for p in ad.arange(6.0).chunk(4)]
    assert sizes == [p.shape[0] for p in torch.arange(6.0).chunk(4)] == [2, 2, 2]


def test_masked_select_gradient_sums_over_broadcast_copies():
    """x of shape (4,) selected through a (3, 4) mask: each x_j gets the
    cotangent of every row that selected it."""
    mask = RNG.standard_normal((3, 4)) > 0
    x = ad.tensor(X[0], requires_grad=True)
    out = ad.masked_select(x, ad.tensor(mask))
    g = RNG.standard_normal(out.shape)
    out.backward(ad.tensor(g))
    expected = np.zeros((3, 4))
    expected[mask] = g
    np.testing.assert_allclose(x.grad.data, expected.sum(axis=0), rtol=1e-12)


def test_diff_gradient_is_the_negated_backward_difference():
    """out_i = x_{i+1} - x_i, so dL/dx_i = g_{i-1} - g_i (g padded with zeros)."""
    x = ad.tensor(X, requires_grad=True)
    g = RNG.standard_normal((6, 3))
    x.diff(dim=1).backward(ad.tensor(g))
    padded = np.pad(g, ((0, 0), (1, 1)))
    np.testing.assert_allclose(x.grad.data, padded[:, :-1] - padded[:, 1:], rtol=1e-12)


def test_diff_of_higher_order_and_prepend_match_torch():
    check_both(lambda lib, F, x, p: lib.diff(x, n=3, dim=0, prepend=p), [X, X[:2]], FLOAT64)


def test_repeat_interleave_gradient_sums_the_copies():
    x = ad.tensor(X, requires_grad=True)
    counts = np.array([2, 0, 1, 3])
    out = x.repeat_interleave(ad.tensor(counts), dim=1)
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.data, np.broadcast_to(counts, (6, 4)))


def test_repeat_interleave_of_counts_indexes_like_the_two_argument_form():
    counts = ad.tensor(np.array([1, 0, 3, 2]))
    x = ad.tensor(X)
    np.testing.assert_array_equal(x[:, ad.repeat_interleave(counts)].data,
                                  ad.repeat_interleave(x, counts, dim=1).data)


def test_bincount_with_weights_is_differentiable_in_the_weights():
    """torch records bincount with weights but defines no derivative; here it
    is a scatter_add, so dL/dw_j = g[i_j] (checked against that formula)."""
    index = np.array([3, 0, 3, 1])
    w = ad.tensor(RNG.standard_normal(4), requires_grad=True)
    out = ad.bincount(ad.tensor(index), w, minlength=6)
    np.testing.assert_allclose(out.data, np.bincount(index, w.data, minlength=6), rtol=1e-12)
    g = RNG.standard_normal(6)
    out.backward(ad.tensor(g))
    np.testing.assert_allclose(w.grad.data, g[index], rtol=1e-12)


def test_count_nonzero_counts_nan_and_bools():
    data = np.array([[np.nan, 0.0, -0.0], [1.0, 2.0, 0.0]])
    for lib, x in ((ad, ad.tensor(data)), (torch, torch.tensor(data))):
        assert lib.count_nonzero(x).item() == 3
        assert lib.count_nonzero(x != 0, dim=1).tolist() == [1, 2]


ERRORS = {  # call on (lib, x), torch's exception type
    "narrow a 0-d tensor": (lambda lib, x: x[0, 0].narrow(0, 0, 1), RuntimeError),
    "narrow with a float start": (lambda lib, x: x.narrow(0, 1.0, 1), TypeError),
    "narrow start past the end": (lambda lib, x: x.narrow(0, 7, 0), IndexError),
    "narrow with a float tensor start": (lambda lib, x: x.narrow(0, lib.tensor(1.0), 1),
                                         RuntimeError),
    "split by a float": (lambda lib, x: x.split(2.0), TypeError),
    "repeat_interleave of counts with a wrong output_size": (
        lambda lib, x: lib.repeat_interleave(lib.tensor([1, 2]), output_size=4), RuntimeError),
    "unbind a 0-d tensor": (lambda lib, x: x[0, 0].unbind(), IndexError),
    "split with a negative size": (lambda lib, x: x.split(-1), RuntimeError),
    "split sizes with a negative entry": (lambda lib, x: x.split([7, -1]), RuntimeError),
    "tensor_split by a 2-d index tensor": (lambda lib, x: x.tensor_split(
        lib.tensor([[1, 2]])), RuntimeError),
    "unflatten a 0-d tensor": (lambda lib, x: x[0, 0].unflatten(0, (1,)), RuntimeError),
    "masked_select with a uint8 mask": (lambda lib, x: x.masked_select(
        (x > 0).to(lib.uint8)), RuntimeError),
    "bincount of floats": (lambda lib, x: lib.bincount(x[0]), NotImplementedError),
    "bincount of bools": (lambda lib, x: lib.bincount(x[0] > 0), NotImplementedError),
    "diff with a number to prepend": (lambda lib, x: x.diff(prepend=1.0), TypeError),
    "repeat_interleave by a float": (lambda lib, x: x.repeat_interleave(2.0), TypeError),
    "repeat_interleave by a 2-d tensor": (lambda lib, x: x.repeat_interleave(
        lib.tensor([[1, 2]]), dim=0), RuntimeError),
    "repeat_interleave of float counts": (lambda lib, x: lib.repeat_interleave(x[0]),
                                          NotImplementedError),
    "repeat_interleave of negative counts": (lambda lib, x: x.repeat_interleave(
        lib.tensor([1, -1, 1, 1]), dim=1), RuntimeError),
}


@pytest.mark.parametrize("case", ERRORS)
def test_errors_have_torchs_type_and_say_what_to_do(case):
    fn, kind = ERRORS[case]
    with pytest.raises(kind):
        fn(torch, torch.tensor(X))
    with pytest.raises(kind) as ours:
        fn(ad, ad.tensor(X))
    assert len(str(ours.value)) > 30, ours.value
