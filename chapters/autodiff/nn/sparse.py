"""``Embedding`` (torch/nn/modules/sparse.py): a table of vectors read by index."""

from __future__ import annotations

import numpy as np

from ..functional.layers import embedding
from ..tensor import Tensor
from . import init
from .module import Module, Parameter


class Embedding(Module):
    """A lookup table ``weight[indices]``, initialised ``N(0, 1)`` as torch;
    row ``padding_idx`` starts at zero and receives no gradient."""

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None,
                 dtype=np.float32):
        super().__init__()
        if padding_idx is not None and not -num_embeddings <= padding_idx < num_embeddings:
            raise AssertionError(f"Embedding: padding_idx {padding_idx} must be within "
                                 f"num_embeddings {num_embeddings}")
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.padding_idx = None if padding_idx is None else padding_idx % num_embeddings
        self.weight = Parameter(np.zeros((num_embeddings, embedding_dim), dtype=dtype))
        init.normal_(self.weight)
        if self.padding_idx is not None:
            self.weight.data[self.padding_idx] = 0

    def forward(self, indices: Tensor) -> Tensor:
        return embedding(indices, self.weight, padding_idx=self.padding_idx)

    def extra_repr(self) -> str:
        padding = "" if self.padding_idx is None else f", padding_idx={self.padding_idx}"
        return f"{self.num_embeddings}, {self.embedding_dim}{padding}"
