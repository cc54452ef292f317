"""Binary arithmetic: add, sub, mul, div, pow, maximum, minimum, where,
the comparisons, and dropout's scaling.

Kernels and shape rules of all but dropout are chapter 1's
(:mod:`chapters.graph.ops`); each op below names its kernel. For
``z = op(a, b)`` and a scalar loss L, the VJP gets ``g = dL/dz`` and returns
``(dL/da, dL/db)``; the JVP gets tangents ``(ta, tb)`` and returns
``tz = dz/da ta + dz/db tb``: the same Jacobian used from its two sides.
Gradients may be returned in the broadcast shape: the engine sums each one
back to its input's shape (:func:`chapters.autodiff.engine.sum_to`).
"""

from __future__ import annotations

import numpy as np

from chapters.graph.ops import TensorMeta, register_op

from ..forward_mode import is_constant_zero
from ..rules import register
from ..tensor import Tensor
from .common import data_of, masked

# --------------------------------------------------------------- add, sub
# kernels: chapters.graph.ops.add (np.add), chapters.graph.ops.sub (np.subtract)


def add_vjp(ctx, g):
    """z = a + b:  dL/da = g,  dL/db = g."""
    return g, g


def add_jvp(primals, tangents, out):
    """tz = ta + tb."""
    return tangents[0] + tangents[1]


def sub_vjp(ctx, g):
    """z = a - b:  dL/da = g,  dL/db = -g."""
    return g, (-g if ctx.needs_input_grad[1] else None)


def sub_jvp(primals, tangents, out):
    """tz = ta - tb."""
    return tangents[0] - tangents[1]


def sub_vjp_fast(ctx, g):
    """sub_vjp on arrays (add's rule needs no arithmetic: ``add_vjp`` serves both)."""
    return g, (-g if ctx.needs_input_grad[1] else None)


register("add", vjp=add_vjp, jvp=add_jvp, vjp_fast=add_vjp)
register("sub", vjp=sub_vjp, jvp=sub_jvp, vjp_fast=sub_vjp_fast)

# --------------------------------------------------------------- mul, div
# kernels: chapters.graph.ops.mul (np.multiply), chapters.graph.ops.div (true division)


def mul_vjp(ctx, g):
    """z = a * b:  dL/da = g * b,  dL/db = g * a."""
    a, b = ctx.saved
    need_a, need_b = ctx.needs_input_grad
    return (g * b if need_a else None), (g * a if need_b else None)


def mul_jvp(primals, tangents, out):
    """tz = ta b + a tb (the product rule)."""
    (a, b), (ta, tb) = primals, tangents
    return ta * b + a * tb


def div_vjp(ctx, g):
    """z = a / b:  dL/da = g / b,  dL/db = -g a / b^2."""
    a, b = ctx.saved
    need_a, need_b = ctx.needs_input_grad
    return (g / b if need_a else None), (-g * a / (b * b) if need_b else None)


def div_jvp(primals, tangents, out):
    """tz = ta / b - a tb / b^2 (the quotient rule)."""
    (a, b), (ta, tb) = primals, tangents
    return ta / b - a * tb / (b * b)


def mul_vjp_fast(ctx, g):
    """mul_vjp on arrays."""
    a, b = ctx.saved_arrays
    need_a, need_b = ctx.needs_input_grad
    return (g * b if need_a else None), (g * a if need_b else None)


register("mul", vjp=mul_vjp, jvp=mul_jvp, saves=(0, 1), vjp_fast=mul_vjp_fast)
register("div", vjp=div_vjp, jvp=div_jvp, saves=(0, 1))

# ------------------------------------------------------------------- pow
# kernel: chapters.graph.ops.pow_ (np.power)


def pow_vjp(ctx, g):
    """z = a^b:  dL/da = g b a^(b-1),  dL/db = g z ln(a) (0 where a = 0 and
    b >= 0, the limit torch uses)."""
    a, b, z = ctx.saved
    need_a, need_b = ctx.needs_input_grad
    ga = gb = None
    if need_a:
        ga = masked(g * b * a ** (b - 1), data_of(b) != 0)
    if need_b:
        log_a = a.log() if isinstance(a, Tensor) else np.log(a)
        gb = masked(g * z * log_a, ~((data_of(a) == 0) & (data_of(b) >= 0)))
    return ga, gb


def pow_jvp(primals, tangents, out):
    """tz = ta b a^(b-1) + tb z ln(a)."""
    (a, b), (ta, tb) = primals, tangents
    t = ta * b * a ** (b - 1)
    if tb is None or is_constant_zero(tb):  # a constant exponent: skip 0 * log(a < 0) = nan
        return t
    return t + tb * out * a.log()


register("pow", vjp=pow_vjp, jvp=pow_jvp, saves=(0, 1, "out"))

# ------------------------------------------------------- maximum, minimum
# kernels: chapters.graph.ops.maximum, chapters.graph.ops.minimum


def _select_vjp(pick_a: np.ndarray, tie: np.ndarray, g):
    """g to the selected input; on a tie half to each (torch's choice)."""
    ga = masked(g, pick_a) + masked(g, tie) * 0.5
    gb = masked(g, ~(pick_a | tie)) + masked(g, tie) * 0.5
    return ga, gb


def _select_jvp(pick_a, tie, ta, tb):
    """tz = ta where a is selected, tb where b is, their mean on a tie."""
    return masked(ta, pick_a | tie) * np.where(tie, 0.5, 1.0).astype(ta.data.dtype) + masked(
        tb, ~pick_a | tie) * np.where(tie, 0.5, 1.0).astype(tb.data.dtype)


def maximum_vjp(ctx, g):
    """z = max(a, b): g goes to the larger input; on a tie half to each (torch)."""
    a, b = (data_of(x) for x in ctx.saved)
    return _select_vjp(a > b, a == b, g)


def maximum_jvp(primals, tangents, out):
    """tz = the tangent of the larger input (their mean on a tie)."""
    a, b = (p.data for p in primals)
    return _select_jvp(a > b, a == b, *tangents)


def minimum_vjp(ctx, g):
    """z = min(a, b): g goes to the smaller input; on a tie half to each (torch)."""
    a, b = (data_of(x) for x in ctx.saved)
    return _select_vjp(a < b, a == b, g)


def minimum_jvp(primals, tangents, out):
    """tz = the tangent of the smaller input (their mean on a tie)."""
    a, b = (p.data for p in primals)
    return _select_jvp(a < b, a == b, *tangents)


register("maximum", vjp=maximum_vjp, jvp=maximum_jvp, saves=(0, 1), movement=True)
register("minimum", vjp=minimum_vjp, jvp=minimum_jvp, saves=(0, 1), movement=True)

# ----------------------------------------------------------------- where
# kernel: chapters.graph.ops.where (np.where)


def where_vjp(ctx, g):
    """z = cond ? a : b:  dL/da = g where cond,  dL/db = g where not cond."""
    (cond,) = ctx.saved
    c = data_of(cond)
    _, need_a, need_b = ctx.needs_input_grad
    return None, (masked(g, c) if need_a else None), (masked(g, ~c) if need_b else None)


def where_jvp(primals, tangents, out):
    """tz = cond ? ta : tb."""
    c = primals[0].data
    return masked(tangents[1], c) + masked(tangents[2], ~c)


register("where", vjp=where_vjp, jvp=where_jvp, saves=(0,), movement=True)

# ----------------------------------------------------------- comparisons
# kernels: chapters.graph.ops (eq, ne, lt, le, gt, ge). A bool result carries
# no gradient, so they need no rule; they compare the stored values as they are.

for _name in ("eq", "ne", "lt", "le", "gt", "ge"):
    register(_name, movement=True)

# --------------------------------------------------------------- dropout


def _dropout_meta(x: TensorMeta, scale: TensorMeta, **_) -> TensorMeta:
    return x


@register_op("dropout", _dropout_meta, elementwise=True)
def dropout(x, scale):
    """x * scale, where scale is 0 for dropped elements and 1/(1-p) for kept ones."""
    return x * scale


def dropout_vjp(ctx, g):
    """y = x * scale (0 or 1/(1-p), drawn once in forward):  dL/dx = g * scale."""
    (scale,) = ctx.saved
    return g * scale, None


def dropout_jvp(primals, tangents, out):
    """ty = tx * scale."""
    return tangents[0] * primals[1]


register("dropout", vjp=dropout_vjp, jvp=dropout_jvp, saves=(1,), movement=True)
