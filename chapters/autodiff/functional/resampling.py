"""Padding, interpolation and pixel (un)shuffling: reshaping the spatial dims of an input."""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..dispatch import FLOAT32, public
from ..ops.pad import MODES as PAD_MODES
from ..ops.resample import resize_matrix
from ..tensor import Tensor, apply
from ._common import _floating_only, _no_bool


def _padded(input: Tensor, pad: tuple, mode: str, value: float) -> Tensor:
    """The one pad kernel, whichever mode (:mod:`.ops.pad`)."""
    return apply("pad", (input,), {"pad": pad, "mode": mode, "value": value})


#: the op ``F.pad`` runs, named as torch's for each mode and number of padded
#: dims; the name carries the autocast category (torch's CPU autocast computes
#: 1-D and 2-D reflect and every replicate padding in float32)
PADDING_OPS = {name: public(name, autocast=category)(_padded) for name, category in (
    ("constant_pad_nd", None), ("_pad_circular", None),
    ("reflection_pad1d", {"cpu": FLOAT32}), ("reflection_pad2d", {"cpu": FLOAT32}),
    ("reflection_pad3d", None), ("replication_pad1d", {"cpu": FLOAT32}),
    ("replication_pad2d", {"cpu": FLOAT32}), ("replication_pad3d", {"cpu": FLOAT32}))}


def _padding_op(mode: str, dims: int) -> str:
    """torch's name for the op that pads ``dims`` dims in ``mode``."""
    if mode == "constant":
        return "constant_pad_nd"
    if mode == "circular":
        return "_pad_circular"
    return f"{'reflection' if mode == 'reflect' else 'replication'}_pad{dims}d"


def pad(input: Tensor, pad, mode: str = "constant", value: float | None = None) -> Tensor:
    """Pad the last ``len(pad) // 2`` dims; ``pad`` lists (before, after) per
    dim starting from the last, as torch: ``(left, right, top, bottom)``.
    Modes constant (fill ``value``, default 0), reflect, replicate, circular
    (see :mod:`.ops.pad`). As torch, the non-constant modes pad the last 1, 2
    or 3 dims of an input with one or two more dims than that (a batch and a
    channel dim). As torch, it runs one public op per mode and number of
    padded dims (:data:`PADDING_OPS`), each with its autocast category."""
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError(f"pad: padding length must be divisible by 2 (a before and an after "
                           f"per dim), got {len(pad)} values")
    if len(pad) > 2 * input.ndim:
        raise RuntimeError(f"pad: {len(pad)} padding values pad {len(pad) // 2} dims, but the "
                           f"input has only {input.ndim}")
    if mode not in PAD_MODES:
        raise NotImplementedError(f"pad: mode {mode!r} is not one of {list(PAD_MODES)}")
    if mode != "constant":
        _no_bool(f"pad(mode={mode!r})", input)
        if value not in (None, 0):
            raise RuntimeError(f"pad: mode {mode!r} takes its values from the input; the fill "
                               "value is only for mode='constant'")
        dims = len(pad) // 2
        if dims > 3:
            raise NotImplementedError(
                f"pad: {mode} padding pads the last 1, 2 or 3 dims, as torch's; got {dims} "
                f"(a pad of {len(pad)} values); pad the remaining dims in a second call")
        if input.ndim not in (dims + 1, dims + 2):
            raise NotImplementedError(
                f"pad: {mode} padding of {dims} dims needs a {dims + 1}-D or {dims + 2}-D input "
                f"(batch and channel dims first), got {input.ndim}-D; unsqueeze it first")
    return PADDING_OPS[_padding_op(mode, len(pad) // 2)](input, pad, mode, value or 0.0)


# ---------------------------------------------------------- interpolation

#: mode -> the number of spatial dims it resizes (torch's input is N, C, *spatial)
INTERPOLATE_MODES = {"nearest": None, "linear": 1, "bilinear": 2}


def _output_sizes(input: Tensor, size, scale_factor) -> tuple[tuple, tuple]:
    """The spatial output sizes and the scale (input / output) per spatial dim."""
    spatial = tuple(input.shape[2:])
    if (size is None) == (scale_factor is None):
        raise ValueError("interpolate: give exactly one of size or scale_factor")
    if size is not None:
        sizes = (size,) * len(spatial) if isinstance(size, int) else tuple(size)
        if len(sizes) != len(spatial):
            raise ValueError(f"interpolate: size {size} must give one size per spatial dim of "
                             f"the input of shape {list(input.shape)}")
        return sizes, tuple(n / m for n, m in zip(spatial, sizes, strict=True))
    factors = ((scale_factor,) * len(spatial) if isinstance(scale_factor, int | float)
               else tuple(scale_factor))
    sizes = tuple(int(np.floor(n * f)) for n, f in zip(spatial, factors, strict=True))
    return sizes, tuple(1 / f for f in factors)


@public("interpolate")
def interpolate(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",
                align_corners: bool | None = None, recompute_scale_factor=None,
                antialias: bool = False) -> Tensor:
    """Resize the spatial dims of an (N, C, W) or (N, C, H, W) input:
    ``y = R_h x R_w^T`` with one resize matrix per dim (:mod:`.ops.resample`),
    so the gradient comes from matmul's. Modes nearest, linear (3-D input)
    and bilinear (4-D), with torch's ``align_corners``."""
    if mode not in INTERPOLATE_MODES:
        raise NotImplementedError(f"interpolate: mode {mode!r} is not implemented; use one of "
                                  f"{list(INTERPOLATE_MODES)}")
    if align_corners is not None and mode == "nearest":
        raise ValueError("interpolate: align_corners can only be set with the interpolating "
                         "modes linear and bilinear")
    if recompute_scale_factor or antialias:
        raise NotImplementedError("interpolate: recompute_scale_factor and antialias are not "
                                  "implemented")
    dims = INTERPOLATE_MODES[mode]
    if input.ndim not in (3, 4) or (dims is not None and input.ndim != dims + 2):
        raise NotImplementedError(f"interpolate: got a {input.ndim}-D input; mode {mode!r} "
                                  f"needs {'3-D or 4-D' if dims is None else f'{dims + 2}-D'} "
                                  "(N, C, spatial...)")
    if dims is not None:
        _floating_only(f"interpolate(mode={mode!r})", input)
    elif input.dtype != dtypes.uint8:  # torch's nearest has image (uint8) kernels, no others
        _floating_only("interpolate(mode='nearest')", input)
    sizes, scales = _output_sizes(input, size, scale_factor)
    matrices = [resize_matrix(m, n, mode, scale, bool(align_corners), input.dtype)
                for m, n, scale in zip(sizes, input.shape[2:], scales, strict=True)]
    out = input @ matrices[-1].T
    return matrices[0] @ out if len(matrices) == 2 else out


def _check_factor(op: str, input: Tensor, factor: int) -> None:
    if factor <= 0:
        raise RuntimeError(f"{op} expects a positive factor, but got {factor}")
    if input.ndim < 3:
        raise RuntimeError(f"{op} expects an input of at least 3 dims (*, C, H, W), but got "
                           f"{input.ndim} dim(s)")


@public("pixel_shuffle")
def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:
    """(*, C r^2, H, W) -> (*, C, H r, W r): each group of r^2 channels becomes
    an r x r block of pixels, out[c, h r + i, w r + j] = in[c r^2 + i r + j, h, w].
    A composition of reshape and permute (a pure rearrangement: the gradient
    is the inverse rearrangement, pixel_unshuffle)."""
    r = upscale_factor
    _check_factor("pixel_shuffle", input, r)
    *batch, channels, h, w = input.shape
    if channels % (r * r):
        raise RuntimeError(f"pixel_shuffle: the channel dim (size {channels}) must be "
                           f"divisible by upscale_factor^2 = {r * r}")
    n = len(batch)
    blocks = input.reshape(*batch, channels // (r * r), r, r, h, w)
    order = (*range(n), n, n + 3, n + 1, n + 4, n + 2)  # (c, h, i, w, j)
    return blocks.permute(*order).reshape(*batch, channels // (r * r), h * r, w * r)


@public("pixel_unshuffle")
def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:
    """(*, C, H r, W r) -> (*, C r^2, H, W), the inverse of pixel_shuffle: each
    r x r block of pixels becomes r^2 channels. A composition of reshape and
    permute."""
    r = downscale_factor
    _check_factor("pixel_unshuffle", input, r)
    *batch, channels, h, w = input.shape
    for name, size in (("height", h), ("width", w)):
        if size % r:
            raise RuntimeError(f"pixel_unshuffle: the {name} ({size}) must be divisible by "
                               f"downscale_factor {r}")
    n = len(batch)
    blocks = input.reshape(*batch, channels, h // r, r, w // r, r)
    order = (*range(n), n, n + 2, n + 4, n + 1, n + 3)  # (c, i, j, h, w)
    return blocks.permute(*order).reshape(*batch, channels * r * r, h // r, w // r)
