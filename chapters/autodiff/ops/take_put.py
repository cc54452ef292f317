"""Reading and writing by position: take, take_along_dim, index_add,
index_copy, index_fill, index_put, and their in-place forms.

All are compositions of ops that already have rules, so there is no new
derivative to get wrong. The writes share one idea: number x's elements
0..n-1 (``P = arange(n).reshape(x.shape)``), read the numbers of the
positions being written with the same index (``P[index]``), and write into
the flattened x there:

* index_put(x, I, v) = scatter(flat x, P[I], v): written elements get no
  gradient, dL/dv = g[I] (a gather); with ``accumulate`` it is
  scatter_add, x + v at I (repeated positions add up): dL/dx = g;
* index_add(x, d, i, s, alpha) = scatter_add of alpha s at P[..., i, ...];
* index_copy(x, d, i, s) = scatter of s at P[..., i, ...];
* index_fill(x, d, i, v) = masked_fill on the positions along d (a ``where``);
* take(x, i) = (flat x)[i] and take_along_dim(x, i, d) = gather(x, d, i)
  after broadcasting: their adjoints add g back where each element came from.

The in-place forms (``x.index_add_(...)``) compute the out-of-place result
and write it into x, refusing what the engine's other in-place ops refuse.
"""

from __future__ import annotations

import numpy as np

from chapters.graph.ops import normalize_dims

from ..dispatch import PROMOTE, public
from ..indexing import index_torch_style
from ..tensor import Tensor, apply, tensor_method
from .select import index_array, masked_fill


def _long_index(op: str, index) -> np.ndarray:
    array = np.asarray(index.data if isinstance(index, Tensor) else index)
    if array.dtype != np.int64:
        raise RuntimeError(f"{op}(): expected a long (int64) tensor for the index, got "
                           f"{array.dtype}; convert it with index.long().")
    return array


def _wrapped(op: str, index: np.ndarray, size: int, dim: int) -> np.ndarray:
    """Negative positions counted from the end; out of [-size, size) refused."""
    if index.size and (index.min() < -size or index.max() >= size):
        bad = int(index.min()) if index.min() < -size else int(index.max())
        raise IndexError(f"{op}(): index {bad} is out of bounds for dimension {dim} with size "
                         f"{size}; indices must lie in [{-size}, {size}).")
    return index % max(size, 1)


@tensor_method()
@public("take")
def take(input, index):
    """torch.take: input read as a flat vector at ``index``, the result in
    index's shape: out[k] = flat(x)[index[k]], a ``getitem``."""
    idx = _wrapped("take", _long_index("take", index), input.data.size, 0)
    return apply("getitem", (input.reshape(-1),), {"index": idx})


def _same_rank(op: str, x: Tensor, idx: np.ndarray) -> None:
    if idx.ndim != x.ndim:
        raise RuntimeError(f"torch.{op}(): input and indices should have the same number of "
                           f"dimensions, but got {x.ndim} dimensions for input, and "
                           f"{idx.ndim} dimensions for indices; unsqueeze the indices.")


@tensor_method()
@public("take_along_dim")
def take_along_dim(input, indices, dim=None):
    """torch.take_along_dim: gather(x, dim, indices) with x and indices
    broadcast together off ``dim``; with no dim, both are flattened first.
    An index past the end is an IndexError here (torch's CPU kernel does not
    check it and reads whatever lies there)."""
    idx = _long_index("take_along_dim", indices)
    if dim is None:
        return take_along_dim(input.reshape(-1), Tensor(idx.reshape(-1)), 0)
    _same_rank("take_along_dim", input, idx)
    (d,) = normalize_dims("take_along_dim", dim, input.ndim)
    size = input.shape[d]
    shape = list(np.broadcast_shapes(tuple(np.delete(input.shape, d)),
                                     tuple(np.delete(idx.shape, d))))
    x = input.expand(shape[:d] + [size] + shape[d:])
    idx = np.broadcast_to(_wrapped("take_along_dim", idx, size, d),
                          shape[:d] + [idx.shape[d]] + shape[d:])
    return x.gather(d, Tensor(np.ascontiguousarray(idx)))


# --------------------------------------------------------------- writes


def _numbered(x: Tensor) -> np.ndarray:
    """P: each element's position in the flattened x."""
    return np.arange(x.data.size).reshape(x.shape)


def _write_flat(x: Tensor, where: np.ndarray, values: Tensor, accumulate: bool) -> Tensor:
    """x with ``values`` (shaped as ``where``) written, or added, at the flat
    positions ``where``: a scatter or scatter_add on the flattened x."""
    flat, at = x.reshape(-1), Tensor(where.reshape(-1).astype(np.int64))
    source = values.reshape(-1)
    out = flat.scatter_add(0, at, source) if accumulate else flat.scatter(0, at, source)
    return out.reshape(x.shape)


def _same_dtype(op: str, x: Tensor, source) -> None:
    if not isinstance(source, Tensor):
        raise TypeError(f"{op}(): source must be a Tensor, got {type(source).__name__}; wrap "
                        "it with torch.tensor(...).")
    if source.dtype != x.dtype:
        raise RuntimeError(f"{op}(): self ({x.dtype}) and source ({source.dtype}) must have "
                           f"the same dtype; convert it with source.to(x.dtype).")


def _along(op: str, x: Tensor, dim: int, index, *, negative: bool = False,
           out_of_range=IndexError) -> tuple:
    """``(d, idx)``: the dim and a 1-d int index in range (counted from the end
    where ``negative``), with the exception class torch raises for ``op``."""
    idx = index_array(op, index)
    if idx.ndim > 1:
        raise IndexError(f"{op}(): index should have dimension 1 or 0 (got shape "
                         f"{list(idx.shape)}); flatten it with index.reshape(-1).")
    (d,) = normalize_dims(op, dim, x.ndim)
    size = x.shape[d] if x.ndim else 1
    low = -size if negative else 0
    if idx.size and (idx.min() < low or idx.max() >= size):
        bad = int(idx.min()) if idx.min() < low else int(idx.max())
        raise out_of_range(f"{op}(): index {bad} is out of bounds for dimension {d} with size "
                           f"{size}; indices must lie in [{low}, {size}).")
    return d, idx.reshape(-1) % size


def _long_only(op: str, index, error) -> None:
    """index_copy and index_fill take int64 indices only (index_add also int32)."""
    if np.asarray(index.data if isinstance(index, Tensor) else index).dtype != np.int64:
        raise error(f"{op}(): Expected dtype int64 for index; convert it with index.long().")


def _positions_along(op: str, x: Tensor, dim: int, index, source: Tensor,
                     out_of_range=IndexError) -> np.ndarray:
    """P[..., index, ...] along dim, which must have source's shape."""
    d, idx = _along(op, x, dim, index, out_of_range=out_of_range)
    where = _numbered(x).reshape(x.shape or (1,))[(slice(None),) * d + (idx,)]
    if where.size != source.data.size or (x.ndim and where.shape != source.shape):
        raise RuntimeError(f"{op}(): source of shape {list(source.shape)} does not fit: "
                           f"{idx.size} indices along dim {d} of {list(x.shape)} need a source "
                           f"of shape {list(where.shape)}.")
    return where


@tensor_method()
@public("index_add")
def index_add(input, dim: int, index, source, *, alpha=1):
    """torch.index_add: x with alpha * source[..., k, ...] added at
    x[..., index[k], ...] along ``dim`` (repeated indices add up); a
    scatter_add, so dL/dx = g and dL/dsource = alpha g[..., index, ...]."""
    _same_dtype("index_add", input, source)
    where = _positions_along("index_add", input, dim, index, source, RuntimeError)
    if input.dtype.kind in "iu":  # torch converts alpha to the integer dtype first
        alpha = int(alpha)
    scaled = source if alpha == 1 else (source * alpha).to(input.dtype)
    return _write_flat(input, where, scaled, accumulate=True)


@tensor_method()
@public("index_copy", autocast={"cpu": PROMOTE})
def index_copy(input, dim: int, index, source):
    """torch.index_copy: x with x[..., index[k], ...] = source[..., k, ...]
    along ``dim``; a scatter, so the overwritten elements of x get no gradient
    and dL/dsource = g[..., index, ...]."""
    _same_dtype("index_copy", input, source)
    _long_only("index_copy", index, RuntimeError)
    where = _positions_along("index_copy", input, dim, index, source)
    return _write_flat(input, where, source, accumulate=False)


@tensor_method()
@public("index_fill")
def index_fill(input, dim: int, index, value):
    """torch.index_fill: x with every element of the slices x[..., index, ...]
    along ``dim`` set to ``value`` (a number, or a 0-d tensor that then gets
    the sum of g over them): a masked_fill."""
    if isinstance(value, Tensor) and value.ndim:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value.ndim} dimension(s); pass value.reshape(()).")
    _long_only("index_fill", index, IndexError)
    d, idx = _along("index_fill", input, dim, index, negative=True)
    mask = np.zeros(input.shape or (1,), dtype=bool)
    mask[(slice(None),) * d + (idx,)] = True
    return masked_fill(input, Tensor(mask.reshape(input.shape)), value)


def _index_parts(x: Tensor, indices) -> tuple:
    """index_put's indices as numpy arrays (int64 positions or bool masks),
    each checked against the dims it indexes."""
    if not isinstance(indices, tuple | list):
        raise TypeError(f"index_put(): indices must be a tuple of Tensors, got "
                        f"{type(indices).__name__}; write (index,) for one.")
    parts, dim = [], 0
    for t in indices:
        a = np.asarray(t.data if isinstance(t, Tensor) else t)
        if a.dtype != np.bool_ and a.dtype.kind not in "iu":
            raise IndexError(f"index_put(): tensors used as indices must be long, int, byte or "
                             f"bool tensors, got {a.dtype}; convert with .long().")
        spans = a.ndim if a.dtype == np.bool_ else 1
        if dim + spans > x.ndim:
            raise IndexError(f"index_put(): too many indices for a tensor of dimension "
                             f"{x.ndim} (got {dim + spans}); give at most one per dim.")
        if a.dtype != np.bool_:
            a = _wrapped("index_put", a.astype(np.int64), x.shape[dim], dim)
        parts.append(a)
        dim += spans
    return tuple(parts)


@tensor_method()
@public("index_put", autocast={"cuda": PROMOTE})
def index_put(input, indices, values, accumulate: bool = False):
    """torch.index_put: x with x[indices] = values (values broadcast to the
    shape of x[indices]); with ``accumulate``, x[indices] += values, where a
    position named twice gets both. A scatter / scatter_add of the values at
    P[indices]: dL/dvalues = g[indices] summed over the broadcast dims."""
    if not isinstance(values, Tensor):
        raise TypeError(f"index_put(): values must be a Tensor, not "
                        f"{type(values).__name__}; wrap it with torch.tensor(...).")
    if values.dtype != input.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{input.dtype} for the destination and {values.dtype} for the "
                           "source; convert it with values.to(x.dtype).")
    where = index_torch_style(_numbered(input), _index_parts(input, indices))
    try:
        spread = values.expand(where.shape)
    except Exception:
        raise RuntimeError(f"index_put(): shape mismatch: value tensor of shape "
                           f"{list(values.shape)} cannot be broadcast to indexing result of "
                           f"shape {list(where.shape)}.") from None
    return _write_flat(input, where, spread, accumulate)


# ------------------------------------------------------------- in place
# index_add_, index_copy_, index_fill_ and index_put_ are the in-place twins
# that chapters/autodiff/inplace.py derives from the methods above.


def index_put_(input, indices, values, accumulate: bool = False):
    """torch.index_put_: ``input.index_put_(indices, values, accumulate)``."""
    return input.index_put_(indices, values, accumulate)
