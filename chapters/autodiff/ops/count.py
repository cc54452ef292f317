"""Selecting, counting and repeating: masked_select, argwhere, count_nonzero,
bincount, diff, repeat_interleave.

The differentiable ones are compositions with rules from elsewhere, so there
is no new derivative to get wrong:

* masked_select(x, m) = expand(x)[m]: a ``getitem`` with a bool mask, whose
  adjoint writes g back at the selected positions (and expand's sums the
  copies when the mask broadcasts x);
* diff(x) = x[1:] - x[:-1] along a dim, n times: two slices and a ``sub``;
  so dL/dx[i] = g[i - 1] - g[i] (each element feeds two differences);
* repeat_interleave(x, r) = x[p] along a dim with p = (0,..,0, 1,..,1, ...),
  index i written r_i times: a ``getitem`` whose adjoint sums the copies;
* bincount(i, w)[k] = sum of w_j over the j with i_j = k: a ``scatter_add``
  of w into zeros, linear in w with dL/dw_j = g[i_j] (a gather).

argwhere, count_nonzero and bincount without weights return int64 counts or
positions, which have no gradient.
"""

from __future__ import annotations

import numpy as np

from chapters.graph.ops import check_dim, normalize_dims

from .. import dtypes
from ..dispatch import public
from ..tensor import Tensor, apply, tensor_method
from .select import nonzero


def _bool_mask(op: str, mask) -> np.ndarray:
    if not isinstance(mask, Tensor):
        raise TypeError(f"{op}(): mask must be a Tensor, got {type(mask).__name__}; wrap it "
                        "with torch.tensor(mask).")
    if mask.dtype != np.bool_:
        raise RuntimeError(f"{op}: expected BoolTensor for mask, got {mask.dtype}; compare "
                           "first, e.g. mask != 0.")
    return mask.data


def _broadcast_shape(op: str, *shapes) -> tuple:
    """The shape the operands broadcast to, torch's RuntimeError if none."""
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        raise RuntimeError(f"{op}: shapes {[list(s) for s in shapes]} do not broadcast "
                           "together; sizes must match or be 1 in each dim.") from None


@tensor_method()
@public("masked_select")
def masked_select(input, mask):
    """torch.masked_select: the elements of x where the bool mask is True, in
    row-major order, as a 1-d tensor; x and mask broadcast together first."""
    m = _bool_mask("masked_select", mask)
    shape = _broadcast_shape("masked_select", input.shape, m.shape)
    return apply("getitem", (input.expand(shape),), {"index": np.broadcast_to(m, shape)})


@tensor_method()
@public("argwhere")
def argwhere(input):
    """torch.argwhere: the positions of the nonzero elements, one row each
    (shape (n, ndim), int64): ``nonzero``."""
    return nonzero(input)


@tensor_method()
@public("count_nonzero")
def count_nonzero(input, dim=None):
    """torch.count_nonzero: how many elements over ``dim`` (an int, a tuple,
    or all when None or empty) are not zero (NaN counts), as int64."""
    dims = normalize_dims("count_nonzero", dim, input.ndim) if dim not in (None, ()) else None
    axis = dims if input.ndim else None
    return Tensor(np.asarray((input.data != 0).sum(axis=axis), dtype=np.int64))


def _bincount_input(input) -> np.ndarray:
    if input.dtype.kind not in "iu":
        raise NotImplementedError(f"bincount: not implemented for {input.dtype} input; it "
                                  "counts integers, convert with x.long().")
    if input.ndim != 1 or (input.data.size and input.data.min() < 0):
        raise RuntimeError(f"bincount only supports 1-d non-negative integral inputs, got "
                           f"shape {list(input.shape)}; flatten it and drop negative values.")
    return input.data.astype(np.int64)


def _bincount_weights(weights, n: int) -> Tensor:
    """The weights in bincount's result dtype: float32 and float64 kept, any
    other dtype as float64 (as torch)."""
    if weights.ndim != 1 or weights.shape[0] != n:
        raise RuntimeError(f"bincount: weights should be 1-d and have the same length as "
                           f"input ({n}), got shape {list(weights.shape)}.")
    keep = weights.dtype in (np.dtype(np.float32), np.dtype(np.float64))
    return weights if keep else weights.to(np.float64)


@tensor_method()
@public("bincount")
def bincount(input, weights=None, minlength: int = 0):
    """torch.bincount: out[k] = how many times k occurs in the 1-d
    non-negative int input (int64), or with ``weights`` the sum of the
    weights where it occurs (a ``scatter_add``, differentiable in the
    weights); at least ``minlength`` bins, at least max(input) + 1. An
    empty input gives int64 zeros even with weights, as in torch."""
    if minlength < 0:
        raise RuntimeError(f"bincount: minlength should be >= 0, got {minlength}.")
    idx = _bincount_input(input)
    bins = max(minlength, int(idx.max()) + 1 if idx.size else 0)
    if weights is None or not idx.size:
        return Tensor(np.bincount(idx, minlength=bins).astype(np.int64))
    w = _bincount_weights(weights, idx.size)
    zeros = Tensor(np.zeros(bins, w.dtype))
    return zeros.scatter_add(0, Tensor(idx), w)


def _joined(op: str, input: Tensor, d: int, prepend, append) -> Tensor:
    """prepend, input and append joined along dim ``d`` in their common dtype."""
    parts = [p for p in (prepend, input, append) if p is not None]
    for p in parts:
        if not isinstance(p, Tensor):
            raise TypeError(f"{op}(): prepend and append must be Tensors, got "
                            f"{type(p).__name__}; wrap it with torch.tensor(...).")
        if p.ndim != input.ndim:
            raise RuntimeError(f"{op} expects prepend or append to be the same dimension as "
                               f"input ({input.ndim}), got shape {list(p.shape)}.")
        if any(a != b for k, (a, b) in enumerate(zip(p.shape, input.shape, strict=True))
               if k != d):
            raise RuntimeError(f"{op} expects the shape of prepend or append to match the "
                               f"input's {list(input.shape)} except along dim {d}, got "
                               f"{list(p.shape)}.")
    if len(parts) == 1:
        return input
    dtype = dtypes.result_dtype([p.data for p in parts])
    return apply("cat", tuple(p.to(dtype) for p in parts),
                 {"dim": d, "sizes": tuple(p.shape[d] for p in parts)})


@tensor_method()
@public("diff")
def diff(input, n: int = 1, dim: int = -1, prepend=None, append=None):
    """torch.diff: the n-th forward difference along ``dim``,
    out[i] = x[i + 1] - x[i] applied n times (``prepend``/``append`` joined
    first); for bools the difference is x[i + 1] != x[i] (xor)."""
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional; reshape a "
                           "0-d tensor with x.reshape(1).")
    if n < 0:
        raise RuntimeError(f"diff: order must be non-negative but got {n}.")
    d = check_dim("diff", dim, input.ndim)
    out = _joined("diff", input, d, prepend, append)
    for _ in range(min(n, out.shape[d])):
        length = out.shape[d] - 1
        later, earlier = out.narrow(d, 1, length), out.narrow(d, 0, length)
        out = later != earlier if out.dtype == np.bool_ else later - earlier
    return input.clone() if out is input else out


def _repeat_counts(op: str, repeats) -> np.ndarray:
    """A repeats tensor's counts: 0-d or 1-d, integer, non-negative."""
    if repeats.ndim > 1:
        raise RuntimeError(f"{op}: repeats must be 0-dim or 1-dim tensor, got shape "
                           f"{list(repeats.shape)}.")
    if repeats.dtype.kind not in "iu":
        raise NotImplementedError(f"{op}: not implemented for {repeats.dtype} repeats; the "
                                  "counts must be integers, convert with .long().")
    counts = repeats.data.reshape(-1)
    if counts.size and counts.min() < 0:
        raise RuntimeError(f"{op}: repeats can not be negative, got {counts.tolist()}.")
    return counts


def _repeat_positions(repeats, n: int) -> np.ndarray:
    """The index p along the dim: i written repeats[i] times (an int, or a
    tensor of one count or n counts)."""
    if isinstance(repeats, Tensor):
        counts = _repeat_counts("repeat_interleave", repeats)
        if counts.size not in (1, n):
            raise RuntimeError("repeat_interleave: repeats must have the same size as input "
                               f"along dim ({n}), or one element, got {counts.size}.")
    elif isinstance(repeats, int | np.integer):
        if repeats < 0:
            raise RuntimeError(f"repeat_interleave: Repeats must be non-negative, got "
                               f"{repeats}.")
        counts = np.asarray([repeats])
    else:
        raise TypeError(f"repeat_interleave(): repeats must be an int or an integer Tensor, "
                        f"got {type(repeats).__name__}.")
    return np.repeat(np.arange(n), np.broadcast_to(counts, (n,)))


def _checked_size(positions: np.ndarray, output_size) -> np.ndarray:
    if output_size is not None and output_size != positions.size:
        raise RuntimeError(f"repeat_interleave: Invalid output_size, expected "
                           f"{positions.size} but got {output_size}; leave it out to have it "
                           "computed.")
    return positions


@tensor_method()
@public("repeat_interleave")
def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """torch.repeat_interleave: each element (each slice along ``dim``;
    of the flattened tensor when dim is None) written ``repeats`` times in a
    row. With only a 1-d count tensor r: the indices 0..n-1, i repeated r[i]
    times (so ``x[repeat_interleave(r)]`` is ``repeat_interleave(x, r)``)."""
    if repeats is None:
        if input.ndim != 1:
            raise RuntimeError(f"repeat_interleave only accept 1D vector as repeat, got shape "
                               f"{list(input.shape)}.")
        counts = _repeat_counts("repeat_interleave", input)
        positions = np.repeat(np.arange(counts.size, dtype=input.dtype), counts)
        return Tensor(_checked_size(positions, output_size))
    if dim is not None and input.ndim == 0:
        raise IndexError("repeat_interleave: a 0-d tensor has no dim to repeat along; leave "
                         "dim=None, or reshape it to 1-d first.")
    x = input.reshape(-1) if dim is None else input
    d = 0 if dim is None else check_dim("repeat_interleave", dim, x.ndim)
    positions = _checked_size(_repeat_positions(repeats, x.shape[d]), output_size)
    return apply("getitem", (x,), {"index": (slice(None),) * d + (positions,)})
