"""Two-input math: atan2, hypot, fmax, fmin, xlogy, logaddexp (kernels and
rules); float_power (a composition) and its in-place form.

Each kernel takes its operands promoted to one dtype (torch's type
promotion, :func:`~chapters.autodiff.core.operands`) and broadcast. The
partial derivatives, for z = f(a, b):

    atan2(a, b)    = the angle of the point (b, a)   dz/da =  b / (a^2 + b^2),
                                                     dz/db = -a / (a^2 + b^2)  (0 at the origin)
    hypot(a, b)    = sqrt(a^2 + b^2)                 dz/da = a / z,  dz/db = b / z  (NaN at 0)
    fmax(a, b)     = max(a, b), ignoring a NaN       dz/da = 1 where a >= b or b is NaN, else
                                                     dz/db = 1 (a tie goes to a; fmin alike)
    xlogy(a, b)    = a ln b, 0 where a = 0           dz/da = ln b  (0 where a = 0, b <= 0),
                                                     dz/db = a / b
    logaddexp(a, b) = ln(e^a + e^b)                  dz/da = sigmoid(a - b),  dz/db = sigmoid(b - a)

as torch defines them, edges included (each rule's docstring says which).
"""

from __future__ import annotations

import numpy as np

from chapters.graph.ops import TensorMeta, broadcast_shapes, float_dtype, register_op

from .. import dtypes
from ..core import operands
from ..dispatch import PROMOTE, public
from ..functions import where
from ..rules import register
from ..tensor import Tensor, apply, tensor_method
from .common import masked


def _float_meta(op: str):
    def infer(a: TensorMeta, b: TensorMeta, **_) -> TensorMeta:
        return TensorMeta(broadcast_shapes(op, a.shape, b.shape), float_dtype(a.dtype))

    return infer


def _same_meta(op: str):
    def infer(a: TensorMeta, b: TensorMeta, **_) -> TensorMeta:
        return TensorMeta(broadcast_shapes(op, a.shape, b.shape), a.dtype)

    return infer


def _quiet(fn):
    """numpy's math on (a, b) without its warnings for log(0), 0/0 and the like:
    the IEEE results (inf, NaN) are the values torch gives there."""

    def kernel(a, b):
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return fn(a, b)

    kernel.__name__, kernel.__doc__ = fn.__name__, fn.__doc__
    return kernel


def require_tensor(op: str, other) -> None:
    if not isinstance(other, Tensor):
        raise TypeError(f"{op}(): argument 'other' must be a Tensor, not "
                        f"{type(other).__name__}; wrap a number first, e.g. "
                        f"torch.{op}(x, torch.tensor(2.0)).")


def _promoted(op: str, input, other, *, floating_only: bool = False) -> tuple:
    """Both operands in their promoted dtype; ``floating_only`` refuses integer
    and bool results with torch's NotImplementedError."""
    require_tensor(op, other)
    a, b = operands(input, other)
    if floating_only:
        dtypes.check_implemented(op, a.dtype, bool_ok=False, integer_ok=False)
    return a, b


# ------------------------------------------------------------------ atan2


@register_op("atan2", _float_meta("atan2"), elementwise=True)
@_quiet
def _atan2(a, b):
    """The angle in (-pi, pi] of the point (x = b, y = a) (signed zeros count)."""
    dtype = float_dtype(a.dtype)
    return np.arctan2(a.astype(dtype, copy=False), b.astype(dtype, copy=False))


def atan2_vjp(ctx, g):
    """dL/da = g b / r^2,  dL/db = -g a / r^2 with r^2 = a^2 + b^2; torch
    gives 0 at the origin, where r^2 = 0 (r^2 is replaced by 1 there, then masked)."""
    a, b = ctx.saved
    r2 = a * a + b * b
    at_origin = r2.data == 0
    scale = where(at_origin, 0.0, g / where(at_origin, 1.0, r2))
    return scale * b, -scale * a


def atan2_jvp(primals, tangents, out):
    """tz = (b ta - a tb) / (a^2 + b^2), 0 at the origin."""
    (a, b), (ta, tb) = primals, tangents
    r2 = a * a + b * b
    at_origin = r2.data == 0
    return where(at_origin, 0.0, (b * ta - a * tb) / where(at_origin, 1.0, r2))


register("atan2", vjp=atan2_vjp, jvp=atan2_jvp, saves=(0, 1))


@tensor_method("arctan2")
@public("atan2", autocast={"cuda": PROMOTE})
def atan2(input, other):
    """torch.atan2: the angle of the point (other, input), elementwise (integers
    give float32)."""
    return apply("atan2", _promoted("atan2", input, other))


arctan2 = atan2

# ------------------------------------------------------------------ hypot


@register_op("hypot", _same_meta("hypot"), elementwise=True)
@_quiet
def _hypot(a, b):
    """sqrt(a^2 + b^2) without overflow in a^2 (numpy's hypot)."""
    return np.hypot(a, b)


def hypot_vjp(ctx, g):
    """dL/da = g a / z,  dL/db = g b / z (NaN at a = b = 0, as in torch)."""
    a, b, z = ctx.saved
    return g * a / z, g * b / z


def hypot_jvp(primals, tangents, out):
    """tz = (a ta + b tb) / z."""
    (a, b), (ta, tb) = primals, tangents
    return (a * ta + b * tb) / out


register("hypot", vjp=hypot_vjp, jvp=hypot_jvp, saves=(0, 1, "out"))


@tensor_method()
@public("hypot")
def hypot(input, other):
    """torch.hypot: sqrt(input^2 + other^2) elementwise (floating tensors only)."""
    return apply("hypot", _promoted("hypot", input, other, floating_only=True))


# ------------------------------------------------------------ fmax, fmin


def _fmax_picks_a(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a >= b) | np.isnan(b)


def _fmin_picks_a(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a <= b) | np.isnan(b)


def _nan_ignoring(op: str, ufunc, picks_a):
    """Register ``op`` (numpy's fmax or fmin): the larger (smaller) value, the
    other one where one is NaN, NaN only where both are. dL/da = g where a is
    picked (a tie or a NaN b picks a, as torch), dL/db = g elsewhere."""

    def vjp(ctx, g):
        pick = picks_a(*(x.data for x in ctx.saved))
        return masked(g, pick), masked(g, ~pick)

    def jvp(primals, tangents, out):
        return where(picks_a(*(p.data for p in primals)), *tangents)

    def method(input, other):
        return apply(op, _promoted(op, input, other))

    vjp.__doc__ = f"z = {op}(a, b): g to a where a is picked (ties and NaN b), else to b."
    jvp.__doc__ = "tz = ta where a is picked, else tb."
    method.__doc__ = f"torch.{op}: elementwise {op[1:]}imum; a NaN loses to a number."
    for f, name in ((vjp, f"{op}_vjp"), (jvp, f"{op}_jvp"), (method, op)):
        f.__name__ = f.__qualname__ = name
    register_op(op, _same_meta(op), elementwise=True)(ufunc)
    register(op, vjp=vjp, jvp=jvp, saves=(0, 1), movement=True)
    return tensor_method()(public(op)(method))


fmax = _nan_ignoring("fmax", np.fmax, _fmax_picks_a)
fmin = _nan_ignoring("fmin", np.fmin, _fmin_picks_a)

# ------------------------------------------------------------------ xlogy


@register_op("xlogy", _float_meta("xlogy"), elementwise=True)
@_quiet
def _xlogy(a, b):
    """a ln b, and 0 where a = 0 unless b is NaN."""
    dtype = float_dtype(a.dtype)
    a, b = a.astype(dtype, copy=False), b.astype(dtype, copy=False)
    return np.where((a == 0) & ~np.isnan(b), np.zeros((), dtype), a * np.log(b))


def xlogy_vjp(ctx, g):
    """dL/da = g ln b (0 where a = 0 and b <= 0, torch's choice),  dL/db = g a / b."""
    a, b = ctx.saved
    with np.errstate(divide="ignore", invalid="ignore"):
        ga = where((a.data == 0) & (b.data <= 0), 0.0, g * b.log())
        return ga, g * a / b


def xlogy_jvp(primals, tangents, out):
    """tz = ta ln b + a tb / b (ta ln b is 0 where a = 0 and b <= 0)."""
    (a, b), (ta, tb) = primals, tangents
    with np.errstate(divide="ignore", invalid="ignore"):
        return where((a.data == 0) & (b.data <= 0), 0.0, ta * b.log()) + a * tb / b


register("xlogy", vjp=xlogy_vjp, jvp=xlogy_jvp, saves=(0, 1))


@tensor_method()
@public("xlogy")
def xlogy(input, other):
    """torch.xlogy: input * ln(other), 0 where input is 0 (unless other is NaN);
    either side may be a Python number."""
    pair = operands(other, input)[::-1] if not isinstance(input, Tensor) else operands(
        input, other)
    return apply("xlogy", tuple(x if isinstance(x, Tensor) else Tensor(x) for x in pair))


# -------------------------------------------------------------- logaddexp


@register_op("logaddexp", _same_meta("logaddexp"), elementwise=True)
@_quiet
def _logaddexp(a, b):
    """ln(e^a + e^b), computed as max + ln(1 + e^-|a - b|) (numpy's logaddexp)."""
    return np.logaddexp(a, b)


def logaddexp_vjp(ctx, g):
    """dL/da = g e^a / (e^a + e^b) = g sigmoid(a - b),  dL/db = g sigmoid(b - a)."""
    a, b = ctx.saved
    return g * (a - b).sigmoid(), g * (b - a).sigmoid()


def logaddexp_jvp(primals, tangents, out):
    """tz = ta sigmoid(a - b) + tb sigmoid(b - a)."""
    (a, b), (ta, tb) = primals, tangents
    return ta * (a - b).sigmoid() + tb * (b - a).sigmoid()


register("logaddexp", vjp=logaddexp_vjp, jvp=logaddexp_jvp, saves=(0, 1))


@tensor_method()
@public("logaddexp")
def logaddexp(input, other):
    """torch.logaddexp: ln(e^input + e^other) without overflow (floating tensors only)."""
    return apply("logaddexp", _promoted("logaddexp", input, other, floating_only=True))


# ------------------------------------------------------------ float_power


@tensor_method()
@public("float_power")
def float_power(input, exponent):
    """torch.float_power: input ** exponent computed in float64 whatever the
    dtypes; a composition of a cast and pow (gradients come back in each
    input's own dtype). Either side may be a Python number."""
    if not isinstance(input, Tensor):
        return float(input) ** exponent.double()
    power = exponent.double() if isinstance(exponent, Tensor) else float(exponent)
    return input.double().pow(power)


@tensor_method()
def float_power_(self, exponent):
    """``x.float_power_(y)``: float_power written into x, which must be float64
    (torch refuses any other dtype, since the result is float64)."""
    if self.dtype != np.float64:
        raise RuntimeError(f"float_power_: the base has dtype {self.dtype} but the result is "
                           "float64; use the out-of-place x.float_power(y), or x.double() first.")
    self._check_inplace("float_power_", exponent if isinstance(exponent, Tensor) else None)
    return self.copy_(float_power(self.detach(), exponent))
