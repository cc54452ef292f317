"""``torch.cuda.amp``: the deprecated spellings of ``torch.amp``'s classes.

They behave as torch's do on a machine without CUDA, which the engines are:
constructing one emits torch's ``FutureWarning`` (the sentence torch prints),
then, because there is no GPU, torch's ``UserWarning`` that the object is
disabled — so ``torch.cuda.amp.autocast()`` runs its block in float32 and
``torch.cuda.amp.GradScaler()`` leaves gradients unscaled, exactly as in torch
on a CPU. Use ``torch.amp.autocast("cpu", dtype=torch.bfloat16)`` instead.
"""

from __future__ import annotations

import warnings

import chapters.amp as engine_amp
from chapters.autodiff import dtypes


def _deprecated(name: str) -> None:
    warnings.warn(f"`torch.cuda.amp.{name}(args...)` is deprecated. Please use "
                  f"`torch.amp.{name}('cuda', args...)` instead.", FutureWarning, stacklevel=3)


class autocast(engine_amp.autocast):
    """``torch.cuda.amp.autocast(enabled=True, dtype=torch.float16, cache_enabled=True)``."""

    def __init__(self, enabled: bool = True, dtype=dtypes.float16, cache_enabled: bool = True):
        _deprecated("autocast")
        if enabled:
            warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast.",
                          UserWarning, stacklevel=2)
        super().__init__("cuda", dtype=dtype, enabled=False, cache_enabled=cache_enabled)


class GradScaler(engine_amp.GradScaler):
    """``torch.cuda.amp.GradScaler(init_scale=2.0**16, ...)``."""

    def __init__(self, init_scale: float = 2.0**16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000,
                 enabled: bool = True) -> None:
        _deprecated("GradScaler")
        if enabled:
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                          "Disabling.", UserWarning, stacklevel=2)
        super().__init__("cuda", init_scale=init_scale, growth_factor=growth_factor,
                         backoff_factor=backoff_factor, growth_interval=growth_interval,
                         enabled=False)


__all__ = ["GradScaler", "autocast"]
