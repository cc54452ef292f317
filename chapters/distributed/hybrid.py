"""Hybrid parallelism (混合并行): data parallel x tensor parallel on one mesh of ranks.

``world_size = dp x tp`` ranks are laid out as a grid, rank ``r`` at row
``r // tp`` (its data-parallel index) and column ``r % tp`` (its tensor-parallel
index)::

            tp 0   tp 1
    dp 0:  rank 0 rank 1     <- one tensor-parallel group: one model, split
    dp 1:  rank 2 rank 3
             ^ one data-parallel group: replicas of the same shard

Each row holds one copy of the model split Megatron-style; each column holds
the replicas of one shard, whose gradients DDP averages. The two kinds of
communication never mix: tensor-parallel all-reduces (activations, every
layer) stay inside a row — inside one machine in practice — and data-parallel
all-reduces (gradients, once per step) run down the columns, across machines.
"""

from __future__ import annotations

from .transport import DistributedError, Group, SubGroup


def mesh_groups(group: Group, tp: int) -> tuple[SubGroup, SubGroup]:
    """``(tensor_parallel_group, data_parallel_group)`` of this rank."""
    if group.world_size % tp:
        raise DistributedError(f"mesh_groups: {group.world_size} ranks do not form a grid with "
                               f"{tp} tensor-parallel ranks per row")
    row, col = divmod(group.rank, tp)
    tp_ranks = [row * tp + c for c in range(tp)]
    dp_ranks = [r * tp + col for r in range(group.world_size // tp)]
    return SubGroup(group, tp_ranks), SubGroup(group, dp_ranks)
