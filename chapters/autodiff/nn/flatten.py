"""``Flatten`` and ``Unflatten`` (torch/nn/modules/flatten.py)."""

from __future__ import annotations

from ..tensor import Tensor
from .module import Module


class Flatten(Module):
    """Merge dims ``start_dim..end_dim`` into one (default: all but the batch dim)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x: Tensor) -> Tensor:
        return x.flatten(self.start_dim, self.end_dim)


class Unflatten(Module):
    """Dim ``dim`` split into ``unflattened_size`` (Flatten's inverse)."""

    def __init__(self, dim: int, unflattened_size):
        super().__init__()
        self.dim, self.unflattened_size = dim, unflattened_size

    def forward(self, x: Tensor) -> Tensor:
        return x.unflatten(self.dim, tuple(self.unflattened_size))

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
