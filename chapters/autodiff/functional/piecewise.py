"""Piecewise-linear activations: hardtanh, relu6, hardsigmoid, hardswish.

Each is a composition of ``where`` and arithmetic, so it has no rule of its
own; the pieces are chosen so the value and gradient at the kinks, and at
NaN, are torch's (hardtanh passes the gradient only strictly inside its
bounds; clamped values come detached).
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..dispatch import public
from ..functions import where
from ..tensor import Tensor


def _constant(value: float, like: Tensor) -> np.ndarray:
    """``value`` as a 0-d array of ``like``'s dtype, so ``where`` keeps that dtype
    (torch clamps an int64 tensor to int64 bounds)."""
    return np.asarray(value).astype(like.dtype)


def _clamped(x: Tensor, min_val: float, max_val: float) -> Tensor:
    """x clamped to [min_val, max_val], detached (NaN stays NaN): the value
    outside the bounds, which passes no gradient."""
    return where(x <= min_val, _constant(min_val, x),
                 where(x >= max_val, _constant(max_val, x), x)).detach()


def _hardtanh(x: Tensor, min_val: float, max_val: float) -> Tensor:
    """x clamped to [min_val, max_val]; d/dx = 1 unless x <= min_val or
    x >= max_val (so NaN stays NaN and passes its gradient, as torch's)."""
    outside = (x <= min_val) | (x >= max_val)
    return where(~outside, x, _clamped(x, min_val, max_val))


def _check_hardtanh(op: str, x: Tensor, min_val: float) -> None:
    """torch's refusals: bool inputs, and a negative lower bound for uint8."""
    if x.dtype == dtypes.bool_:
        raise RuntimeError(f"{op}: bool inputs are not supported (as in torch); convert "
                           "first, e.g. x.float()")
    if x.dtype == dtypes.uint8 and int(min_val) < 0:  # the bound as uint8 would wrap
        raise RuntimeError(f"{op}: cannot clamp an unsigned (uint8) tensor to a negative lower "
                           f"bound {min_val}; convert first, e.g. x.long()")


@public("hardtanh")
def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,
             inplace: bool = False) -> Tensor:
    """hardtanh(x) = min(max(x, min_val), max_val); d/dx = 1 for
    min_val < x < max_val, else 0 (0 at the bounds, as torch). Integer
    inputs keep their dtype."""
    if min_val > max_val:
        raise ValueError(f"hardtanh: min_val {min_val} cannot be greater than max_val {max_val}")
    _check_hardtanh("hardtanh", input, min_val)
    return _hardtanh(input, min_val, max_val)


@public("relu6")
def relu6(input: Tensor, inplace: bool = False) -> Tensor:
    """relu6(x) = min(max(x, 0), 6) = hardtanh(x, 0, 6)."""
    _check_hardtanh("relu6", input, 0.0)
    return _hardtanh(input, 0.0, 6.0)


@public("hardsigmoid")
def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:
    """hardsigmoid(x) = relu6(x + 3) / 6: 0 for x <= -3, 1 for x >= 3, and
    x / 6 + 1/2 between; d/dx = 1/6 strictly between -3 and 3, else 0 (NaN
    included, as torch)."""
    dtypes.check_implemented("hardsigmoid", input.dtype, bool_ok=False, integer_ok=False)
    shifted = input + 3
    inside = (shifted > 0) & (shifted < 6)
    return where(inside, shifted, _clamped(shifted, 0.0, 6.0)) / 6


@public("hardswish")
def hardswish(input: Tensor, inplace: bool = False) -> Tensor:
    """hardswish(x) = x relu6(x + 3) / 6: 0 for x <= -3, x for x >= 3, and
    x (x + 3) / 6 between, whose derivative is x / 3 + 1/2 (0 and 1 at the
    kinks, as torch: each outer piece owns its closed end). NaN takes the
    last piece, so its gradient passes, as torch's."""
    dtypes.check_implemented("hardswish", input.dtype, bool_ok=False, integer_ok=False)
    inside = where((input > -3) & (input < 3), input, _constant(0, input))
    quadratic = inside * (inside + 3) / 6
    zero = input * 0  # -inf * 0 is NaN, as torch's x * relu6(x + 3) / 6 gives
    return where(input <= -3, zero, where(input < 3, quadratic, input))
