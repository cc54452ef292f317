"""Timings that can back a sentence: interleaved medians with their spread.

A single best-of-N time says nothing about how much the next run may differ.
Here every function is timed round-robin (one call of each per round), so a
change in machine load during the measurement hits all of them alike, and each
result keeps its interquartile range. :func:`faster` then says "a is faster
than b" only when the two ranges are separated by the requested margin.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Timing:
    """Seconds per call: the median of the rounds and its interquartile range."""

    median: float
    low: float
    high: float
    rounds: int

    @classmethod
    def of(cls, seconds) -> Timing:
        """Summarise a list of per-call times (seconds)."""
        low, median, high = np.percentile(np.asarray(seconds, float), [25, 50, 75])
        return cls(float(median), float(low), float(high), len(seconds))

    @property
    def spread(self) -> float:
        """Relative width of the interquartile range, (high - low) / median."""
        return (self.high - self.low) / self.median

    def __str__(self) -> str:
        return f"{_short(self.median)} (IQR {_short(self.low)}–{_short(self.high)})"


def _short(seconds: float) -> str:
    """Seconds in the unit that gives three significant digits."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def interleaved_medians(fns: dict[str, Callable[[], object]], repeats: int = 5, number: int = 1,
                        warmup: int = 1, clock: Callable[[], float] = time.perf_counter,
                        ) -> dict[str, Timing]:
    """Time each function of ``fns`` round-robin and return its :class:`Timing`.

    Each of ``repeats`` rounds (at least 5) calls every function ``number``
    times in a row and records the mean seconds per call; ``warmup`` calls of
    each come first and are not recorded (first calls fill caches and lazy state).
    ``clock`` reads the seconds: wall time by default; ``time.thread_time``
    counts only this thread's CPU time, which other processes on a busy machine
    do not inflate (for single-threaded work, e.g. under ``threadpool_limits(1)``).
    """
    if repeats < 5:
        raise ValueError(f"interleaved_medians needs at least 5 repeats for a spread, "
                         f"got {repeats}")
    for fn in fns.values():
        for _ in range(warmup):
            fn()
    seconds = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            start = clock()
            for _ in range(number):
                fn()
            seconds[name].append((clock() - start) / number)
    return {name: Timing.of(values) for name, values in seconds.items()}


def faster(a: Timing, b: Timing, margin: float = 1.0) -> bool:
    """True when ``a`` is faster than ``b`` by at least ``margin`` beyond the noise.

    The slow end of ``a``'s interquartile range, multiplied by ``margin``, must
    still be below the fast end of ``b``'s: overlapping ranges prove nothing.
    """
    return a.high * margin < b.low
