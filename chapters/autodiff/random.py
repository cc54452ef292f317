"""The engine's random numbers: one numpy generator, reseeded by ``manual_seed``.

The stream differs from PyTorch's (different generator), so tests that need
identical values create them once and copy them into both engines.
"""

from __future__ import annotations

import numpy as np

_GENERATOR = [np.random.default_rng(0)]


def manual_seed(seed: int) -> np.random.Generator:
    """Reseed the default generator (``torch.manual_seed``) and return it."""
    _GENERATOR[0] = np.random.default_rng(seed)
    return _GENERATOR[0]


def default_generator() -> np.random.Generator:
    return _GENERATOR[0]
