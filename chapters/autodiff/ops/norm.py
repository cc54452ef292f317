"""Normalization: layer_norm and batch_norm (training statistics).

Both compute x_hat = (x - mean) / sigma over some dims (the biased
variance), then y = x_hat * w + b with w and b broadcast along the other
dims; they differ only in which dims. Their rules share one derivation.
"""

from __future__ import annotations

import numpy as np

from chapters.graph import ops as kernels
from chapters.graph.ops import TensorMeta, normalize_dims, register_op

from ..rules import FULL_PRECISION, register
from ..tensor import Tensor
from .reduce import var as var_kernel


def _norm_meta(x: TensorMeta, w=None, b=None, dims=(), eps=1e-5) -> TensorMeta:
    normalize_dims("normalization", dims, len(x.shape))
    return x


def normalize(x, dims, eps):
    """(x - mean) / sqrt(var + eps) over ``dims`` (biased variance)."""
    mean = x.mean(axis=dims, keepdims=True)
    var = x.var(axis=dims, keepdims=True)
    return (x - mean) / np.sqrt(var + eps)


def _affine(xhat, w, b, shape):
    if w is not None:
        xhat = xhat * w.reshape(shape)
    if b is not None:
        xhat = xhat + b.reshape(shape)
    return xhat


def _normalized(x: Tensor, dims: tuple, eps: float) -> tuple[Tensor, Tensor]:
    """(x_hat, 1/sigma) recomputed with Tensor ops, so they carry history."""
    mean = x.mean(dims, keepdim=True)
    rstd = (x.var(dims, keepdim=True, correction=0) + eps).rsqrt()
    return (x - mean) * rstd, rstd


def _norm_vjp(ctx, g, param_shape: tuple, param_dims: tuple):
    """y = x_hat * w + b with x_hat = (x - mean) / sigma over ``dims``:
    with h = g * w (the gradient reaching x_hat),
      dL/dx = (h - mean(h) - x_hat * mean(h * x_hat)) / sigma,
      dL/dw = sum of g * x_hat over ``param_dims`` (those w is broadcast along),
      dL/db = sum of g over them."""
    x, w = ctx.saved
    dims, eps = ctx.attrs["dims"], ctx.attrs["eps"]
    needs = ctx.needs_input_grad
    xhat, rstd = _normalized(x, dims, eps)
    h = g if w is None else g * w.reshape(param_shape)
    gx = gw = gb = None
    if needs[0]:
        gx = (h - h.mean(dims, keepdim=True) - xhat * (h * xhat).mean(dims, keepdim=True)) * rstd
    if len(needs) > 1 and needs[1]:
        gw = (g * xhat).sum(param_dims).reshape(w.data.shape)
    if len(needs) > 2 and needs[2]:
        gb = g.sum(param_dims).reshape(ctx.input_meta[2][0])
    return (gx, gw, gb)[:len(needs)]


def _norm_vjp_fast(ctx, g, param_shape: tuple, param_dims: tuple):
    """_norm_vjp on float32/float64 arrays: the same kernels in the same order
    (so each result rounds alike), without a tensor per step. The Tensor rule
    rounds float16/bfloat16 after each op: those calls keep it (None)."""
    x, w = ctx.saved_arrays
    if x.dtype not in FULL_PRECISION:
        return None
    dims, eps = ctx.attrs["dims"], ctx.attrs["eps"]
    needs = ctx.needs_input_grad
    rstd = np.sqrt(var_kernel(x, dims, keepdim=True, correction=0) + eps)
    rstd = 1.0 / rstd
    xhat = x - kernels.mean(x, dims, keepdim=True)
    xhat *= rstd
    h = g if w is None else g * w.reshape(param_shape)
    gx = gw = gb = None
    if needs[0]:
        gx = h - kernels.mean(h, dims, keepdim=True)
        gx -= xhat * kernels.mean(h * xhat, dims, keepdim=True)
        gx *= rstd
    if len(needs) > 1 and needs[1]:
        gw = kernels.sum_(g * xhat, param_dims).reshape(w.shape)
    if len(needs) > 2 and needs[2]:
        gb = kernels.sum_(g, param_dims).reshape(ctx.input_meta[2][0])
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
        xhat, rstd = _normalized(x, dims, eps)
        txhat = (tx - tx.mean(dims, keepdim=True)
                 - xhat * (xhat * tx).mean(dims, keepdim=True)) * rstd
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
    return _affine(normalize(x, dims, eps), w, b, shape).astype(x.dtype, copy=False)


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
    return _affine(normalize(x, dims, eps), w, b, shape).astype(x.dtype, copy=False)


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
