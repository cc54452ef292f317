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


def eye(n: int, m: int | None = None, dtype=None) -> Tensor:
    return Tensor(np.eye(n, m, dtype=dtypes.as_dtype(dtype or dtypes.float32)))
