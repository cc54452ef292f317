"""Whole-tensor comparisons (allclose, equal) and one-sided clamps.

``allclose`` and ``equal`` answer one question about two tensors with a
Python bool, so they sit outside autograd (no tensor comes out):

    allclose(a, b)  <=>  |a - b| <= atol + rtol |b| for every element (broadcast),
    equal(a, b)     <=>  same shape and a_i == b_i for every i (NaN equals nothing).

``clamp_min(x, lo)`` is max(x, lo) and ``clamp_max(x, hi)`` is min(x, hi):
``clamp`` with one bound, so they share its rule (the gradient passes where
the bound does not bite, the bound itself included).
"""

from __future__ import annotations

import numpy as np

from ..dispatch import public
from ..tensor import Tensor, tensor_method
from .elementwise import isclose


def _require_tensor(op: str, other) -> None:
    if not isinstance(other, Tensor):
        raise TypeError(f"{op}(): argument 'other' must be a Tensor, not "
                        f"{type(other).__name__}; wrap it first, e.g. torch.tensor(value).")


@tensor_method()
@public("allclose")
def allclose(input, other, rtol: float = 1e-5, atol: float = 1e-8,
             equal_nan: bool = False) -> bool:
    """torch.allclose: whether ``isclose`` holds everywhere (the tensors
    broadcast and must share one dtype, as in isclose)."""
    _require_tensor("allclose", other)
    return bool(isclose(input, other, rtol, atol, equal_nan).data.all())


@tensor_method()
@public("equal")
def equal(input, other) -> bool:
    """torch.equal: the same shape and the same values (compared after type
    promotion, so float32 1.0 equals float64 1.0; no broadcasting)."""
    _require_tensor("equal", other)
    return input.shape == other.shape and bool(np.all(input.data == other.data))


@tensor_method()
@public("clamp_min")
def clamp_min(input, min):
    """torch.clamp_min: max(x, min), ``clamp`` with a lower bound only."""
    if min is None:
        raise TypeError("clamp_min(): min must be a number or a tensor, not None; use "
                        "clamp(max=...) for an upper bound alone.")
    return input.clamp(min=min)


@tensor_method()
@public("clamp_max")
def clamp_max(input, max):
    """torch.clamp_max: min(x, max), ``clamp`` with an upper bound only."""
    if max is None:
        raise TypeError("clamp_max(): max must be a number or a tensor, not None; use "
                        "clamp(min=...) for a lower bound alone.")
    return input.clamp(max=max)
