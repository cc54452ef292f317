"""Convolution layers (torch/nn/modules/conv.py): ``Conv1d``, ``Conv2d`` and
``ConvTranspose2d``, with torch's arguments, initialisation and reprs."""

from __future__ import annotations

import math

import numpy as np

from ..functional.convolution import conv1d, conv2d, conv_transpose2d
from ..tensor import Tensor
from . import init
from .module import Module, Parameter


def _reset_conv(weight: Parameter, bias: Parameter | None) -> None:
    """torch's conv init: kaiming_uniform_(a=sqrt(5)) for the weight, which is
    U(-1/sqrt(fan_in), 1/sqrt(fan_in)), and that bound for the bias."""
    init.kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in, _ = init.calculate_fan_in_and_fan_out(weight)
        bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
        init.uniform_(bias, -bound, bound)


def conv_extra_repr(conv: Module, dims: int) -> str:
    """torch's description of a convolution layer: sizes as ``dims``-tuples,
    and each option only when it differs from its default (padding 0,
    dilation 1, output_padding 0, groups 1, a bias)."""

    def sizes(value) -> tuple:
        return tuple(value) if isinstance(value, tuple | list) else (value,) * dims

    text = (f"{conv.in_channels}, {conv.out_channels}, kernel_size={sizes(conv.kernel_size)}, "
            f"stride={sizes(conv.stride)}")
    padding = conv.padding if isinstance(conv.padding, str) else sizes(conv.padding)
    options = (("padding", padding, (0,) * dims), ("dilation", sizes(conv.dilation), (1,) * dims),
               ("output_padding", sizes(getattr(conv, "output_padding", 0)), (0,) * dims),
               ("groups", conv.groups, 1))
    text += "".join(f", {name}={value}" for name, value, default in options if value != default)
    return text if conv.bias is not None else text + ", bias=False"


def _check_groups(layer: str, in_channels: int, out_channels: int, groups: int) -> None:
    if groups < 1 or in_channels % groups or out_channels % groups:
        raise ValueError(f"{layer}: groups={groups} must divide in_channels {in_channels} "
                         f"and out_channels {out_channels}")


class Conv1d(Module):
    """1-D cross-correlation, weight ``(out_channels, in_channels / groups, k)``."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride=1,
                 padding=0, dilation=1, groups: int = 1, bias: bool = True, dtype=np.float32):
        super().__init__()
        _check_groups("Conv1d", in_channels, out_channels, groups)
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride, self.padding = kernel_size, stride, padding
        self.dilation, self.groups = dilation, groups
        self.weight = Parameter(np.zeros((out_channels, in_channels // groups, kernel_size),
                                         dtype=dtype))
        self.register_parameter("bias", Parameter(np.zeros(out_channels, dtype=dtype))
                                if bias else None)
        _reset_conv(self.weight, self.bias)

    def forward(self, x: Tensor) -> Tensor:
        return conv1d(x, self.weight, self.bias, self.stride, self.padding, self.dilation,
                        self.groups)

    def extra_repr(self) -> str:
        return conv_extra_repr(self, 1)


class ConvTranspose2d(Module):
    """Transposed 2-D convolution, weight ``(in_channels, out_channels / groups, kh, kw)``
    (torch's layout: the transpose of the conv2d that maps back)."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1, padding=0,
                 output_padding=0, groups: int = 1, bias: bool = True, dilation=1,
                 dtype=np.float32):
        super().__init__()
        _check_groups("ConvTranspose2d", in_channels, out_channels, groups)
        kh, kw = (kernel_size, kernel_size) if isinstance(kernel_size, int) else kernel_size
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride, self.padding = (kh, kw), stride, padding
        self.output_padding, self.groups, self.dilation = output_padding, groups, dilation
        self.weight = Parameter(np.zeros((in_channels, out_channels // groups, kh, kw),
                                         dtype=dtype))
        self.register_parameter("bias", Parameter(np.zeros(out_channels, dtype=dtype))
                                if bias else None)
        _reset_conv(self.weight, self.bias)

    def forward(self, x: Tensor) -> Tensor:
        return conv_transpose2d(x, self.weight, self.bias, self.stride, self.padding,
                                  self.output_padding, self.groups, self.dilation)

    def extra_repr(self) -> str:
        return conv_extra_repr(self, 2)


class Conv2d(Module):
    """2-D cross-correlation, weight ``(out_channels, in_channels / groups, kh, kw)``.

    Initialised as torch: ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))`` with
    ``fan_in = in_channels / groups * kh * kw``, for weight and bias.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1,
                 padding=0, dilation=1, groups: int = 1, bias: bool = True, dtype=np.float32):
        super().__init__()
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"Conv2d: groups={groups} must divide in_channels {in_channels} "
                             f"and out_channels {out_channels}")
        kh, kw = (kernel_size, kernel_size) if isinstance(kernel_size, int) else kernel_size
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride, self.padding = (kh, kw), stride, padding
        self.dilation, self.groups = dilation, groups
        self.weight = Parameter(np.zeros((out_channels, in_channels // groups, kh, kw),
                                         dtype=dtype))
        self.register_parameter("bias", Parameter(np.zeros(out_channels, dtype=dtype))
                                if bias else None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init.calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, x: Tensor) -> Tensor:
        return conv2d(x, self.weight, self.bias, stride=self.stride, padding=self.padding,
                        dilation=self.dilation, groups=self.groups)

    def extra_repr(self) -> str:
        return conv_extra_repr(self, 2)
