"""Pooling: the maximum or the mean of each window."""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..dispatch import public
from ..ops.conv import pair
from ..ops.pool import max_pool2d_indices
from ..tensor import Tensor, apply
from ._common import _batch_of_one, _no_bool, _single


def _pool_attrs(op: str, kernel_size, stride, padding) -> dict:
    kernel, padding = pair(kernel_size), pair(padding)
    stride = kernel if stride is None or stride == [] else pair(stride)
    if any(2 * p > k for k, p in zip(kernel, padding, strict=True)):
        raise RuntimeError(f"{op}: padding {padding} should be at most half of the kernel size "
                           f"{kernel}, so that no window lies in the padding alone")
    return {"kernel_size": kernel, "stride": stride, "padding": padding}


@public("max_pool2d")
def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode: bool = False, return_indices: bool = False):
    """The maximum of each window (stride defaults to the kernel size);
    ``dilation`` spaces the window's taps, ``ceil_mode`` keeps a last partial
    window, ``return_indices`` also returns where each maximum is (a flat
    index into its channel's H x W plane, as torch). An input (C, H, W) is one
    unbatched image."""
    _no_bool("max_pool2d", input)
    if input.ndim == 3:
        return _batch_of_one(max_pool2d, input, kernel_size, stride, padding, dilation,
                             ceil_mode, return_indices)
    attrs = _pool_attrs("max_pool2d", kernel_size, stride, padding)
    attrs.update(dilation=pair(dilation), ceil_mode=bool(ceil_mode))
    out = apply("max_pool2d", (input,), attrs)
    if not return_indices:
        return out
    return out, Tensor(max_pool2d_indices(input.data, attrs))


@public("avg_pool2d")
def avg_pool2d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    """The mean of each window; zero padding counts toward the divisor unless
    ``count_include_pad=False``; ``divisor_override`` replaces the divisor. An
    input (C, H, W) is one unbatched image."""
    _no_bool("avg_pool2d", input)
    if input.ndim == 3:
        return _batch_of_one(avg_pool2d, input, kernel_size, stride, padding, ceil_mode,
                             count_include_pad, divisor_override)
    attrs = _pool_attrs("avg_pool2d", kernel_size, stride, padding)
    if divisor_override is not None and divisor_override <= 0:
        raise RuntimeError(f"avg_pool2d: divisor_override must be positive, got "
                           f"{divisor_override}")
    attrs.update(ceil_mode=bool(ceil_mode), count_include_pad=bool(count_include_pad),
                 divisor_override=divisor_override)
    return apply("avg_pool2d", (input,), attrs)


# ------------------------------------------------------------------ 1-D pools
# max_pool1d and avg_pool1d are the 2-D pools on a height of 1 (kernel (1, k)),
# so they share those kernels and rules.


def _check_1d(op: str, input: Tensor) -> None:
    if input.ndim not in (2, 3):
        raise RuntimeError(f"{op}: expected a 2-D (C, L) or 3-D (N, C, L) input, got shape "
                           f"{list(input.shape)}")


@public("max_pool1d")
def max_pool1d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode: bool = False, return_indices: bool = False):
    """The maximum of each window along the last dim of an (N, C, L) or (C, L)
    input: max_pool2d on (..., 1, L); the indices are positions along L."""
    _check_1d("max_pool1d", input)
    dtypes.check_implemented("max_pool1d", input.dtype, bool_ok=False, integer_ok=False)
    stride = None if stride is None or stride == [] else (1, _single(stride))
    out = max_pool2d(input.unsqueeze(-2), (1, _single(kernel_size)), stride,
                     (0, _single(padding)), (1, _single(dilation)), ceil_mode, return_indices)
    if return_indices:
        return out[0].squeeze(-2), out[1].squeeze(-2)
    return out.squeeze(-2)


@public("avg_pool1d")
def avg_pool1d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:
    """The mean of each window along the last dim: avg_pool2d on (..., 1, L)."""
    _check_1d("avg_pool1d", input)
    stride = None if stride is None or stride == [] else (1, _single(stride))
    out = avg_pool2d(input.unsqueeze(-2), (1, _single(kernel_size)), stride,
                     (0, _single(padding)), ceil_mode, count_include_pad)
    return out.squeeze(-2)


# ------------------------------------------------------------ adaptive pools


def adaptive_windows(m: int, n: int) -> list[tuple[int, int]]:
    """The m windows ``[start, end)`` that adaptive pooling splits n positions
    into: ``start = floor(i n / m)``, ``end = ceil((i + 1) n / m)``. They
    cover every position; neighbours share a position where m does not divide
    n, and repeat positions where m > n."""
    return [(i * n // m, -(-(i + 1) * n // m)) for i in range(m)]


def _adaptive_sizes(op: str, input: Tensor, output_size) -> tuple[int, int]:
    """The (out_h, out_w) of an adaptive pool; None keeps the input's size."""
    dtypes.check_implemented(op, input.dtype, bool_ok=False, integer_ok=False)
    if input.ndim not in (3, 4):
        raise RuntimeError(f"{op}: expected a 3-D (C, H, W) or 4-D (N, C, H, W) input, got "
                           f"shape {list(input.shape)}")
    if 0 in input.shape[-3:]:
        raise RuntimeError(f"{op}: expected non-zero sizes for the channel and spatial dims, "
                           f"got shape {list(input.shape)}")
    sizes = (output_size,) * 2 if isinstance(output_size, int) else tuple(output_size)
    if len(sizes) != 2:
        raise RuntimeError(f"{op}: output_size must be one int or 2 (H, W), got {output_size}")
    return tuple(n if s is None else int(s) for s, n in zip(sizes, input.shape[-2:],
                                                            strict=True))


def _window_sums(m: int, n: int, dtype) -> tuple[np.ndarray, np.ndarray]:
    """The m x n 0/1 matrix that sums each adaptive window, and the window lengths."""
    matrix = np.zeros((m, n))
    for row, (start, end) in enumerate(adaptive_windows(m, n)):
        matrix[row, start:end] = 1
    return matrix.astype(dtype), matrix.sum(axis=1)


@public("adaptive_avg_pool2d")
def adaptive_avg_pool2d(input: Tensor, output_size) -> Tensor:
    """The mean of each of out_h x out_w windows (:func:`adaptive_windows`)
    that tile the input, whatever its size. A window is a rectangle, so its
    sum is separable: ``y = (S_h x S_w^T) / (len_h len_w^T)`` with 0/1
    matrices S (as ``interpolate``), and the gradient is matmul's. A
    composition: no rule of its own."""
    out_h, out_w = _adaptive_sizes("adaptive_avg_pool2d", input, output_size)
    rows, row_lengths = _window_sums(out_h, input.shape[-2], input.dtype)
    cols, col_lengths = _window_sums(out_w, input.shape[-1], input.dtype)
    counts = np.outer(row_lengths, col_lengths).astype(input.dtype)
    return (rows @ (input @ cols.T)) / counts


@public("adaptive_max_pool2d")
def adaptive_max_pool2d(input: Tensor, output_size, return_indices: bool = False) -> Tensor:
    """The maximum of each adaptive window. A rectangle's maximum is the
    maximum over its rows of the maximum over its columns, so this takes
    ``amax`` over each row window, then over each column window, and stacks
    them: out_h + out_w reductions, whose rules give the gradient (with tied
    maxima, amax shares it among them where torch's kernel gives it to one)."""
    if return_indices:
        raise NotImplementedError("adaptive_max_pool2d: return_indices is not implemented; "
                                  "use max_pool2d(..., return_indices=True) where the "
                                  "windows are regular")
    out_h, out_w = _adaptive_sizes("adaptive_max_pool2d", input, output_size)
    by_rows = [input[..., s:e, :].amax(-2) for s, e in adaptive_windows(out_h, input.shape[-2])]
    rows = _stacked(by_rows, -2, input[..., :0, :])
    by_cols = [rows[..., s:e].amax(-1) for s, e in adaptive_windows(out_w, input.shape[-1])]
    return _stacked(by_cols, -1, rows[..., :0])


def _stacked(pieces: list[Tensor], dim: int, empty: Tensor) -> Tensor:
    """``pieces`` stacked along ``dim``; ``empty`` (a slice of size 0 there) when
    there are none (an output size of 0)."""
    return apply("stack", tuple(pieces), {"dim": dim}) if pieces else empty
