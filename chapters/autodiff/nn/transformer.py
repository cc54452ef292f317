"""``nn.TransformerEncoderLayer``: one transformer block, with torch's
submodule names so a torch ``state_dict`` loads unchanged.

With ``norm_first=True`` (pre-LayerNorm, the arrangement of GPT-2 and most
models since, which trains without warm-up tricks) each sublayer sees a
normalized input and adds its result to the residual stream:

    x = x + SelfAttention(LayerNorm1(x))
    x = x + Linear2(act(Linear1(LayerNorm2(x))))

``norm_first=False`` is the original post-LayerNorm block,
``x = LayerNorm1(x + SelfAttention(x))``, then the same for the MLP.
Dropout follows the attention, the activation and the MLP, as torch.
"""

from __future__ import annotations

import numpy as np

from ..functional import activations as F
from ..tensor import Tensor
from .attention import MultiheadAttention
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm

_ACTIVATIONS = {"relu": F.relu, "gelu": F.gelu}


class TransformerEncoderLayer(Module):
    """Self-attention then a two-layer MLP, each with a residual connection
    (残差连接) and a LayerNorm (torch's defaults: post-norm, ReLU, dropout 0.1,
    sequence-first inputs)."""

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048,
                 dropout: float = 0.1, activation="relu", layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True,
                 dtype=np.float32):
        super().__init__()
        if isinstance(activation, str):
            if activation not in _ACTIVATIONS:
                raise RuntimeError(f"TransformerEncoderLayer: activation should be 'relu' or "
                                   f"'gelu' (or a callable), not {activation!r}")
            activation = _ACTIVATIONS[activation]
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, dtype=dtype)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation = activation

    def _attention_block(self, x: Tensor, attn_mask, key_padding_mask, is_causal: bool):
        out, _ = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                need_weights=False, is_causal=is_causal)
        return self.dropout1(out)

    def _mlp_block(self, x: Tensor) -> Tensor:
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def forward(self, src: Tensor, src_mask=None, src_key_padding_mask=None,
                is_causal: bool = False) -> Tensor:
        x = src
        if self.norm_first:
            x = x + self._attention_block(self.norm1(x), src_mask, src_key_padding_mask,
                                          is_causal)
            return x + self._mlp_block(self.norm2(x))
        x = self.norm1(x + self._attention_block(x, src_mask, src_key_padding_mask, is_causal))
        return self.norm2(x + self._mlp_block(x))
