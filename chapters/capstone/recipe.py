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

    steps: int = 40
    batch_size: int = 64
    hidden: int = 32
    lr: float = 0.5
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


def standardize(x_train: np.ndarray, *others: np.ndarray) -> list[np.ndarray]:
    """Centre and scale every pixel by the *training* images' mean and standard
    deviation (a pixel that is constant in training keeps a scale of 1), and apply
    the same affine map to ``others`` (the test images).

    Pixels divided by 16 lie in [0, 1] with means from 0 to 0.76 and standard
    deviations from 0 to 0.41: a badly conditioned problem for plain SGD (the
    shared positive mean dominates the first layer's gradient). After this map
    every pixel has mean 0 and (where it varies) variance 1."""
    mean = x_train.mean(axis=0)
    std = x_train.std(axis=0)
    scale = np.where(std > 0, std, 1.0)
    return [((x - mean) / scale).astype(np.float32) for x in (x_train, *others)]


@cache
def digits_split(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(x_train, y_train, x_test, y_test)``: scikit-learn's digits, 20 % held out,
    images standardized with the training statistics (:func:`standardize`)."""
    from chapters.autodiff.data import load_digits_split

    x_train, y_train, x_test, y_test = load_digits_split(test_fraction=0.2, seed=seed)
    x_train, x_test = standardize(x_train, x_test)
    return x_train, y_train, x_test, y_test


def digits(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The training images and labels: ``(x float32 (N, 64), y int64 (N,))``.
    Load them once in the parent and hand them to the ranks (loading scikit-learn
    in every rank would cost seconds each)."""
    return digits_split(seed)[:2]


def held_out_digits(seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The held-out images and labels, standardized as the training images."""
    return digits_split(seed)[2:]


def accuracy(weights: dict, data) -> float:
    """Fraction of ``data = (x, y)`` that the MLP with ``weights`` (a state dict of
    numpy arrays, from either framework) classifies correctly, computed in float32."""
    x, y = data
    hidden = np.maximum(x @ weights["0.weight"].T + weights["0.bias"], 0.0)
    logits = hidden @ weights["2.weight"].T + weights["2.bias"]
    return float(np.mean(logits.argmax(axis=1) == y))


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
