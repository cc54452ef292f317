"""Elementwise math of one input torch users reach for: reciprocal, exp2,
the hyperbolic functions and their inverses, sinc; deg2rad and rad2deg;
nan_to_num; the logical ops (logical_not, and the two-input logical_and/or/xor);
the top-level forms of ``square`` and ``rsqrt``.

The smooth ones are rows of :data:`SMOOTH`, the same kind of table as
:data:`.elementwise.SMOOTH` (one derivative factor f'(x) serves the VJP and
the JVP). The rest are compositions of ops that already have rules, so they
bring no rule of their own:

    deg2rad(x) = x * (pi / 180)         rad2deg(x) = x * (180 / pi)
    nan_to_num(x) = where(isnan x, nan, where(x = +inf, posinf, where(x = -inf, neginf, x)))
    logical_not(x) = (x == 0),   logical_and(a, b) = (a != 0) & (b != 0)  (or, xor alike)

so nan_to_num's gradient is g where x is finite and 0 where a value was
replaced (where's rule), and the logical ops, comparisons, have none.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np

from ..dispatch import FLOAT32, public
from ..dtypes import is_floating
from ..functions import where
from ..tensor import Tensor, tensor_method
from .binary_math import require_tensor
from .elementwise import smooth_op

CUDA_FLOAT32 = {"cuda": FLOAT32}


def _sinc_factor(x: Tensor) -> Tensor:
    """sinc'(x) = (cos(pi x) - sinc x) / x, and 0 at x = 0 (sinc is even there).
    x = 0 is replaced by 1 inside the formula so no 0/0 is ever computed."""
    at_zero = x == 0
    safe = where(at_zero, 1.0, x)
    return where(at_zero, 0.0, ((math.pi * safe).cos() - safe.sinc()) / safe)


#: op -> (numpy function, what the factor reads: x (0) or z ("out"),
#:        factor(x, z) = f'(x) as tensors, the math[, autocast category per device])
SMOOTH = {
    "reciprocal": (np.reciprocal, ("out",), lambda x, z: -z * z,
                   "z = 1 / x:  f'(x) = -1 / x^2 = -z^2", CUDA_FLOAT32),
    "exp2": (np.exp2, ("out",), lambda x, z: z * math.log(2), "z = 2^x:  f'(x) = z ln 2"),
    "sinh": (np.sinh, (0,), lambda x, z: x.cosh(), "z = sinh x:  f'(x) = cosh x",
             CUDA_FLOAT32),
    "cosh": (np.cosh, (0,), lambda x, z: x.sinh(), "z = cosh x:  f'(x) = sinh x",
             CUDA_FLOAT32),
    "asinh": (np.arcsinh, (0,), lambda x, z: (x * x + 1).rsqrt(),
              "z = asinh x:  f'(x) = 1 / sqrt(x^2 + 1)"),
    "acosh": (np.arccosh, (0,), lambda x, z: (x * x - 1).rsqrt(),
              "z = acosh x (x >= 1):  f'(x) = 1 / sqrt(x^2 - 1)"),
    "atanh": (np.arctanh, (0,), lambda x, z: 1 / (1 - x * x),
              "z = atanh x (|x| <= 1):  f'(x) = 1 / (1 - x^2)"),
    "sinc": (np.sinc, (0,), lambda x, z: _sinc_factor(x),
             "z = sin(pi x) / (pi x), 1 at x = 0:  f'(x) = (cos(pi x) - z) / x, 0 at x = 0"),
}

#: torch's other names for the same functions (``torch.arcsinh``, ``x.arcsinh()``)
ALIASES = {"asinh": ("arcsinh",), "acosh": ("arccosh",), "atanh": ("arctanh",)}

reciprocal, exp2, sinh, cosh, asinh, acosh, atanh, sinc = (
    smooth_op(op, *row, aliases=ALIASES.get(op, ())) for op, row in SMOOTH.items())
arcsinh, arccosh, arctanh = asinh, acosh, atanh


@tensor_method()
@public("deg2rad")
def deg2rad(input):
    """torch.deg2rad: x * (pi / 180), a composition of mul (integers give float32)."""
    return input * (math.pi / 180)


@tensor_method()
@public("rad2deg")
def rad2deg(input):
    """torch.rad2deg: x * (180 / pi), a composition of mul (integers give float32)."""
    return input * (180 / math.pi)


# ---------------------------------------------------------------- nan_to_num


def _replacement(name: str, value, default: float) -> float:
    """A user's replacement value (a Python number), or the dtype's default."""
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"nan_to_num(): argument '{name}' must be a Python number, not "
                        f"{type(value).__name__}, e.g. {name}=0.0.")
    return value


@tensor_method()
@public("nan_to_num")
def nan_to_num(input, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None):
    """torch.nan_to_num: NaN -> ``nan``, +inf -> ``posinf``, -inf -> ``neginf``
    (by default the largest and the lowest finite value of the dtype). Integer
    and bool tensors hold none of these and come back as a copy. A composition
    of where, so dL/dx = g where x is finite and 0 where a value was replaced."""
    if not is_floating(input.dtype):
        return input.clone()
    finfo = ml_dtypes.finfo(input.dtype)
    nan = _replacement("nan", nan, 0.0)
    posinf = _replacement("posinf", posinf, float(finfo.max))
    neginf = _replacement("neginf", neginf, float(finfo.min))
    out = where(input == -math.inf, neginf, input)
    out = where(input == math.inf, posinf, out)
    return where(input.isnan(), nan, out)


@tensor_method()
@public("logical_not")
def logical_not(input):
    """torch.logical_not: a bool tensor, True where input is 0 (False, 0, 0.0);
    NaN counts as nonzero, as in torch."""
    return input == 0


# ------------------------------------------------- logical_and, _or, _xor


def _truth(op: str, input, other) -> tuple:
    """Both operands as bool tensors: True where nonzero (NaN counts as True)."""
    require_tensor(op, other)
    return input != 0, other != 0


@tensor_method()
@public("logical_and")
def logical_and(input, other):
    """torch.logical_and: (input != 0) & (other != 0), a bool tensor of any dtypes."""
    a, b = _truth("logical_and", input, other)
    return a & b


@tensor_method()
@public("logical_or")
def logical_or(input, other):
    """torch.logical_or: (input != 0) | (other != 0), a bool tensor of any dtypes."""
    a, b = _truth("logical_or", input, other)
    return a | b


@tensor_method()
@public("logical_xor")
def logical_xor(input, other):
    """torch.logical_xor: (input != 0) ^ (other != 0), a bool tensor of any dtypes."""
    a, b = _truth("logical_xor", input, other)
    return a ^ b


# ------------------------------------------- top-level forms of Tensor methods


def square(input):
    """torch.square: ``input.square()``, input * input (bool squares as int64)."""
    return input.square()


def rsqrt(input):
    """torch.rsqrt: ``input.rsqrt()``, 1 / sqrt(input)."""
    return input.rsqrt()
