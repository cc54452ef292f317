"""Reductions over ``dim`` (all dims when None) and the softmax family.

A reduction z = r(x) over N elements sends each output gradient back to the
N elements it combined: ``expand_reduced`` re-inserts the reduced dims and
expands g to x's shape. sum, mean and softmax have chapter 1's kernels
(:mod:`chapters.graph.ops`); amax, amin, var, logsumexp and log_softmax are
defined here with their shape rules.
"""

from __future__ import annotations

import math

import numpy as np

from chapters.graph.ops import (
    TensorMeta,
    axes,
    float_dtype,
    floating_meta,
    normalize_dims,
    reduced_shape,
    register_op,
    sum_,
)

from ..rules import FULL_PRECISION, register
from .common import expand_reduced, masked, reduced_count


def _over_dims(attrs: dict, input_meta: tuple, out_ndim: int) -> str | None:
    """torch names a reduction over given dims ``...Backward1``."""
    return "dim" if attrs.get("dim") is not None else None


# -------------------------------------------------------------- sum, mean
# kernels: chapters.graph.ops.sum_, chapters.graph.ops.mean


def sum_vjp(ctx, g):
    """z = sum_dim x:  dL/dx = g copied along the summed dims."""
    shape = ctx.input_meta[0][0]
    return (expand_reduced(g, shape, ctx.attrs["dim"], ctx.attrs["keepdim"]),)


def sum_jvp(primals, tangents, out, dim=None, keepdim=False):
    """tz = sum_dim tx (sum is linear)."""
    return tangents[0].sum(dim, keepdim)


def mean_vjp(ctx, g):
    """z = mean_dim x:  dL/dx = g / N copied along the N averaged elements."""
    shape = ctx.input_meta[0][0]
    dim, keepdim = ctx.attrs["dim"], ctx.attrs["keepdim"]
    return (expand_reduced(g, shape, dim, keepdim) / reduced_count(shape, dim),)


def mean_jvp(primals, tangents, out, dim=None, keepdim=False):
    """tz = mean_dim tx (mean is linear)."""
    return tangents[0].mean(dim, keepdim)


register("sum", vjp=sum_vjp, jvp=sum_jvp, grad_fn_variant=_over_dims,
         grad_fn_variants={"dim": "SumBackward1"})
register("mean", vjp=mean_vjp, jvp=mean_jvp, grad_fn_variant=_over_dims,
         grad_fn_variants={"dim": "MeanBackward1"})

# ------------------------------------------------------------- amax, amin


def _reduce_meta(op: str):
    def infer(x: TensorMeta, dim=None, keepdim=False, **_) -> TensorMeta:
        return TensorMeta(reduced_shape(op, x.shape, dim, keepdim), x.dtype)

    return infer


def check_nonempty(op: str, shape: tuple, dim) -> None:
    """For an empty tensor: the max or min of no elements is undefined, so
    torch raises RuntimeError when it is reduced whole, IndexError when a
    reduced dim has size 0."""
    if dim is None:
        raise RuntimeError(f"the tensor of shape {list(shape)} is empty, so it has no largest "
                           "or smallest value; reduce over a dim of non-zero size.")
    for d in normalize_dims(op, dim, len(shape)):
        if shape[d] == 0:
            raise IndexError(f"dim {d} of the tensor of shape {list(shape)} has size 0, "
                             "so it has no largest or smallest value.")


@register_op("amax", _reduce_meta("amax"))
def amax(x, dim=None, keepdim=False):
    """The largest value over ``dim`` (all dims when None)."""
    if x.size == 0:
        check_nonempty("amax", x.shape, dim)
    return np.max(x, axis=axes(dim, x.ndim), keepdims=keepdim)


@register_op("amin", _reduce_meta("amin"))
def amin(x, dim=None, keepdim=False):
    """The smallest value over ``dim`` (all dims when None). Its own kernel,
    not -amax(-x): negating the int32 minimum -2**31 overflows, and bools
    have no negation."""
    if x.size == 0:
        check_nonempty("amin", x.shape, dim)
    return np.min(x, axis=axes(dim, x.ndim), keepdims=keepdim)


def extremum_vjp(ctx, g):
    """z = max_dim x (or min):  g goes to the elements equal to z, shared
    evenly among ties."""
    x, z = ctx.saved
    dim, keepdim = ctx.attrs["dim"], ctx.attrs["keepdim"]
    shape = x.data.shape
    is_max = x.data == expand_reduced(z, shape, dim, keepdim).data
    count = np.sum(is_max, axis=axes(dim, len(shape)), keepdims=True)
    return (masked(expand_reduced(g, shape, dim, keepdim), is_max)
            / count.astype(g.data.dtype),)


def extremum_jvp(primals, tangents, out, dim=None, keepdim=False):
    """tz = the mean of tx over the elements equal to z in each reduced group."""
    x = primals[0].data
    shape = x.shape
    is_max = x == expand_reduced(out, shape, dim, keepdim).data
    count = np.sum(is_max, axis=axes(dim, len(shape)), keepdims=keepdim)
    return masked(tangents[0], is_max).sum(dim, keepdim) / count.astype(x.dtype)


def _over_all(attrs: dict, input_meta: tuple, out_ndim: int) -> str | None:
    """torch's ``x.max()`` (no dim) is ``MaxBackward1``, ``x.min()`` ``MinBackward1``."""
    return "all" if attrs.get("dim") is None else None


register("amax", vjp=extremum_vjp, jvp=extremum_jvp, saves=(0, "out"),
         grad_fn_variant=_over_all, grad_fn_variants={"all": "MaxBackward1"})
register("amin", vjp=extremum_vjp, jvp=extremum_jvp, saves=(0, "out"),
         grad_fn_variant=_over_all, grad_fn_variants={"all": "MinBackward1"})

# -------------------------------------------------------------------- var


def _var_meta(x: TensorMeta, dim=None, keepdim=False, correction=1, **_) -> TensorMeta:
    return TensorMeta(reduced_shape("var", x.shape, dim, keepdim), float_dtype(x.dtype))


@register_op("var", _var_meta)
def var(x, dim=None, keepdim=False, correction=1):
    """sum((x - mean)^2) / (N - correction) over ``dim``; floating inputs
    only, as torch (an integer variance would need a dtype choice)."""
    if x.dtype.kind in "biu":
        raise RuntimeError(f"std and var need a floating point input, got {x.dtype}; convert "
                           "first, e.g. x.float().var()")
    return np.var(x, axis=axes(dim, x.ndim), keepdims=keepdim, ddof=correction)


def _var_scale(n: int, correction: int) -> float:
    """2 / (N - c); infinite when N <= c (the variance itself is then NaN, as in torch)."""
    return 2 / (n - correction) if n > correction else math.inf


def var_vjp(ctx, g):
    """z = sum (x - mean)^2 / (N - c):  dL/dx = g 2 (x - mean) / (N - c)."""
    (x,) = ctx.saved
    dim, keepdim, c = ctx.attrs["dim"], ctx.attrs["keepdim"], ctx.attrs["correction"]
    n = reduced_count(x.data.shape, dim)
    centered = x - x.mean(dim, keepdim=True)
    return (expand_reduced(g, x.data.shape, dim, keepdim) * centered * _var_scale(n, c),)


def var_jvp(primals, tangents, out, dim=None, keepdim=False, correction=1):
    """tz = sum_dim (2 (x - mean) tx) / (N - c)."""
    x, t = primals[0], tangents[0]
    n = reduced_count(x.data.shape, dim)
    centered = x - x.mean(dim, keepdim=True)
    return (centered * t).sum(dim, keepdim) * _var_scale(n, correction)


register("var", vjp=var_vjp, jvp=var_jvp, saves=(0,))

# -------------------------------------------------------------- logsumexp


def _logsumexp_meta(x: TensorMeta, dim, keepdim=False, **_) -> TensorMeta:
    return TensorMeta(reduced_shape("logsumexp", x.shape, dim, keepdim), float_dtype(x.dtype))


@register_op("logsumexp", _logsumexp_meta)
def logsumexp(x, dim, keepdim=False):
    """log(sum(exp(x))) over ``dim``, computed as m + log(sum(exp(x - m)))
    with m the max, so that exp cannot overflow. Integers give float32."""
    x = x.astype(float_dtype(x.dtype), copy=False)
    dims = axes(dim, x.ndim)
    m = np.max(x, axis=dims, keepdims=True, initial=-np.inf)  # the max of no values: -inf
    m = np.where(np.isfinite(m), m, 0)
    with np.errstate(divide="ignore"):  # log 0 = -inf: the logsumexp of no values
        out = m + np.log(np.sum(np.exp(x - m), axis=dims, keepdims=True))
    return out if keepdim else np.squeeze(out, axis=dims)


def logsumexp_vjp(ctx, g):
    """z = log sum_dim e^x:  dL/dx = g e^(x - z) = g softmax(x)."""
    x, z = ctx.saved
    dim, keepdim = ctx.attrs["dim"], ctx.attrs["keepdim"]
    shape = x.data.shape
    return (expand_reduced(g, shape, dim, keepdim)
            * (x - expand_reduced(z, shape, dim, keepdim)).exp(),)


def logsumexp_jvp(primals, tangents, out, dim, keepdim=False):
    """tz = sum_dim softmax(x) tx."""
    x = primals[0]
    p = (x - expand_reduced(out, x.data.shape, dim, keepdim)).exp()
    return (p * tangents[0]).sum(dim, keepdim)


register("logsumexp", vjp=logsumexp_vjp, jvp=logsumexp_jvp, saves=(0, "out"))

# ------------------------------------------------------------ softmax family
# kernel of softmax: chapters.graph.ops.softmax


def softmax_vjp(ctx, g):
    """z = softmax(x):  dL/dx = z (g - sum_dim(g z))  (the Jacobian is diag(z) - z z^T)."""
    (z,) = ctx.saved
    dim = ctx.attrs["dim"]
    return (z * (g - (g * z).sum(dim, keepdim=True)),)


def softmax_jvp(primals, tangents, out, dim=-1):
    """tz = z (tx - sum_dim(tx z))."""
    t = tangents[0]
    return out * (t - (t * out).sum(dim, keepdim=True))


def softmax_vjp_fast(ctx, g):
    """softmax_vjp on float32/float64 arrays, in place after the first product
    (None for other dtypes and 0-d arrays: the Tensor rule)."""
    (z,) = ctx.saved_arrays
    if z.dtype not in FULL_PRECISION or z.ndim == 0:
        return None
    gz = g * z
    np.subtract(g, sum_(gz, ctx.attrs["dim"], keepdim=True), out=gz)
    gz *= z
    return (gz,)


register("softmax", vjp=softmax_vjp, jvp=softmax_jvp, saves=("out",), vjp_fast=softmax_vjp_fast)


def _log_softmax_meta(x: TensorMeta, dim, **_) -> TensorMeta:
    normalize_dims("log_softmax", dim, len(x.shape))
    return floating_meta(x)


@register_op("log_softmax", _log_softmax_meta)
def log_softmax(x, dim):
    """x - logsumexp(x) along ``dim``: log-probabilities, stable for large x.
    Floating inputs only, as torch."""
    if x.dtype.kind in "biu":
        raise NotImplementedError(f"log_softmax needs a floating point input, got {x.dtype}; "
                                  "convert first, e.g. x.float()")
    dims = axes(dim, x.ndim)
    shifted = x - np.max(x, axis=dims, keepdims=True, initial=-np.inf)  # initial: empty dims
    return shifted - np.log(np.sum(np.exp(shifted), axis=dims, keepdims=True))


def log_softmax_vjp(ctx, g):
    """z = x - logsumexp(x):  dL/dx = g - e^z sum_dim(g)."""
    (z,) = ctx.saved
    dim = ctx.attrs["dim"]
    return (g - z.exp() * g.sum(dim, keepdim=True),)


def log_softmax_jvp(primals, tangents, out, dim):
    """tz = tx - sum_dim(e^z tx)."""
    t = tangents[0]
    return t - (out.exp() * t).sum(dim, keepdim=True)


def log_softmax_vjp_fast(ctx, g):
    """log_softmax_vjp on float32/float64 arrays, in place after e^z (None for
    other dtypes and 0-d arrays: the Tensor rule)."""
    (z,) = ctx.saved_arrays
    if z.dtype not in FULL_PRECISION or z.ndim == 0:
        return None
    e = np.exp(z)
    e *= sum_(g, ctx.attrs["dim"], keepdim=True)
    np.subtract(g, e, out=e)
    return (e,)


register("log_softmax", vjp=log_softmax_vjp, jvp=log_softmax_jvp, saves=("out",),
         vjp_fast=log_softmax_vjp_fast)
