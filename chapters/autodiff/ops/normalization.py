"""Normalization: layer_norm and batch_norm (training statistics).

Both compute x_hat = (x - mean) / sigma over some dims (the biased
variance), then y = x_hat * w + b with w and b broadcast along the other
dims; they differ only in which dims. Their rules share one derivation.

Every sum here is an einsum: "abc->ab" sums over dim 2, "abc,abc->ab" sums
the product of two tensors over it without making the product. numpy's
einsum runs down each short row in one loop, where ``np.sum`` along a short
last axis starts its reduction afresh for every row, and the product costs
no pass of its own. The forward kernel, the Tensor rule and its array form
all take these steps in one order, so the array form's results are the
Tensor rule's, bit for bit.
"""

from __future__ import annotations

import math
import string

import numpy as np

from chapters.graph.ops import TensorMeta, normalize_dims, register_op

from ..rules import FULL_PRECISION, register
from ..tensor import Tensor, apply
from .contract import MAX_OPERANDS


def _norm_meta(x: TensorMeta, w=None, b=None, dims=(), eps=1e-5) -> TensorMeta:
    normalize_dims("normalization", dims, len(x.shape))
    return x


class Reduction:
    """Sums over ``dims`` of an ``ndim``-dim tensor, as einsum equations.

    ``one`` sums one tensor ("abc->ab" for dims (2,)), ``two`` the product of
    two ("abc,abc->ab"); ``keep`` is the shape of the result with the summed
    dims kept as 1s (so it broadcasts back), ``count`` the number of
    elements in each sum (at least 1: an empty sum's mean is never read)."""

    def __init__(self, shape: tuple, dims):
        dims = normalize_dims("normalization", dims, len(shape))
        letters = string.ascii_lowercase[:len(shape)]
        kept = "".join(c for i, c in enumerate(letters) if i not in dims)
        self.one = f"{letters}->{kept}"
        self.two = f"{letters},{letters}->{kept}"
        self.keep = tuple(1 if i in dims else s for i, s in enumerate(shape))
        self.count = max(1, math.prod(shape[i] for i in dims))


# ---------------------------------------------------------------- on arrays


def statistics(x: np.ndarray, over: Reduction, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """(x - mean, 1/sigma) over the reduced dims, sigma^2 the biased variance + eps."""
    mean = np.einsum(over.one, x).reshape(over.keep) / over.count
    centered = x - mean
    var = np.einsum(over.two, centered, centered).reshape(over.keep) / over.count
    return centered, 1.0 / np.sqrt(var + eps)


def _normalize(x, w, b, dims, eps, param_shape: tuple) -> np.ndarray:
    """x_hat * w + b, x_hat normalized over ``dims`` (see :func:`statistics`)."""
    y, rstd = statistics(x, Reduction(x.shape, dims), eps)
    y *= rstd
    if w is not None:
        y *= w.reshape(param_shape)
    if b is not None:
        y += b.reshape(param_shape)
    return y


# ---------------------------------------------------------------- on tensors


def _einsum(equation: str, *operands: Tensor) -> Tensor:
    """The einsum op itself (no autocast: a derivative rule keeps the dtype)."""
    padded = operands + (None,) * (MAX_OPERANDS - len(operands))
    return apply("einsum", padded, {"equation": equation})


def _statistics(x: Tensor, over: Reduction, eps: float) -> tuple[Tensor, Tensor]:
    """:func:`statistics` with Tensor ops, so both carry history."""
    mean = _einsum(over.one, x).reshape(over.keep) / over.count
    centered = x - mean
    var = _einsum(over.two, centered, centered).reshape(over.keep) / over.count
    return centered, (var + eps).rsqrt()


def _norm_vjp(ctx, g, param_shape: tuple, param_dims: tuple):
    """y = x_hat * w + b with x_hat = (x - mean) / sigma over ``dims``:
    with h = g * w (the gradient reaching x_hat),
      dL/dx = (h - mean(h) - x_hat * mean(h * x_hat)) / sigma,
      dL/dw = sum of g * x_hat over ``param_dims`` (those w is broadcast along),
      dL/db = sum of g over them."""
    x, w = ctx.saved
    over = Reduction(x.shape, ctx.attrs["dims"])
    needs = ctx.needs_input_grad
    centered, rstd = _statistics(x, over, ctx.attrs["eps"])
    xhat = centered * rstd
    h = g if w is None else g * w.reshape(param_shape)
    gx = gw = gb = None
    if needs[0]:
        mean_h = _einsum(over.one, h).reshape(over.keep) / over.count
        mean_hx = _einsum(over.two, h, xhat).reshape(over.keep) / over.count
        gx = (h - mean_h - xhat * mean_hx) * rstd
    params = Reduction(x.shape, param_dims)
    if len(needs) > 1 and needs[1]:
        gw = _einsum(params.two, g, xhat).reshape(w.shape)
    if len(needs) > 2 and needs[2]:
        gb = _einsum(params.one, g).reshape(ctx.input_meta[2][0])
    return (gx, gw, gb)[:len(needs)]


def _norm_vjp_fast(ctx, g, param_shape: tuple, param_dims: tuple):
    """_norm_vjp on float32/float64 arrays: the same kernels in the same order
    (so each result rounds alike), without a tensor per step. The Tensor rule
    rounds float16/bfloat16 after each op: those calls keep it (None)."""
    x, w = ctx.saved_arrays
    if x.dtype not in FULL_PRECISION:
        return None
    over = Reduction(x.shape, ctx.attrs["dims"])
    needs = ctx.needs_input_grad
    xhat, rstd = statistics(x, over, ctx.attrs["eps"])
    xhat *= rstd
    h = g if w is None else g * w.reshape(param_shape)
    gx = gw = gb = None
    if needs[0]:
        gx = h - np.einsum(over.one, h).reshape(over.keep) / over.count
        gx -= xhat * (np.einsum(over.two, h, xhat).reshape(over.keep) / over.count)
        gx *= rstd
    params = Reduction(x.shape, param_dims)
    if len(needs) > 1 and needs[1]:
        gw = np.einsum(params.two, g, xhat).reshape(w.shape)
    if len(needs) > 2 and needs[2]:
        gb = np.einsum(params.one, g).reshape(ctx.input_meta[2][0])
    return (gx, gw, gb)[:len(needs)]


def _param_shape(op: str, x_shape: tuple, dims: tuple) -> tuple:
    if op == "layer_norm":
        return tuple(x_shape[len(x_shape) - len(dims):])
    return (1, x_shape[1]) + (1,) * (len(x_shape) - 2)


def _norm_jvp(op):
    """The JVP of ``op`` (layer_norm or batch_norm)."""

    def rule(primals, tangents, out, dims, eps):
        """ty = tx_hat w + x_hat tw + tb, where the tangent of x_hat is
        tx_hat = (tx - mean(tx) - x_hat mean(x_hat tx)) / sigma."""
        x, w, b = (list(primals) + [None, None])[:3]
        tx, tw, tb = (list(tangents) + [None, None])[:3]
        shape = _param_shape(op, x.data.shape, dims)
        over = Reduction(x.data.shape, dims)
        centered, rstd = _statistics(x, over, eps)
        xhat = centered * rstd
        mean_t = _einsum(over.one, tx).reshape(over.keep) / over.count
        mean_xt = _einsum(over.two, xhat, tx).reshape(over.keep) / over.count
        txhat = (tx - mean_t - xhat * mean_xt) * rstd
        t = txhat if w is None else txhat * w.reshape(shape)
        if tw is not None:
            t = t + xhat * tw.reshape(shape)
        if tb is not None:
            t = t + tb.reshape(shape)
        return t

    return rule


# ------------------------------------------------------------- layer_norm


@register_op("layer_norm", _norm_meta)
def layer_norm(x, w=None, b=None, dims=(-1,), eps=1e-5):
    """Normalize each sample over its last dims, then scale by w and shift by b."""
    shape = x.shape[x.ndim - len(dims):]
    return _normalize(x, w, b, dims, eps, shape).astype(x.dtype, copy=False)


def layer_norm_vjp(ctx, g):
    """Layer norm normalizes each sample over its last dims; see _norm_vjp."""
    shape, dims = ctx.input_meta[0][0], ctx.attrs["dims"]
    leading = tuple(range(len(shape) - len(dims)))
    return _norm_vjp(ctx, g, _param_shape("layer_norm", shape, dims), leading)


def layer_norm_vjp_fast(ctx, g):
    """layer_norm_vjp on arrays (see _norm_vjp_fast)."""
    shape, dims = ctx.input_meta[0][0], ctx.attrs["dims"]
    leading = tuple(range(len(shape) - len(dims)))
    return _norm_vjp_fast(ctx, g, _param_shape("layer_norm", shape, dims), leading)


register("layer_norm", vjp=layer_norm_vjp, jvp=_norm_jvp("layer_norm"), saves=(0, 1),
         vjp_fast=layer_norm_vjp_fast)

# ------------------------------------------------------------- batch_norm


@register_op("batch_norm", _norm_meta)
def batch_norm(x, w=None, b=None, dims=(0,), eps=1e-5):
    """Normalize each channel (dim 1) over the batch and spatial dims ``dims``,
    then scale and shift per channel."""
    shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    return _normalize(x, w, b, dims, eps, shape).astype(x.dtype, copy=False)


def batch_norm_vjp(ctx, g):
    """Batch norm (training) normalizes each channel over batch and space; see _norm_vjp."""
    shape, dims = ctx.input_meta[0][0], ctx.attrs["dims"]
    return _norm_vjp(ctx, g, _param_shape("batch_norm", shape, dims), dims)


def batch_norm_vjp_fast(ctx, g):
    """batch_norm_vjp on arrays (see _norm_vjp_fast)."""
    shape, dims = ctx.input_meta[0][0], ctx.attrs["dims"]
    return _norm_vjp_fast(ctx, g, _param_shape("batch_norm", shape, dims), dims)


register("batch_norm", vjp=batch_norm_vjp, jvp=_norm_jvp("batch_norm"), saves=(0, 1),
         vjp_fast=batch_norm_vjp_fast)
