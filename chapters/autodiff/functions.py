"""Free functions with torch's top-level names (``cat``, ``stack``, ``where``, ...)."""

from __future__ import annotations

import builtins

import numpy as np

from .core import operands, scalar
from .dispatch import PROMOTE, public
from .dtypes import result_dtype
from .tensor import Tensor, apply


def _tensors(xs) -> tuple:
    xs = tuple(xs)
    if not xs:
        raise ValueError("expected a non-empty sequence of tensors")
    tensors = tuple(x if isinstance(x, Tensor) else Tensor(x) for x in xs)
    dtype = result_dtype([t.data for t in tensors])
    return tuple(t if t.data.dtype == dtype else t.to(dtype) for t in tensors)


@public("cat", autocast={"cpu": PROMOTE})
def cat(tensors, dim: int = 0) -> Tensor:
    """Join tensors along an existing dimension ``dim``."""
    xs = _tensors(tensors)
    d = dim % builtins.max(xs[0].ndim, 1)
    sizes = tuple(x.data.shape[d] if x.ndim else 0 for x in xs)
    return apply("cat", xs, {"dim": dim, "sizes": sizes})


concat = cat


@public("stack", autocast={"cpu": PROMOTE})
def stack(tensors, dim: int = 0) -> Tensor:
    """Join tensors along a new dimension ``dim``."""
    return apply("stack", _tensors(tensors), {"dim": dim})


@public("where")
def where(condition, input, other) -> Tensor:
    """``condition ? input : other`` elementwise (the condition gets no gradient)."""
    cond = condition.data if isinstance(condition, Tensor) else np.asarray(condition)
    if cond.dtype != np.bool_:
        raise TypeError(f"where: expected a bool condition, got {cond.dtype}")
    if not isinstance(input, Tensor):
        if not isinstance(other, Tensor):
            raise TypeError("where: at least one of input and other must be a Tensor")
        input = scalar(input, other.data.dtype) if np.ndim(input) == 0 else Tensor(input)
    a, b = operands(input, other) if isinstance(input, Tensor) else (input, other)
    return apply("where", (cond, a, b))


def _unary(name: str):
    def fn(x: Tensor, *args, **kwargs) -> Tensor:
        return getattr(x, name)(*args, **kwargs)

    fn.__name__ = name
    fn.__doc__ = f"``x.{name}(...)`` as a function (torch.{name})."
    return fn


exp, log, sqrt, tanh, sigmoid, relu, abs = (_unary(n) for n in (
    "exp", "log", "sqrt", "tanh", "sigmoid", "relu", "abs"))
sum, mean, var, std, amax, logsumexp = (_unary(n) for n in (
    "sum", "mean", "var", "std", "amax", "logsumexp"))
softmax, log_softmax, clamp, reshape, transpose, permute = (_unary(n) for n in (
    "softmax", "log_softmax", "clamp", "reshape", "transpose", "permute"))
matmul, maximum, minimum, flatten, unsqueeze, squeeze = (_unary(n) for n in (
    "matmul", "maximum", "minimum", "flatten", "unsqueeze", "squeeze"))
max, min, argmax, pow, mul, add, sub, div = (_unary(n) for n in (
    "max", "min", "argmax", "pow", "mul", "add", "sub", "div"))
