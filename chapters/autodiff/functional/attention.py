"""Scaled dot-product attention and its mask."""

from __future__ import annotations

import math

import numpy as np

from ..dispatch import LOWER_PRECISION, public
from ..tensor import Tensor
from .layers import dropout


def attention_bias(attn_mask, is_causal: bool, query_len: int, key_len: int, dtype):
    """The additive mask of ``scaled_dot_product_attention`` (or None): a bool
    mask becomes 0 where attending is allowed (True) and -inf elsewhere; a
    float mask is added as it is; ``is_causal`` allows key j for query i only
    when j <= i (the lower triangle)."""
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError("scaled_dot_product_attention: give either attn_mask or "
                               "is_causal=True, not both (fold the causal triangle into "
                               "your mask)")
        attn_mask = np.tril(np.ones((query_len, key_len), dtype=bool))
    if attn_mask is None:
        return None
    mask = attn_mask.data if isinstance(attn_mask, Tensor) else np.asarray(attn_mask)
    if mask.dtype == np.bool_:
        return np.where(mask, 0.0, -np.inf).astype(dtype)
    return attn_mask if isinstance(attn_mask, Tensor) else mask.astype(dtype)


def _share_heads(query: Tensor, kv: Tensor) -> Tensor:
    """Grouped-query attention: each of the Hkv key/value heads (dim -3) serves
    Hq / Hkv consecutive query heads, so it is repeated that many times."""
    heads, kv_heads = query.shape[-3], kv.shape[-3]
    if heads % kv_heads:
        raise RuntimeError(f"scaled_dot_product_attention: the {kv_heads} key/value heads must "
                           f"divide the {heads} query heads (enable_gqa=True)")
    shape = tuple(kv.shape)
    repeated = kv.unsqueeze(-3).expand(*shape[:-2], heads // kv_heads, *shape[-2:])
    return repeated.reshape(*shape[:-3], heads, *shape[-2:])


@public("scaled_dot_product_attention",
        autocast={"cpu": LOWER_PRECISION, "cuda": LOWER_PRECISION})
def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask=None,
                                 dropout_p: float = 0.0, is_causal: bool = False,
                                 scale: float | None = None, enable_gqa: bool = False) -> Tensor:
    """Attention (注意力): softmax(Q K^T * scale + M) V over the last two dims,
    ``scale = 1/sqrt(E)`` by default. Q is (..., L, E), K (..., S, E), V
    (..., S, Ev); M is :func:`attention_bias`. ``enable_gqa`` lets K and V
    have fewer heads (dim -3) than Q. Each query's weights over the
    S keys sum to 1; the gradient flows through matmul, softmax and matmul.
    A row with every key masked gives NaN, as torch."""
    if enable_gqa:
        key, value = _share_heads(query, key), _share_heads(query, value)
    if query.shape[-1] != key.shape[-1] or key.shape[-2] != value.shape[-2]:
        raise RuntimeError(f"scaled_dot_product_attention: query {list(query.shape)}, key "
                           f"{list(key.shape)} and value {list(value.shape)} do not fit: query "
                           "and key need the same last dim, key and value the same length")
    scale = 1 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores = (query @ key.mT) * scale
    bias = attention_bias(attn_mask, is_causal, query.shape[-2], key.shape[-2], scores.dtype)
    if bias is not None:
        scores = scores + bias
    weights = scores.softmax(-1)
    if dropout_p > 0:
        weights = dropout(weights, dropout_p)
    return weights @ value
