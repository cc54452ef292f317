"""Transposed convolution (转置卷积): the adjoint of conv2d with respect to its
input, run forward.

conv2d computes ``out = W_mat @ im2col(x)``; its input gradient is
``col2im(W_mat^T g)``. conv_transpose2d is exactly that map applied to an
input: each input pixel spreads a kernel-sized, weighted patch onto the
(larger) output, patches ``stride`` apart, overlapping patches adding up. So
with the weight (in_channels, out_channels / groups, kh, kw), as torch,

    out = col2im(W_g^T @ x_g for each group g) + b
    H_out = (H - 1) s - 2 p + d (k - 1) + output_padding + 1

and its derivative rules are conv2d itself (dL/dx = conv2d(g, W)) and a
product of columns (dL/dW).
"""

from __future__ import annotations

import numpy as np

from chapters.graph.ops import ShapeError, TensorMeta, register_op

from ..rules import register
from ..tensor import apply
from .conv import col2im


def transposed_size(size: tuple, kernel: tuple, stride: tuple, padding: tuple,
                    output_padding: tuple, dilation: tuple) -> tuple:
    """(H - 1) s - 2 p + d (k - 1) + output_padding + 1 per spatial dim."""
    return tuple((n - 1) * s - 2 * p + d * (k - 1) + op + 1 for n, k, s, p, op, d
                 in zip(size, kernel, stride, padding, output_padding, dilation, strict=True))


def _conv_transpose2d_meta(x: TensorMeta, w: TensorMeta, b: TensorMeta | None = None,
                           stride=(1, 1), padding=(0, 0), output_padding=(0, 0),
                           dilation=(1, 1), groups=1) -> TensorMeta:
    if len(x.shape) != 4 or len(w.shape) != 4 or w.shape[0] != x.shape[1] \
            or x.shape[1] % groups:
        raise ShapeError(
            f"conv_transpose2d: weight of shape {w.shape} does not fit input {x.shape} with "
            f"groups={groups}: the weight is (in_channels, out_channels / groups, kh, kw) and "
            "its dim 0 must equal the input's C, divisible by groups.")
    size = transposed_size(x.shape[2:], w.shape[2:], stride, padding, output_padding, dilation)
    if min(size) < 1:
        raise ShapeError(f"conv_transpose2d: the output size {size} is not positive; use "
                         "less padding")
    return TensorMeta((x.shape[0], w.shape[1] * groups) + size, x.dtype)


@register_op("conv_transpose2d", _conv_transpose2d_meta)
def conv_transpose2d(x, w, b=None, stride=(1, 1), padding=(0, 0), output_padding=(0, 0),
                     dilation=(1, 1), groups=1):
    """col2im of each group's W_g^T @ x_g: every input pixel adds its
    weighted kernel patch onto the output."""
    n, c_in, h, wd = x.shape
    _, c_out_group, kh, kw = w.shape
    w_groups = w.reshape(groups, c_in // groups, -1)
    cols = np.swapaxes(w_groups, 1, 2) @ x.reshape(n, groups, c_in // groups, h * wd)
    size = transposed_size((h, wd), (kh, kw), stride, padding, output_padding, dilation)
    out = col2im(cols.reshape(n, cols.shape[1] * cols.shape[2], h * wd),  # not -1: n may be 0
                 (n, c_out_group * groups) + size, (kh, kw),
                 stride, padding, dilation)
    if b is not None:
        out = out + b.reshape(1, -1, 1, 1)
    return out


def conv_transpose2d_vjp(ctx, g):
    """out = col2im(W_g^T x_g) + b, the adjoint of conv2d's input map:
    dL/dx = conv2d(g, W) (the same stride, padding, dilation and groups),
    dL/dW_g = sum_n x_n,g im2col(g)_n,g^T, dL/db = g summed over batch and space."""
    x, w = ctx.saved[:2]
    needs = ctx.needs_input_grad
    attrs = ctx.attrs
    groups = attrs.get("groups", 1)
    conv = {key: attrs.get(key, (1, 1)) for key in ("stride", "dilation")}
    conv["padding"] = attrs.get("padding", (0, 0))
    gx = gw = gb = None
    if needs[0]:
        gx = apply("conv2d", (g, w), {**conv, "groups": groups})
    if needs[1]:
        n, c_in, h, wd = x.data.shape  # sizes spelled out: -1 is ambiguous for n = 0
        cols = apply("im2col", (g,), {**conv, "kernel_size": w.data.shape[2:]})
        cols = cols.reshape(n, groups, cols.data.shape[1] // groups, h * wd)
        gw = (x.reshape(n, groups, c_in // groups, h * wd) @ cols.mT).sum(0).reshape(
            w.data.shape)
    if len(needs) > 2 and needs[2]:
        gb = g.sum((0, 2, 3))
    return (gx, gw, gb)[:len(needs)]


def conv_transpose2d_jvp(primals, tangents, out, **attrs):
    """tout = convT(tx, W) + convT(x, tW) + tb (bilinear in x and W)."""
    x, w = primals[:2]
    tx, tw = tangents[:2]
    t = apply("conv_transpose2d", (tx, w), attrs) + apply("conv_transpose2d", (x, tw), attrs)
    if len(tangents) > 2 and tangents[2] is not None:
        t = t + tangents[2].reshape(1, -1, 1, 1)
    return t


register("conv_transpose2d", vjp=conv_transpose2d_vjp, jvp=conv_transpose2d_jvp, saves=(0, 1),
         grad_fn="ConvolutionBackward0")
