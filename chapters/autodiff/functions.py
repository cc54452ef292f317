"""Free functions with torch's top-level names (``cat``, ``stack``, ``where``, ...)."""

from __future__ import annotations

import numpy as np

from chapters.graph.ops import ShapeError, check_dim

from .core import operands
from .dispatch import PROMOTE, public
from .dtypes import result_dtype
from .tensor import Tensor, apply


def _tensors(op: str, xs) -> tuple:
    xs = tuple(xs)
    if not xs:  # torch raises ValueError in cat, RuntimeError in stack
        error = ValueError if op == "cat" else RuntimeError
        raise error(f"{op}: expected a non-empty sequence of tensors to join")
    tensors = tuple(x if isinstance(x, Tensor) else Tensor(x) for x in xs)
    dtype = result_dtype([t.data for t in tensors])
    return tuple(t if t.data.dtype == dtype else t.to(dtype) for t in tensors)


@public("cat", autocast={"cpu": PROMOTE})
def cat(tensors, dim: int = 0) -> Tensor:
    """Join tensors along an existing dimension ``dim``."""
    xs = _tensors("cat", tensors)
    for i, x in enumerate(xs):
        if x.ndim == 0:
            raise ShapeError(f"cat: the tensor at position {i} is 0-d and cannot be "
                             "concatenated; use stack, or x.reshape(1) first.")
    d = check_dim("cat", dim, xs[0].ndim)
    sizes = tuple(x.data.shape[d] for x in xs)
    return apply("cat", xs, {"dim": dim, "sizes": sizes})


concat = cat


@public("stack", autocast={"cpu": PROMOTE})
def stack(tensors, dim: int = 0) -> Tensor:
    """Join tensors along a new dimension ``dim``."""
    return apply("stack", _tensors("stack", tensors), {"dim": dim})


@public("where")
def where(condition, input, other) -> Tensor:
    """``condition ? input : other`` elementwise (the condition gets no gradient).
    ``input`` and ``other`` may be tensors or Python numbers, promoted together
    by torch's rules: ``where(c, 4, 2)`` is int64, ``where(c, x, 2.5)`` takes
    x's floating dtype."""
    cond = condition.data if isinstance(condition, Tensor) else np.asarray(condition)
    if cond.dtype != np.bool_:
        raise RuntimeError(f"where: expected a bool condition, got {cond.dtype}; compare first, "
                           "e.g. where(mask != 0, a, b).")
    if not isinstance(input, Tensor) and np.ndim(input):
        input = Tensor(input)
    if not isinstance(other, Tensor) and np.ndim(other):
        other = Tensor(other)
    if isinstance(input, Tensor):
        a, b = operands(input, other)
    elif isinstance(other, Tensor):
        b, a = operands(other, input)
    else:  # two Python numbers: the dtype they would have as tensors of their own
        dtype = result_dtype([input, other])
        a, b = np.asarray(input).astype(dtype), np.asarray(other).astype(dtype)
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
amin, sign = (_unary(n) for n in ("amin", "sign"))
bitwise_and, bitwise_or, bitwise_xor, bitwise_not, bitwise_left_shift, bitwise_right_shift = (
    _unary(n) for n in ("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not",
                        "bitwise_left_shift", "bitwise_right_shift"))
