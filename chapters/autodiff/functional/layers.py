"""The functions behind the basic layers: linear, dropout, embedding."""

from __future__ import annotations

import numpy as np

from chapters.graph.ops import ShapeError

from .. import dtypes
from ..dispatch import LOWER_PRECISION, public
from ..random import default_generator
from ..tensor import Tensor, apply
from ._common import _no_bool


@public("linear", autocast={"cpu": LOWER_PRECISION, "cuda": LOWER_PRECISION})
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """y = x W^T + b, W of shape (out_features, in_features)."""
    inputs = (input, weight) if bias is None else (input, weight, bias)
    _no_bool("linear", *inputs)
    return apply("linear", inputs)


@public("dropout")
def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False,
            generator=None) -> Tensor:
    """Zero each element with probability p and scale the rest by 1/(1-p), so
    the expected value is unchanged; identity when not training. The mask is
    drawn from the engine's generator (a different stream from torch's)."""
    if not 0 <= p <= 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0:
        return input
    rng = generator or default_generator()
    keep = rng.random(input.shape) >= p
    scale = keep.astype(input.dtype) * np.asarray(1.0 / (1.0 - p) if p < 1 else 0.0,
                                                  dtype=input.dtype)
    return apply("dropout", (input, scale))


@public("embedding")
def embedding(input, weight: Tensor, padding_idx: int | None = None) -> Tensor:
    """Rows of ``weight`` picked by the integer tensor ``input``. Lookups of
    row ``padding_idx`` give that row but send it no gradient (torch's
    padding row stays as initialised)."""
    indices = input.data if isinstance(input, Tensor) else np.asarray(input)
    if dtypes.category(indices.dtype) != 1:
        raise RuntimeError(f"embedding: indices must be an integer tensor, got {indices.dtype}; "
                           "convert them with .long().")
    if weight.ndim != 2:
        raise ShapeError(f"embedding: the weight must be 2-D (num_embeddings, embedding_dim), "
                         f"got shape {list(weight.shape)}")
    rows = apply("embedding", (weight, indices))
    if padding_idx is None:
        return rows
    padding = (indices == padding_idx % weight.shape[0])[..., None]
    return apply("where", (padding, rows.detach(), rows))
