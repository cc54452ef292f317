"""``torch.func``: chapter 2's function transforms (``grad``, ``vjp``, ``jvp``),
the same functions, from :mod:`chapters.autodiff.func`."""

from chapters.autodiff import func as _engine_func
from chapters.autodiff.func import *  # noqa: F403

__all__ = list(_engine_func.__all__)
