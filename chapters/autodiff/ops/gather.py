"""Reading elements by index, and the adjoints that write gradients back:
getitem / getitem_backward, gather / scatter_add, embedding.

Each reading op is linear in its input, with a writing op as its adjoint:
``getitem_backward`` scatters a gradient back into the shape ``getitem``
read from, ``scatter_add`` is the adjoint of ``gather``. Being ops with
their own rules, the adjoints let backward itself be differentiated.
"""

from __future__ import annotations

import numpy as np

from chapters.graph.ops import ShapeError, TensorMeta, register_op

from ..indexing import index_torch_style, torch_index
from ..rules import register
from ..tensor import apply

# ------------------------------------------------------ getitem and adjoint


def _index_meta(x: TensorMeta, index, **_) -> TensorMeta:
    out = index_torch_style(np.empty(x.shape, dtype=np.bool_), index)
    return TensorMeta(np.shape(out), x.dtype)


@register_op("getitem", _index_meta)
def getitem(x, index):
    """``x[index]`` as torch reads it (:mod:`chapters.autodiff.indexing`):
    basic slicing gives a view, integer arrays a copy."""
    return index_torch_style(x, index)


def _has_arrays(index) -> bool:
    parts = index if isinstance(index, tuple) else (index,)
    return any(isinstance(p, np.ndarray | list) for p in parts)


def _getitem_backward_meta(g: TensorMeta, index, shape, **_) -> TensorMeta:
    return TensorMeta(shape, g.dtype)


@register_op("getitem_backward", _getitem_backward_meta)
def getitem_backward(g, index, shape):
    """zeros(shape) with ``g`` added at ``index``: the adjoint of ``getitem``.
    Integer-array indices may repeat an element; ``np.add.at`` sums those."""
    out = np.zeros(shape, dtype=g.dtype)
    first, then = torch_index(index)
    if then is not None:  # torch's two steps: the first is basic, a view to write into
        np.add.at(out[first], then, g)
    elif _has_arrays(index):
        np.add.at(out, index, g)
    else:
        out[index] = g
    return out


def getitem_vjp(ctx, g):
    """z = x[i]:  dL/dx = zeros with g added at i (repeated indices add up)."""
    return (apply("getitem_backward", (g,), {"index": ctx.attrs["index"],
                                             "shape": ctx.input_meta[0][0]}),)


def getitem_jvp(primals, tangents, out, index):
    """tz = tx[i]."""
    return apply("getitem", (tangents[0],), {"index": index})


def getitem_backward_vjp(ctx, g):
    """z = scatter of x at i: a linear map whose adjoint is x[i], so dL/dx = g[i]."""
    return (apply("getitem", (g,), {"index": ctx.attrs["index"]}),)


def getitem_backward_jvp(primals, tangents, out, index, shape):
    """tz = the scatter of tx at i."""
    return apply("getitem_backward", (tangents[0],), {"index": index, "shape": shape})


register("getitem", vjp=getitem_vjp, jvp=getitem_jvp, view=True, movement=True)
register("getitem_backward", vjp=getitem_backward_vjp, jvp=getitem_backward_jvp,
         movement=True)

# --------------------------------------------------- gather and adjoint


def _gather_meta(x: TensorMeta, dim, index, **_) -> TensorMeta:
    return TensorMeta(np.shape(index), x.dtype)


@register_op("gather", _gather_meta)
def gather(x, dim, index):
    """``out[i][j] = x[i][index[i][j]]`` along ``dim`` (torch.gather); off
    ``dim`` the index may be smaller than x, and reads x's leading corner."""
    corner = tuple(slice(None) if k == dim % x.ndim else slice(0, n)
                   for k, n in enumerate(index.shape))
    return np.take_along_axis(x[corner], index, axis=dim)


def _scatter_add_meta(g: TensorMeta, dim, index, shape, **_) -> TensorMeta:
    return TensorMeta(shape, g.dtype)


def along_axis_index(index: np.ndarray, dim: int) -> tuple:
    """The full fancy index that addresses ``index`` along ``dim``."""
    grids = list(np.indices(index.shape, sparse=True))
    grids[dim % index.ndim] = index
    return tuple(grids)


@register_op("scatter_add", _scatter_add_meta)
def scatter_add(g, dim, index, shape):
    """zeros(shape) with ``g`` added at ``index`` along ``dim``: gather's adjoint."""
    out = np.zeros(shape, dtype=g.dtype)
    np.add.at(out, along_axis_index(index, dim), g)
    return out


def gather_vjp(ctx, g):
    """z = gather(x, dim, index):  dL/dx = zeros with g added at index along dim."""
    return (apply("scatter_add", (g,), {"dim": ctx.attrs["dim"], "index": ctx.attrs["index"],
                                        "shape": ctx.input_meta[0][0]}),)


def gather_jvp(primals, tangents, out, dim, index):
    """tz = gather(tx, dim, index)."""
    return apply("gather", (tangents[0],), {"dim": dim, "index": index})


def scatter_add_vjp(ctx, g):
    """z = scatter_add(x, dim, index): adjoint of gather, so dL/dx = gather(g)."""
    return (apply("gather", (g,), {"dim": ctx.attrs["dim"], "index": ctx.attrs["index"]}),)


def scatter_add_jvp(primals, tangents, out, dim, index, shape):
    """tz = scatter_add(tx, dim, index)."""
    return apply("scatter_add", (tangents[0],), {"dim": dim, "index": index, "shape": shape})


register("gather", vjp=gather_vjp, jvp=gather_jvp, movement=True)
register("scatter_add", vjp=scatter_add_vjp, jvp=scatter_add_jvp, movement=True)

# -------------------------------------------------------------- embedding


def _embedding_meta(w: TensorMeta, indices: TensorMeta, **_) -> TensorMeta:
    if len(w.shape) != 2:
        raise ShapeError(f"embedding: the weight must be 2-D (num_embeddings, dim), "
                         f"got {w.shape}")
    return TensorMeta(indices.shape + (w.shape[1],), w.dtype)


@register_op("embedding", _embedding_meta)
def embedding(w, indices):
    """Rows of the table ``w`` picked by integer ``indices``."""
    return np.take(w, indices, axis=0)


def embedding_vjp(ctx, g):
    """y = W[indices]:  dL/dW = zeros with each g row added at its index
    (a row looked up twice gets the sum)."""
    (indices,) = ctx.saved
    return apply("getitem_backward", (g,), {"index": (indices,),
                                            "shape": ctx.input_meta[0][0]}), None


def embedding_jvp(primals, tangents, out):
    """ty = tW[indices]."""
    return apply("embedding", (tangents[0], primals[1].data))


register("embedding", vjp=embedding_vjp, jvp=embedding_jvp, saves=(1,), movement=True)
