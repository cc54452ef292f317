"""``torch.cuda``: the engine's answers for a machine without a GPU
(:mod:`chapters.autodiff.cuda`, the same functions) and the deprecated
``torch.cuda.amp`` spellings (:mod:`.amp`)."""

from chapters.autodiff.cuda import device_count, is_available, manual_seed, manual_seed_all

from . import amp


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """Whether the (absent) GPU computes in bfloat16: no GPU, so False."""
    return False


__all__ = ["amp", "device_count", "is_available", "is_bf16_supported", "manual_seed",
           "manual_seed_all"]
