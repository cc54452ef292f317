"""The engine's random numbers: one numpy generator, reseeded by ``manual_seed``.

The stream differs from PyTorch's (different generator), so tests that need
identical values create them once and copy them into both engines; tests of
the draws themselves check shape, dtype, range, reproducibility under
``manual_seed`` and the distribution, never equality with torch's values.

Every draw takes torch's ``generator=`` keyword: a :class:`Generator`
(``torch.Generator().manual_seed(7)``) or any ``numpy.random.Generator``,
else the default one.
"""

from __future__ import annotations

import numpy as np

from . import dtypes
from .device import check_cpu

_GENERATOR = [np.random.default_rng(0)]

#: the largest integer each floating dtype holds exactly, and below it every
#: integer: 2 ** (mantissa bits + 1), the top of ``x.random_()`` (as torch)
FLOAT_INTEGER_TOP = {dtypes.float16: 2 ** 11, dtypes.bfloat16: 2 ** 8,
                     dtypes.float32: 2 ** 24, dtypes.float64: 2 ** 53}


class Generator(np.random.Generator):
    """``torch.Generator``: its own stream of random numbers, a numpy generator
    with torch's seeding methods (``manual_seed`` returns the generator, so
    ``Generator().manual_seed(42)`` reads as in torch)."""

    #: the seed of a new generator, torch's default
    DEFAULT_SEED = 67280421310721

    def __init__(self, device="cpu"):
        check_cpu("Generator", device)
        super().__init__(np.random.PCG64(self.DEFAULT_SEED))
        self._initial_seed = self.DEFAULT_SEED

    def manual_seed(self, seed: int) -> Generator:
        """Restart the stream from ``seed``."""
        self.bit_generator.state = np.random.PCG64(seed).state
        self._initial_seed = int(seed)
        return self

    def initial_seed(self) -> int:
        """The seed the stream last started from."""
        return self._initial_seed


def manual_seed(seed: int) -> np.random.Generator:
    """Reseed the default generator (``torch.manual_seed``) and return it."""
    _GENERATOR[0] = np.random.default_rng(seed)
    return _GENERATOR[0]


def default_generator() -> np.random.Generator:
    return _GENERATOR[0]


def generator_or_default(generator: np.random.Generator | None) -> np.random.Generator:
    return default_generator() if generator is None else generator


def integer_bounds(dtype: np.dtype) -> tuple[int, int]:
    """The smallest and largest integer a tensor of ``dtype`` holds (each
    integer in between too, for the floating dtypes)."""
    if dtype == dtypes.bool_:
        return 0, 1
    if dtypes.is_floating(dtype):
        return -FLOAT_INTEGER_TOP[dtype], FLOAT_INTEGER_TOP[dtype]
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


def check_integer_range(op: str, low: int, high: int, dtype: np.dtype) -> None:
    """torch's checks on a draw from [low, high): a non-empty range that ``dtype`` holds."""
    if low >= high:
        raise RuntimeError(f"{op}: expects 'from' to be less than 'to', but got from={low} >= "
                           f"to={high}; the draw is from [from, to), so make to larger")
    smallest, largest = integer_bounds(dtype)
    if low < smallest or high - 1 > largest:
        raise RuntimeError(f"{op}: the range [{low}, {high}) is out of bounds for {dtype}, "
                           f"which holds [{smallest}, {largest}]; narrow the range or pick a "
                           "wider dtype")


def integers(op: str, low: int, high: int, shape: tuple, dtype: np.dtype,
             generator: np.random.Generator | None = None) -> np.ndarray:
    """Integers drawn uniformly from [low, high), in ``dtype``."""
    check_integer_range(op, low, high, dtype)
    rng = generator_or_default(generator)
    return rng.integers(low, high - 1, size=shape, endpoint=True).astype(dtype)

