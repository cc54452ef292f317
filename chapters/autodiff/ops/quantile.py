"""quantile and nanquantile: a composition of sort, gather and arithmetic.

The q-quantile of n sorted values v_0 <= ... <= v_{n-1} sits at the rank
r = q (n - 1). When r falls between two positions, ``interpolation`` says
what to return: linear v_lo + (r - lo)(v_hi - v_lo), lower v_lo, higher
v_hi, midpoint (v_lo + v_hi) / 2, nearest v at r rounded (half to even, as
torch rounds). The sorted values are a ``sort`` (a gather), so the gradient
reaches the two elements that were read, weighted as they were combined;
no new rule is needed.

NaN sorts last. quantile returns NaN for a slice holding NaN (its rank is
moved onto the last, NaN, position); nanquantile ranks the numbers only,
and is NaN only for a slice with no numbers.
"""

from __future__ import annotations

import numpy as np

from chapters.graph.ops import normalize_dims

from ..dispatch import FLOAT32, public
from ..tensor import Tensor, apply, tensor_method

INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _check(op: str, input, q, interpolation: str) -> np.ndarray:
    """The q values as a 1-D float64 array, after torch's checks."""
    if input.dtype not in (np.float32, np.float64):
        raise RuntimeError(f"{op}() input tensor must be either float or double dtype, got "
                           f"{input.dtype}; convert first, e.g. x.float().")
    if input.numel() == 0:
        raise RuntimeError(f"{op}() input tensor must be non-empty; a quantile needs at "
                           "least one value.")
    if isinstance(q, Tensor):
        if q.ndim > 1:
            raise RuntimeError(f"{op}() q must be a scalar or 1D tensor, got shape "
                               f"{list(q.shape)}; flatten it first (q.reshape(-1)).")
        if q.dtype != input.dtype:
            raise RuntimeError(f"{op}() q tensor must be same dtype as the input tensor "
                               f"({q.dtype} vs {input.dtype}); convert it, q.to(x.dtype).")
    qs = np.atleast_1d(np.asarray(q.data if isinstance(q, Tensor) else q, np.float64))
    bad = qs[~((qs >= 0) & (qs <= 1))]
    if bad.size:
        raise RuntimeError(f"{op}() q must be in the range [0, 1] but got {bad[0]}")
    if interpolation not in INTERPOLATIONS:
        raise RuntimeError(f"{op}() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    return qs


def _ranks(ordered: np.ndarray, d: int, qs: np.ndarray, ignore_nan: bool) -> np.ndarray:
    """r = q (n - 1) for each q, stacked along ``d``. nanquantile counts the
    numbers only (a slice of NaNs only reads its first NaN, as torch does);
    quantile counts every value, and a slice holding NaN reads the last
    position, where NaN sorts."""
    size = ordered.shape[d]
    numbers = np.sum(~np.isnan(ordered), axis=d, keepdims=True)
    shape = [1] * ordered.ndim
    shape[d] = len(qs)
    if ignore_nan:
        return qs.reshape(shape) * np.maximum(numbers - 1, 0)
    return np.where(numbers < size, size - 1, qs.reshape(shape) * (size - 1))


def _interpolate(ordered: Tensor, d: int, ranks: np.ndarray, interpolation: str) -> Tensor:
    """Read the sorted values at the ranks (a gather) and combine them."""
    if interpolation == "nearest":
        ranks = np.round(ranks)  # half to even, as torch
    lo, hi = np.floor(ranks).astype(np.int64), np.ceil(ranks).astype(np.int64)
    below = apply("gather", (ordered,), {"dim": d, "index": lo})
    if interpolation in ("lower", "nearest"):
        return below
    above = apply("gather", (ordered,), {"dim": d, "index": hi})
    if interpolation == "higher":
        return above
    if interpolation == "midpoint":
        return below + (above - below) * 0.5
    return below + (above - below) * Tensor((ranks - lo).astype(ordered.dtype))


def _quantile(op: str, input, q, dim, keepdim: bool, interpolation: str, ignore_nan: bool):
    qs = _check(op, input, q, interpolation)
    x = input.reshape(-1) if dim is None or input.ndim == 0 else input
    (d,) = normalize_dims(op, 0 if dim is None else dim, max(input.ndim, 1))
    ordered = x.sort(d).values
    out = _interpolate(ordered, d, _ranks(ordered.data, d, qs, ignore_nan), interpolation)
    out = out.movedim(d, 0)  # (len(q), the other dims)
    if keepdim:
        kept = [1 if dim is None or i == d else n for i, n in enumerate(input.shape)]
        out = out.reshape(len(qs), *kept)
    scalar_q = not isinstance(q, Tensor) or q.ndim == 0
    return out.squeeze(0) if scalar_q else out


@tensor_method()
@public("quantile", autocast={"cpu": FLOAT32})
def quantile(input, q, dim=None, keepdim: bool = False, *, interpolation: str = "linear"):
    """torch.quantile: the q-quantiles of ``input`` (all elements, or each
    slice along ``dim``); a 1-D q adds a leading dim, one entry per q."""
    return _quantile("quantile", input, q, dim, keepdim, interpolation, ignore_nan=False)


@tensor_method()
@public("nanquantile", autocast={"cpu": FLOAT32})
def nanquantile(input, q, dim=None, keepdim: bool = False, *, interpolation: str = "linear"):
    """torch.nanquantile: quantile over the values that are not NaN."""
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, ignore_nan=True)
