"""Running reductions along one dim (cumsum, cumprod, cummax, cummin), the
product reduction prod, and the logical reductions all and any.

A scan z_i = x_1 (+) ... (+) x_i sends the gradient of every later output
back to x_j: for cumsum dL/dx_j = sum_{i >= j} g_i, a cumsum run backwards.
Integer and bool inputs of cumsum, cumprod and prod give int64, as in torch;
a 0-d tensor is scanned along its one implicit dim (dim 0 or -1).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from chapters.graph.ops import TensorMeta, axes, normalize_dims, reduced_shape, register_op

from ..dispatch import FLOAT32, public
from ..dtypes import as_dtype, int64, uint8
from ..rules import register
from ..tensor import Tensor, apply, tensor_method
from .common import expand_reduced

_ValuesIndices = namedtuple("return_types", ["values", "indices"])


def _accumulating_dtype(dtype: np.dtype) -> np.dtype:
    """Sums and products of integers or bools are int64 in torch."""
    return int64 if dtype.kind in "biu" else dtype


def _along(x: np.ndarray, dim: int, scan) -> np.ndarray:
    """``scan(array, axis)`` along ``dim``; a 0-d array is a 1-element scan."""
    return scan(np.atleast_1d(x), dim).reshape(x.shape)


def _axes(dim, ndim: int):
    """numpy's ``axis`` for ``dim``; a 0-d array is reduced over nothing."""
    return axes(dim, ndim) if ndim else None


def _one_dim(op: str, dim, ndim: int) -> int:
    (d,) = normalize_dims(op, int(dim), ndim)
    return d


# ------------------------------------------------------------------ cumsum


def _scan_meta(x: TensorMeta, dim, reverse=False, **_) -> TensorMeta:
    _one_dim("cumsum", dim, len(x.shape))
    return TensorMeta(x.shape, _accumulating_dtype(x.dtype))


@register_op("cumsum", _scan_meta)
def cumsum_kernel(x, dim, reverse=False):
    """z_i = x_1 + ... + x_i along ``dim`` (from the end when ``reverse``)."""
    x = x.astype(_accumulating_dtype(x.dtype), copy=False)
    if not reverse:
        return _along(x, dim, lambda a, d: np.cumsum(a, axis=d))
    return _along(x, dim, lambda a, d: np.flip(np.cumsum(np.flip(a, d), axis=d), d))


def cumsum_vjp(ctx, g):
    """z = cumsum(x):  dL/dx_j = sum_{i >= j} g_i, the cumsum of g run from
    the other end (and the adjoint of that is the forward cumsum again)."""
    return (apply("cumsum", (g,), {"dim": ctx.attrs["dim"],
                                   "reverse": not ctx.attrs["reverse"]}),)


def cumsum_jvp(primals, tangents, out, dim, reverse=False):
    """tz = cumsum(tx) (cumsum is linear)."""
    return apply("cumsum", (tangents[0],), {"dim": dim, "reverse": reverse})


register("cumsum", vjp=cumsum_vjp, jvp=cumsum_jvp)


@tensor_method()
@public("cumsum", autocast={"cuda": FLOAT32})
def cumsum(input, dim: int, *, dtype=None):
    """torch.cumsum: running sums along ``dim`` (int64 for integer input)."""
    x = input if dtype is None else input.to(as_dtype(dtype))
    return apply("cumsum", (x,), {"dim": _one_dim("cumsum", dim, x.ndim), "reverse": False})


# ----------------------------------------------------------------- cumprod


@register_op("cumprod", _scan_meta)
def cumprod_kernel(x, dim):
    """z_i = x_1 x_2 ... x_i along ``dim``."""
    x = x.astype(_accumulating_dtype(x.dtype), copy=False)
    return _along(x, dim, lambda a, d: np.cumprod(a, axis=d))


def _cumprod_grad_with_zeros(x: np.ndarray, g: np.ndarray, dim: int) -> np.ndarray:
    """dL/dx_j = sum_{i >= j} g_i prod_{k <= i, k != j} x_k, for each j in
    turn: the cumprod of x with x_j set to 1 (O(n^2), used only with zeros)."""
    x, g = np.moveaxis(np.atleast_1d(x), dim, -1), np.moveaxis(np.atleast_1d(g), dim, -1)
    out = np.zeros_like(g)
    for j in range(x.shape[-1]):
        without_j = x.copy()
        without_j[..., j] = 1
        out[..., j] = (g[..., j:] * np.cumprod(without_j, axis=-1)[..., j:]).sum(-1)
    return np.moveaxis(out, -1, dim).reshape(np.shape(x) if x.ndim else ())


def cumprod_vjp(ctx, g):
    """z = cumprod(x):  dL/dx_j = sum_{i >= j} g_i z_i / x_j, a reverse cumsum
    of g z divided by x; where x has a zero that division is 0/0, so those
    slices take the product over k != j directly."""
    x, z = ctx.saved
    dim = ctx.attrs["dim"]
    if np.all(x.data != 0):
        return (apply("cumsum", (g * z,), {"dim": dim, "reverse": True}) / x,)
    grad = _cumprod_grad_with_zeros(x.data, g.data, dim)
    return (Tensor(grad.reshape(x.data.shape)),)


def cumprod_jvp(primals, tangents, out, dim):
    """tz_i = sum_{j <= i} tx_j prod_{k <= i, k != j} x_k = z_i cumsum(tx / x)_i
    (for nonzero x)."""
    x = primals[0]
    return out * apply("cumsum", (tangents[0] / x,), {"dim": dim, "reverse": False})


register("cumprod", vjp=cumprod_vjp, jvp=cumprod_jvp, saves=(0, "out"))


@tensor_method()
@public("cumprod", autocast={"cuda": FLOAT32})
def cumprod(input, dim: int, *, dtype=None):
    """torch.cumprod: running products along ``dim`` (int64 for integer input)."""
    x = input if dtype is None else input.to(as_dtype(dtype))
    return apply("cumprod", (x,), {"dim": _one_dim("cumprod", dim, x.ndim)})


# --------------------------------------------------------- cummax, cummin


def _running_arg(x: np.ndarray, dim: int, accumulate) -> np.ndarray:
    """The index of the running max (``np.maximum.accumulate``) or min: the
    latest position whose value equals the running extreme (torch's choice
    on ties); a NaN stays the extreme from where it appears."""
    x = np.atleast_1d(x)
    running = accumulate(x, axis=dim)  # numpy's maximum/minimum propagate NaN
    positions = np.arange(x.shape[dim]).reshape([-1 if d == dim else 1 for d in range(x.ndim)])
    hit = (x == running) | (np.isnan(x) if x.dtype.kind == "f" else False)
    return np.maximum.accumulate(np.where(hit, positions, 0), axis=dim)


def _cumulative_extreme(op: str, input, dim: int, accumulate):
    d = _one_dim(op, dim, input.ndim)
    data = input.data
    index = _running_arg(data, d, accumulate).astype(np.int64)
    values = apply("gather", (input.reshape(np.atleast_1d(data).shape),),
                   {"dim": d, "index": index})
    return _ValuesIndices(values.reshape(data.shape), Tensor(index.reshape(data.shape)))


@tensor_method()
@public("cummax")
def cummax(input, dim: int):
    """torch.cummax: ``(values, indices)`` of the running maximum along
    ``dim``. The values are a gather at the indices, so the gradient goes to
    the element each running maximum came from (gather's rule)."""
    return _cumulative_extreme("cummax", input, dim, np.maximum.accumulate)


@tensor_method()
@public("cummin")
def cummin(input, dim: int):
    """torch.cummin: ``(values, indices)`` of the running minimum along ``dim``."""
    return _cumulative_extreme("cummin", input, dim, np.minimum.accumulate)


# -------------------------------------------------------------------- prod


def _prod_meta(x: TensorMeta, dim=None, keepdim=False, **_) -> TensorMeta:
    return TensorMeta(reduced_shape("prod", x.shape, dim, keepdim), _accumulating_dtype(x.dtype))


@register_op("prod", _prod_meta)
def prod_kernel(x, dim=None, keepdim=False):
    """The product of the elements over ``dim`` (all of them when None)."""
    return np.prod(x, axis=_axes(dim, x.ndim), keepdims=keepdim,
                   dtype=_accumulating_dtype(x.dtype))


def _prod_derivative(x: Tensor, dim, keepdim: bool) -> Tensor:
    """dz/dx_j = prod_{k != j} x_k, in x's shape: z / x_j where the group has
    no zero; at the group's one zero the product of the others; else 0."""
    zero = x.data == 0
    zeros = zero.sum(axis=_axes(dim, x.ndim), keepdims=True)
    safe = apply("where", (zero, np.ones((), x.data.dtype), x))
    others = safe.prod(dim, keepdim=True) if dim is not None else safe.prod().reshape(
        (1,) * x.ndim)
    return apply("where", (zeros == 0, others / safe,
                           apply("where", (zero & (zeros == 1), others,
                                           np.zeros((), x.data.dtype)))))


def prod_vjp(ctx, g):
    """z = prod_dim x:  dL/dx_j = g prod_{k != j} x_k (see _prod_derivative)."""
    (x,) = ctx.saved
    dim, keepdim = ctx.attrs["dim"], ctx.attrs["keepdim"]
    return (expand_reduced(g, x.data.shape, dim, keepdim) * _prod_derivative(x, dim, keepdim),)


def prod_jvp(primals, tangents, out, dim=None, keepdim=False):
    """tz = sum_dim tx_j prod_{k != j} x_k."""
    x = primals[0]
    return (tangents[0] * _prod_derivative(x, dim, keepdim)).sum(dim, keepdim)


register("prod", vjp=prod_vjp, jvp=prod_jvp, saves=(0,),
         grad_fn_variant=lambda attrs, metas, ndim: "dim" if attrs["dim"] is not None else None,
         grad_fn_variants={"dim": "ProdBackward1"})


@tensor_method()
@public("prod", autocast={"cpu": FLOAT32, "cuda": FLOAT32})
def prod(input, dim: int | None = None, keepdim: bool = False, *, dtype=None):
    """torch.prod: the product over one ``dim`` (or of all elements)."""
    x = input if dtype is None else input.to(as_dtype(dtype))
    if dim is not None and not isinstance(dim, int | np.integer):
        raise TypeError(f"prod(): dim must be one int (torch reduces one dim at a time), "
                        f"got {dim!r}; call prod once per dim.")
    return apply("prod", (x,), {"dim": dim, "keepdim": keepdim})


# --------------------------------------------------------------- all, any


def _logical_meta(x: TensorMeta, dim=None, keepdim=False, reducer=None, **_) -> TensorMeta:
    return TensorMeta(reduced_shape("all", x.shape, dim, keepdim),
                      uint8 if x.dtype == uint8 else np.bool_)


@register_op("logical_reduce", _logical_meta)
def logical_reduce(x, dim=None, keepdim=False, reducer="all"):
    """Whether all (or any) elements over ``dim`` are nonzero; uint8 input
    gives uint8, everything else bool (as torch)."""
    fn = np.all if reducer == "all" else np.any
    out = fn(x != 0, axis=_axes(dim, x.ndim), keepdims=keepdim)
    return out.astype(uint8) if x.dtype == uint8 else out


register("logical_reduce", movement=True, grad_fn="AllBackward0")  # bool: no gradient


@tensor_method()
@public("all")
def all(input, dim=None, keepdim: bool = False):
    """torch.all: True where every element over ``dim`` (int or tuple) is nonzero."""
    return apply("logical_reduce", (input,), {"dim": dim, "keepdim": keepdim, "reducer": "all"})


@tensor_method()
@public("any")
def any(input, dim=None, keepdim: bool = False):
    """torch.any: True where some element over ``dim`` (int or tuple) is nonzero."""
    return apply("logical_reduce", (input,), {"dim": dim, "keepdim": keepdim, "reducer": "any"})
