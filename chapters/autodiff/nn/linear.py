"""Linear layers: ``Identity``, ``Linear`` and ``Bilinear`` (torch/nn/modules/linear.py).

Each holds its weights, initialises them as PyTorch does, and calls one function of
:mod:`chapters.autodiff.functional`, where the maths (forward and VJP) lives."""

from __future__ import annotations

import math

import numpy as np

from ..functional.layers import bilinear, linear
from ..tensor import Tensor
from . import init
from .module import Module, Parameter


class Identity(Module):
    def forward(self, x: Tensor) -> Tensor:
        return x


class Linear(Module):
    """``y = x @ W.T + b`` with ``W: (out_features, in_features)``.

    Initialised as torch: ``W, b ~ U(-1/sqrt(in_features), 1/sqrt(in_features))``
    (``kaiming_uniform_(W, a=sqrt(5))`` is that bound, see :mod:`.init`).
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 dtype=np.float32):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = Parameter(np.zeros((out_features, in_features), dtype=dtype))
        self.register_parameter("bias", Parameter(np.zeros(out_features, dtype=dtype))
                                if bias else None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = 1 / math.sqrt(self.in_features) if self.in_features > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, x: Tensor) -> Tensor:
        return linear(x, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Bilinear(Module):
    """y_o = x1^T W_o x2 + b_o, weight (out_features, in1_features, in2_features),
    initialised as torch: U(-1/sqrt(in1), 1/sqrt(in1)) for weight and bias."""

    def __init__(self, in1_features: int, in2_features: int, out_features: int,
                 bias: bool = True, dtype=np.float32):
        super().__init__()
        if in1_features <= 0:
            raise ValueError(f"Bilinear: in1_features must be > 0, got {in1_features}")
        self.in1_features, self.in2_features = in1_features, in2_features
        self.out_features = out_features
        self.weight = Parameter(np.zeros((out_features, in1_features, in2_features),
                                         dtype=dtype))
        self.register_parameter("bias", Parameter(np.zeros(out_features, dtype=dtype))
                                if bias else None)
        bound = 1 / math.sqrt(in1_features)
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        return bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
