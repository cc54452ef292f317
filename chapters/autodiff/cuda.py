"""``torch.cuda`` for a machine without a GPU: what device-agnostic code asks.

This engine computes with numpy on the CPU, so ``is_available()`` is False and
``device_count()`` is 0, exactly what torch answers on a CPU-only machine;
code that picks ``"cuda" if torch.cuda.is_available() else "cpu"`` picks the
CPU. Seeding the (absent) GPUs is a no-op, as in torch without CUDA.
"""

from __future__ import annotations


def is_available() -> bool:
    """Whether a CUDA GPU can be used: never, in this engine."""
    return False


def device_count() -> int:
    """How many CUDA GPUs there are: none."""
    return 0


def manual_seed(seed: int) -> None:
    """Seed the current GPU's generator: nothing to seed here (torch ignores it too)."""


def manual_seed_all(seed: int) -> None:
    """Seed every GPU's generator: nothing to seed here (torch ignores it too)."""
