"""``torch.nn``: chapter 2's modules (:mod:`chapters.autodiff.nn`, the same
classes), its ``functional``, ``init`` and ``utils`` (the same module objects),
and ``nn.parallel`` (:mod:`.parallel`: chapter 3's DistributedDataParallel)."""

import sys

from chapters.autodiff.nn import *  # noqa: F403  (torch.nn's names)
from chapters.autodiff.nn import __all__ as _engine_names
from chapters.autodiff.nn import functional, init, utils

from . import parallel

for _name, _module in {"functional": functional, "init": init, "utils": utils}.items():
    sys.modules[f"{__name__}.{_name}"] = _module

__all__ = [*_engine_names, "parallel"]
