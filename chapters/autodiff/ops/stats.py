"""Order statistics and moments: var_mean, std_mean, aminmax, median,
kthvalue, mode.

None has a rule of its own. The moment pairs and aminmax are two existing
reductions returned together. The order statistics choose, in each slice
along ``dim``, one position of the input (numpy finds it from a stable sort
of the values); the value is then ``gather(x, dim, index)``, so the gradient
flows to the chosen element only, as in torch. The global ``median()`` is
the amax of the elements equal to the median, so tied elements share its
gradient evenly, as torch's do.

Which of several equal elements an index names: torch's CPU median and
kthvalue pick one by a selection algorithm whose choice among ties is not
specified (its documentation says so); this engine takes them in stable
sorted order. mode returns the smallest of the most frequent values and the
last position where it occurs, as torch does. NaN sorts above every number;
a slice holding NaN has median NaN, as in torch.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from chapters.graph.ops import normalize_dims

from .. import dtypes
from ..dispatch import public
from ..tensor import Tensor, apply, tensor_method

_MinMax = namedtuple("return_types", ["min", "max"])
_ValuesIndices = namedtuple("return_types", ["values", "indices"])


def _check_floating(op: str, input) -> None:
    if not dtypes.is_floating(input.dtype):
        raise RuntimeError(f"{op} only support floating point and complex dtypes, got "
                           f"{input.dtype}; convert first, e.g. torch.{op}(x.float()).")


@public("var_mean")
def var_mean(input, dim=None, *, correction=1, keepdim: bool = False, unbiased=None):
    """torch.var_mean: ``(var, mean)`` over ``dim``; var divides the squared
    deviations by N - correction (1: the unbiased estimate, 0: the population's)."""
    _check_floating("var_mean", input)
    return (input.var(dim, keepdim, correction=correction, unbiased=unbiased),
            input.mean(dim, keepdim))


@public("std_mean")
def std_mean(input, dim=None, *, correction=1, keepdim: bool = False, unbiased=None):
    """torch.std_mean: ``(std, mean)``, std = sqrt(var) as in var_mean."""
    _check_floating("std_mean", input)
    return (input.std(dim, keepdim, correction=correction, unbiased=unbiased),
            input.mean(dim, keepdim))


@tensor_method()
@public("aminmax")
def aminmax(input, *, dim=None, keepdim: bool = False):
    """torch.aminmax: the named pair ``(min, max)``, amin's and amax's values
    and gradients (ties share them evenly)."""
    return _MinMax(input.amin(dim, keepdim), input.amax(dim, keepdim))


# ---------------------------------------------------------- order statistics


def _sorted_order(values: np.ndarray, d: int) -> np.ndarray:
    """The stable ascending permutation along ``d``; NaN sorts last."""
    return np.argsort(values, axis=d, kind="stable").astype(np.int64)


def _select(op: str, input, dim, keepdim: bool, position) -> _ValuesIndices:
    """Named ``(values, indices)``: in each slice along ``dim`` the element
    whose position in the stable sorted order is ``position(sorted, order, d)``
    (an array with dim kept as size 1); values are a gather, so the gradient
    flows to the chosen element."""
    (d,) = normalize_dims(op, dim, input.ndim)
    flat = input.reshape(1) if input.ndim == 0 else input
    if flat.shape[d] == 0:
        raise IndexError(f"{op}(): Expected reduction dim {d} to have non-zero size; the "
                         f"tensor of shape {list(input.shape)} has no element to choose there.")
    order = _sorted_order(flat.data, d)
    ordered = np.take_along_axis(flat.data, order, d)
    index = np.take_along_axis(order, position(ordered, order, d), d)
    values = apply("gather", (flat,), {"dim": d, "index": index})
    if input.ndim == 0:
        return _ValuesIndices(values.reshape(()), Tensor(index.reshape(())))
    if not keepdim:
        values, index = values.squeeze(d), np.squeeze(index, d)
    return _ValuesIndices(values, Tensor(index))


def _lower_middle(ordered: np.ndarray, order: np.ndarray, d: int) -> np.ndarray:
    """The lower of the two middle positions, (n - 1) // 2; where the slice
    holds NaN, the first NaN's position (NaN sorts last, after the numbers)."""
    nans = np.isnan(ordered) if dtypes.is_floating(ordered.dtype) else np.zeros(ordered.shape, bool)
    numbers = ordered.shape[d] - nans.sum(axis=d, keepdims=True)
    return np.where(numbers < ordered.shape[d], numbers, (ordered.shape[d] - 1) // 2)


def _global_median(input) -> Tensor:
    """The lower middle value of all elements: the amax of the elements equal
    to it, so tied elements share the gradient, as torch's do. With NaN
    present the median is NaN (the NaNs share its gradient); with no
    elements it is NaN (an empty sum plus NaN, to stay in the graph), and for
    integers what NaN becomes when converted (0, or the dtype's minimum)."""
    flat = input.reshape(-1)
    if flat.numel() == 0 and input.is_floating_point():
        return flat.sum() + float("nan")
    if flat.numel() == 0:  # NaN converted to the integer dtype, as torch's kernel does
        with np.errstate(invalid="ignore"):
            return Tensor(np.array(np.nan, np.float32).astype(input.dtype))
    nans = np.flatnonzero(np.isnan(flat.data)) if input.is_floating_point() else ()
    if len(nans):  # NaN is the median; the NaNs share its gradient
        return apply("getitem", (flat,), {"index": nans}).mean()
    middle = np.sort(flat.data)[(flat.numel() - 1) // 2]
    return apply("getitem", (flat,), {"index": flat.data == middle}).amax()


@tensor_method()
@public("median")
def median(input, dim=None, keepdim: bool = False):
    """torch.median: with no dim, the lower of the two middle values of all
    elements; with ``dim``, the named pair ``(values, indices)`` per slice."""
    dtypes.check_implemented("median", input.dtype, bool_ok=False)
    if dim is None:
        return _global_median(input)
    return _select("median", input, dim, keepdim, _lower_middle)


@tensor_method()
@public("kthvalue")
def kthvalue(input, k: int, dim: int = -1, keepdim: bool = False):
    """torch.kthvalue: the k-th smallest element (k from 1) of each slice, and its index."""
    dtypes.check_implemented("kthvalue", input.dtype, bool_ok=False)
    size = input.shape[dim] if input.ndim else 1
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {dim}: "
                           f"k = {k} but the dim has {size} elements; pick 1 <= k <= {size}.")
    return _select("kthvalue", input, dim, keepdim,
                   lambda ordered, order, d: np.full_like(np.take(order, [0], d), k - 1))


def _most_frequent_end(ordered: np.ndarray) -> int:
    """In one sorted slice, the last position of the longest run of equal
    values (the first such run: the smallest value among the most frequent)."""
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    lengths = np.diff(np.r_[starts, len(ordered)])
    longest = int(np.argmax(lengths))
    return int(starts[longest] + lengths[longest] - 1)


def _mode_position(ordered: np.ndarray, order: np.ndarray, d: int) -> np.ndarray:
    """The end of the most frequent value's run: stable sorting keeps equal
    values in input order, so that is the value's last position in the input."""
    if ordered.size == 0:  # no slices at all
        return np.take(order, [0], d)
    ends = np.apply_along_axis(_most_frequent_end, d, ordered)
    return np.expand_dims(ends, d).astype(np.int64)


@tensor_method()
@public("mode")
def mode(input, dim: int = -1, keepdim: bool = False):
    """torch.mode: the most frequent value of each slice (the smallest one
    among equally frequent values) and the last index where it occurs."""
    return _select("mode", input, dim, keepdim, _mode_position)
