"""Activations (激活函数): elementwise nonlinearities, and softmax along a dim."""

from __future__ import annotations

from ..dispatch import public
from ..tensor import Tensor, apply
from ._common import _floating_only, _tensor


@public("relu")
def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(x, 0)."""
    return _tensor(input).relu()


@public("leaky_relu")
def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """x if x > 0 else negative_slope * x."""
    _floating_only("leaky_relu", input)
    return apply("leaky_relu", (input,), {"negative_slope": negative_slope})


@public("gelu")
def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """x * Phi(x) (``approximate="tanh"``: the tanh formula)."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    _floating_only("gelu", input)
    return apply("gelu", (input,), {"approximate": approximate})


@public("sigmoid")
def sigmoid(input: Tensor) -> Tensor:
    return apply("sigmoid", (input,))


@public("tanh")
def tanh(input: Tensor) -> Tensor:
    return apply("tanh", (input,))


@public("silu")
def silu(input: Tensor) -> Tensor:
    """x * sigmoid(x)."""
    _floating_only("silu", input)
    return input * apply("sigmoid", (input,))


@public("softmax")
def softmax(input: Tensor, dim: int, dtype=None) -> Tensor:
    x = input if dtype is None else input.to(dtype)
    return x.softmax(dim)


@public("log_softmax")
def log_softmax(input: Tensor, dim: int, dtype=None) -> Tensor:
    x = input if dtype is None else input.to(dtype)
    return x.log_softmax(dim)
