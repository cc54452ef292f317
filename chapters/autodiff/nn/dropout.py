"""Dropout layers: ``Dropout``, ``Dropout1d``, ``Dropout2d`` (torch/nn/modules/dropout.py)."""

from __future__ import annotations

from ..functional.layers import dropout, dropout1d, dropout2d
from ..tensor import Tensor
from .module import Module


class Dropout(Module):
    """Zero each element with probability ``p`` in training and scale the rest by
    ``1 / (1 - p)`` (inverted dropout), so ``eval()`` needs no rescaling."""

    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        if not 0 <= p <= 1:
            raise ValueError(f"Dropout probability has to be between 0 and 1, got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, x: Tensor) -> Tensor:
        return dropout(x, p=self.p, training=self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(Module):
    """Zero whole channels of (N, C, L) or (C, L) inputs with probability ``p``
    in training, the rest scaled by 1/(1-p); identity in eval."""

    _function = staticmethod(dropout1d)

    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        if not 0 <= p <= 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, x: Tensor) -> Tensor:
        return self._function(x, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout2d(Dropout1d):
    """Zero whole channels of (N, C, H, W) inputs with probability ``p`` in
    training, the rest scaled by 1/(1-p); identity in eval."""

    _function = staticmethod(dropout2d)
