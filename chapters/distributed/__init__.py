"""Chapter 3's reference engine: distributed training (分布式训练).

The transport (:mod:`.transport`: the :class:`Group` interface, real processes
over ``torch.distributed`` point-to-point, :func:`launch`; :mod:`.sim`: the
simulated, message-logging world), collectives written from scratch on it
(:mod:`.collectives`), their alpha-beta costs (:mod:`.cost_model`), and the
parallel training strategies built from them. :mod:`.torch_api` offers all of it
under ``torch.distributed``'s names, for torch scripts run on the engines.
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
from .launcher import free_port, launch
from .sim import Message, SimGroup, SimWorld, run_simulated
from .transport import DistributedError, Group, SubGroup, TorchGroup, Work, init_from_env, timed

__all__ = [
    "ALL_REDUCE_ALGORITHMS", "DistributedError", "Group", "Message", "ReduceOp", "SimGroup",
    "SimWorld", "SubGroup", "TorchGroup", "Work", "all_gather", "all_reduce", "all_to_all",
    "barrier", "broadcast", "free_port", "init_from_env", "launch", "reduce", "reduce_scatter",
    "run_simulated", "timed",
]
