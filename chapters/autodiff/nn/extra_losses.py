"""``Bilinear`` and the ranking losses ``MarginRankingLoss`` and
``TripletMarginLoss``, with torch's names, defaults and initialisation; each
calls one function of :mod:`chapters.autodiff.functional`."""

from __future__ import annotations

import math

import numpy as np

from ..functional.distances import margin_ranking_loss, triplet_margin_loss
from ..functional.layers import bilinear
from ..tensor import Tensor
from . import init
from .module import Module, Parameter


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


class MarginRankingLoss(Module):
    """max(0, -y (x1 - x2) + margin), reduced (``margin_ranking_loss``)."""

    def __init__(self, margin: float = 0.0, size_average=None, reduce=None,
                 reduction: str = "mean"):
        super().__init__()
        self.margin, self.reduction = margin, reduction

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        return margin_ranking_loss(input1, input2, target, self.margin, self.reduction)


class TripletMarginLoss(Module):
    """max(0, d(a, pos) - d(a, neg) + margin), reduced (``triplet_margin_loss``)."""

    def __init__(self, margin: float = 1.0, p: float = 2.0, eps: float = 1e-6,
                 swap: bool = False, size_average=None, reduce=None, reduction: str = "mean"):
        super().__init__()
        self.margin, self.p, self.eps, self.swap = margin, p, eps, swap
        self.reduction = reduction

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        return triplet_margin_loss(anchor, positive, negative, self.margin, self.p, self.eps,
                                   self.swap, self.reduction)
