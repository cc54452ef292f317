"""x[index] reads, writes and differentiates as torch's does for the index forms
torch reads its own way: lists read as tuples (with torch's warning), sequences
and tensors inside an index, 0-d integer tensors, Python bools, uint8 masks, a
second '...', and advanced indices separated by ints, slices or None. One lambda
drives both libraries; forward and gradient (random cotangent) are compared."""

import random
import warnings

import numpy as np
import pytest
import torch

import chapters.autodiff as ad
from chapters.torchcheck import assert_close


def _part(r: random.Random, lib, size: int):
    k = r.randrange(12)
    if k == 0:
        return r.randrange(-size, size)
    if k == 1:
        return slice(None)
    if k == 2:
        return slice(r.randrange(size), None, r.choice([1, 2]))
    if k == 3:
        return None
    if k == 4:
        return Ellipsis
    if k == 5:
        return [r.randrange(-size, size) for _ in range(r.choice([1, 2, 3]))]
    if k == 6:
        return [[r.randrange(size)] for _ in range(r.choice([1, 3]))]
    if k == 7:
        return lib.tensor([r.randrange(size) for _ in range(r.choice([1, 3]))])
    if k == 8:
        return lib.tensor(r.randrange(size))
    if k == 9:
        return r.choice([True, False])
    if k == 10:
        return lib.tensor([r.random() < 0.5 for _ in range(size)])
    return tuple(r.randrange(size) for _ in range(2))


def _index(seed: int, lib):
    """The same random index built for either library (same draws)."""
    r = random.Random(seed)
    parts = [_part(r, lib, 2) for _ in range(r.choice([1, 2, 3, 4]))]
    # a second '...' is the table's business: torch's rule for it has no numpy twin
    seen = [k for k, part in enumerate(parts) if part is Ellipsis]
    for k in seen[1:]:
        parts[k] = slice(None)
    wrap = r.choice(["tuple", "list", "single"])
    return tuple(parts) if wrap == "tuple" else parts if wrap == "list" else parts[0]


def _read(lib, x, index):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = x[index]
        except (IndexError, RuntimeError, ValueError, TypeError) as error:
            return None, type(error), []
    return out, None, [(w.category, str(w.message).split(" (Triggered")[0]) for w in caught]


TABLE = [  # (shape, index, torch's result shape) -- the shapes are asserted from torch too
    ((4, 5, 6), lambda lib: [[0, 1], [1, 2]], (2, 6)),
    ((4, 5, 6), lambda lib: [slice(None), [1, 2]], (4, 2, 6)),
    ((4, 5, 6), lambda lib: [lib.tensor([0, 1]), lib.tensor([1, 2])], (2, 6)),
    ((4, 5, 6), lambda lib: [[[0, 1]], [[1, 2]]], (1, 2, 6)),
    ((4, 5, 6), lambda lib: (lib.tensor(0), slice(None), [1, 2]), (5, 2)),
    ((4, 5, 6), lambda lib: (0, True, [1, 2]), (2, 6)),
    ((4, 5, 6), lambda lib: ((0, 1), 2), (2, 6)),
    ((4, 5, 6), lambda lib: [0, [1, 2]], (2, 6)),
    ((4, 5, 6), lambda lib: [None, [1, 2]], (1, 2, 5, 6)),
    ((4, 5, 6), lambda lib: (Ellipsis, [0, 1], Ellipsis), (4, 5, 2)),
    ((4, 5, 6), lambda lib: [[]], (0, 5, 6)),
    # the failing family: lists of index lists mixed with None, ints and slices
    ((1, 4, 6, 3, 4), lambda lib: [None, slice(None), None, [[0], [1], [2], [3]], None,
                                    slice(None), [0, 1, 2], 0], (4, 3, 1, 1, 1, 1, 6)),
    ((2, 4, 6, 3, 4), lambda lib: [0, None, slice(None), None, slice(None), [[0, 1, 2]], None,
                                    slice(None)], (1, 4, 1, 6, 1, 3, 1, 4)),
]


@pytest.mark.parametrize("shape,make,expected", TABLE)
def test_the_table_reads_as_torch(shape, make, expected):
    x = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    t, t_error, t_warn = _read(torch, torch.tensor(x), make(torch))
    e, e_error, e_warn = _read(ad, ad.tensor(x), make(ad))
    assert t_error is None and tuple(t.shape) == expected, "the table row is not torch's"
    assert e_error is None, f"engine refused an index torch reads: {e_error}"
    assert_close(e, t, rtol=0, atol=0, what="x[index]")
    assert e_warn == t_warn


@pytest.mark.parametrize("block", range(6))
def test_random_indices_read_write_and_differentiate_as_torch(block):
    rng = np.random.default_rng(block)
    for seed in range(block * 150, block * 150 + 150):
        shape = tuple(int(n) for n in rng.choice([2, 3], size=rng.choice([2, 3, 4])))
        x = rng.standard_normal(shape)
        tx = torch.tensor(x, requires_grad=True)
        ex = ad.tensor(x, requires_grad=True)
        t, t_error, t_warn = _read(torch, tx, _index(seed, torch))
        e, e_error, e_warn = _read(ad, ex, _index(seed, ad))
        case = f"shape {shape}, index {_index(seed, torch)!r}"
        assert (t_error is None) == (e_error is None), f"{case}: torch {t_error}, engine {e_error}"
        if t_error is not None:
            continue
        assert e_warn == t_warn, case
        assert_close(e, t.detach(), rtol=0, atol=0, what=f"{case}: forward")
        cotangent = rng.standard_normal(tuple(t.shape))
        t.backward(torch.tensor(cotangent))
        e.backward(ad.tensor(cotangent))
        assert_close(ex.grad, tx.grad, rtol=1e-12, atol=1e-12, what=f"{case}: gradient")
        # writing: the same values land in the same places (torch's last write wins, as
        # numpy's does, only without repeats, so write a constant)
        tw, ew = torch.tensor(x), ad.tensor(x)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tw[_index(seed, torch)] = 7.0
            ew[_index(seed, ad)] = 7.0
            value = rng.standard_normal(tuple(t.shape))
            tv, ev = torch.tensor(x), ad.tensor(x)
            try:
                tv[_index(seed, torch)] = torch.tensor(value)
            except RuntimeError:  # torch refuses some writes through repeated indices
                continue
            ev[_index(seed, ad)] = ad.tensor(value)
        assert_close(ew, tw, rtol=0, atol=0, what=f"{case}: x[index] = 7")
        if len({tuple(r) for r in np.argwhere(np.ones(t.shape))}) == t.numel():
            np.testing.assert_array_equal(ev.numpy() == 0, tv.numpy() == 0)


def test_a_uint8_index_is_a_mask_with_torch_warning():
    x = np.arange(12.0).reshape(4, 3)
    t, _, t_warn = _read(torch, torch.tensor(x), torch.tensor([1, 0, 1, 0], dtype=torch.uint8))
    e, _, e_warn = _read(ad, ad.tensor(x), ad.tensor(np.array([1, 0, 1, 0], np.uint8)))
    assert_close(e, t, rtol=0, atol=0, what="x[uint8 mask]")
    assert e_warn == t_warn and t_warn


def test_a_second_ellipsis_with_items_after_it_is_refused_as_torch_refuses():
    x = np.zeros((2, 3, 4))
    assert _read(torch, torch.tensor(x), (Ellipsis, Ellipsis, 0))[1] is IndexError
    assert _read(ad, ad.tensor(x), (Ellipsis, Ellipsis, 0))[1] is IndexError
