"""``scatter_reduce``: combine src into x at ``index`` along ``dim`` with
sum, prod, mean, amax or amin.

z = x, then for each src element z[..index..] (op)= src. With
``include_self=False`` the written positions of x are first reset to the
reduction's identity (0, 1, -inf, +inf), so x there gets no gradient.
The gradients, per reduction (g read at index is ``gather(g)``):

* sum:   dL/dx = g,          dL/dsrc = gather(g)
* mean:  dL/dx = g / N,      dL/dsrc = gather(g / N), N the count combined
* prod:  dL/dx = g z / x,    dL/dsrc = gather(g z) / src (nonzero inputs)
* amax, amin: g goes to the elements equal to the result, split evenly
  among ties (torch's rule, see ``_winners``).
"""

from __future__ import annotations

import numpy as np

from chapters.graph.ops import TensorMeta, register_op

from ..dispatch import public
from ..dtypes import check_implemented
from ..rules import register
from ..tensor import Tensor, apply, tensor_method
from .common import masked
from .gather import along_axis_index
from .select import checked_index, index_array, written_mask

_UFUNCS = {"sum": np.add, "mean": np.add, "prod": np.multiply, "amax": np.maximum,
           "amin": np.minimum}


def _identity(reduce: str, dtype: np.dtype):
    """The value that leaves the reduction unchanged, in ``dtype``."""
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if dtype.kind == "f":
        return -np.inf if reduce == "amax" else np.inf
    info = np.iinfo(dtype)
    return info.min if reduce == "amax" else info.max


def _counts(shape: tuple, dim: int, index: np.ndarray, include_self: bool) -> np.ndarray:
    """N per position of z: the src elements written there, plus x itself when
    it takes part (never 0: a position nothing reaches keeps x, N = 1)."""
    count = np.ones(shape, dtype=np.int64)
    if not include_self:
        count[along_axis_index(index, dim)] = 0
    np.add.at(count, along_axis_index(index, dim), 1)
    return count


def _scatter_reduce_meta(x: TensorMeta, src: TensorMeta, **_) -> TensorMeta:
    return x


@register_op("scatter_reduce", _scatter_reduce_meta)
def scatter_reduce_kernel(x, src, dim, index, reduce, include_self):
    """z = x with each src element combined in at ``index`` along ``dim``."""
    at = along_axis_index(index, dim)
    out = x.copy()
    if not include_self:
        out[at] = _identity(reduce, x.dtype)
    _UFUNCS[reduce].at(out, at, src)
    if reduce != "mean":
        return out
    count = _counts(x.shape, dim, index, include_self)
    mean = out // count if x.dtype.kind in "iu" else out / count  # integers: floor, as torch
    return mean.astype(x.dtype, copy=False)


def _winners(x, src, out, dim, index, include_self) -> tuple:
    """For amax/amin: where x and src equal the result, and the number of
    such ties per position of z (each then gets an equal share). As in torch,
    an x equal to the result counts as a tie even when ``include_self`` is
    False, though it then gets no share itself."""
    self_ties = x == out
    self_wins = self_ties & (include_self | ~written_mask(out.shape, dim, index))
    src_wins = src == np.take_along_axis(out, index, axis=dim)
    ties = self_ties.astype(np.int64)
    np.add.at(ties, along_axis_index(index, dim), src_wins)
    return self_wins, src_wins, np.maximum(ties, 1)


def scatter_reduce_vjp(ctx, g):
    """See the module docstring for each reduction's gradients."""
    x, src, out = ctx.saved
    dim, index = ctx.attrs["dim"], ctx.attrs["index"]
    reduce, include_self = ctx.attrs["reduce"], ctx.attrs["include_self"]
    untouched = ~written_mask(g.shape, dim, index)
    if reduce in ("sum", "mean"):
        if reduce == "mean":
            g = g / _counts(g.shape, dim, index, include_self).astype(g.dtype)
        gx = g if include_self else masked(g, untouched)
        return gx, apply("gather", (g,), {"dim": dim, "index": index})
    if reduce == "prod":
        if not (np.all(x.data != 0) and np.all(src.data != 0)):
            raise NotImplementedError(
                "scatter_reduce(reduce='prod'): the gradient through a zero input is not "
                "implemented here; add a tiny offset or use reduce='sum' on logs.")
        gx = g * out / x if include_self else masked(g, untouched)
        return gx, apply("gather", (g * out,), {"dim": dim, "index": index}) / src
    self_wins, src_wins, ties = _winners(x.data, src.data, out.data, dim, index, include_self)
    share = g / ties.astype(g.dtype)
    gsrc = masked(apply("gather", (share,), {"dim": dim, "index": index}), src_wins)
    return masked(share, self_wins), gsrc


def scatter_reduce_jvp(primals, tangents, out, dim, index, reduce, include_self):
    """tz, the same combination linearised: sum/mean combine the tangents;
    prod gives z (tx / x + scatter_add(tsrc / src)); amax/amin the mean
    tangent of the tied winners."""
    (x, src), (tx, tsrc) = primals, tangents
    tx = tx if tx is not None else x.new_zeros(x.shape)
    tsrc = tsrc if tsrc is not None else src.new_zeros(src.shape)
    attrs = {"dim": dim, "index": index}
    if reduce in ("sum", "mean"):
        return apply("scatter_reduce", (tx, tsrc), {**attrs, "reduce": reduce,
                                                    "include_self": include_self})
    spread = {**attrs, "shape": tuple(out.shape)}
    if reduce == "prod":
        own = tx / x if include_self else masked(tx / x, ~written_mask(out.shape, dim, index))
        return out * (own + apply("scatter_add", (tsrc / src,), spread))
    self_wins, src_wins, ties = _winners(x.data, src.data, out.data, dim, index, include_self)
    summed = masked(tx, self_wins) + apply("scatter_add", (masked(tsrc, src_wins),), spread)
    return summed / ties.astype(out.dtype)


register("scatter_reduce", vjp=scatter_reduce_vjp, jvp=scatter_reduce_jvp, saves=(0, 1, "out"),
         grad_fn="ScatterReduceBackward0")


@tensor_method()
@public("scatter_reduce")
def scatter_reduce(input, dim: int, index, src, reduce: str, *, include_self: bool = True):
    """torch.scatter_reduce: combine src into input at index along ``dim``
    with ``reduce`` in "sum", "prod", "mean", "amax", "amin"."""
    if reduce not in _UFUNCS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, "
                           f"got {reduce!r}")
    if reduce == "mean":
        check_implemented("scatter_reduce(reduce='mean')", input.dtype, bool_ok=False)
    if not isinstance(src, Tensor) or src.dtype != input.dtype:
        raise RuntimeError(f"scatter_reduce(): expected src to be a tensor of input's dtype "
                           f"{input.dtype}, got {getattr(src, 'dtype', type(src).__name__)}; "
                           "cast it with src.to(input.dtype).")
    d, idx = checked_index("scatter_reduce", input, dim, index_array("scatter_reduce", index))
    if src.shape != idx.shape:
        src = src[tuple(slice(0, s) for s in idx.shape)]
    return apply("scatter_reduce", (input, src), {"dim": d, "index": idx, "reduce": reduce,
                                                  "include_self": include_self})
