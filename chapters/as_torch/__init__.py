"""torch's namespace over the course's four engines: ``import chapters.as_torch as torch``.

Every name is an engine object itself, not a wrapper or a copy: ``torch.Tensor``
is :class:`chapters.autodiff.Tensor`, ``torch.nn.Linear`` is chapter 2's
``Linear``, ``torch.amp.GradScaler`` is chapter 4's, ``torch.distributed`` and
``torch.nn.parallel.DistributedDataParallel`` are chapter 3's (imported on
first use), so a torch program and the chapter's engines share one meaning.

==========================  ==================================================
torch                       here
==========================  ==================================================
tensors, ops, dtypes        :mod:`chapters.autodiff` (``torch.long`` ...)
nn, nn.functional, nn.init  :mod:`.nn` (chapter 2's modules + ``nn.parallel``)
optim, autograd, utils.data chapter 2's modules, the same module objects
func                        :mod:`chapters.autodiff.func` (grad, vjp, jvp)
amp, autocast, cuda.amp     :mod:`.amp`, :mod:`.cuda` (chapter 4)
distributed                 :mod:`.distributed` (chapter 3)
save, load                  :mod:`.serialization` (no pickle: zip of JSON + npz)
backends                    :mod:`.backends` (GPU flags, accepted, no effect)
==========================  ==================================================

What the engines do not implement raises ``NotImplementedError`` saying what
to use instead (:mod:`.unsupported`); ``python -m chapters.as_torch script.py``
runs an unmodified torch script on the engines (:mod:`.runner`).
"""

import sys
from importlib import import_module

import chapters.autodiff as _ad
from chapters.amp import autocast

from . import amp, backends
from . import cuda as _cuda  # torch.cuda: chapter 2's answers plus the deprecated cuda.amp
from . import nn as _nn  # torch.nn: chapter 2's modules plus nn.parallel
from .serialization import load, save
from .unsupported import refuse

# isort: split
# tensors, ops, dtypes (torch.long, torch.float ...), grad modes, manual_seed
from chapters.autodiff import *  # noqa: E402, F403
from chapters.autodiff import autograd, linalg, optim, utils  # noqa: E402

cuda, nn = _cuda, _nn  # this package's, not the engine's (the star import bound those)

#: ``torch.Size``: the engines' shapes are plain tuples, of which torch.Size is a subclass
Size = tuple

for _name, _module in {"autograd": autograd, "linalg": linalg, "optim": optim,
                       "optim.lr_scheduler": optim.lr_scheduler, "utils": utils,
                       "utils.data": utils.data}.items():
    sys.modules[f"{__name__}.{_name}"] = _module

_DETERMINISTIC = [False]
_THREADS = [1]


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Accepted: every engine kernel is deterministic already."""
    _DETERMINISTIC[0] = mode


def are_deterministic_algorithms_enabled() -> bool:
    return _DETERMINISTIC[0]


def set_num_threads(n: int) -> None:
    """Recorded for ``get_num_threads``; the engines' numpy kernels keep their
    own BLAS threads (set OMP_NUM_THREADS before starting Python to change them)."""
    _THREADS[0] = n


def get_num_threads() -> int:
    return _THREADS[0]


def set_float32_matmul_precision(precision: str) -> None:
    """Accepted: it only selects TF32/bfloat16 GPU matmuls; numpy's are full float32."""
    if precision not in ("highest", "high", "medium"):
        raise RuntimeError(f"set_float32_matmul_precision: expected 'highest', 'high' or "
                           f"'medium', got {precision!r}")


def __getattr__(name: str):
    if name in ("distributed", "func"):  # loaded on first use: see the module docstring
        return import_module(f"{__name__}.{name}")
    raise refuse("torch", name)


__all__ = ["Size", "amp", "are_deterministic_algorithms_enabled", "autocast", "backends", "cuda",
           "distributed", "func",  # noqa: F405, F822  (served by __getattr__, on first use)
           "get_num_threads", "load", "save", "set_float32_matmul_precision", "set_num_threads",
           "use_deterministic_algorithms"]
__all__ += _ad.__all__
