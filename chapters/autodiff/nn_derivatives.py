"""Derivative rules of the neural-network ops (see :mod:`.nn_ops`).

As everywhere in the table, each rule is written with Tensor ops, so it is
itself differentiable (``create_graph=True``).
"""

from __future__ import annotations

import numpy as np

from .derivatives import masked
from .nn_ops import pool_columns
from .rules import jvp_rule, vjp_rule
from .tensor import Tensor, apply


def _im2col(x: Tensor, attrs: dict, pad_value=0.0) -> Tensor:
    return apply("im2col", (x,), {"kernel_size": attrs["kernel_size"], "stride": attrs["stride"],
                                  "padding": attrs["padding"], "pad_value": pad_value})


def _col2im(cols: Tensor, shape: tuple, attrs: dict) -> Tensor:
    return apply("col2im", (cols,), {"input_shape": shape, "kernel_size": attrs["kernel_size"],
                                     "stride": attrs["stride"], "padding": attrs["padding"]})


@vjp_rule("im2col")
def im2col_vjp(ctx, g):
    """cols = im2col(x) is linear; its adjoint col2im adds each column's
    gradient back onto its window: dL/dx = col2im(g)."""
    return (_col2im(g, ctx.input_meta[0][0], ctx.attrs),)


@jvp_rule("im2col")
def im2col_jvp(primals, tangents, out, **attrs):
    return apply("im2col", (tangents[0],), {**attrs, "pad_value": 0.0})


@vjp_rule("col2im")
def col2im_vjp(ctx, g):
    """x = col2im(cols) is linear, the adjoint of im2col: dL/dcols = im2col(g)."""
    return (_im2col(g, ctx.attrs),)


@jvp_rule("col2im")
def col2im_jvp(primals, tangents, out, **attrs):
    return apply("col2im", (tangents[0],), attrs)


def _conv_attrs(w_shape: tuple, attrs: dict) -> dict:
    return {"kernel_size": tuple(w_shape[2:]), "stride": attrs.get("stride", (1, 1)),
            "padding": attrs.get("padding", (0, 0))}


@vjp_rule("conv2d", saves=(0, 1))
def conv2d_vjp(ctx, g):
    """out = W_mat @ im2col(x) + b, per sample (W_mat = W reshaped (O, C*kh*kw)):
    dL/dW = sum_n g_n cols_n^T,  dL/dx = col2im(W_mat^T g_n),
    dL/db = g summed over batch and space."""
    x, w = ctx.saved[:2]
    needs = ctx.needs_input_grad
    n, o = g.data.shape[:2]
    conv = _conv_attrs(w.data.shape, ctx.attrs)
    g2 = g.reshape(n, o, -1)
    gx = gw = gb = None
    if needs[0]:
        gx = _col2im(w.reshape(o, -1).mT @ g2, x.data.shape, conv)
    if needs[1]:
        gw = (g2 @ _im2col(x, conv).mT).sum(0).reshape(w.data.shape)
    if len(needs) > 2 and needs[2]:
        gb = g.sum((0, 2, 3))
    return (gx, gw, gb)[:len(needs)]


@jvp_rule("conv2d")
def conv2d_jvp(primals, tangents, out, stride=(1, 1), padding=(0, 0)):
    x, w = primals[:2]
    tx, tw = tangents[:2]
    attrs = {"stride": stride, "padding": padding}
    t = apply("conv2d", (tx, w), attrs) + apply("conv2d", (x, tw), attrs)
    if len(tangents) > 2 and tangents[2] is not None:
        t = t + tangents[2].reshape(1, -1, 1, 1)
    return t


def _first_max_mask(cols: np.ndarray) -> np.ndarray:
    """One-hot along axis 1 at the first maximum of each window (torch's choice)."""
    mask = np.zeros(cols.shape, dtype=bool)
    idx = np.argmax(cols, axis=1)
    np.put_along_axis(mask, idx[:, None, :], True, axis=1)
    return mask


@vjp_rule("max_pool2d", saves=(0,))
def max_pool2d_vjp(ctx, g):
    """out = max of each window:  dL/dx = col2im(g placed at each window's argmax)."""
    (x,) = ctx.saved
    n, c, h, w = x.data.shape
    cols = pool_columns(x.data, ctx.attrs["kernel_size"], ctx.attrs["stride"],
                        ctx.attrs["padding"], -np.inf)
    spread = masked(g.reshape(n * c, 1, -1).expand(cols.shape), _first_max_mask(cols))
    return (_col2im(spread, (n * c, 1, h, w), ctx.attrs).reshape(n, c, h, w),)


@jvp_rule("max_pool2d")
def max_pool2d_jvp(primals, tangents, out, kernel_size, stride, padding):
    x, t = primals[0].data, tangents[0]
    n, c = x.shape[:2]
    cols = pool_columns(x, kernel_size, stride, padding, -np.inf)
    attrs = {"kernel_size": kernel_size, "stride": stride, "padding": padding}
    tcols = _im2col(t.reshape(n * c, 1, *x.shape[2:]), attrs)
    return masked(tcols, _first_max_mask(cols)).sum(1).reshape(out.shape)


@vjp_rule("avg_pool2d")
def avg_pool2d_vjp(ctx, g):
    """out = mean of each window of k elements:  dL/dx = col2im(g / k on every element)."""
    n, c, h, w = ctx.input_meta[0][0]
    kh, kw = ctx.attrs["kernel_size"]
    spread = g.reshape(n * c, 1, -1).expand(n * c, kh * kw, g.data.shape[2] * g.data.shape[3])
    return (_col2im(spread / (kh * kw), (n * c, 1, h, w), ctx.attrs).reshape(n, c, h, w),)


@jvp_rule("avg_pool2d")
def avg_pool2d_jvp(primals, tangents, out, kernel_size, stride, padding):
    return apply("avg_pool2d", (tangents[0],), {"kernel_size": kernel_size, "stride": stride,
                                                "padding": padding})


# ------------------------------------------------------------ normalization


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


def _param_shape(op: str, x_shape: tuple, dims: tuple) -> tuple:
    if op == "layer_norm":
        return tuple(x_shape[len(x_shape) - len(dims):])
    return (1, x_shape[1]) + (1,) * (len(x_shape) - 2)


@vjp_rule("layer_norm", saves=(0, 1))
def layer_norm_vjp(ctx, g):
    """Layer norm normalizes each sample over its last dims; see _norm_vjp."""
    shape, dims = ctx.input_meta[0][0], ctx.attrs["dims"]
    leading = tuple(range(len(shape) - len(dims)))
    return _norm_vjp(ctx, g, _param_shape("layer_norm", shape, dims), leading)


@vjp_rule("batch_norm", saves=(0, 1))
def batch_norm_vjp(ctx, g):
    """Batch norm (training) normalizes each channel over batch and space; see _norm_vjp."""
    shape, dims = ctx.input_meta[0][0], ctx.attrs["dims"]
    return _norm_vjp(ctx, g, _param_shape("batch_norm", shape, dims), dims)


def _norm_jvp(op):
    def rule(primals, tangents, out, dims, eps):
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


jvp_rule("layer_norm")(_norm_jvp("layer_norm"))
jvp_rule("batch_norm")(_norm_jvp("batch_norm"))


# -------------------------------------------------------- dropout, embedding


@vjp_rule("dropout", saves=(1,))
def dropout_vjp(ctx, g):
    """y = x * scale (0 or 1/(1-p), drawn once in forward):  dL/dx = g * scale."""
    (scale,) = ctx.saved
    return g * scale, None


@jvp_rule("dropout")
def dropout_jvp(primals, tangents, out):
    return tangents[0] * primals[1]


@vjp_rule("embedding", saves=(1,))
def embedding_vjp(ctx, g):
    """y = W[indices]:  dL/dW = zeros with each g row added at its index
    (a row looked up twice gets the sum)."""
    (indices,) = ctx.saved
    return apply("getitem_backward", (g,), {"index": (indices,),
                                            "shape": ctx.input_meta[0][0]}), None


@jvp_rule("embedding")
def embedding_jvp(primals, tangents, out):
    return apply("embedding", (tangents[0], primals[1].data))
