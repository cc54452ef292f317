"""Tensor factories with torch's names: ``tensor``, ``zeros``, ``randn``, ...

Each makes a new leaf (no history). Random ones draw from the engine's
generator (:mod:`.random`), a different stream from torch's. Each takes
torch's ``device=`` keyword so device-agnostic code runs; anything but the CPU
is refused (:mod:`.device`). ``from_numpy`` is the one that shares memory.
"""

from __future__ import annotations

import numpy as np

from . import dtypes
from .core import as_array
from .device import check_cpu
from .random import check_integer_range, generator_or_default, integers
from .tensor import Tensor, as_shape


def tensor(data, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """A new leaf tensor holding a copy of ``data`` (``torch.tensor``)."""
    check_cpu("tensor", device)
    if isinstance(data, Tensor):
        data = data.data
    array = as_array(data, dtype)
    if isinstance(data, np.ndarray) and array is data:
        array = array.copy()
    return Tensor(array, requires_grad=requires_grad)


def as_tensor(data, dtype=None, device=None) -> Tensor:
    check_cpu("as_tensor", device)
    if isinstance(data, Tensor) and (dtype is None or data.dtype == dtypes.as_dtype(dtype)):
        return data
    return Tensor(as_array(data, dtype))


def zeros(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    check_cpu("zeros", device)
    return Tensor(np.zeros(as_shape(size), dtypes.as_dtype(dtype or dtypes.float32)),
                  requires_grad=requires_grad)


def ones(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    check_cpu("ones", device)
    return Tensor(np.ones(as_shape(size), dtypes.as_dtype(dtype or dtypes.float32)),
                  requires_grad=requires_grad)


def full(size, fill_value, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    check_cpu("full", device)
    dtype = dtypes.as_dtype(dtype) if dtype is not None else dtypes.default_dtype_for(fill_value)
    return Tensor(np.full(as_shape(size), fill_value, dtype), requires_grad=requires_grad)


def empty(*size, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return zeros(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def zeros_like(x: Tensor, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return zeros(x.shape, dtype=dtype or x.dtype, device=device, requires_grad=requires_grad)


def ones_like(x: Tensor, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return ones(x.shape, dtype=dtype or x.dtype, device=device, requires_grad=requires_grad)


def full_like(x: Tensor, fill_value, dtype=None, device=None) -> Tensor:
    return full(x.shape, fill_value, dtype=dtype or x.dtype, device=device)


def _floating_dtype(op: str, dtype) -> np.dtype:
    """``dtype`` (float32 if None), refused with torch's NotImplementedError
    when it is not floating: a continuous distribution has no integer draws."""
    dtype = dtypes.as_dtype(dtype or dtypes.float32)
    dtypes.check_implemented(op, dtype, bool_ok=False, integer_ok=False)
    return dtype


def randn(*size, dtype=None, device=None, requires_grad: bool = False,
          generator=None) -> Tensor:
    """Standard normal samples from the engine's generator (see :mod:`.random`)."""
    check_cpu("randn", device)
    dtype = _floating_dtype("randn", dtype)
    values = generator_or_default(generator).standard_normal(as_shape(size)).astype(dtype)
    return Tensor(values, requires_grad=requires_grad)


def rand(*size, dtype=None, device=None, requires_grad: bool = False,
         generator=None) -> Tensor:
    """Samples uniform on [0, 1) from the engine's generator."""
    check_cpu("rand", device)
    dtype = _floating_dtype("rand", dtype)
    values = generator_or_default(generator).random(as_shape(size)).astype(dtype)
    return Tensor(values, requires_grad=requires_grad)


def randn_like(x: Tensor, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    return randn(x.shape, dtype=dtype or x.dtype, device=device, requires_grad=requires_grad)


def rand_like(x: Tensor, dtype=None, device=None, requires_grad: bool = False) -> Tensor:
    """``rand`` in x's shape and (unless ``dtype`` says otherwise) dtype."""
    return rand(x.shape, dtype=dtype or x.dtype, device=device, requires_grad=requires_grad)


def _integer_bound(name: str, value) -> int:
    """A bound of randint: a Python int (torch refuses floats with TypeError)."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(f"randint(): argument {name!r} must be int, not "
                        f"{type(value).__name__}; pass whole numbers, e.g. randint(0, 10, (3,))")
    return int(value)


def randint(*args, low=None, high=None, size=None, generator=None, dtype=None, device=None,
            requires_grad: bool = False) -> Tensor:
    """Integers uniform on [low, high): ``randint(high, size)`` or
    ``randint(low, high, size)``, each argument positional or by keyword
    (low defaults to 0); int64 unless ``dtype`` says otherwise."""
    check_cpu("randint", device)
    if size is None and args:
        *args, size = args
    bounds = [*([] if low is None else [low]), *args, *([] if high is None else [high])]
    if not isinstance(size, tuple | list) or len(bounds) not in (1, 2):
        raise TypeError("randint(): expected randint(high, size) or randint(low, high, size) "
                        f"with size a tuple of ints, got size {size!r} and bounds {bounds}; "
                        "write e.g. randint(10, (3,)) rather than randint(10, 3)")
    low, high = (0, *bounds) if len(bounds) == 1 else bounds
    low, high = _integer_bound("low", low), _integer_bound("high", high)
    values = integers("randint", low, high, as_shape(size), dtypes.as_dtype(dtype or dtypes.int64),
                      generator)
    return Tensor(values, requires_grad=requires_grad)


def randint_like(x: Tensor, low_or_high: int, high: int | None = None, dtype=None,
                 device=None, requires_grad: bool = False) -> Tensor:
    """``randint`` in x's shape and dtype: ``randint_like(x, high)`` or
    ``randint_like(x, low, high)``."""
    low, high = (0, low_or_high) if high is None else (low_or_high, high)
    return randint(low, high, x.shape, dtype=dtype or x.dtype, device=device,
                   requires_grad=requires_grad)


def randperm(n: int, generator=None, dtype=None, device=None,
             requires_grad: bool = False) -> Tensor:
    """0, ..., n - 1 in a random order (each order equally likely); int64
    unless ``dtype`` says otherwise."""
    check_cpu("randperm", device)
    dtype = dtypes.as_dtype(dtype or dtypes.int64)
    if n < 0:
        raise RuntimeError(f"randperm: n must be non-negative, got {n}; it is how many "
                           "values to shuffle")
    if n:
        check_integer_range("randperm", 0, n, dtype)
    values = generator_or_default(generator).permutation(n).astype(dtype)
    return Tensor(values, requires_grad=requires_grad)


def from_numpy(array: np.ndarray) -> Tensor:
    """A tensor *sharing memory* with ``array`` (``torch.from_numpy``): a write
    through either is seen by the other. The dtype is the array's."""
    if not isinstance(array, np.ndarray):
        raise TypeError(f"from_numpy: expected np.ndarray (got {type(array).__name__}); "
                        "for other data use tensor(data), which copies")
    if array.dtype not in dtypes.TYPE_NAMES:
        raise TypeError(f"from_numpy: can't convert an array of dtype {array.dtype}; this "
                        f"engine holds {', '.join(str(d) for d in dtypes.TYPE_NAMES)}: "
                        "convert it first with array.astype(...)")
    if any(s < 0 for s in array.strides):
        raise ValueError("from_numpy: at least one stride of the array is negative, which "
                         "tensors do not support; pass array.copy() instead")
    return Tensor._make(array, [0])


def arange(start, end=None, step=1, dtype=None, device=None,
           requires_grad: bool = False) -> Tensor:
    """start, start + step, ... below end. Without ``dtype``: int64 when every
    bound is an integer, else the default float32 (numpy would give float64)."""
    check_cpu("arange", device)
    if end is None:
        start, end = 0, start
    dtype = dtypes.result_dtype([start, end, step]) if dtype is None else dtypes.as_dtype(dtype)
    return Tensor(np.arange(start, end, step).astype(dtype), requires_grad=requires_grad)


def _scalar(value) -> float:
    """A bound given as a number or a one-element tensor (torch takes both)."""
    return value.item() if isinstance(value, Tensor) else value


def linspace(start, end, steps: int, dtype=None, device=None,
             requires_grad: bool = False) -> Tensor:
    """``steps`` evenly spaced values from start to end, both included. With
    h = (end - start) / (steps - 1), value i is start + i h in the first half
    and end - (steps - 1 - i) h in the second (torch's rule): both ends are
    exact and the rounding is symmetric about the middle. float32 unless ``dtype`` says
    otherwise (computed in float32 for the 16-bit floats, in float64 for
    integers, whose values are then truncated as torch's)."""
    check_cpu("linspace", device)
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


def logspace(start, end, steps: int, base: float = 10.0, dtype=None, device=None,
             requires_grad: bool = False) -> Tensor:
    """base ** linspace(start, end, steps): ``steps`` values evenly spaced on a
    log scale, from base^start to base^end."""
    exponents = linspace(start, end, steps, dtype=dtypes.float64, device=device).data
    return Tensor(np.power(base, exponents).astype(dtypes.as_dtype(dtype or dtypes.float32)),
                  requires_grad=requires_grad)


def eye(n: int, m: int | None = None, dtype=None, device=None) -> Tensor:
    check_cpu("eye", device)
    return Tensor(np.eye(n, m, dtype=dtypes.as_dtype(dtype or dtypes.float32)))
