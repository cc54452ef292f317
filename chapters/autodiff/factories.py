"""Tensor factories with torch's names: ``tensor``, ``zeros``, ``randn``, ...

Each makes a new leaf (no history). Random ones draw from the engine's
generator (:mod:`.random`), a different stream from torch's.
"""

from __future__ import annotations

import numpy as np

from . import dtypes
from .core import as_array
from .random import default_generator
from .tensor import Tensor, as_shape


def tensor(data, dtype=None, requires_grad: bool = False) -> Tensor:
    """A new leaf tensor holding a copy of ``data`` (``torch.tensor``)."""
    if isinstance(data, Tensor):
        data = data.data
    array = as_array(data, dtype)
    if isinstance(data, np.ndarray) and array is data:
        array = array.copy()
    return Tensor(array, requires_grad=requires_grad)


def as_tensor(data, dtype=None) -> Tensor:
    if isinstance(data, Tensor) and (dtype is None or data.dtype == dtypes.as_dtype(dtype)):
        return data
    return Tensor(as_array(data, dtype))


def zeros(*size, dtype=None, requires_grad: bool = False) -> Tensor:
    return Tensor(np.zeros(as_shape(size), dtypes.as_dtype(dtype or dtypes.float32)),
                  requires_grad=requires_grad)


def ones(*size, dtype=None, requires_grad: bool = False) -> Tensor:
    return Tensor(np.ones(as_shape(size), dtypes.as_dtype(dtype or dtypes.float32)),
                  requires_grad=requires_grad)


def full(size, fill_value, dtype=None, requires_grad: bool = False) -> Tensor:
    dtype = dtypes.as_dtype(dtype) if dtype is not None else dtypes.default_dtype_for(fill_value)
    return Tensor(np.full(as_shape(size), fill_value, dtype), requires_grad=requires_grad)


def empty(*size, dtype=None, requires_grad: bool = False) -> Tensor:
    return zeros(*size, dtype=dtype, requires_grad=requires_grad)


def zeros_like(x: Tensor, dtype=None, requires_grad: bool = False) -> Tensor:
    return zeros(x.shape, dtype=dtype or x.dtype, requires_grad=requires_grad)


def ones_like(x: Tensor, dtype=None, requires_grad: bool = False) -> Tensor:
    return ones(x.shape, dtype=dtype or x.dtype, requires_grad=requires_grad)


def full_like(x: Tensor, fill_value, dtype=None) -> Tensor:
    return full(x.shape, fill_value, dtype=dtype or x.dtype)


def randn(*size, dtype=None, requires_grad: bool = False, generator=None) -> Tensor:
    """Standard normal samples from the engine's generator (see :mod:`.random`)."""
    rng = generator or default_generator()
    values = rng.standard_normal(as_shape(size)).astype(dtypes.as_dtype(dtype or dtypes.float32))
    return Tensor(values, requires_grad=requires_grad)


def rand(*size, dtype=None, requires_grad: bool = False, generator=None) -> Tensor:
    rng = generator or default_generator()
    values = rng.random(as_shape(size)).astype(dtypes.as_dtype(dtype or dtypes.float32))
    return Tensor(values, requires_grad=requires_grad)


def randn_like(x: Tensor, dtype=None) -> Tensor:
    return randn(x.shape, dtype=dtype or x.dtype)


def arange(start, end=None, step=1, dtype=None) -> Tensor:
    """start, start + step, ... below end. Without ``dtype``: int64 when every
    bound is an integer, else the default float32 (numpy would give float64)."""
    if end is None:
        start, end = 0, start
    dtype = dtypes.result_dtype([start, end, step]) if dtype is None else dtypes.as_dtype(dtype)
    return Tensor(np.arange(start, end, step).astype(dtype))


def _scalar(value) -> float:
    """A bound given as a number or a one-element tensor (torch takes both)."""
    return value.item() if isinstance(value, Tensor) else value


def linspace(start, end, steps: int, dtype=None, requires_grad: bool = False) -> Tensor:
    """``steps`` evenly spaced values from start to end, both included. With
    h = (end - start) / (steps - 1), value i is start + i h in the first half
    and end - (steps - 1 - i) h in the second (torch's rule): both ends are
    exact and the rounding is symmetric about the middle. float32 unless ``dtype`` says
    otherwise (computed in float32 for the 16-bit floats, in float64 for
    integers, whose values are then truncated as torch's)."""
    if steps < 0:
        raise RuntimeError(f"linspace: number of steps must be non-negative, got {steps}; "
                           "pass how many values you want (0 gives an empty tensor)")
    dtype = dtypes.as_dtype(dtype or dtypes.float32)
    work = np.dtype(np.float64) if dtype.kind in "biu" or dtype == np.float64 else \
        np.dtype(np.float32)
    start, end = work.type(_scalar(start)), work.type(_scalar(end))
    h = (end - start) / work.type(max(steps - 1, 1))
    i = np.arange(steps).astype(work)
    first_half = np.arange(steps) < max(steps // 2, 1)  # one step: start alone
    values = np.where(first_half, start + i * h, end - (steps - 1 - i) * h)
    return Tensor(values.astype(dtype), requires_grad=requires_grad)


def logspace(start, end, steps: int, base: float = 10.0, dtype=None,
             requires_grad: bool = False) -> Tensor:
    """base ** linspace(start, end, steps): ``steps`` values evenly spaced on a
    log scale, from base^start to base^end."""
    exponents = linspace(start, end, steps, dtype=dtypes.float64).data
    return Tensor(np.power(base, exponents).astype(dtypes.as_dtype(dtype or dtypes.float32)),
                  requires_grad=requires_grad)


def eye(n: int, m: int | None = None, dtype=None) -> Tensor:
    return Tensor(np.eye(n, m, dtype=dtypes.as_dtype(dtype or dtypes.float32)))
