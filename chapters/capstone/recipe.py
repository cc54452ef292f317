"""What one training run is: settings, data, starting weights.

The engine loop and the PyTorch loop read the same :class:`LoopConfig`, take
the same batches (:func:`batch_for`) and start from the same weights (PyTorch's
default initialisation under ``torch.manual_seed(config.seed)``, copied into
the engine model), so any difference in their loss curves comes from the
arithmetic, not from the set-up.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

SYNC_MODES = ("ddp", "manual", "after_step", "none")


@dataclass(frozen=True)
class LoopConfig:
    """One run. ``batch_size`` is the *global* batch, split evenly over ranks.

    ``amp_dtype``: ``"float32"`` (autocast and scaler off), ``"float16"`` or
    ``"bfloat16"``. ``sync``: how gradients meet across ranks —
    ``"ddp"`` (DistributedDataParallel: all-reduce during backward),
    ``"manual"`` (the source loop, fixed: each ``p.grad`` all-reduced and divided
    by the world size after backward, before ``unscale_``/``step``),
    ``"after_step"`` (the same all-reduce, wrongly placed after the step),
    ``"none"`` (no synchronisation). ``clip_norm``: clip the unscaled gradients'
    global 2-norm (needs ``scaler.unscale_`` first). ``poison_step``: on that
    step rank 1 sees a batch with one NaN pixel (for the NaN checklist).
    """

    steps: int = 30
    batch_size: int = 64
    hidden: int = 32
    lr: float = 0.2
    amp_dtype: str = "float16"
    init_scale: float = 2.0**12
    growth_interval: int = 10
    sync: str = "ddp"
    clip_norm: float | None = None
    poison_step: int | None = None
    seed: int = 0

    def __post_init__(self):
        if self.sync not in SYNC_MODES:
            raise ValueError(f"LoopConfig.sync must be one of {SYNC_MODES}, got {self.sync!r}")
        if self.amp_dtype not in ("float32", "float16", "bfloat16"):
            raise ValueError("LoopConfig.amp_dtype must be 'float32', 'float16' or 'bfloat16', "
                             f"got {self.amp_dtype!r}")

    @property
    def mixed(self) -> bool:
        return self.amp_dtype != "float32"


class OneProcess:
    """The world of a single process (rank 0 of 1): training without a launch."""

    rank = 0
    world_size = 1


@cache
def digits(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The training images and labels: ``(x float32 (N, 64) in [0, 1], y int64 (N,))``.
    Load them once in the parent and hand them to the ranks (loading scikit-learn
    in every rank would cost seconds each)."""
    from chapters.autodiff.data import load_digits_split

    split = load_digits_split(test_fraction=0.2, seed=seed)
    return split[0], split[1]


def batch_for(config: LoopConfig, data, step: int, rank: int, world_size: int):
    """Rank ``rank``'s slice of global batch ``step`` of ``data = (x, y)``: ``step``
    draws ``batch_size`` distinct rows (seeded), rank ``r`` takes the ``r``-th
    contiguous part."""
    if config.batch_size % world_size:
        raise ValueError(f"batch_size {config.batch_size} does not split over {world_size} "
                         "ranks; choose a multiple of the world size")
    x, y = data
    chosen = np.random.default_rng([config.seed, step]).permutation(len(x))[:config.batch_size]
    per_rank = config.batch_size // world_size
    rows = chosen[rank * per_rank:(rank + 1) * per_rank]
    xb, yb = x[rows].copy(), y[rows].copy()
    if config.poison_step == step and rank == min(1, world_size - 1):
        xb[0, 0] = np.nan
    return xb, yb


def torch_model(config: LoopConfig):
    """The reference model, freshly initialised by torch from ``config.seed``."""
    import torch

    torch.manual_seed(config.seed)
    return torch.nn.Sequential(torch.nn.Linear(64, config.hidden), torch.nn.ReLU(),
                               torch.nn.Linear(config.hidden, 10))


def engine_model(config: LoopConfig):
    """The same model on the engine, holding the torch model's starting weights."""
    from chapters.autodiff import nn

    model = nn.Sequential(nn.Linear(64, config.hidden), nn.ReLU(), nn.Linear(config.hidden, 10))
    model.load_state_dict(torch_model(config).state_dict())
    return model
