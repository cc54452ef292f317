"""``torch.distributed`` and ``DistributedDataParallel``, in torch's names, on chapter 3's engine.

An unmodified torch training script that calls ``dist.init_process_group``,
``dist.all_reduce(t)`` or wraps its model in ``DistributedDataParallel`` runs
here on engine tensors (:class:`chapters.autodiff.Tensor`) and engine
modules: the collectives are this chapter's own (trees, rings; see
:mod:`.collectives`), sent over torch's point-to-point links; DDP is
:mod:`.ddp` (buckets, hooks, overlap). Process groups are in :mod:`.process_group`,
the calls in :mod:`.torch_collectives`, the DDP wrapper in :mod:`.torch_ddp`; this
module gathers the names and refuses, with what to use instead, the ones left out.

Semantics follow torch: collectives work in place and return ``None``, or a
:class:`~.process_group.Work` with ``async_op=True``; ``src``/``dst`` are
global ranks (``group_src``/``group_dst`` ranks within the group); misuse
raises torch's error types and wording. What the engine does not do raises
``NotImplementedError`` naming what to use instead — never a different
result.
"""

from __future__ import annotations

from .process_group import (
    GroupMember,
    ProcessGroup,
    Work,
    destroy_process_group,
    get_backend,
    get_global_rank,
    get_process_group_ranks,
    get_rank,
    get_world_size,
    group,
    init_process_group,
    is_available,
    is_initialized,
    new_group,
)
from .torch_collectives import (
    ReduceOp,
    all_gather,
    all_gather_into_tensor,
    all_reduce,
    all_to_all,
    barrier,
    broadcast,
    irecv,
    isend,
    recv,
    reduce,
    reduce_scatter,
    reduce_scatter_tensor,
    send,
)
from .torch_ddp import DistributedDataParallel

_INSTEAD = {
    "gather": "all_gather, and keep the result on the destination rank",
    "scatter": "broadcast the whole tensor and take this rank's slice",
    "all_gather_object": "all_gather a tensor",
    "broadcast_object_list": "broadcast a tensor",
    "gather_object": "all_gather a tensor",
    "scatter_object_list": "broadcast a tensor",
    "monitored_barrier": "barrier",
    "batch_isend_irecv": "isend/irecv, waiting on each Work",
    "P2POp": "isend/irecv",
    "all_reduce_coalesced": "all_reduce on one flattened tensor",
    "init_device_mesh": "new_group",
    "DeviceMesh": "new_group",
    "TCPStore": "init_process_group(init_method='env://' or 'tcp://...')",
    "FileStore": "init_process_group(init_method='env://' or 'tcp://...')",
    "HashStore": "init_process_group(init_method='env://' or 'tcp://...')",
}


def __getattr__(name: str):
    if name in _INSTEAD:
        raise NotImplementedError(f"torch.distributed.{name} is not implemented on chapter 3's "
                                  f"engine; use {_INSTEAD[name]}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DistributedDataParallel", "GroupMember", "ProcessGroup", "ReduceOp", "Work", "__getattr__",
    "all_gather", "all_gather_into_tensor", "all_reduce", "all_to_all", "barrier", "broadcast",
    "destroy_process_group", "get_backend", "get_global_rank", "get_process_group_ranks",
    "get_rank", "get_world_size", "group", "init_process_group", "irecv", "is_available",
    "is_initialized", "isend", "new_group", "recv", "reduce", "reduce_scatter",
    "reduce_scatter_tensor", "send",
]
