"""Convolutions: conv2d (one kernel), conv1d (conv2d on a height of 1), and
conv_transpose2d (conv2d's input adjoint). conv2d and conv1d also take torch's
padding strings, resolved to numbers here (:func:`_padding_from_string`)."""

from __future__ import annotations

from ..dispatch import LOWER_PRECISION, public
from ..ops.conv import pair
from ..tensor import Tensor, apply
from ._common import _batch_of_one, _no_bool, _single
from .resampling import pad


@public("conv2d", autocast={"cpu": LOWER_PRECISION, "cuda": LOWER_PRECISION})
def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1) -> Tensor:
    """2-D convolution (cross-correlation, as torch) with stride, zero padding
    (numbers, or "same" / "valid": :func:`_padding_from_string`), dilation
    (kernel taps ``dilation`` apart) and groups (input and output channels
    split into ``groups`` independent convolutions; the weight is
    (out_channels, in_channels / groups, kh, kw)). An input (C, H, W) is one
    unbatched image."""
    if input.ndim == 3:
        return _batch_of_one(conv2d, input, weight, bias, stride, padding, dilation, groups)
    _no_bool("conv2d", input, weight)
    if isinstance(padding, str):
        input, padding = _padding_from_string(input, weight.shape[2:], padding, stride, dilation)
    if groups < 1 or input.ndim < 2 or input.shape[1] % groups or weight.shape[0] % groups:
        raise RuntimeError(f"conv2d: groups={groups} must be positive and divide both the "
                           f"input channels ({input.shape[1] if input.ndim > 1 else '?'}) and "
                           f"the output channels ({weight.shape[0]})")
    inputs = (input, weight) if bias is None else (input, weight, bias)
    return apply("conv2d", inputs, {"stride": pair(stride), "padding": pair(padding),
                                    "dilation": pair(dilation), "groups": groups})


def _padding_from_string(input: Tensor, kernel: tuple, padding: str, stride, dilation):
    """torch's padding strings as numbers: ``"valid"`` is no padding;
    ``"same"`` keeps each spatial size (stride 1 only). A dilated kernel spans
    ``d (k - 1) + 1`` pixels, so "same" needs ``total = d (k - 1)`` padding per
    dimension: ``total // 2`` on each side, and when ``total`` is odd the one
    extra row/column goes to the bottom/right, added here by ``pad`` before
    the convolution (as torch does). Returns ``(input, symmetric padding)``."""
    if padding == "valid":
        return input, (0, 0)
    if padding != "same":
        raise RuntimeError(f"Invalid padding string: {padding!r}; use 'same', 'valid' or "
                           "numbers")
    if pair(stride) != (1, 1):
        raise RuntimeError("padding='same' is not supported for strided convolutions; use "
                           "stride=1 or give the padding as numbers")
    totals = [d * (k - 1) for k, d in zip(kernel, pair(dilation), strict=True)]
    extra_h, extra_w = (total % 2 for total in totals)
    if extra_h or extra_w:
        input = pad(input, (0, extra_w, 0, extra_h))
    return input, tuple(total // 2 for total in totals)


@public("conv1d", autocast={"cpu": LOWER_PRECISION, "cuda": LOWER_PRECISION})
def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1) -> Tensor:
    """1-D convolution of an (N, C, L) input with an (O, C / groups, k) weight:
    conv2d on a height of 1, so it shares conv2d's kernel and rules."""
    if input.ndim != 3 or weight.ndim != 3:
        raise RuntimeError(f"conv1d: expected a 3-D input (N, C, L) and a 3-D weight "
                           f"(O, C / groups, k), got {list(input.shape)} and "
                           f"{list(weight.shape)}")
    padding = padding if isinstance(padding, str) else (0, _single(padding))
    out = conv2d(input.unsqueeze(2), weight.unsqueeze(2), bias, stride=(1, _single(stride)),
                 padding=padding, dilation=(1, _single(dilation)), groups=groups)
    return out.squeeze(2)


@public("conv_transpose2d", autocast={"cpu": LOWER_PRECISION, "cuda": LOWER_PRECISION})
def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1,
                     padding=0, output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """Transposed convolution, the adjoint of conv2d's input map (see
    :mod:`.ops.conv_transpose`); weight (in_channels, out_channels / groups,
    kh, kw). ``output_padding`` adds rows/columns at the bottom/right to pick
    one of the input sizes a strided conv2d maps to the same output size; it
    must be smaller than the stride (torch also allows up to the dilation)."""
    _no_bool("conv_transpose2d", input, weight)
    output_padding = pair(output_padding)
    if any(op >= s for op, s in zip(output_padding, pair(stride), strict=True)):
        raise RuntimeError(f"conv_transpose2d: output_padding {output_padding} must be smaller "
                           f"than the stride {pair(stride)}")
    if groups < 1 or input.ndim != 4 or input.shape[1] % groups:
        raise RuntimeError(f"conv_transpose2d: expected a 4-D input whose channels groups="
                           f"{groups} divides, got shape {list(input.shape)}")
    inputs = (input, weight) if bias is None else (input, weight, bias)
    return apply("conv_transpose2d", inputs, {
        "stride": pair(stride), "padding": pair(padding), "output_padding": output_padding,
        "dilation": pair(dilation), "groups": groups})
