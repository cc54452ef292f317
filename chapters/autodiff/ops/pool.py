"""Pooling (池化): max and average over windows, on conv's im2col/col2im pair.

Every window of every channel becomes a column (``im2col`` on the input
viewed as N*C single-channel images); max_pool2d takes each column's
maximum, avg_pool2d its sum over a divisor. The window geometry is torch's:

    out = floor((n + 2p - d (k - 1) - 1) / s) + 1        (ceil with ceil_mode,
          dropping a last window that would start in the right padding)

``ceil_mode`` can ask for windows that run past the padded input; the input
is then extended at the bottom/right (by ``extra`` rows/columns) with values
that never win (max) or never count (avg). The average's divisor is itself
a pooling of ones: the window's size, or with ``count_include_pad=False``
only the real input elements in it; the extension never counts.
"""

from __future__ import annotations

import math

import numpy as np

from chapters.graph.ops import ShapeError, TensorMeta, register_op

from ..rules import register
from ..tensor import apply
from .common import masked
from .conv import apply_col2im, apply_im2col, im2col

ONE = (1, 1)


def pool_geometry(op: str, size: tuple, kernel: tuple, stride: tuple, padding: tuple,
                  dilation: tuple = ONE, ceil_mode: bool = False) -> tuple[tuple, tuple]:
    """(output size, extra bottom/right rows and columns) per spatial dim."""
    if min(stride) < 1:
        raise ShapeError(f"{op}: the stride must be positive, got {stride} (torch: stride "
                         "should not be zero)")
    outs, extras = [], []
    for n, k, s, p, d in zip(size, kernel, stride, padding, dilation, strict=True):
        span = d * (k - 1) + 1
        steps = (n + 2 * p - span) / s
        out = (math.ceil(steps) if ceil_mode else math.floor(steps)) + 1
        if ceil_mode and (out - 1) * s >= n + p:
            out -= 1
        if out < 1:
            raise ShapeError(f"{op}: input of spatial size {tuple(size)} is smaller than the "
                             f"kernel {kernel} (dilation {dilation}, padding {padding}); the "
                             "output would be empty. Use a smaller kernel or more padding.")
        outs.append(out)
        extras.append(max(0, (out - 1) * s + span - (n + 2 * p)))
    return tuple(outs), tuple(extras)


def _geometry(op: str, shape: tuple, attrs: dict) -> tuple[tuple, tuple]:
    return pool_geometry(op, shape[2:], attrs["kernel_size"], attrs["stride"], attrs["padding"],
                         attrs.get("dilation", ONE), attrs.get("ceil_mode", False))


def _pool_meta(op: str):
    def infer(x: TensorMeta, **attrs) -> TensorMeta:
        if len(x.shape) != 4:
            raise ShapeError(f"{op}: expected a 4-D input (N, C, H, W), got shape {x.shape}.")
        (oh, ow), _ = _geometry(op, x.shape, attrs)
        return TensorMeta((x.shape[0], x.shape[1], oh, ow), x.dtype)

    return infer


def lowest(dtype: np.dtype):
    """The value that never wins a max: -inf, or the integer dtype's minimum."""
    return -np.inf if dtype.kind == "f" else np.iinfo(dtype).min


def pool_columns(x: np.ndarray, attrs: dict, pad_value) -> np.ndarray:
    """Every window of every channel as a column, (N*C, kh*kw, L), the input
    extended by ceil_mode's extra rows/columns filled with ``pad_value``."""
    n, c, h, w = x.shape
    _, (eh, ew) = _geometry("pool", x.shape, attrs)
    x = x.reshape(n * c, 1, h, w)
    if eh or ew:
        x = np.pad(x, ((0, 0), (0, 0), (0, eh), (0, ew)), constant_values=pad_value)
    return im2col(x, attrs["kernel_size"], attrs["stride"], attrs["padding"], pad_value,
                  attrs.get("dilation", ONE))


def _window_attrs(attrs: dict) -> dict:
    """The attrs im2col/col2im take (a pool's other options stay behind)."""
    return {key: attrs[key] for key in ("kernel_size", "stride", "padding")} | {
        "dilation": attrs.get("dilation", ONE)}


def back_onto_input(cols, shape: tuple, attrs: dict):
    """col2im of per-window gradients (N*C, kh*kw, L) onto the (extended)
    input, cropped back to ``shape`` (N, C, H, W)."""
    n, c, h, w = shape
    _, (eh, ew) = _geometry("pool", shape, attrs)
    full = apply_col2im(cols, (n * c, 1, h + eh, w + ew), _window_attrs(attrs))
    return full[:, :, :h, :w].reshape(n, c, h, w)


# ------------------------------------------------------------- max_pool2d


@register_op("max_pool2d", _pool_meta("max_pool2d"))
def max_pool2d(x, kernel_size, stride, padding, dilation=ONE, ceil_mode=False):
    """The largest value of each window (padding never wins)."""
    attrs = {"kernel_size": kernel_size, "stride": stride, "padding": padding,
             "dilation": dilation, "ceil_mode": ceil_mode}
    (oh, ow), _ = _geometry("max_pool2d", x.shape, attrs)
    cols = pool_columns(x, attrs, lowest(x.dtype))
    return cols.max(axis=1).reshape(x.shape[0], x.shape[1], oh, ow)


def first_max(cols: np.ndarray) -> np.ndarray:
    """Each window's first maximum (torch's choice on ties), (N*C, L)."""
    return np.argmax(cols, axis=1)


def max_pool2d_indices(x: np.ndarray, attrs: dict) -> np.ndarray:
    """``return_indices``: where each maximum sits, as a flat index h * W + w
    into its channel's (unpadded) H x W plane, shape (N, C, oh, ow)."""
    n, c, h, w = x.shape
    (oh, ow), _ = _geometry("max_pool2d", x.shape, attrs)
    kw = attrs["kernel_size"][1]
    (sh, sw), (ph, pw) = attrs["stride"], attrs["padding"]
    dh, dw = attrs.get("dilation", ONE)
    tap = first_max(pool_columns(x, attrs, lowest(x.dtype))).reshape(n, c, oh, ow)
    rows = np.arange(oh)[:, None] * sh - ph + (tap // kw) * dh
    cols = np.arange(ow)[None, :] * sw - pw + (tap % kw) * dw
    return (rows * w + cols).astype(np.int64)


def _first_max_mask(cols: np.ndarray) -> np.ndarray:
    """One-hot along axis 1 at the first maximum of each window."""
    mask = np.zeros(cols.shape, dtype=bool)
    np.put_along_axis(mask, first_max(cols)[:, None, :], True, axis=1)
    return mask


def max_pool2d_vjp(ctx, g):
    """out = max of each window:  dL/dx = col2im(g placed at each window's argmax)."""
    (x,) = ctx.saved
    n, c = x.data.shape[:2]
    cols = pool_columns(x.data, ctx.attrs, lowest(x.data.dtype))
    windows = g.data.shape[2] * g.data.shape[3]  # not -1: ambiguous for an empty batch
    spread = masked(g.reshape(n * c, 1, windows).expand(cols.shape), _first_max_mask(cols))
    return (back_onto_input(spread, x.data.shape, ctx.attrs),)


def max_pool2d_jvp(primals, tangents, out, **attrs):
    """tout = tx at each window's (first) argmax."""
    x, t = primals[0].data, tangents[0]
    n, c, h, w = x.shape
    cols = pool_columns(x, attrs, lowest(x.dtype))
    _, (eh, ew) = _geometry("max_pool2d", x.shape, attrs)
    t = apply("pad", (t.reshape(n * c, 1, h, w),), {"pad": (0, ew, 0, eh)})
    tcols = apply_im2col(t, _window_attrs(attrs))
    return masked(tcols, _first_max_mask(cols)).sum(1).reshape(out.shape)


register("max_pool2d", vjp=max_pool2d_vjp, jvp=max_pool2d_jvp, saves=(0,),
         grad_fn="MaxPool2DWithIndicesBackward0")

# ------------------------------------------------------------- avg_pool2d


def divisors(shape: tuple, attrs: dict, dtype) -> np.ndarray:
    """Each window's divisor, (1, L): ``divisor_override``, else the count of
    the elements it covers: padding included (count_include_pad) or not,
    ceil_mode's extension never."""
    if attrs.get("divisor_override"):
        return np.asarray(attrs["divisor_override"], dtype)
    h, w = shape[2:]
    if not attrs.get("count_include_pad", True):
        return pool_columns(np.ones((1, 1, h, w), dtype), attrs, 0).sum(1)
    (ph, pw) = attrs["padding"]
    _, (eh, ew) = _geometry("avg_pool2d", shape, attrs)
    counted = np.zeros((1, 1, h + 2 * ph + eh, w + 2 * pw + ew), dtype)
    counted[:, :, :h + 2 * ph, :w + 2 * pw] = 1
    return im2col(counted, attrs["kernel_size"], attrs["stride"], (0, 0)).sum(1)


@register_op("avg_pool2d", _pool_meta("avg_pool2d"))
def avg_pool2d(x, kernel_size, stride, padding, ceil_mode=False, count_include_pad=True,
               divisor_override=None):
    """Each window's sum over its divisor (see :func:`divisors`)."""
    attrs = {"kernel_size": kernel_size, "stride": stride, "padding": padding,
             "ceil_mode": ceil_mode, "count_include_pad": count_include_pad,
             "divisor_override": divisor_override}
    (oh, ow), _ = _geometry("avg_pool2d", x.shape, attrs)
    sums = pool_columns(x, attrs, 0).sum(axis=1)
    out = sums / divisors(x.shape, attrs, sums.dtype)
    return out.reshape(x.shape[0], x.shape[1], oh, ow).astype(x.dtype, copy=False)


def avg_pool2d_vjp(ctx, g):
    """out = (sum of a window) / m:  dL/dx = col2im(g / m on every element of
    the window)."""
    shape = ctx.input_meta[0][0]
    n, c = shape[:2]
    kh, kw = ctx.attrs["kernel_size"]
    windows = g.data.shape[2] * g.data.shape[3]  # not -1: ambiguous for an empty batch
    per_window = g.reshape(n * c, 1, windows) / divisors(shape, ctx.attrs, g.data.dtype)
    spread = per_window.expand(n * c, kh * kw, per_window.data.shape[2])
    return (back_onto_input(spread, shape, ctx.attrs),)


def avg_pool2d_jvp(primals, tangents, out, **attrs):
    """tout = avg_pool2d(tx) (linear)."""
    return apply("avg_pool2d", (tangents[0],), attrs)


register("avg_pool2d", vjp=avg_pool2d_vjp, jvp=avg_pool2d_jvp)
