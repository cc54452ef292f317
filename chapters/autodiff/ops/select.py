"""Reading and writing at integer indices along a dim: gather, scatter,
scatter_add, scatter_reduce, index_select, masked_fill, ``x.where`` and nonzero.

gather and scatter_add are the two sides of one linear map
(:mod:`.gather` registers them): z = gather(x, dim, index) has
dL/dx = scatter_add(g, dim, index), and the other way round. ``scatter``
*replaces* elements, so it is registered here with its own rule: the
overwritten elements of x get no gradient, and src gets g read back at
index. index_select and masked_fill are compositions (``getitem``,
``where``) with their gradients from those ops.
"""

from __future__ import annotations

import numpy as np

from chapters.graph.ops import TensorMeta, normalize_dims, register_op

from ..dispatch import PROMOTE, public
from ..functions import where as _where
from ..rules import register
from ..tensor import Tensor, apply, tensor_method
from .common import masked
from .gather import along_axis_index

_INTEGER = "iu"


def index_array(op: str, index) -> np.ndarray:
    """The index's integer array, int64 as torch's index tensors."""
    array = np.asarray(index.data if isinstance(index, Tensor) else index)
    if array.dtype.kind not in _INTEGER:
        raise RuntimeError(f"{op}(): expected an integer (int64) index tensor, got "
                           f"{array.dtype}; convert it with index.long().")
    return array.astype(np.int64, copy=False)


def checked_index(op: str, x: Tensor, dim: int, index: np.ndarray) -> tuple:
    """``(dim, index)`` with dim in range, index of x's rank and in bounds,
    and no larger than x off ``dim`` (torch's rules for gather/scatter)."""
    (d,) = normalize_dims(op, dim, x.ndim)
    if index.ndim != x.ndim:
        raise RuntimeError(f"{op}(): index tensor must have the same number of dimensions as "
                           f"input ({x.ndim}), got shape {list(index.shape)}.")
    for k, (i, s) in enumerate(zip(index.shape, x.shape, strict=True)):
        if k != d and i > s:
            raise RuntimeError(f"{op}(): size of index {list(index.shape)} exceeds input "
                               f"{list(x.shape)} in dim {k}; only dim {d} may be larger.")
    size = x.shape[d] if x.ndim else 1
    if index.size and (index.min() < 0 or index.max() >= size):
        bad = int(index.min()) if index.min() < 0 else int(index.max())
        raise RuntimeError(f"{op}(): index {bad} is out of bounds for dimension {d} with "
                           f"size {size}; indices must lie in [0, {size}).")
    return d, index


def _corner(x: Tensor, shape: tuple) -> Tensor:
    """x[:shape[0], :shape[1], ...]: src cut to the index's shape."""
    if tuple(x.shape) == tuple(shape):
        return x
    return x[tuple(slice(0, s) for s in shape)]


@tensor_method()
@public("gather")
def gather(input, dim: int, index):
    """torch.gather: out[i][j] = input[i][index[i][j]] along ``dim`` (for dim = 1)."""
    d, idx = checked_index("gather", input, dim, index_array("gather", index))
    if not input.ndim:
        return apply("gather", (input.reshape(1),), {"dim": 0, "index": idx.reshape(1)}).reshape(())
    return apply("gather", (input,), {"dim": d, "index": idx})


def _src(x: Tensor, src, index: np.ndarray, d: int):
    """src as a tensor of x's dtype cut to index's shape, or a scalar filled in."""
    if not isinstance(src, Tensor):
        return np.full(index.shape, src, dtype=x.dtype)
    if src.dtype != x.dtype:
        raise RuntimeError(f"scatter(): expected self.dtype to be equal to src.dtype, got "
                           f"{x.dtype} and {src.dtype}; cast src with src.to(x.dtype).")
    return _corner(src, index.shape)


@tensor_method()
@public("scatter_add", autocast={"cuda": PROMOTE})
def scatter_add(input, dim: int, index, src):
    """torch.scatter_add: input with src[i][j] added at input[i][index[i][j]]
    (along dim = 1); repeated indices add up. input + scatter_add(src), whose
    gradient with respect to src is gather(g)."""
    d, idx = checked_index("scatter_add", input, dim, index_array("scatter_add", index))
    added = apply("scatter_add", (_src(input, src, idx, d),), {
        "dim": d, "index": idx, "shape": tuple(input.shape)})
    return input + added


# --------------------------------------------------------------- scatter


def _scatter_meta(x: TensorMeta, src: TensorMeta, dim, index, **_) -> TensorMeta:
    return x


@register_op("scatter", _scatter_meta)
def scatter_kernel(x, src, dim, index):
    """A copy of x with src written at ``index`` along ``dim``; with repeated
    indices one of the writes wins (torch leaves which one unspecified)."""
    out = x.copy()
    out[along_axis_index(index, dim)] = src
    return out


def written_mask(shape: tuple, dim: int, index: np.ndarray) -> np.ndarray:
    hit = np.zeros(shape, dtype=bool)
    hit[along_axis_index(index, dim)] = True
    return hit


def scatter_vjp(ctx, g):
    """z = x with src written at index:  dL/dx = g where nothing was written,
    else 0;  dL/dsrc = gather(g, dim, index)."""
    dim, index = ctx.attrs["dim"], ctx.attrs["index"]
    need_x, need_src = ctx.needs_input_grad
    gx = masked(g, ~written_mask(g.shape, dim, index)) if need_x else None
    gsrc = apply("gather", (g,), {"dim": dim, "index": index}) if need_src else None
    return gx, gsrc


def scatter_jvp(primals, tangents, out, dim, index):
    """tz = tx with tsrc written at index (scatter is linear in (x, src))."""
    tx, tsrc = tangents
    tsrc = tsrc if tsrc is not None else np.zeros(index.shape, out.dtype)
    return apply("scatter", (tx, tsrc), {"dim": dim, "index": index})


register("scatter", vjp=scatter_vjp, jvp=scatter_jvp, movement=True, grad_fn="ScatterBackward0")


@tensor_method()
@public("scatter")
def scatter(input, dim: int, index, src=None, *, value=None, reduce=None):
    """torch.scatter: a copy of input with ``src`` (a tensor, or the number
    ``value``) written at input[i][index[i][j]] (along dim = 1)."""
    if reduce is not None:
        raise NotImplementedError("scatter(reduce=...) is deprecated in torch; use "
                                  f"scatter_reduce(dim, index, src, reduce={reduce!r}).")
    source = src if src is not None else value
    if source is None:
        raise TypeError("scatter() needs src (a tensor) or value (a number)")
    d, idx = checked_index("scatter", input, dim, index_array("scatter", index))
    return apply("scatter", (input, _src(input, source, idx, d)), {"dim": d, "index": idx})


# ------------------------------------------------------- index_select, ...


@tensor_method()
@public("index_select")
def index_select(input, dim: int, index):
    """torch.index_select: the slices of input at the positions ``index``
    (a vector) along ``dim``: x[..., index, ...], a ``getitem``."""
    idx = index_array("index_select", index)
    if idx.ndim > 1:
        raise IndexError(f"index_select(): Index is supposed to be a vector, got shape "
                         f"{list(idx.shape)}; flatten it with index.reshape(-1).")
    (d,) = normalize_dims("index_select", dim, input.ndim)
    if not input.ndim:
        return apply("getitem", (input.reshape(1),), {"index": idx.reshape(-1)}).reshape(())
    return apply("getitem", (input,), {"index": (slice(None),) * d + (idx.reshape(-1),)})


@tensor_method()
@public("masked_fill")
def masked_fill(input, mask, value):
    """torch.masked_fill: ``value`` where mask is True, input elsewhere (a
    ``where``; value may be a 0-d tensor, which then gets a gradient too)."""
    m = mask.data if isinstance(mask, Tensor) else np.asarray(mask)
    if m.dtype != np.bool_:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with "
                           f"dtype {m.dtype}; compare first, e.g. mask != 0.")
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but "
                               f"got tensor with {value.ndim} dimension(s).")
        return apply("where", (m, value.to(input.dtype), input))
    return apply("where", (m, _fill_value(value, input.dtype), input))


def _fill_value(value, dtype: np.dtype) -> np.ndarray:
    """A Python number as a 0-d array of ``dtype``; torch refuses one that the
    dtype cannot hold (-1 into uint8) instead of wrapping it around."""
    if dtype.kind in "iu" and not np.iinfo(dtype).min <= value <= np.iinfo(dtype).max:
        raise RuntimeError(f"masked_fill: value {value} cannot be converted to type {dtype} "
                           "without overflow; convert the tensor first, e.g. x.long().")
    return np.asarray(value).astype(dtype)


@tensor_method()
@public("where")
def where(input, condition, other):
    """``x.where(condition, y)``: torch.where(condition, x, y), the method form."""
    return _where(condition, input, other)


@tensor_method()
@public("nonzero")
def nonzero(input, *, as_tuple: bool = False):
    """torch.nonzero: the indices of the nonzero elements, one row each
    (shape (n, ndim), int64), or one index tensor per dim with ``as_tuple``."""
    positions = np.nonzero(np.atleast_1d(input.data))
    if as_tuple:
        return tuple(Tensor(p.astype(np.int64)) for p in positions)
    return Tensor(np.stack(positions, axis=1).astype(np.int64)[:, :input.ndim])
