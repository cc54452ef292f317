"""``nn.MultiheadAttention`` (多头注意力) with torch's parameters, so a torch
``state_dict`` loads unchanged.

The query, key and value projections are one packed weight,
``in_proj_weight`` of shape (3E, E) (rows 0..E project queries, E..2E keys,
2E..3E values) with ``in_proj_bias`` (3E,); ``out_proj`` is a Linear(E, E).
Each of the H heads attends with its own D = E / H columns of the projected
queries, keys and values:

    head_h = softmax(Q_h K_h^T / sqrt(D) + M) V_h,   out = concat_h(head_h) W_o^T + b_o

Self-attention (query, key and value the same tensor) projects all three in
one matrix product, as torch does.
"""

from __future__ import annotations

import math

import numpy as np

from ..functional import layers as F
from ..tensor import Tensor
from . import init
from .linear import Linear
from .module import Module, Parameter


def _as_bias(mask, dtype) -> Tensor | np.ndarray | None:
    """MultiheadAttention's mask convention: a bool mask is True where
    attending is *not* allowed (-inf), a float mask is added as it is."""
    if mask is None:
        return None
    data = mask.data if isinstance(mask, Tensor) else np.asarray(mask)
    if data.dtype == np.bool_:
        return np.where(data, -np.inf, 0.0).astype(dtype)
    return mask if isinstance(mask, Tensor) else data.astype(dtype)


def _each(fn, query, key, value) -> tuple:
    """``fn`` applied to query, key and value; in self-attention (one tensor
    passed three times) it runs once and the three stay one tensor."""
    if query is key and key is value:
        query = fn(query)
        return query, query, query
    return fn(query), fn(key), fn(value)


class MultiheadAttention(Module):
    """torch's ``nn.MultiheadAttention`` for ``kdim = vdim = embed_dim``.

    ``forward`` returns ``(output, weights)``: the weights (N, L, S) averaged
    over heads (or (N, H, L, S) with ``average_attn_weights=False``), or None
    when ``need_weights=False``. Inputs are (L, N, E), or (N, L, E) with
    ``batch_first=True``, or unbatched (L, E)."""

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim=None, vdim=None,
                 batch_first: bool = False, dtype=np.float32):
        super().__init__()
        if embed_dim % num_heads:
            raise ValueError(f"MultiheadAttention: embed_dim {embed_dim} must be divisible by "
                             f"num_heads {num_heads}")
        if add_bias_kv or add_zero_attn or kdim not in (None, embed_dim) \
                or vdim not in (None, embed_dim):
            raise NotImplementedError("MultiheadAttention: add_bias_kv, add_zero_attn and "
                                      "kdim/vdim other than embed_dim are not implemented")
        self.embed_dim, self.num_heads, self.head_dim = embed_dim, num_heads, embed_dim // num_heads
        self.dropout, self.batch_first = dropout, batch_first
        self.in_proj_weight = Parameter(np.zeros((3 * embed_dim, embed_dim), dtype=dtype))
        self.register_parameter(
            "in_proj_bias", Parameter(np.zeros(3 * embed_dim, dtype=dtype)) if bias else None)
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, dtype=dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """As torch: Xavier-uniform packed projection, zero biases."""
        init.xavier_uniform_(self.in_proj_weight)
        if self.in_proj_bias is not None:
            init.zeros_(self.in_proj_bias)
            init.zeros_(self.out_proj.bias)

    def _project(self, query: Tensor, key: Tensor, value: Tensor) -> tuple:
        """q, k, v of shape (N, H, length, D)."""
        e, h, d = self.embed_dim, self.num_heads, self.head_dim
        w, b = self.in_proj_weight, self.in_proj_bias
        if query is key and key is value:  # self-attention: one matrix product
            n, length = query.shape[:2]
            qkv = F.linear(query, w, b).reshape(n, length, 3, h, d).permute(2, 0, 3, 1, 4)
            return qkv[0], qkv[1], qkv[2]
        parts = []
        for i, x in enumerate((query, key, value)):
            bias = None if b is None else b[i * e:(i + 1) * e]
            n, length = x.shape[:2]
            parts.append(F.linear(x, w[i * e:(i + 1) * e], bias)
                         .reshape(n, length, h, d).transpose(1, 2))
        return tuple(parts)

    def _mask(self, attn_mask, key_padding_mask, n: int, length: int, source: int, dtype):
        """The additive mask (N or 1, H or 1, L, S) from both masks, or None."""
        bias = _as_bias(attn_mask, dtype)
        if bias is not None:
            allowed = ((length, source), (n * self.num_heads, length, source))
            if tuple(bias.shape) not in allowed:
                raise RuntimeError(f"MultiheadAttention: attn_mask of shape {list(bias.shape)} "
                                   f"should be (L, S) = {allowed[0]} or (N * num_heads, L, S) "
                                   f"= {allowed[1]}")
            if bias.ndim == 3:
                bias = bias.reshape(n, self.num_heads, length, source)
        padding = _as_bias(key_padding_mask, dtype)
        if padding is not None:
            padding = padding.reshape(n, 1, 1, source)
            bias = padding if bias is None else bias + padding
        return bias

    def forward(self, query: Tensor, key: Tensor, value: Tensor, key_padding_mask=None,
                need_weights: bool = True, attn_mask=None, average_attn_weights: bool = True,
                is_causal: bool = False):
        if is_causal and attn_mask is None:
            raise RuntimeError("MultiheadAttention: is_causal=True is a hint that attn_mask is "
                               "the causal mask; pass that attn_mask too")
        unbatched = query.ndim == 2
        if unbatched:  # (L, E) -> (1, L, E)
            query, key, value = _each(lambda x: x.unsqueeze(0), query, key, value)
        elif not self.batch_first:  # (L, N, E) -> (N, L, E)
            query, key, value = _each(lambda x: x.transpose(0, 1), query, key, value)
        q, k, v = self._project(query, key, value)
        n, _, length, d = q.shape
        scores = (q @ k.mT) * (1 / math.sqrt(d))
        bias = self._mask(attn_mask, key_padding_mask, n, length, k.shape[2], scores.dtype)
        if bias is not None:
            scores = scores + bias
        weights = scores.softmax(-1)
        attended = F.dropout(weights, self.dropout, training=self.training) @ v
        out = self.out_proj(attended.transpose(1, 2).reshape(n, length, self.embed_dim))
        if not need_weights:
            weights = None
        elif average_attn_weights:
            weights = weights.mean(1)
        if unbatched:
            return out.squeeze(0), None if weights is None else weights.squeeze(0)
        return out if self.batch_first else out.transpose(0, 1), weights

    def extra_repr(self) -> str:
        return f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, dropout={self.dropout}"
