"""Chapter 3's reference engine: distributed training (分布式训练).

The transport (:mod:`.transport`: the :class:`Group` interface; :mod:`.sim`: the
simulated, message-logging world), collectives written from scratch on it
(:mod:`.collectives`), their alpha-beta costs (:mod:`.cost_model`), and the
parallel training strategies built from them — all on numpy alone. :mod:`.torch_api`
offers all of it under ``torch.distributed``'s names, for torch scripts run on the engines.

Real processes need torch, so they sit behind their own modules, which this
package does not import: :mod:`.torch_transport` (``TorchGroup`` over
``torch.distributed`` point-to-point, ``init_from_env`` under torchrun) and
:mod:`.launcher` (``launch(fn, world_size)`` on this machine, ``free_port``).
"""

from .collectives import (
    ALL_REDUCE_ALGORITHMS,
    ReduceOp,
    all_gather,
    all_reduce,
    all_to_all,
    barrier,
    broadcast,
    reduce,
    reduce_scatter,
)
from .sim import Message, SimGroup, SimWorld, run_simulated
from .transport import DistributedError, Group, SubGroup, Work, timed

__all__ = [
    "ALL_REDUCE_ALGORITHMS", "DistributedError", "Group", "Message", "ReduceOp", "SimGroup",
    "SimWorld", "SubGroup", "Work", "all_gather", "all_reduce", "all_to_all",
    "barrier", "broadcast", "reduce", "reduce_scatter", "run_simulated", "timed",
]

#: the real-process names, each with the module (the one that imports torch) it is in
_REAL_PROCESS_NAMES = {"launch": "launcher", "free_port": "launcher",
                       "TorchGroup": "torch_transport", "init_from_env": "torch_transport"}


def __getattr__(name: str):
    if name in _REAL_PROCESS_NAMES:
        module = _REAL_PROCESS_NAMES[name]
        raise AttributeError(
            f"chapters.distributed.{name} needs torch, so it is not part of the numpy "
            f"package: import it from its own module, "
            f"`from chapters.distributed.{module} import {name}`")
    raise AttributeError(f"module 'chapters.distributed' has no attribute {name!r}")
