"""The normal distribution's functions: erf, Phi and GELU.

erf(x) = 2/sqrt(pi) * integral_0^x e^(-t^2) dt; Phi(x) = (1 + erf(x / sqrt 2)) / 2
is the standard normal CDF (``normal_cdf``, the op GELU's rules use), phi(x) =
e^(-x^2 / 2) / sqrt(2 pi) its density, and GELU(x) = x Phi(x). Their float32
kernels are fitted polynomials, in :mod:`.erf_kernel`.
"""

from __future__ import annotations

import math

import numpy as np

from chapters.graph.ops import float_dtype, floating_meta, register_op

from ..rules import FULL_PRECISION, register
from ..tensor import Tensor, apply
from . import erf_kernel

# -------------------------------------------------------------------- erf


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


@register_op("normal_cdf", floating_meta, elementwise=True)
def normal_cdf(x):
    """Phi(x) = (1 + erf(x / sqrt 2)) / 2, the standard normal CDF, to float32's
    absolute accuracy (what GELU needs; see :mod:`.erf_kernel`)."""
    return erf_kernel.normal_cdf(x).astype(float_dtype(x.dtype), copy=False)


def _normal_pdf(x: Tensor) -> Tensor:
    """phi(x) = e^(-x^2 / 2) / sqrt(2 pi), the derivative of Phi."""
    return (-0.5 * x * x).exp() * (1 / math.sqrt(2 * math.pi))


def normal_cdf_vjp(ctx, g):
    """z = Phi(x):  dL/dx = g phi(x)."""
    (x,) = ctx.saved
    return (g * _normal_pdf(x),)


def normal_cdf_jvp(primals, tangents, out):
    """tz = phi(x) tx."""
    return tangents[0] * _normal_pdf(primals[0])


register("normal_cdf", vjp=normal_cdf_vjp, jvp=normal_cdf_jvp, saves=(0,))

_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)


def _tanh_of_u(x: np.ndarray) -> np.ndarray:
    """tanh(sqrt(2/pi) (x + 0.044715 x^3)) in one new buffer, in the order of the tanh
    rule's ops (x * x * x: numpy's float32 pow is many times slower)."""
    t = np.multiply(x, 0.044715, out=np.empty_like(x))  # an array also when x is 0-d
    t *= x
    t *= x
    t += x
    t *= _SQRT_2_OVER_PI
    return np.tanh(t, out=t)


@register_op("gelu", floating_meta, elementwise=True)
def gelu(x, approximate="none"):
    """x * Phi(x), Phi the standard normal CDF; ``approximate="tanh"`` uses
    0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
    if approximate == "tanh":
        out = _tanh_of_u(x)
        out += 1
        out *= x
        out *= 0.5
        return out
    phi = erf_kernel.normal_cdf(x)
    phi *= x
    return phi.astype(x.dtype, copy=False)


def gelu_derivative(x: Tensor, approximate: str) -> Tensor:
    """d gelu / dx. Exact: Phi(x) + x phi(x). Tanh form, with
    u = sqrt(2/pi)(x + 0.044715 x^3) and t = tanh u:
    0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2/pi) (1 + 3 * 0.044715 x^2)."""
    if approximate == "tanh":
        k = _SQRT_2_OVER_PI
        t = (k * (x + 0.044715 * x * x * x)).tanh()
        return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * 0.044715 * x * x)
    return apply("normal_cdf", (x,)) + x * _normal_pdf(x)


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
    if ctx.attrs.get("approximate", "none") == "tanh":  # the rule's ops, in three buffers
        t = _tanh_of_u(x)
        slope = x * 0.5
        square = t * t
        np.subtract(1, square, out=square)
        slope *= square
        slope *= _SQRT_2_OVER_PI
        np.multiply(x, 3 * 0.044715, out=square)
        square *= x
        square += 1
        slope *= square
        t += 1
        t *= 0.5
        t += slope
        t *= g
        return (t,)
    derivative = erf_kernel.normal_cdf(x)
    pdf = x * -0.5  # then e^(-x^2 / 2) / sqrt(2 pi), as _normal_pdf
    pdf *= x
    np.exp(pdf, out=pdf)
    pdf *= 1 / math.sqrt(2 * math.pi)
    pdf *= x
    derivative += pdf
    derivative *= g
    return (derivative,)


register("gelu", vjp=gelu_vjp, jvp=gelu_jvp, saves=(0,), vjp_fast=gelu_vjp_fast)
