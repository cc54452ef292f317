"""Layers: each one holds parameters and calls one function of ``functional``.

The maths lives in :mod:`chapters.autodiff.functional` (forward and VJP rules);
a layer only owns its weights, initialises them like PyTorch and forwards its
input. Shapes and defaults follow ``torch.nn``.
"""

from __future__ import annotations

import math

import numpy as np

from ..functional.activations import gelu, relu
from ..functional.convolution import conv2d
from ..functional.layers import dropout, embedding, linear
from ..tensor import Tensor
from . import init
from .conv import conv_extra_repr
from .module import Module, Parameter


def _empty(*shape, dtype=np.float32) -> np.ndarray:
    return np.zeros(shape, dtype=dtype)


class Identity(Module):
    def forward(self, x: Tensor) -> Tensor:
        return x


class Linear(Module):
    """``y = x @ W.T + b`` with ``W: (out_features, in_features)``.

    Initialised as torch: ``W, b ~ U(-1/sqrt(in_features), 1/sqrt(in_features))``
    (``kaiming_uniform_(W, a=sqrt(5))`` is that bound, see :mod:`.init`).
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 dtype=np.float32):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = Parameter(_empty(out_features, in_features, dtype=dtype))
        self.register_parameter("bias", Parameter(_empty(out_features, dtype=dtype))
                                if bias else None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = 1 / math.sqrt(self.in_features) if self.in_features > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, x: Tensor) -> Tensor:
        return linear(x, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Conv2d(Module):
    """2-D cross-correlation, weight ``(out_channels, in_channels / groups, kh, kw)``.

    Initialised as torch: ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))`` with
    ``fan_in = in_channels / groups * kh * kw``, for weight and bias.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size, stride=1,
                 padding=0, dilation=1, groups: int = 1, bias: bool = True, dtype=np.float32):
        super().__init__()
        if in_channels % groups or out_channels % groups:
            raise ValueError(f"Conv2d: groups={groups} must divide in_channels {in_channels} "
                             f"and out_channels {out_channels}")
        kh, kw = (kernel_size, kernel_size) if isinstance(kernel_size, int) else kernel_size
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride, self.padding = (kh, kw), stride, padding
        self.dilation, self.groups = dilation, groups
        self.weight = Parameter(_empty(out_channels, in_channels // groups, kh, kw, dtype=dtype))
        self.register_parameter("bias", Parameter(_empty(out_channels, dtype=dtype))
                                if bias else None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init.calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, x: Tensor) -> Tensor:
        return conv2d(x, self.weight, self.bias, stride=self.stride, padding=self.padding,
                        dilation=self.dilation, groups=self.groups)

    def extra_repr(self) -> str:
        return conv_extra_repr(self, 2)


class ReLU(Module):
    def forward(self, x: Tensor) -> Tensor:
        return relu(x)


class GELU(Module):
    """``x * Phi(x)``; ``approximate="tanh"`` uses the tanh formula, as torch."""

    def __init__(self, approximate: str = "none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, x: Tensor) -> Tensor:
        return gelu(x, approximate=self.approximate)


class Tanh(Module):
    def forward(self, x: Tensor) -> Tensor:
        return x.tanh()


class Sigmoid(Module):
    def forward(self, x: Tensor) -> Tensor:
        return x.sigmoid()


class Flatten(Module):
    """Merge dims ``start_dim..end_dim`` into one (default: all but the batch dim)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x: Tensor) -> Tensor:
        return x.flatten(self.start_dim, self.end_dim)


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
        self.weight = Parameter(_empty(num_embeddings, embedding_dim, dtype=dtype))
        init.normal_(self.weight)
        if self.padding_idx is not None:
            self.weight.data[self.padding_idx] = 0

    def forward(self, indices: Tensor) -> Tensor:
        return embedding(indices, self.weight, padding_idx=self.padding_idx)

    def extra_repr(self) -> str:
        padding = "" if self.padding_idx is None else f", padding_idx={self.padding_idx}"
        return f"{self.num_embeddings}, {self.embedding_dim}{padding}"
