"""Sliding blocks: unfold (im2col: every kernel-sized window of an image as a
column) and fold (col2im: columns summed back onto their windows). They are
the two halves of a convolution (conv2d = weight @ unfold(x)), exposed as
torch exposes them; both reuse the conv ops' kernels and rules
(:mod:`chapters.autodiff.ops.conv`), each the other's adjoint."""

from __future__ import annotations

import math

from ..dispatch import public
from ..ops.conv import apply_col2im, apply_im2col, conv_output_size, pair
from ..tensor import Tensor
from ._common import _batch_of_one


def _block_attrs(kernel_size, dilation, padding, stride) -> dict:
    return {"kernel_size": pair(kernel_size), "dilation": pair(dilation),
            "padding": pair(padding), "stride": pair(stride)}


@public("unfold")
def unfold(input: Tensor, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """(N, C, H, W) -> (N, C kh kw, L): column l is the (zero-padded) window at
    output position l of a convolution with these options, L = out_h * out_w,
    row (c, i, j) its element. Unbatched (C, H, W) gives (C kh kw, L)."""
    if input.ndim == 3:
        return _batch_of_one(unfold, input, kernel_size, dilation, padding, stride)
    if input.ndim != 4:
        raise IndexError(f"unfold: expected a 3-D (C, H, W) or 4-D (N, C, H, W) input, got "
                         f"shape {list(input.shape)}")
    return apply_im2col(input, _block_attrs(kernel_size, dilation, padding, stride))


@public("fold")
def fold(input: Tensor, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """(N, C kh kw, L) -> (N, C, H, W) with (H, W) = ``output_size``: each
    column added onto its window (overlaps sum), unfold's adjoint. L must be
    the number of windows an (H, W) image has. Unbatched (C kh kw, L) gives
    (C, H, W)."""
    if input.ndim == 2:
        return _batch_of_one(fold, input, output_size, kernel_size, dilation, padding, stride)
    if input.ndim != 3:
        raise RuntimeError(f"fold: expected a 2-D (C kh kw, L) or 3-D (N, C kh kw, L) input, "
                           f"got shape {list(input.shape)}")
    attrs = _block_attrs(kernel_size, dilation, padding, stride)
    n, rows, blocks = input.shape
    window = math.prod(attrs["kernel_size"])
    if rows % window:
        raise RuntimeError(f"fold: the input's dim 1 ({rows}) must be divisible by the kernel's "
                           f"size {attrs['kernel_size']} = {window}")
    height, width = pair(output_size)
    expected = math.prod(conv_output_size("fold", (height, width), attrs["kernel_size"],
                                          attrs["stride"], attrs["padding"], attrs["dilation"]))
    if blocks != expected:
        raise RuntimeError(f"fold: an output of size {(height, width)} has {expected} sliding "
                           f"blocks with these options, but the input's dim 2 is {blocks}; "
                           "check output_size, kernel_size, dilation, padding and stride")
    return apply_col2im(input, (n, rows // window, height, width), attrs)
