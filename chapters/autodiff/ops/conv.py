"""Convolution and pooling, resting on one pair of linear maps.

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
from .common import masked


def pair(value) -> tuple[int, int]:
    """``3`` -> ``(3, 3)``; a pair stays a pair (torch's int-or-tuple arguments)."""
    if isinstance(value, int | np.integer):
        return int(value), int(value)
    a, b = value
    return int(a), int(b)


def conv_output_size(op: str, size: tuple, kernel: tuple, stride: tuple, padding: tuple):
    """(H + 2p - k) // s + 1 for each spatial dimension."""
    if min(stride) < 1:
        raise ShapeError(f"{op}: the stride must be positive, got {stride}.")
    out = tuple((n + 2 * p - k) // s + 1 for n, k, s, p in zip(size, kernel, stride, padding,
                                                              strict=True))
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


def _im2col_meta(x: TensorMeta, kernel_size, stride, padding, pad_value=0.0) -> TensorMeta:
    _check_4d("im2col", x)
    n, c, h, w = x.shape
    kh, kw = kernel_size
    oh, ow = conv_output_size("im2col", (h, w), kernel_size, stride, padding)
    return TensorMeta((n, c * kh * kw, oh * ow), x.dtype)


@register_op("im2col", _im2col_meta)
def im2col(x, kernel_size, stride, padding, pad_value=0.0):
    """(N, C, H, W) -> (N, C*kh*kw, L): column l holds the window at output
    position l (L = out_h * out_w), row index (c, i, j) its element."""
    (kh, kw), (sh, sw), (ph, pw) = kernel_size, stride, padding
    if ph or pw:
        x = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)), constant_values=pad_value)
    windows = np.lib.stride_tricks.sliding_window_view(x, (kh, kw), axis=(2, 3))
    windows = windows[:, :, ::sh, ::sw]  # (N, C, oh, ow, kh, kw)
    n, c, oh, ow = windows.shape[:4]
    return windows.transpose(0, 1, 4, 5, 2, 3).reshape(n, c * kh * kw, oh * ow)


def _col2im_meta(cols: TensorMeta, input_shape, kernel_size, stride, padding) -> TensorMeta:
    return TensorMeta(tuple(input_shape), cols.dtype)


@register_op("col2im", _col2im_meta)
def col2im(cols, input_shape, kernel_size, stride, padding):
    """The adjoint of im2col: add each column back onto its window."""
    n, c, h, w = input_shape
    (kh, kw), (sh, sw), (ph, pw) = kernel_size, stride, padding
    oh, ow = conv_output_size("col2im", (h, w), kernel_size, stride, padding)
    blocks = cols.reshape(n, c, kh, kw, oh, ow)
    out = np.zeros((n, c, h + 2 * ph, w + 2 * pw), dtype=cols.dtype)
    for i in range(kh):
        for j in range(kw):
            out[:, :, i:i + sh * oh:sh, j:j + sw * ow:sw] += blocks[:, :, i, j]
    return out[:, :, ph:ph + h, pw:pw + w]


def _im2col(x: Tensor, attrs: dict, pad_value=0.0) -> Tensor:
    return apply("im2col", (x,), {"kernel_size": attrs["kernel_size"], "stride": attrs["stride"],
                                  "padding": attrs["padding"], "pad_value": pad_value})


def _col2im(cols: Tensor, shape: tuple, attrs: dict) -> Tensor:
    return apply("col2im", (cols,), {"input_shape": shape, "kernel_size": attrs["kernel_size"],
                                     "stride": attrs["stride"], "padding": attrs["padding"]})


def im2col_vjp(ctx, g):
    """cols = im2col(x) is linear; its adjoint col2im adds each column's
    gradient back onto its window: dL/dx = col2im(g)."""
    return (_col2im(g, ctx.input_meta[0][0], ctx.attrs),)


def im2col_jvp(primals, tangents, out, **attrs):
    """tcols = im2col(tx) (linear; the padding of a tangent is 0)."""
    return apply("im2col", (tangents[0],), {**attrs, "pad_value": 0.0})


def col2im_vjp(ctx, g):
    """x = col2im(cols) is linear, the adjoint of im2col: dL/dcols = im2col(g)."""
    return (_im2col(g, ctx.attrs),)


def col2im_jvp(primals, tangents, out, **attrs):
    """tx = col2im(tcols) (linear)."""
    return apply("col2im", (tangents[0],), attrs)


register("im2col", vjp=im2col_vjp, jvp=im2col_jvp)
register("col2im", vjp=col2im_vjp, jvp=col2im_jvp)

# ------------------------------------------------------------------ conv2d


def _conv2d_meta(x: TensorMeta, w: TensorMeta, b: TensorMeta | None = None, stride=(1, 1),
                 padding=(0, 0)) -> TensorMeta:
    _check_4d("conv2d", x)
    if len(w.shape) != 4 or w.shape[1] != x.shape[1]:
        raise ShapeError(
            f"conv2d: weight of shape {w.shape} does not fit input {x.shape}: the weight is "
            "(out_channels, in_channels, kh, kw) and in_channels must equal the input's C.")
    if b is not None and b.shape != w.shape[:1]:
        raise ShapeError(f"conv2d: bias of shape {b.shape} does not fit weight {w.shape}: the "
                         f"bias needs one value per output channel, shape ({w.shape[0]},).")
    oh, ow = conv_output_size("conv2d", x.shape[2:], w.shape[2:], stride, padding)
    return TensorMeta((x.shape[0], w.shape[0], oh, ow), x.dtype)


@register_op("conv2d", _conv2d_meta)
def conv2d(x, w, b=None, stride=(1, 1), padding=(0, 0)):
    """out[n, o] = sum_{c,i,j} w[o, c, i, j] x[n, c, s*y + i, s*x + j] + b[o]:
    im2col, then one matrix product per batch."""
    n, _, h, wd = x.shape
    o, _, kh, kw = w.shape
    oh, ow = conv_output_size("conv2d", (h, wd), (kh, kw), stride, padding)
    cols = im2col(x, (kh, kw), stride, padding)
    out = np.matmul(w.reshape(o, -1), cols).reshape(n, o, oh, ow)
    if b is not None:
        out += b.reshape(1, o, 1, 1)
    return out


def _conv_attrs(w_shape: tuple, attrs: dict) -> dict:
    return {"kernel_size": tuple(w_shape[2:]), "stride": attrs.get("stride", (1, 1)),
            "padding": attrs.get("padding", (0, 0))}


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


def conv2d_jvp(primals, tangents, out, stride=(1, 1), padding=(0, 0)):
    """tout = conv(tx, W) + conv(x, tW) + tb (conv is bilinear in x and W)."""
    x, w = primals[:2]
    tx, tw = tangents[:2]
    attrs = {"stride": stride, "padding": padding}
    t = apply("conv2d", (tx, w), attrs) + apply("conv2d", (x, tw), attrs)
    if len(tangents) > 2 and tangents[2] is not None:
        t = t + tangents[2].reshape(1, -1, 1, 1)
    return t


register("conv2d", vjp=conv2d_vjp, jvp=conv2d_jvp, saves=(0, 1))

# ----------------------------------------------------------------- pooling


def _pool_meta(op: str):
    def infer(x: TensorMeta, kernel_size, stride, padding, **_) -> TensorMeta:
        _check_4d(op, x)
        oh, ow = conv_output_size(op, x.shape[2:], kernel_size, stride, padding)
        return TensorMeta((x.shape[0], x.shape[1], oh, ow), x.dtype)

    return infer


def pool_columns(x, kernel_size, stride, padding, pad_value):
    """Every window of every channel as a column: (N*C, kh*kw, L)."""
    n, c, h, w = x.shape
    return im2col(x.reshape(n * c, 1, h, w), kernel_size, stride, padding, pad_value)


def lowest(dtype: np.dtype):
    """The padding of a max pool, below every value: -inf for floats, the
    smallest integer for integers (-inf does not fit in an int)."""
    return np.iinfo(dtype).min if dtype.kind in "iu" else -np.inf


@register_op("max_pool2d", _pool_meta("max_pool2d"))
def max_pool2d(x, kernel_size, stride, padding):
    """The largest value of each window (padding counts as -inf)."""
    n, c, h, w = x.shape
    oh, ow = conv_output_size("max_pool2d", (h, w), kernel_size, stride, padding)
    cols = pool_columns(x, kernel_size, stride, padding, lowest(x.dtype))
    return cols.max(axis=1).reshape(n, c, oh, ow)


def _first_max_mask(cols: np.ndarray) -> np.ndarray:
    """One-hot along axis 1 at the first maximum of each window (torch's choice)."""
    mask = np.zeros(cols.shape, dtype=bool)
    idx = np.argmax(cols, axis=1)
    np.put_along_axis(mask, idx[:, None, :], True, axis=1)
    return mask


def max_pool2d_vjp(ctx, g):
    """out = max of each window:  dL/dx = col2im(g placed at each window's argmax)."""
    (x,) = ctx.saved
    n, c, h, w = x.data.shape
    cols = pool_columns(x.data, ctx.attrs["kernel_size"], ctx.attrs["stride"],
                        ctx.attrs["padding"], -np.inf)
    spread = masked(g.reshape(n * c, 1, -1).expand(cols.shape), _first_max_mask(cols))
    return (_col2im(spread, (n * c, 1, h, w), ctx.attrs).reshape(n, c, h, w),)


def max_pool2d_jvp(primals, tangents, out, kernel_size, stride, padding):
    """tout = tx at each window's (first) argmax."""
    x, t = primals[0].data, tangents[0]
    n, c = x.shape[:2]
    cols = pool_columns(x, kernel_size, stride, padding, -np.inf)
    attrs = {"kernel_size": kernel_size, "stride": stride, "padding": padding}
    tcols = _im2col(t.reshape(n * c, 1, *x.shape[2:]), attrs)
    return masked(tcols, _first_max_mask(cols)).sum(1).reshape(out.shape)


register("max_pool2d", vjp=max_pool2d_vjp, jvp=max_pool2d_jvp, saves=(0,))


@register_op("avg_pool2d", _pool_meta("avg_pool2d"))
def avg_pool2d(x, kernel_size, stride, padding):
    """The mean of each window (zero padding included in the count, torch's default)."""
    n, c, h, w = x.shape
    oh, ow = conv_output_size("avg_pool2d", (h, w), kernel_size, stride, padding)
    cols = pool_columns(x, kernel_size, stride, padding, 0.0)
    return cols.mean(axis=1).reshape(n, c, oh, ow).astype(x.dtype, copy=False)


def avg_pool2d_vjp(ctx, g):
    """out = mean of each window of k elements:  dL/dx = col2im(g / k on every element)."""
    n, c, h, w = ctx.input_meta[0][0]
    kh, kw = ctx.attrs["kernel_size"]
    spread = g.reshape(n * c, 1, -1).expand(n * c, kh * kw, g.data.shape[2] * g.data.shape[3])
    return (_col2im(spread / (kh * kw), (n * c, 1, h, w), ctx.attrs).reshape(n, c, h, w),)


def avg_pool2d_jvp(primals, tangents, out, kernel_size, stride, padding):
    """tout = avg_pool2d(tx) (linear)."""
    return apply("avg_pool2d", (tangents[0],), {"kernel_size": kernel_size, "stride": stride,
                                                "padding": padding})


register("avg_pool2d", vjp=avg_pool2d_vjp, jvp=avg_pool2d_jvp)
