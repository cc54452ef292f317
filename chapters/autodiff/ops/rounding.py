"""Rounding and integer-style division: floor, ceil, trunc, round, frac,
remainder (``%``), fmod, floor_divide (``//``) and ``div(rounding_mode=)``.

A rounding function is piecewise constant, so its derivative is 0 wherever
it exists (torch returns zeros, not "no gradient"); frac(x) = x - trunc(x)
has derivative 1. The two remainders are a - q b with q = floor(a / b)
(``remainder``, the sign of b, Python's ``%``) or q = trunc(a / b) (``fmod``,
the sign of a, C's ``%``); q is locally constant, so dL/da = g and
dL/db = -q g. Integer inputs stay integers, and an integer division by zero
raises, as in torch.
"""

from __future__ import annotations

import numpy as np

from chapters.graph.ops import TensorMeta, broadcast_shapes, register_op, same_meta

from ..core import operands
from ..dispatch import public
from ..dtypes import bool_, check_implemented, is_floating
from ..rules import register
from ..tensor import Tensor, apply, tensor_method
from .common import data_of

# ------------------------------------------------- floor, ceil, trunc, round

_ROUNDERS = {"floor": np.floor, "ceil": np.ceil, "trunc": np.trunc}


def zero_vjp(ctx, g):
    """z is piecewise constant in every input:  dL/dx = 0 for each input that
    needs a gradient (torch's zeros, not None)."""
    return tuple(g.new_zeros(g.shape) if need else None for need in ctx.needs_input_grad)


def zero_jvp(primals, tangents, out, **attrs):
    """tz = 0."""
    return out.new_zeros(out.shape).to(tangents[0].dtype if tangents[0] is not None
                                       else out.dtype)


def _rounding_kernel(op: str, fn):
    def kernel(x):
        return x.copy() if x.dtype.kind in "iu" else fn(x)

    kernel.__name__ = kernel.__qualname__ = op
    kernel.__doc__ = f"numpy's {fn.__name__} on floats; integers are already {op}ed."
    return kernel


for _op, _fn in _ROUNDERS.items():
    register_op(_op, same_meta, elementwise=True)(_rounding_kernel(_op, _fn))
    register(_op, vjp=zero_vjp, jvp=zero_jvp)


@register_op("round", same_meta, elementwise=True)
def _round(x, decimals=0):
    """Round half to even (0.5 -> 0, 1.5 -> 2), at ``decimals`` digits."""
    return x.copy() if x.dtype.kind in "iu" else np.round(x, decimals)


register("round", vjp=zero_vjp, jvp=zero_jvp)


def _no_bool(op: str, x: Tensor) -> None:
    if x.dtype == bool_:
        raise NotImplementedError(f"{op} is not implemented for bool tensors (as in torch); "
                                  "convert first, e.g. x.float() or x.long().")


def _rounding_method(op: str):
    def method(input):
        _no_bool(op, input)
        return apply(op, (input,))

    method.__name__ = method.__qualname__ = op
    method.__doc__ = f"torch.{op}: {op} elementwise; integer tensors are returned unchanged."
    return tensor_method(*(("fix",) if op == "trunc" else ()))(public(op)(method))


floor, ceil, trunc = (_rounding_method(op) for op in _ROUNDERS)
fix = trunc


@tensor_method()
@public("round")
def round(input, *, decimals: int = 0):
    """torch.round: to the nearest integer, ties to even (or to ``decimals`` digits)."""
    _no_bool("round", input)
    if decimals:  # torch rounds integers to whole numbers only
        check_implemented("round(decimals=...)", input.dtype, integer_ok=False)
    return apply("round", (input,), {"decimals": decimals})


# ------------------------------------------------------------------- frac


@register_op("frac", same_meta, elementwise=True)
def _frac(x):
    """x - trunc(x): the fractional part, with the sign of x."""
    return x - np.trunc(x)


def frac_vjp(ctx, g):
    """z = x - trunc(x):  dL/dx = g (trunc contributes 0)."""
    return (g,)


def frac_jvp(primals, tangents, out):
    """tz = tx."""
    return tangents[0]


register("frac", vjp=frac_vjp, jvp=frac_jvp)


@tensor_method()
@public("frac")
def frac(input):
    """torch.frac: x - trunc(x), for floating tensors only (as in torch)."""
    if not is_floating(input.dtype):
        raise NotImplementedError(f"frac is only defined for floating tensors, got "
                                  f"{input.dtype}; use input.float().frac().")
    return apply("frac", (input,))


# --------------------------------------------------- remainder, fmod, //


def _binary_meta(op: str):
    def infer(a: TensorMeta, b: TensorMeta, **_) -> TensorMeta:
        return TensorMeta(broadcast_shapes(op, a.shape, b.shape), a.dtype)

    return infer


def _check_divisor(op: str, b: np.ndarray) -> None:
    """torch divides no bools here, and refuses an integer division by zero
    (numpy would return 0)."""
    check_implemented(op, b.dtype, bool_ok=False)
    if b.dtype.kind in "iu" and not np.all(b):
        raise RuntimeError("ZeroDivisionError: integer division or remainder by zero; "
                           "divide floating tensors to get inf/nan instead.")


def _trunc_divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The quotient rounded toward zero, exact for integers."""
    if a.dtype.kind in "iu":
        q = np.abs(a) // np.abs(b)
        return np.where((a < 0) != (b < 0), -q, q).astype(a.dtype, copy=False)
    return np.trunc(a / b)


@register_op("remainder", _binary_meta("remainder"), elementwise=True)
def _remainder(a, b):
    """a - floor(a / b) b: the result has the sign of b (Python's %)."""
    _check_divisor("remainder", b)
    return np.remainder(a, b)


@register_op("fmod", _binary_meta("fmod"), elementwise=True)
def _fmod(a, b):
    """a - trunc(a / b) b: the result has the sign of a (C's %)."""
    _check_divisor("fmod", b)
    return np.fmod(a, b)


def _remainder_rules(op: str, rounder):
    """The VJP and JVP of ``op`` = a - q b with q = rounder(a / b)."""

    def quotient(a, b, dtype) -> np.ndarray:
        """q in float64 (numpy has no floor for bfloat16), returned in ``dtype``."""
        a, b = (data_of(x).astype(np.float64) for x in (a, b))
        return rounder(a / b).astype(dtype)

    def vjp(ctx, g):
        q = quotient(*ctx.saved, g.dtype)
        return g, (g * -q if ctx.needs_input_grad[1] else None)

    def jvp(primals, tangents, out):
        return tangents[0] - tangents[1] * quotient(*primals, out.dtype)

    vjp.__doc__ = (f"z = a - q b, q = {rounder.__name__}(a / b), locally constant:  "
                   "dL/da = g,  dL/db = -q g.")
    jvp.__doc__ = "tz = ta - q tb."
    vjp.__name__, jvp.__name__ = f"{op}_vjp", f"{op}_jvp"
    return vjp, jvp


for _op, _rounder in (("remainder", np.floor), ("fmod", np.trunc)):
    _vjp, _jvp = _remainder_rules(_op, _rounder)
    register(_op, vjp=_vjp, jvp=_jvp, saves=(0, 1), grad_fn=f"{_op.capitalize()}Backward1")


@register_op("div_rounded", _binary_meta("div"), elementwise=True)
def _div_rounded(a, b, rounding_mode):
    """a / b rounded down (``"floor"``) or toward zero (``"trunc"``); the
    kernel of ``div(a, b, rounding_mode=)``, called by :meth:`Tensor.div`."""
    if rounding_mode not in ("floor", "trunc"):
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or "
                           f"'floor' but found {rounding_mode!r}")
    _check_divisor(f"div(rounding_mode={rounding_mode!r})", b)
    if rounding_mode == "floor":
        return np.floor_divide(a, b)
    return _trunc_divide(a, b)


register("div_rounded", vjp=zero_vjp, jvp=zero_jvp, grad_fn="DivBackward2")


def _binary(op: str, input, other, attrs: dict | None = None) -> Tensor:
    """Run ``op`` on both operands promoted; either may be a Python number."""
    if isinstance(input, Tensor):
        a, b = operands(input, other)
    else:
        b, a = operands(other, input)
    return apply(op, (a, b), attrs)


@tensor_method("__mod__")
@public("remainder")
def remainder(input, other):
    """torch.remainder (``%``): input - floor(input / other) other, the sign of other."""
    return _binary("remainder", input, other)


@tensor_method()
@public("fmod")
def fmod(input, other):
    """torch.fmod: input - trunc(input / other) other, the sign of input."""
    return _binary("fmod", input, other)


@tensor_method("__floordiv__")
@public("floor_divide")
def floor_divide(input, other):
    """torch.floor_divide (``//``): input / other rounded down. Its gradient
    is 0, as for ``div(rounding_mode="floor")`` (torch refuses to
    differentiate ``//`` itself)."""
    return _binary("div_rounded", input, other, {"rounding_mode": "floor"})


@tensor_method()
@public("remainder")
def __rmod__(self, other):
    return _binary("remainder", other, self)


@tensor_method()
@public("floor_divide")
def __rfloordiv__(self, other):
    return _binary("div_rounded", other, self, {"rounding_mode": "floor"})
