"""More elementwise math: trigonometry, logarithms in other bases, the
predicates isnan/isinf/isfinite/isclose, copysign and lerp.

The smooth functions of one tensor are rows of one table, :data:`SMOOTH`:
for z = f(x) the Jacobian is diagonal, so dL/dx = f'(x) g and tz = f'(x) tx
share one factor ``f'(x)``, written with x or with the output z, whichever
is cheaper (tan' = 1 + z^2, expm1' = z + 1). Integer and bool inputs give
float32, as in torch. Each function is also a Tensor method
(:func:`~chapters.autodiff.tensor.tensor_method`): ``torch.sin(x)`` and
``x.sin()`` are the same function here.
"""

from __future__ import annotations

import math

import numpy as np

from chapters.graph.ops import (
    TensorMeta,
    broadcast_shapes,
    float_dtype,
    floating_meta,
    register_op,
)

from ..core import operands
from ..dispatch import FLOAT32, public
from ..dtypes import is_floating
from ..rules import register
from ..tensor import Tensor, apply, tensor_method

# --------------------------------------------------- the table of smooth rules
#: torch's CUDA autocast computes these ops in float32; its CPU autocast leaves them alone
CUDA_FLOAT32 = {"cuda": FLOAT32}

#: op -> (numpy function, what the factor reads: x (0) or z ("out"),
#:        factor(x, z) = f'(x) as tensors, the math[, autocast category per device])
SMOOTH = {
    "sin": (np.sin, (0,), lambda x, z: x.cos(), "z = sin x:  f'(x) = cos x"),
    "cos": (np.cos, (0,), lambda x, z: -x.sin(), "z = cos x:  f'(x) = -sin x"),
    "tan": (np.tan, ("out",), lambda x, z: 1 + z * z, "z = tan x:  f'(x) = 1 + z^2",
            CUDA_FLOAT32),
    "asin": (np.arcsin, (0,), lambda x, z: (1 - x * x).rsqrt(),
             "z = asin x:  f'(x) = 1 / sqrt(1 - x^2)", CUDA_FLOAT32),
    "acos": (np.arccos, (0,), lambda x, z: -(1 - x * x).rsqrt(),
             "z = acos x:  f'(x) = -1 / sqrt(1 - x^2)", CUDA_FLOAT32),
    "atan": (np.arctan, (0,), lambda x, z: 1 / (1 + x * x), "z = atan x:  f'(x) = 1 / (1 + x^2)"),
    "log2": (np.log2, (0,), lambda x, z: 1 / (x * math.log(2)),
             "z = log2 x:  f'(x) = 1 / (x ln 2)", CUDA_FLOAT32),
    "log10": (np.log10, (0,), lambda x, z: 1 / (x * math.log(10)),
              "z = log10 x:  f'(x) = 1 / (x ln 10)", CUDA_FLOAT32),
    "log1p": (np.log1p, (0,), lambda x, z: 1 / (1 + x),
              "z = ln(1 + x), exact for tiny x:  f'(x) = 1 / (1 + x)", CUDA_FLOAT32),
    "expm1": (np.expm1, ("out",), lambda x, z: z + 1,
              "z = e^x - 1, exact for tiny x:  f'(x) = e^x = z + 1", CUDA_FLOAT32),
}


#: torch's other names for the same functions (``torch.arcsin``, ``x.arcsin()``)
ALIASES = {"asin": ("arcsin",), "acos": ("arccos",), "atan": ("arctan",)}


def smooth_op(op: str, fn, reads: tuple, factor, math_: str, autocast: dict | None = None, *,
              aliases: tuple = ()):
    """Register ``op``'s kernel and rules from its row of a table such as
    :data:`SMOOTH` and return its user function (also attached as the Tensor
    method ``op`` and its ``aliases``), a public op of the given autocast
    categories."""

    def kernel(x):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # IEEE inf/NaN
            return fn(x.astype(float_dtype(x.dtype), copy=False))

    def vjp(ctx, g):
        (saved,) = ctx.saved
        return (g * (factor(saved, None) if reads == (0,) else factor(None, saved)),)

    def jvp(primals, tangents, out):
        return tangents[0] * factor(primals[0], out)

    def method(input):
        return apply(op, (input,))

    kernel.__doc__ = f"{math_} (numpy's {fn.__name__}, floating result)."
    vjp.__doc__ = f"{math_}, so dL/dx = f'(x) g."
    jvp.__doc__ = f"{math_}, so tz = f'(x) tx."
    method.__doc__ = f"torch.{op}: {math_.split(':')[0]} elementwise."
    for f, name in ((kernel, op), (vjp, f"{op}_vjp"), (jvp, f"{op}_jvp"), (method, op)):
        f.__name__ = f.__qualname__ = name
    register_op(op, floating_meta, elementwise=True)(kernel)
    register(op, vjp=vjp, jvp=jvp, saves=reads)
    return tensor_method(*aliases)(public(op, autocast=autocast)(method))


sin, cos, tan, asin, acos, atan, log2, log10, log1p, expm1 = (
    smooth_op(op, *row, aliases=ALIASES.get(op, ())) for op, row in SMOOTH.items())
arcsin, arccos, arctan = asin, acos, atan


@tensor_method()
@public("erf")
def erf(input):
    """torch.erf: the error function (kernel and rules in :mod:`.unary`)."""
    return apply("erf", (input,))


# ------------------------------------------------------------- predicates


def _bool_meta(x: TensorMeta, **_) -> TensorMeta:
    return TensorMeta(x.shape, np.bool_)


@register_op("isnan", _bool_meta, elementwise=True)
def _isnan(x):
    """True where x is NaN (never for integers)."""
    return np.isnan(x) if x.dtype.kind in "fV" else np.zeros(x.shape, bool)


@register_op("isinf", _bool_meta, elementwise=True)
def _isinf(x):
    """True where x is +inf or -inf (never for integers)."""
    return np.isinf(x) if x.dtype.kind in "fV" else np.zeros(x.shape, bool)


@register_op("isfinite", _bool_meta, elementwise=True)
def _isfinite(x):
    """True where x is neither NaN nor infinite (always for integers)."""
    return np.isfinite(x) if x.dtype.kind in "fV" else np.ones(x.shape, bool)


def _isclose_meta(a: TensorMeta, b: TensorMeta, **_) -> TensorMeta:
    return TensorMeta(broadcast_shapes("isclose", a.shape, b.shape), np.bool_)


@register_op("isclose", _isclose_meta, elementwise=True)
def _isclose(a, b, rtol=1e-5, atol=1e-8, equal_nan=False):
    """|a - b| <= atol + rtol |b| (torch's and numpy's test; not symmetric)."""
    return np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


for _name in ("isnan", "isinf", "isfinite", "isclose"):
    register(_name, movement=True)  # a bool result carries no gradient


@tensor_method()
@public("isnan")
def isnan(input):
    """torch.isnan: a bool tensor, True where input is NaN."""
    return apply("isnan", (input,))


@tensor_method()
@public("isinf")
def isinf(input):
    """torch.isinf: a bool tensor, True where input is +-inf."""
    return apply("isinf", (input,))


@tensor_method()
@public("isfinite")
def isfinite(input):
    """torch.isfinite: a bool tensor, True where input is neither NaN nor +-inf."""
    return apply("isfinite", (input,))


@tensor_method()
@public("isclose")
def isclose(input, other, rtol: float = 1e-5, atol: float = 1e-8, equal_nan: bool = False):
    """torch.isclose: |input - other| <= atol + rtol |other| elementwise."""
    if isinstance(other, Tensor) and other.dtype != input.dtype:
        raise RuntimeError(
            f"isclose: input is {input.dtype} but other is {other.dtype}; torch compares "
            "tensors of one dtype only. Cast one of them first, e.g. other.to(input.dtype).")
    a, b = operands(input, other)
    return apply("isclose", (a, b), {"rtol": rtol, "atol": atol, "equal_nan": equal_nan})


# --------------------------------------------------------------- copysign


def _copysign_meta(a: TensorMeta, b: TensorMeta, **_) -> TensorMeta:
    return TensorMeta(broadcast_shapes("copysign", a.shape, b.shape), float_dtype(a.dtype))


@register_op("copysign", _copysign_meta, elementwise=True)
def _copysign(a, b):
    """|a| with the sign of b (the sign bit: -0.0 counts as negative)."""
    return np.copysign(a, b).astype(float_dtype(a.dtype), copy=False)


def copysign_vjp(ctx, g):
    """z = |a| sign(b):  dL/da = g z / a (0 at a = 0, as torch),  dL/db = 0."""
    a, z = ctx.saved
    ratio = np.divide(z.data, a.data, out=np.zeros_like(z.data), where=a.data != 0)
    return g * ratio, (g.new_zeros(g.shape) if ctx.needs_input_grad[1] else None)


def copysign_jvp(primals, tangents, out):
    """tz = (z / a) ta: b changes z only where it jumps, never smoothly."""
    a = primals[0].data
    return tangents[0] * np.divide(out.data, a, out=np.zeros_like(out.data), where=a != 0)


register("copysign", vjp=copysign_vjp, jvp=copysign_jvp, saves=(0, "out"))


@tensor_method()
@public("copysign")
def copysign(input, other):
    """torch.copysign: |input| with the sign of ``other`` (a floating result)."""
    a, b = operands(input, other)
    return apply("copysign", (a, b))


# ------------------------------------------------------------------- lerp


@tensor_method()
@public("lerp")
def lerp(input, end, weight):
    """torch.lerp: input + weight (end - input), a composition of sub, mul and
    add, so its gradients (1 - w, w and end - input) come from their rules."""
    for name, t in (("end", end), ("weight", weight)):
        if isinstance(t, Tensor) and t.dtype != input.dtype:
            raise RuntimeError(f"lerp: expected dtype {input.dtype} for `{name}` but got "
                               f"{t.dtype}; cast it first, e.g. {name}.to(input.dtype).")
    if not is_floating(input.dtype):
        raise NotImplementedError(f"lerp is only defined for floating tensors, got "
                                  f"{input.dtype}; use input.float() first.")
    return input + weight * (end - input)
