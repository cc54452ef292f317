"""logcumsumexp: running log-sum-exp along one dim, with its own rule.

z_i = log(e^{x_1} + ... + e^{x_i}). Computed as a running ``logaddexp``
(log(e^a + e^b) = max(a, b) + log1p(e^{-|a - b|})), no exponential can
overflow, and a prefix of very negative values keeps its value instead of
becoming log 0 (which a single shift by the slice's max would give).

The derivative: dz_i/dx_j = e^{x_j - z_i} for j <= i (a softmax over the
prefix). Its sums are run as logcumsumexp again, on the logarithm of
positive weights (g shifted by a constant, minus the constant's share), so
the rule is as stable as the forward and differentiable again.
"""

from __future__ import annotations

import numpy as np

from chapters.graph.ops import TensorMeta, float_dtype, normalize_dims, register_op

from .. import dtypes
from ..dispatch import public
from ..rules import register
from ..tensor import apply, tensor_method


def _meta(x: TensorMeta, dim, reverse=False, **_) -> TensorMeta:
    normalize_dims("logcumsumexp", dim, max(len(x.shape), 1))
    return TensorMeta(x.shape, float_dtype(x.dtype))


@register_op("logcumsumexp", _meta)
def logcumsumexp_kernel(x, dim, reverse=False):
    """z_i = logaddexp(z_{i-1}, x_i) along ``dim`` (from the end when ``reverse``)."""
    a = np.atleast_1d(x.astype(float_dtype(x.dtype), copy=False))
    (d,) = normalize_dims("logcumsumexp", dim, a.ndim)
    if reverse:
        return np.flip(np.logaddexp.accumulate(np.flip(a, d), axis=d), d).reshape(x.shape)
    return np.logaddexp.accumulate(a, axis=d).reshape(x.shape)


def _shift(h) -> float:
    """A constant c with h + c >= 1 everywhere, so log(h + c) is finite."""
    return float(np.abs(h.data).max(initial=0.0)) + 1.0


def _weighted_suffix_sums(x, z, h, dim, reverse):
    """sum over i >= j (i <= j when ``reverse``) of h_i e^{x_j - z_i}, for
    h > 0: e^{x_j + logcumsumexp(log h - z)}, the inner scan run the other way."""
    logs = h.log() - z
    return (x + apply("logcumsumexp", (logs,), {"dim": dim, "reverse": not reverse})).exp()


def logcumsumexp_vjp(ctx, g):
    """z_i = log sum_{j<=i} e^{x_j}:  dL/dx_j = sum_{i>=j} g_i e^{x_j - z_i}.
    The sum is taken in log space, which needs positive weights: it is run for
    g + c and for c (c a constant above |g|) and the two are subtracted."""
    x, z = ctx.saved
    dim, reverse = ctx.attrs["dim"], ctx.attrs["reverse"]
    c = _shift(g)
    return (_weighted_suffix_sums(x, z, g + c, dim, reverse)
            - _weighted_suffix_sums(x, z, g * 0 + c, dim, reverse),)


def logcumsumexp_jvp(primals, tangents, out, dim, reverse=False):
    """tz_i = sum_{j<=i} e^{x_j - z_i} tx_j = e^{logcumsumexp(x + log tx) - z},
    run for tx + c and for c (positive weights), then subtracted."""
    x, t = primals[0], tangents[0]
    c = _shift(t)

    def part(h):
        logs = x + h.log()
        return (apply("logcumsumexp", (logs,), {"dim": dim, "reverse": reverse}) - out).exp()

    return part(t + c) - part(t * 0 + c)


register("logcumsumexp", vjp=logcumsumexp_vjp, jvp=logcumsumexp_jvp, saves=(0, "out"))


@tensor_method()
@public("logcumsumexp")
def logcumsumexp(input, dim: int):
    """torch.logcumsumexp: z_i = log(e^{x_1} + ... + e^{x_i}) along ``dim``
    (floating inputs only, as torch's CPU kernel)."""
    dtypes.check_implemented("logcumsumexp", input.dtype, bool_ok=False, integer_ok=False)
    (d,) = normalize_dims("logcumsumexp", dim, max(input.ndim, 1))
    return apply("logcumsumexp", (input,), {"dim": d, "reverse": False})
