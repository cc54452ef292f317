"""Finding values among others: isin, searchsorted, bucketize, histc.

Each answers a question about positions or counts (bool membership, int64
insertion points, a histogram), so none has a gradient, in torch as here:
these return new tensors with no history. The math:

* isin(x, T)[k] = (x[k] == t for some t in T), compared in the dtype x and
  T promote to (NaN equals nothing);
* searchsorted(b, v)[k] = #{i : b[i] < v[k]} for a sorted b (the left
  insertion point), or #{i : b[i] <= v[k]} with ``right``; with a batch of
  boundary rows, row r of v is searched in row r of b;
* bucketize(v, b) = searchsorted(b, v) for a 1-d b;
* histc(x, bins, lo, hi)[j] = #{k : lo + j w <= x[k] < lo + (j + 1) w} with
  w = (hi - lo) / bins, the last bin closed; values outside [lo, hi] are
  ignored, and lo = hi = 0 means the data's min and max.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..dispatch import public
from ..tensor import Tensor, tensor_method


def _array(value) -> np.ndarray:
    return value.data if isinstance(value, Tensor) else np.asarray(value)


@public("isin")
def isin(elements, test_elements, *, assume_unique: bool = False, invert: bool = False):
    """torch.isin: for each element, whether it occurs in ``test_elements``
    (either may be a number); ``invert`` asks the opposite. bool result."""
    a, b = _array(elements), _array(test_elements)
    for x in (a, b):
        if x.dtype == np.bool_:
            raise RuntimeError("Unsupported input type encountered for isin(): Bool; compare "
                               "masks with ==, or convert them with .long() first.")
    common = dtypes.result_dtype([elements, test_elements])
    a, b = a.astype(common), b.astype(common).reshape(-1)
    found = (a.reshape(-1, 1) == b.reshape(1, -1)).any(axis=1).reshape(a.shape)
    return Tensor(found != invert)


def _side(right: bool, side) -> bool:
    """True for the right insertion point (torch's ``right`` or ``side``)."""
    if side is None:
        return right
    if side not in ("left", "right"):
        raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got "
                           f"{side}.")
    if right and side == "left":
        raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, "
                           "got side of left while right was True; give only one of them.")
    return side == "right"


def _check_boundaries(b: np.ndarray, v: np.ndarray) -> None:
    if b.ndim == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive "
                           "dimension, but got 0 dimension; reshape it with b.reshape(1).")
    if b.dtype == np.bool_ or v.dtype == np.bool_:
        raise NotImplementedError("searchsorted: not implemented for bool tensors; convert "
                                  "them with .long() first.")
    if b.ndim > 1 and (v.ndim != b.ndim or v.shape[:-1] != b.shape[:-1]):
        raise RuntimeError(f"torch.searchsorted(): boundaries tensor should be 1 dimension or "
                           f"the first N-1 dimensions of boundaries tensor and input value "
                           f"tensor must match, but we got boundaries tensor {list(b.shape)} "
                           f"and input value tensor {list(v.shape)}.")


def _insertion_points(b: np.ndarray, v: np.ndarray, right: bool) -> np.ndarray:
    """np.searchsorted row by row (one boundary row per row of v, or one for all)."""
    side = "right" if right else "left"
    if b.ndim == 1:
        return np.searchsorted(b, v, side=side)
    rows_b, rows_v = b.reshape(-1, b.shape[-1]), v.reshape(-1, v.shape[-1])
    out = [np.searchsorted(rb, rv, side=side) for rb, rv in zip(rows_b, rows_v, strict=True)]
    return np.stack(out).reshape(v.shape) if out else np.zeros(v.shape, np.int64)


@public("searchsorted")
def searchsorted(sorted_sequence, input, *, out_int32: bool = False, right: bool = False,
                 side=None, sorter=None):
    """torch.searchsorted: where each value of ``input`` would be inserted
    into the sorted last dim of ``sorted_sequence`` to keep it sorted (int64,
    or int32 with ``out_int32``); ``sorter`` sorts an unsorted sequence."""
    b, v = _array(sorted_sequence), _array(input)
    _check_boundaries(b, v)
    if sorter is not None:
        b = np.take_along_axis(b, _array(sorter).astype(np.int64), axis=-1)
    common = dtypes.result_dtype([sorted_sequence, input])
    points = _insertion_points(b.astype(common), v.astype(common), _side(right, side))
    return Tensor(np.asarray(points, np.int32 if out_int32 else np.int64))


@public("bucketize")
def bucketize(input, boundaries, *, out_int32: bool = False, right: bool = False):
    """torch.bucketize: the bucket of each value among 1-d ``boundaries``:
    searchsorted(boundaries, input, right=right)."""
    b = _array(boundaries)
    if b.ndim != 1:
        raise RuntimeError(f"bucketize: boundaries tensor must be 1 dimension, but got "
                           f"dim({b.ndim}); use searchsorted for batched boundaries.")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


def _histogram_range(x: np.ndarray, lo: float, hi: float) -> tuple:
    if lo > hi:
        raise RuntimeError(f"torch.histc: max must be larger than min, got min={lo}, "
                           f"max={hi}.")
    if lo == hi and x.size:
        lo, hi = float(x.min()), float(x.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{lo}, {hi}] is not finite; drop NaN and "
                           "infinities first, or give min and max.")
    return lo, hi


@tensor_method()
@public("histc")
def histc(input, bins: int = 100, min: float = 0, max: float = 0):  # noqa: A002 (torch's names)
    """torch.histc: a histogram of the (flattened, floating) input in
    ``bins`` equal bins over [min, max], in the input's dtype."""
    dtypes.check_implemented("histc", input.dtype, bool_ok=False, integer_ok=False)
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for "
                           "dimension 0.")
    x = input.data.reshape(-1).astype(np.float64)
    lo, hi = _histogram_range(x, float(min), float(max))
    inside = x[(x >= lo) & (x <= hi)]
    which = np.minimum(((inside - lo) * bins / (hi - lo)).astype(np.int64), bins - 1)
    return Tensor(np.bincount(which, minlength=bins).astype(input.dtype))
