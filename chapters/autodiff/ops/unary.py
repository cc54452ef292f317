"""Elementwise functions of one tensor: z = f(x), so dL/dx = g f'(x) and
tz = f'(x) tx: each op's derivative below is the one factor f'(x), written
with the output z where that is cheaper (e^x, tanh, sigmoid, sqrt).

neg, exp, log, sqrt, abs, tanh, sigmoid and relu have chapter 1's kernels
(:mod:`chapters.graph.ops`) and their rules are rows of one table,
:data:`SIMPLE_RULES`; sign, leaky_relu, clamp, erf, gelu and cast are defined here
with their shape rules.
"""

from __future__ import annotations

import math

import numpy as np

from chapters.graph.ops import TensorMeta, float_dtype, floating_meta, register_op, same_meta

from ..rules import FULL_PRECISION, register
from ..tensor import Tensor, apply
from . import erf_kernel
from .common import masked

# ------------------------------------------------- the table of simple rules
# kernels: chapters.graph.ops.neg, .exp, .log, .sqrt, .abs_, .tanh, .sigmoid, .relu
#
# For z = f(x) elementwise the Jacobian is diagonal, diag(f'(x)), so the VJP
# and the JVP are the same product: dL/dx = f'(x) g and tz = f'(x) tx. One
# expression ``rule(d, x, z)`` gives both, applied to d = g or d = tx; each
# row says whether the rule reads x (input 0) or z (the output), which is
# then what forward saves for backward.

#: op -> (what the rule reads, rule(d, x, z) = f'(x) d, the math, moves values only)
SIMPLE_RULES = {
    "neg": ((), lambda d, x, z: -d, "z = -x:  f'(x) = -1", True),
    "exp": (("out",), lambda d, x, z: d * z, "z = e^x:  f'(x) = z", False),
    "log": ((0,), lambda d, x, z: d / x, "z = ln x:  f'(x) = 1 / x", False),
    "sqrt": (("out",), lambda d, x, z: d / (2 * z), "z = sqrt(x):  f'(x) = 1 / (2 z)", False),
    "abs": ((0,), lambda d, x, z: d * np.sign(x.data),
            "z = |x|:  f'(x) = sign(x) (0 at x = 0, as torch)", True),
    "tanh": (("out",), lambda d, x, z: d * (1 - z * z), "z = tanh x:  f'(x) = 1 - z^2", False),
    "sigmoid": (("out",), lambda d, x, z: d * z * (1 - z),
                "z = 1 / (1 + e^-x):  f'(x) = z (1 - z)", False),
    "relu": (("out",), lambda d, x, z: masked(d, z.data > 0),
             "z = max(x, 0):  f'(x) = 1 where z > 0, else 0 (torch's choice at x = 0)", True),
}


def _simple_rules(op: str, reads: tuple, rule, math: str) -> tuple:
    """The VJP and JVP of ``op`` from its row of :data:`SIMPLE_RULES`."""

    def vjp(ctx, g):
        saved = ctx.saved[0] if reads else None
        return (rule(g, saved if reads == (0,) else None, saved if reads == ("out",) else None),)

    def jvp(primals, tangents, out):
        return rule(tangents[0], primals[0], out)

    vjp.__doc__ = f"{math}, so dL/dx = f'(x) g."
    jvp.__doc__ = f"{math}, so tz = f'(x) tx."
    for fn, kind in ((vjp, "vjp"), (jvp, "jvp")):
        fn.__name__ = fn.__qualname__ = f"{op}_{kind}"
    return vjp, jvp


#: rows whose rule is plain arithmetic, which numpy arrays understand as tensors
#: do: the same expression on arrays is the op's ``vjp_fast``
ARRAY_RULES = frozenset({"neg", "exp", "log", "sqrt", "tanh", "sigmoid"})


def _array_rule(op: str, reads: tuple, rule):
    """The VJP of a row of :data:`ARRAY_RULES` on numpy arrays (its ``vjp_fast``)."""

    def vjp_fast(ctx, g):
        saved = ctx.saved_arrays[0] if reads else None
        return (rule(g, saved if reads == (0,) else None, saved if reads == ("out",) else None),)

    vjp_fast.__doc__ = f"{op}_vjp on arrays."
    vjp_fast.__name__ = vjp_fast.__qualname__ = f"{op}_vjp_fast"
    return vjp_fast


for _op, (_reads, _rule, _math, _movement) in SIMPLE_RULES.items():
    _vjp, _jvp = _simple_rules(_op, _reads, _rule, _math)
    register(_op, vjp=_vjp, jvp=_jvp, saves=_reads, movement=_movement,
             vjp_fast=_array_rule(_op, _reads, _rule) if _op in ARRAY_RULES else None)

# ------------------------------------------------------------------- sign


@register_op("sign", same_meta, elementwise=True)
def sign(x):
    """-1, 0 or 1 by the sign of x; 0 for NaN and the value itself for bools (torch)."""
    if x.dtype == np.bool_:
        return x.copy()
    out = np.asarray(np.sign(x))  # an array also for 0-d x, to write the NaNs into
    if x.dtype.kind not in "iu":
        out[np.isnan(x)] = 0
    return out


def sign_vjp(ctx, g):
    """z = sign(x) is piecewise constant:  dL/dx = 0 (torch's choice at x = 0
    too). Zero, not an error: the op is recorded like any other."""
    return (masked(g, np.zeros(g.data.shape, dtype=bool)),)


def sign_jvp(primals, tangents, out):
    """tz = 0 tx."""
    return masked(tangents[0], np.zeros(tangents[0].data.shape, dtype=bool))


register("sign", vjp=sign_vjp, jvp=sign_jvp, movement=True)

# ------------------------------------------------------------- leaky_relu


@register_op("leaky_relu", same_meta, elementwise=True)
def leaky_relu(x, negative_slope=0.01):
    """x for x > 0, negative_slope * x otherwise."""
    return np.where(x > 0, x, x * np.asarray(negative_slope, x.dtype))


def leaky_relu_vjp(ctx, g):
    """z = x if x > 0 else s x:  dL/dx = g if x > 0 else s g."""
    (x,) = ctx.saved
    slope = ctx.attrs.get("negative_slope", 0.01)
    return (g * np.where(x.data > 0, 1.0, slope).astype(g.data.dtype),)


def leaky_relu_jvp(primals, tangents, out, negative_slope=0.01):
    """tz = tx if x > 0 else s tx."""
    x = primals[0].data
    return tangents[0] * np.where(x > 0, 1.0, negative_slope).astype(x.dtype)


register("leaky_relu", vjp=leaky_relu_vjp, jvp=leaky_relu_jvp, saves=(0,))

# ------------------------------------------------------------------ clamp


def _clamp_meta(x: TensorMeta, min=None, max=None, **_) -> TensorMeta:
    return x


@register_op("clamp", _clamp_meta, elementwise=True)
def clamp(x, min=None, max=None):
    """min(max(x, min), max); a missing bound is no bound. Integer bounds are
    first cast to x's dtype, wrapping around as in torch (clamping uint8 at
    min=-1 clamps at 255)."""
    if x.dtype.kind in "iu":
        min, max = (None if b is None else np.asarray(b).astype(x.dtype) for b in (min, max))
    return np.clip(x, min, max).astype(x.dtype, copy=False)


def _inside(x: np.ndarray, min=None, max=None) -> np.ndarray:
    """Where min <= x <= max (a missing bound is no bound)."""
    keep = np.ones(x.shape, dtype=bool)
    if min is not None:
        keep &= x >= min
    if max is not None:
        keep &= x <= max
    return keep


def clamp_vjp(ctx, g):
    """z = clamp(x, lo, hi):  dL/dx = g where lo <= x <= hi, else 0 (torch
    keeps the gradient at the bounds themselves)."""
    (x,) = ctx.saved
    return (masked(g, _inside(x.data, ctx.attrs.get("min"), ctx.attrs.get("max"))),)


def clamp_jvp(primals, tangents, out, min=None, max=None):
    """tz = tx where lo <= x <= hi, else 0."""
    return masked(tangents[0], _inside(primals[0].data, min, max))


register("clamp", vjp=clamp_vjp, jvp=clamp_jvp, saves=(0,), movement=True)

# -------------------------------------------------------------- erf, gelu


@register_op("erf", floating_meta, elementwise=True)
def erf(x):
    """The error function erf(x) = 2/sqrt(pi) * integral_0^x exp(-t^2) dt."""
    return erf_kernel.erf(x).astype(float_dtype(x.dtype), copy=False)


def erf_vjp(ctx, g):
    """z = erf(x):  dL/dx = g 2/sqrt(pi) e^(-x^2)."""
    (x,) = ctx.saved
    return (g * (2 / math.sqrt(math.pi)) * (-(x * x)).exp(),)


def erf_jvp(primals, tangents, out):
    """tz = 2/sqrt(pi) e^(-x^2) tx."""
    x = primals[0]
    return tangents[0] * (2 / math.sqrt(math.pi)) * (-(x * x)).exp()


register("erf", vjp=erf_vjp, jvp=erf_jvp, saves=(0,))

_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)


@register_op("gelu", floating_meta, elementwise=True)
def gelu(x, approximate="none"):
    """x * Phi(x), Phi the standard normal CDF; ``approximate="tanh"`` uses
    0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x**3)))
    phi = erf_kernel.erf(x / math.sqrt(2))  # then 0.5 x (1 + erf), in place
    phi += 1
    phi *= x
    phi *= 0.5
    return phi.astype(x.dtype, copy=False)


def gelu_derivative(x: Tensor, approximate: str) -> Tensor:
    """d gelu / dx. Exact: Phi(x) + x phi(x). Tanh form, with
    u = sqrt(2/pi)(x + 0.044715 x^3) and t = tanh u:
    0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2/pi) (1 + 3 * 0.044715 x^2)."""
    if approximate == "tanh":
        k = _SQRT_2_OVER_PI
        t = (k * (x + 0.044715 * x * x * x)).tanh()
        return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * 0.044715 * x * x)
    cdf = 0.5 * (1 + apply("erf", (x * (1 / math.sqrt(2)),)))
    pdf = (-0.5 * x * x).exp() * (1 / math.sqrt(2 * math.pi))
    return cdf + x * pdf


def gelu_vjp(ctx, g):
    """z = x Phi(x):  dL/dx = g (Phi(x) + x phi(x)) (see gelu_derivative)."""
    (x,) = ctx.saved
    return (g * gelu_derivative(x, ctx.attrs.get("approximate", "none")),)


def gelu_jvp(primals, tangents, out, approximate="none"):
    """tz = gelu'(x) tx."""
    return tangents[0] * gelu_derivative(primals[0], approximate)


def gelu_vjp_fast(ctx, g):
    """gelu_vjp on float32/float64 arrays: gelu_derivative's ops in its order, in place
    (each rounds as the rule's op does); float16/bfloat16 and 0-d arrays keep the rule."""
    (x,) = ctx.saved_arrays
    if x.dtype not in FULL_PRECISION or x.ndim == 0:
        return None
    if ctx.attrs.get("approximate", "none") == "tanh":
        t = np.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x * x * x))
        slope = 0.5 * x * (1 - t * t) * _SQRT_2_OVER_PI * (1 + 3 * 0.044715 * x * x)
        t += 1
        t *= 0.5
        t += slope
        t *= g
        return (t,)
    derivative = erf(x * (1 / math.sqrt(2)))  # cdf = 0.5 (1 + erf(x / sqrt 2))
    derivative += 1
    derivative *= 0.5
    pdf = x * -0.5  # pdf = e^(-x^2 / 2) / sqrt(2 pi)
    pdf *= x
    np.exp(pdf, out=pdf)
    pdf *= 1 / math.sqrt(2 * math.pi)
    pdf *= x
    derivative += pdf
    derivative *= g
    return (derivative,)


register("gelu", vjp=gelu_vjp, jvp=gelu_jvp, saves=(0,), vjp_fast=gelu_vjp_fast)

# ------------------------------------------------------------------- cast


def _cast_meta(x: TensorMeta, dtype, **_) -> TensorMeta:
    return TensorMeta(x.shape, dtype)


@register_op("cast", _cast_meta, elementwise=True)
def cast(x, dtype):
    """The same values in ``dtype`` (rounded to nearest, as torch's ``.to``).
    bfloat16 goes to integers through float32, so out-of-range values wrap
    as torch's (and numpy's float) casts do instead of saturating."""
    if x.dtype.name == "bfloat16" and np.dtype(dtype).kind in "iu":
        x = x.astype(np.float32)
    return x.astype(dtype)


def cast_vjp(ctx, g):
    """z = x.to(dtype):  dL/dx = g, cast back to x's dtype (the engine does
    the cast, as for every gradient)."""
    return (g,)


def cast_jvp(primals, tangents, out, dtype):
    """tz = tx.to(dtype)."""
    return tangents[0].to(dtype)


register("cast", vjp=cast_vjp, jvp=cast_jvp, movement=True, grad_fn="ToCopyBackward0")
