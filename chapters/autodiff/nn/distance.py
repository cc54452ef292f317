"""Distances as modules (torch/nn/modules/distance.py): ``CosineSimilarity`` and
``PairwiseDistance``."""

from __future__ import annotations

from ..functional.distances import (
    cosine_similarity,
    pairwise_distance,
)
from ..tensor import Tensor
from .module import Module


class CosineSimilarity(Module):
    """The cosine of the angle between x1 and x2 along ``dim`` (``cosine_similarity``)."""

    def __init__(self, dim: int = 1, eps: float = 1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """``||x1 - x2 + eps||_p`` along the last dim (``pairwise_distance``)."""

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False):
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        return pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)
