"""Chapter 3's practice (ungraded, every case public): ideas next to the lab's.

* ``ch3_broadcast_rounds`` — who sends to whom in each round of a binomial-tree
  broadcast (the chapter's §3 draws it; the lab writes the ring instead);
* ``ch3_slowest_stage`` — cut a pipeline's layers into balanced stages (§8: the
  slowest stage sets the pace);
* ``ch3_zero_shards`` — which pieces of which parameters a ZeRO rank owns (§11).

The references below are written for this spec, each in its own way (a set of
holders that doubles, a search over every cut, interval overlaps); the tests in
``tests/chapters/distributed/test_practice.py`` check them against the engine.
"""

from __future__ import annotations

import itertools
from pathlib import Path

from autograder.spec import Case, Exercise, LabSpec

CHAPTER = Path(__file__).resolve().parents[2] / "03_distributed_training.ipynb"


def ref_broadcast_rounds(world_size: int, src: int) -> list[list[list[int]]]:
    """Every rank that has the data sends it to one rank that has not: the
    ranks holding it double each round. Counting from ``src`` (the ``i``-th
    holder is rank ``(src + i) % p``), in a round with ``h`` holders holder
    ``i`` sends to holder-to-be ``h + i``, while there is one left."""
    rounds, holders = [], 1
    while holders < world_size:
        senders = range(min(holders, world_size - holders))
        rounds.append([[(src + i) % world_size, (src + holders + i) % world_size]
                       for i in senders])
        holders = min(2 * holders, world_size)
    return [sorted(pairs) for pairs in rounds]


def ref_slowest_stage(costs: list[float], stages: int) -> float:
    """Try every way to cut ``costs`` into ``stages`` consecutive non-empty
    groups and keep the smallest cost of the slowest group."""
    n = len(costs)
    best = float("inf")
    for cuts in itertools.combinations(range(1, n), stages - 1):
        edges = (0, *cuts, n)
        slowest = max(sum(costs[a:b]) for a, b in itertools.pairwise(edges))
        best = min(best, slowest)
    return float(best)


def ref_zero_shards(numels: list[int], world_size: int) -> list[list[list[int]]]:
    """Lay the parameters end to end; rank ``r`` owns elements
    ``[r * s, (r + 1) * s)`` with ``s = ceil(total / world_size)``. A piece is
    the overlap of that range with one parameter's range, in the parameter's
    own element numbers."""
    total = sum(numels)
    shard = -(-total // world_size)
    starts = list(itertools.accumulate([0, *numels]))
    owned = []
    for rank in range(world_size):
        lo, hi = rank * shard, (rank + 1) * shard
        pieces = []
        for index, (a, b) in enumerate(itertools.pairwise(starts)):
            start, stop = max(a, lo), min(b, hi)
            if start < stop:
                pieces.append([index, start - a, stop - a])
        owned.append(pieces)
    return owned


BROADCAST = (
    Case("two_ranks", (2, 0)),
    Case("four_ranks_from_zero", (4, 0)),
    Case("five_ranks_from_two", (5, 2)),
    Case("eight_ranks_from_three", (8, 3)),
    Case("one_rank_sends_nothing", (1, 0)),
)
STAGES = (
    Case("four_equal_layers_two_stages", ([1.0, 1.0, 1.0, 1.0], 2)),
    Case("one_heavy_layer", ([4.0, 1.0, 1.0, 1.0, 1.0], 2)),
    Case("growing_layers_three_stages", ([1.0, 2.0, 3.0, 4.0, 5.0, 6.0], 3)),
    Case("eight_layers_four_stages", ([3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0], 4)),
    Case("one_layer_per_stage", ([2.0, 7.0, 1.0], 3)),
)
SHARDS = (
    Case("two_parameters_two_ranks", ([4, 2], 2)),
    Case("one_parameter_each", ([3, 3, 3], 3)),
    Case("last_rank_holds_only_padding", ([5], 4)),
    Case("four_parameters_three_ranks", ([10, 1, 7, 2], 3)),
)

LAB = LabSpec(
    id="ch3_distributed",
    title="Chapter 3 practice — distributed training",
    source=CHAPTER,
    exercises=(
        Exercise("ch3_broadcast_rounds", "broadcast_rounds", BROADCAST, ref_broadcast_rounds,
                 compare="equal", hints=(
                     "After each round twice as many ranks have the data (or all of them): "
                     "every rank that has it sends it to one rank that has not.",
                     "Number the ranks from src: the i-th holder is rank (src + i) % "
                     "world_size. With h holders, holder i sends to holder-to-be h + i, "
                     "while h + i < world_size.",
                     "Loop while h < world_size: the round is [[(src + i) % p, (src + h + i) "
                     "% p] for i in range(min(h, p - h))], sorted; then h = min(2 * h, p). "
                     "Return the list of rounds ([] for one rank)."),
                 hints_zh=(
                     "每过一轮，拿到数据的 rank 数就翻一倍（或者已经是全部）：每个已有数据的 "
                     "rank 各发给一个还没有数据的 rank。",
                     "从 src 开始给 rank 编号：第 i 个持有者是 rank (src + i) % world_size。"
                     "当前有 h 个持有者时，持有者 i 发给第 h + i 个新持有者，前提是 h + i < "
                     "world_size。",
                     "当 h < world_size 时循环：这一轮是 [[(src + i) % p, (src + h + i) % p] "
                     "for i in range(min(h, p - h))]，排好序；然后 h = min(2 * h, p)。"
                     "返回各轮组成的列表（只有一个 rank 时返回 []）。")),
        Exercise("ch3_slowest_stage", "slowest_stage", STAGES, ref_slowest_stage,
                 hints=(
                     "Stages take consecutive layers, at least one each. A step runs at the "
                     "pace of its slowest stage, so you want the cut whose slowest stage is "
                     "fastest.",
                     "Cutting n layers into k stages means choosing k - 1 cut positions out "
                     "of 1..n-1; there are few enough here to try them all.",
                     "for cuts in itertools.combinations(range(1, n), k - 1): the stages are "
                     "costs[a:b] for consecutive a, b in (0, *cuts, n); keep the smallest "
                     "max(sum(stage)) and return it as a float."),
                 hints_zh=(
                     "每个阶段分到连续的若干层，至少一层。每一步的快慢取决于最慢的阶段，"
                     "所以要找的切法是让最慢的阶段尽可能快。",
                     "把 n 层切成 k 个阶段，就是从 1..n-1 中选出 k - 1 个切点；"
                     "这里的规模很小，可以全部试一遍。",
                     "for cuts in itertools.combinations(range(1, n), k - 1)：各阶段是 "
                     "costs[a:b]，a、b 取 (0, *cuts, n) 中相邻的两个数；保留最小的 "
                     "max(sum(stage))，以 float 返回。")),
        Exercise("ch3_zero_shards", "zero_shards", SHARDS, ref_zero_shards,
                 compare="equal", hints=(
                     "Put the parameters end to end in one flat vector and cut it into "
                     "world_size equal shards (the last one padded). A rank's shard can start "
                     "in the middle of one parameter and end in another.",
                     "The shard size is s = ceil(total / world_size); rank r owns the flat "
                     "elements r * s up to (r + 1) * s. Parameter i occupies the flat range "
                     "from the sum of the numels before it, numels[i] long.",
                     "For each rank and each parameter with flat range [a, b): start = "
                     "max(a, r * s), stop = min(b, (r + 1) * s); if start < stop, the rank "
                     "owns [i, start - a, stop - a]. A rank that holds only padding owns []."),
                 hints_zh=(
                     "把所有参数首尾相接拼成一个扁平向量，再切成 world_size "
                     "个等长的分片（最后一片补齐）。一个 rank 的分片可能从某个参数的中间开"
                     "始，到另一个参数里结束。",
                     "分片大小 s = ceil(total / world_size)；rank r 拥有扁平下标从 r * s 到 "
                     "(r + 1) * s 的元素。参数 i 在扁平向量中从它前面所有参数的 numel "
                     "之和开始，长 numels[i]。",
                     "对每个 rank 和每个扁平区间为 [a, b) 的参数：start = max(a, r * s)，"
                     "stop = min(b, (r + 1) * s)；若 start < stop，这个 rank 拥有 [i, start "
                     "- a, stop - a]。只持有补齐部分的 rank 拥有 []。")),
    ),
)
