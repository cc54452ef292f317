"""Losses as modules: thin wrappers over ``functional`` with torch's defaults."""

from __future__ import annotations

from .. import functional as F
from ..tensor import Tensor
from .module import Module


class MSELoss(Module):
    """``mean((input - target)^2)`` (``reduction="sum"`` or ``"none"`` also)."""

    def __init__(self, reduction: str = "mean"):
        super().__init__()
        self.reduction = reduction

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.mse_loss(input, target, reduction=self.reduction)


class CrossEntropyLoss(Module):
    """``-log softmax(logits)[target]`` averaged over the batch; integer class
    targets, computed through ``log_softmax`` so large logits do not overflow."""

    def __init__(self, reduction: str = "mean"):
        super().__init__()
        self.reduction = reduction

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(input, target, reduction=self.reduction)
