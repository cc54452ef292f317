"""Pooling: the maximum or the mean of each window."""

from __future__ import annotations

from ..dispatch import public
from ..ops.conv import pair
from ..ops.pool import max_pool2d_indices
from ..tensor import Tensor, apply
from ._common import _batch_of_one, _no_bool


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
