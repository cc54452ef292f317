"""Neural-network ops added to the registry: convolution, pooling,
normalization, dropout, embedding.

Convolution and pooling rest on one pair of linear maps. ``im2col`` copies
every kernel-sized window of the (padded) input into a column, so that a
convolution becomes one matrix product ``W @ cols`` and a pooling one
reduction over each column. ``col2im`` is its adjoint: it adds every column
back onto the window it came from (overlapping windows add up). The
gradient of ``im2col`` is ``col2im`` and vice versa, which is all the
derivative rules of conv2d and the pools need.
"""

from __future__ import annotations

import numpy as np

from chapters.graph.ops import ShapeError, TensorMeta, normalize_dims, register_op


def pair(value) -> tuple[int, int]:
    """``3`` -> ``(3, 3)``; a pair stays a pair (torch's int-or-tuple arguments)."""
    if isinstance(value, int | np.integer):
        return int(value), int(value)
    a, b = value
    return int(a), int(b)


def conv_output_size(op: str, size: tuple, kernel: tuple, stride: tuple, padding: tuple):
    """(H + 2p - k) // s + 1 for each spatial dimension."""
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


# ------------------------------------------------------------------ conv2d


def _conv2d_meta(x: TensorMeta, w: TensorMeta, b: TensorMeta | None = None, stride=(1, 1),
                 padding=(0, 0)) -> TensorMeta:
    _check_4d("conv2d", x)
    if len(w.shape) != 4 or w.shape[1] != x.shape[1]:
        raise ShapeError(
            f"conv2d: weight of shape {w.shape} does not fit input {x.shape}: the weight is "
            "(out_channels, in_channels, kh, kw) and in_channels must equal the input's C.")
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


@register_op("max_pool2d", _pool_meta("max_pool2d"))
def max_pool2d(x, kernel_size, stride, padding):
    """The largest value of each window (padding counts as -inf)."""
    n, c, h, w = x.shape
    oh, ow = conv_output_size("max_pool2d", (h, w), kernel_size, stride, padding)
    cols = pool_columns(x, kernel_size, stride, padding, -np.inf)
    return cols.max(axis=1).reshape(n, c, oh, ow)


@register_op("avg_pool2d", _pool_meta("avg_pool2d"))
def avg_pool2d(x, kernel_size, stride, padding):
    """The mean of each window (zero padding included in the count, torch's default)."""
    n, c, h, w = x.shape
    oh, ow = conv_output_size("avg_pool2d", (h, w), kernel_size, stride, padding)
    cols = pool_columns(x, kernel_size, stride, padding, 0.0)
    return cols.mean(axis=1).reshape(n, c, oh, ow).astype(x.dtype, copy=False)


# ----------------------------------------------------------- normalization


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


@register_op("layer_norm", _norm_meta)
def layer_norm(x, w=None, b=None, dims=(-1,), eps=1e-5):
    """Normalize each sample over its last dims, then scale by w and shift by b."""
    shape = x.shape[x.ndim - len(dims):]
    return _affine(normalize(x, dims, eps), w, b, shape).astype(x.dtype, copy=False)


@register_op("batch_norm", _norm_meta)
def batch_norm(x, w=None, b=None, dims=(0,), eps=1e-5):
    """Normalize each channel (dim 1) over the batch and spatial dims ``dims``,
    then scale and shift per channel."""
    shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    return _affine(normalize(x, dims, eps), w, b, shape).astype(x.dtype, copy=False)


# -------------------------------------------------------- dropout, embedding


def _dropout_meta(x: TensorMeta, scale: TensorMeta, **_) -> TensorMeta:
    return x


@register_op("dropout", _dropout_meta, elementwise=True)
def dropout(x, scale):
    """x * scale, where scale is 0 for dropped elements and 1/(1-p) for kept ones."""
    return x * scale


def _embedding_meta(w: TensorMeta, indices: TensorMeta, **_) -> TensorMeta:
    if len(w.shape) != 2:
        raise ShapeError(f"embedding: the weight must be 2-D (num_embeddings, dim), "
                         f"got {w.shape}")
    return TensorMeta(indices.shape + (w.shape[1],), w.dtype)


@register_op("embedding", _embedding_meta)
def embedding(w, indices):
    """Rows of the table ``w`` picked by integer ``indices``."""
    return np.take(w, indices, axis=0)
