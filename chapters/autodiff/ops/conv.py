"""Convolution, resting on one pair of linear maps (pooling, in :mod:`.pool`,
rests on them too).

``im2col`` copies every kernel-sized window of the (padded) input into a
column, so that a convolution becomes one matrix product ``W @ cols`` and a
pooling one reduction over each column. ``col2im`` is its adjoint: it adds
every column back onto the window it came from (overlapping windows add up).
The gradient of ``im2col`` is ``col2im`` and vice versa, which is all the
derivative rules of conv2d and the pools need.
"""

from __future__ import annotations

import numpy as np

from chapters.graph.ops import ShapeError, TensorMeta, register_op

from ..rules import register
from ..tensor import Tensor, apply


def pair(value) -> tuple[int, int]:
    """``3`` -> ``(3, 3)``; a pair stays a pair (torch's int-or-tuple arguments)."""
    if isinstance(value, int | np.integer):
        return int(value), int(value)
    a, b = value
    return int(a), int(b)


def conv_output_size(op: str, size: tuple, kernel: tuple, stride: tuple, padding: tuple,
                     dilation: tuple = (1, 1)):
    """(H + 2p - d (k - 1) - 1) // s + 1 for each spatial dimension: a kernel of
    k taps d apart spans d (k - 1) + 1 input positions."""
    if min(stride) < 1:
        raise ShapeError(f"{op}: the stride must be positive, got {stride}.")
    out = tuple((n + 2 * p - d * (k - 1) - 1) // s + 1
                for n, k, s, p, d in zip(size, kernel, stride, padding, dilation, strict=True))
    if min(out) < 1:
        raise ShapeError(
            f"{op}: input of spatial size {tuple(size)} is smaller than the kernel {kernel} "
            f"(with padding {padding}); the output would be empty. Use a smaller kernel or "
            "more padding.")
    return out


def _check_4d(op: str, x: TensorMeta):
    if len(x.shape) != 4:
        raise ShapeError(f"{op}: expected a 4-D input (N, C, H, W), got shape {x.shape}.")


# ------------------------------------------------------------ im2col pair


def _im2col_meta(x: TensorMeta, kernel_size, stride, padding, pad_value=0.0,
                 dilation=(1, 1)) -> TensorMeta:
    _check_4d("im2col", x)
    n, c, h, w = x.shape
    kh, kw = kernel_size
    oh, ow = conv_output_size("im2col", (h, w), kernel_size, stride, padding, dilation)
    return TensorMeta((n, c * kh * kw, oh * ow), x.dtype)


@register_op("im2col", _im2col_meta)
def im2col(x, kernel_size, stride, padding, pad_value=0.0, dilation=(1, 1)):
    """(N, C, H, W) -> (N, C*kh*kw, L): column l holds the window at output
    position l (L = out_h * out_w), row index (c, i, j) its element; with
    dilation d the window's taps are d apart."""
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel_size, stride, padding, dilation
    if ph or pw:
        x = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)), constant_values=pad_value)
    span = (dh * (kh - 1) + 1, dw * (kw - 1) + 1)
    windows = np.lib.stride_tricks.sliding_window_view(x, span, axis=(2, 3))
    windows = windows[:, :, ::sh, ::sw, ::dh, ::dw]  # (N, C, oh, ow, kh, kw)
    n, c, oh, ow = windows.shape[:4]
    return windows.transpose(0, 1, 4, 5, 2, 3).reshape(n, c * kh * kw, oh * ow)


def _col2im_meta(cols: TensorMeta, input_shape, kernel_size, stride, padding,
                 dilation=(1, 1)) -> TensorMeta:
    return TensorMeta(tuple(input_shape), cols.dtype)


@register_op("col2im", _col2im_meta)
def col2im(cols, input_shape, kernel_size, stride, padding, dilation=(1, 1)):
    """The adjoint of im2col: add each column back onto its window."""
    n, c, h, w = input_shape
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel_size, stride, padding, dilation
    oh, ow = conv_output_size("col2im", (h, w), kernel_size, stride, padding, dilation)
    blocks = cols.reshape(n, c, kh, kw, oh, ow)
    out = np.zeros((n, c, h + 2 * ph, w + 2 * pw), dtype=cols.dtype)
    for i in range(kh):
        for j in range(kw):
            top, left = i * dh, j * dw
            out[:, :, top:top + sh * oh:sh, left:left + sw * ow:sw] += blocks[:, :, i, j]
    return out[:, :, ph:ph + h, pw:pw + w]


def apply_im2col(x: Tensor, attrs: dict, pad_value=0.0) -> Tensor:
    return apply("im2col", (x,), {"kernel_size": attrs["kernel_size"], "stride": attrs["stride"],
                                  "padding": attrs["padding"], "pad_value": pad_value,
                                  "dilation": attrs.get("dilation", (1, 1))})


def apply_col2im(cols: Tensor, shape: tuple, attrs: dict) -> Tensor:
    return apply("col2im", (cols,), {"input_shape": shape, "kernel_size": attrs["kernel_size"],
                                     "stride": attrs["stride"], "padding": attrs["padding"],
                                     "dilation": attrs.get("dilation", (1, 1))})


def im2col_vjp(ctx, g):
    """cols = im2col(x) is linear; its adjoint col2im adds each column's
    gradient back onto its window: dL/dx = col2im(g)."""
    return (apply_col2im(g, ctx.input_meta[0][0], ctx.attrs),)


def im2col_jvp(primals, tangents, out, **attrs):
    """tcols = im2col(tx) (linear; the padding of a tangent is 0)."""
    return apply("im2col", (tangents[0],), {**attrs, "pad_value": 0.0})


def col2im_vjp(ctx, g):
    """x = col2im(cols) is linear, the adjoint of im2col: dL/dcols = im2col(g)."""
    return (apply_im2col(g, ctx.attrs),)


def col2im_jvp(primals, tangents, out, **attrs):
    """tx = col2im(tcols) (linear)."""
    return apply("col2im", (tangents[0],), attrs)


register("im2col", vjp=im2col_vjp, jvp=im2col_jvp)
register("col2im", vjp=col2im_vjp, jvp=col2im_jvp)

# ------------------------------------------------------------------ conv2d


def _conv2d_meta(x: TensorMeta, w: TensorMeta, b: TensorMeta | None = None, stride=(1, 1),
                 padding=(0, 0), dilation=(1, 1), groups=1) -> TensorMeta:
    _check_4d("conv2d", x)
    if len(w.shape) != 4 or w.shape[1] * groups != x.shape[1] or w.shape[0] % groups:
        raise ShapeError(
            f"conv2d: weight of shape {w.shape} does not fit input {x.shape} with groups="
            f"{groups}: the weight is (out_channels, in_channels / groups, kh, kw), so its dim "
            "1 times groups must equal the input's C, and groups must divide out_channels.")
    if b is not None and b.shape != w.shape[:1]:
        raise ShapeError(f"conv2d: bias of shape {b.shape} does not fit weight {w.shape}: the "
                         f"bias needs one value per output channel, shape ({w.shape[0]},).")
    oh, ow = conv_output_size("conv2d", x.shape[2:], w.shape[2:], stride, padding, dilation)
    return TensorMeta((x.shape[0], w.shape[0], oh, ow), x.dtype)


@register_op("conv2d", _conv2d_meta)
def conv2d(x, w, b=None, stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1):
    """out[n, o] = sum_{c,i,j} w[o, c, i, j] x[n, c, s y + d i, s x + d j] + b[o],
    c running over the C/G input channels of o's group: im2col, then one
    matrix product per batch and group."""
    n, _, h, wd = x.shape
    o, _, kh, kw = w.shape
    oh, ow = conv_output_size("conv2d", (h, wd), (kh, kw), stride, padding, dilation)
    cols = im2col(x, (kh, kw), stride, padding, dilation=dilation)
    w_groups = w.reshape(groups, o // groups, -1)
    out = (w_groups @ cols.reshape(n, groups, cols.shape[1] // groups, oh * ow)).reshape(
        n, o, oh, ow)  # sizes spelled out: -1 is ambiguous for an empty batch
    if b is not None:
        out += b.reshape(1, o, 1, 1)
    return out


def _conv_attrs(w_shape: tuple, attrs: dict) -> dict:
    return {"kernel_size": tuple(w_shape[2:]), "stride": attrs.get("stride", (1, 1)),
            "padding": attrs.get("padding", (0, 0)), "dilation": attrs.get("dilation", (1, 1))}


def conv2d_vjp(ctx, g):
    """out = W_g @ im2col(x)_g + b per sample and group g (W_g: group g's rows
    of W reshaped (O/G, C/G*kh*kw)):  dL/dW_g = sum_n g_n,g cols_n,g^T,
    dL/dx = col2im(W_g^T g_n,g stacked over groups), dL/db = g summed over
    batch and space."""
    x, w = ctx.saved[:2]
    needs = ctx.needs_input_grad
    groups = ctx.attrs.get("groups", 1)
    n, o, oh, ow = g.data.shape
    conv = _conv_attrs(w.data.shape, ctx.attrs)
    g2 = g.reshape(n, groups, o // groups, oh * ow)
    w2 = w.reshape(groups, o // groups, -1)
    gx = gw = gb = None
    if needs[0]:
        gx = apply_col2im((w2.mT @ g2).reshape(n, x.data.shape[1] * w.data.shape[2] *
                                          w.data.shape[3], oh * ow), x.data.shape, conv)
    if needs[1]:
        cols = apply_im2col(x, conv)
        cols = cols.reshape(n, groups, cols.data.shape[1] // groups, oh * ow)
        gw = (g2 @ cols.mT).sum(0).reshape(w.data.shape)
    if len(needs) > 2 and needs[2]:
        gb = g.sum((0, 2, 3))
    return (gx, gw, gb)[:len(needs)]


def conv2d_jvp(primals, tangents, out, **attrs):
    """tout = conv(tx, W) + conv(x, tW) + tb (conv is bilinear in x and W)."""
    x, w = primals[:2]
    tx, tw = tangents[:2]
    t = apply("conv2d", (tx, w), attrs) + apply("conv2d", (x, tw), attrs)
    if len(tangents) > 2 and tangents[2] is not None:
        t = t + tangents[2].reshape(1, -1, 1, 1)
    return t


register("conv2d", vjp=conv2d_vjp, jvp=conv2d_jvp, saves=(0, 1))
