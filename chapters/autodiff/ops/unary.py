"""Elementwise functions of one tensor: z = f(x), so dL/dx = g f'(x) and
tz = f'(x) tx: each op's derivative below is the one factor f'(x), written
with the output z where that is cheaper (e^x, tanh, sigmoid, sqrt).

neg, exp, log, sqrt, abs, tanh, sigmoid and relu have chapter 1's kernels
(:mod:`chapters.graph.ops`) and their rules are rows of one table,
:data:`SIMPLE_RULES`; sign, leaky_relu, clamp and cast are defined here with their shape rules
(erf and GELU: :mod:`.erf_gelu`).
"""

from __future__ import annotations

import numpy as np

from chapters.graph.ops import TensorMeta, register_op, same_meta

from ..rules import register
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
    "abs": ((0,), lambda d, x, z: d * sign(x.data),
            "z = |x|:  f'(x) = sign(x) (0 at x = 0 and at NaN, as torch)", True),
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
