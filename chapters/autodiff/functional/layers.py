"""The functions behind the basic layers: linear, bilinear, the dropouts, embedding."""

from __future__ import annotations

import numpy as np

from chapters.graph.ops import ShapeError

from .. import dtypes
from ..dispatch import LOWER_PRECISION, PROMOTE, public
from ..ops.contract import einsum
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


def _feature_dropout(op: str, input: Tensor, p: float, training: bool, generator) -> Tensor:
    """Zero whole channels: one keep/drop draw per (sample, channel), shared by
    every position of that channel, and the kept ones scaled by 1/(1-p). A
    product with a constant mask, so its gradient is the mask itself."""
    if not 0 <= p <= 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0:
        return input
    if dtypes.category(input.dtype) < 2:
        raise RuntimeError(f"{op}: result type Float can't be cast to the input's {input.dtype}; "
                           "convert the input with .float() first")
    rng = generator or default_generator()
    keep = rng.random(input.shape[:2] + (1,) * (input.ndim - 2)) >= p
    scale = keep.astype(input.dtype) * np.asarray(1.0 / (1.0 - p) if p < 1 else 0.0,
                                                  dtype=input.dtype)
    return input * Tensor(scale)


@public("dropout1d")
def dropout1d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False,
              generator=None) -> Tensor:
    """Channel dropout for (N, C, L) or unbatched (C, L) inputs: each channel
    of each sample is zeroed with probability p as a whole, the rest scaled by
    1/(1-p); identity when not training."""
    if input.ndim not in (2, 3):
        raise RuntimeError(f"dropout1d: expected a 2-D (C, L) or 3-D (N, C, L) input, got "
                           f"{input.ndim}-D; use dropout2d for images")
    if input.ndim == 2:
        return _feature_dropout("dropout1d", input.unsqueeze(0), p, training,
                                generator).squeeze(0)
    return _feature_dropout("dropout1d", input, p, training, generator)


@public("dropout2d")
def dropout2d(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False,
              generator=None) -> Tensor:
    """Channel dropout for (N, C, H, W) inputs: each channel of each sample is
    zeroed with probability p as a whole, the rest scaled by 1/(1-p). As
    torch's, dims 0 and 1 are read as (N, C) whatever the rank (a 3-D input
    is (N, C, L))."""
    return _feature_dropout("dropout2d", input, p, training, generator)


@public("bilinear", autocast={"cuda": PROMOTE})
def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None
             ) -> Tensor:
    """y_o = x1^T W_o x2 + b_o for each output o, W of shape (out, in1, in2):
    one einsum, ``...i,oij,...j->...o``, so its gradients are einsum's
    (dy/dx1 = W_o x2, dy/dW_o = x1 x2^T, dy/dx2 = W_o^T x1)."""
    _no_bool("bilinear", input1, input2, weight)
    if weight.ndim != 3 or input1.shape[-1:] != weight.shape[1:2] \
            or input2.shape[-1:] != weight.shape[2:]:
        raise RuntimeError(f"bilinear: expected inputs (..., in1) and (..., in2) and a weight "
                           f"(out, in1, in2), got {list(input1.shape)}, {list(input2.shape)} "
                           f"and {list(weight.shape)}")
    if input1.shape[:-1] != input2.shape[:-1]:
        raise RuntimeError(f"bilinear: the inputs' batch dims must match, got "
                           f"{list(input1.shape[:-1])} and {list(input2.shape[:-1])}")
    out = einsum("...i,oij,...j->...o", input1, weight, input2)
    return out if bias is None else out + bias
