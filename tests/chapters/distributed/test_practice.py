"""Chapter 3's practice references agree with the engine (and, for the stage
cut, with a second algorithm), so the self-check never teaches a wrong answer."""

from __future__ import annotations

import numpy as np
import pytest

from autograder.spec import load_lab
from chapters.autodiff import manual_seed, nn
from chapters.distributed import broadcast, run_simulated
from chapters.distributed.zero import ZeroAdam
from chapters.practice.ch3_distributed import spec


@pytest.mark.parametrize(("p", "src"), [(1, 0), (2, 1), (4, 0), (5, 2), (7, 6), (8, 3)])
def test_broadcast_rounds_are_the_messages_the_engine_sends(p, src):
    def program(g):
        g.check_shapes = False
        broadcast(g, np.zeros(1, np.float32), src=src)

    _, world = run_simulated(program, p, alpha=1.0, beta=0.0)  # round k starts at time k
    rounds: dict[int, list[list[int]]] = {}
    for m in world.messages:
        rounds.setdefault(round(m.start), []).append([m.src, m.dst])
    logged = [sorted(rounds[k]) for k in sorted(rounds)]
    assert spec.ref_broadcast_rounds(p, src) == logged


def _fewest_stages_within(costs, limit):
    """Greedy: fill each stage until the next layer would exceed ``limit``."""
    stages, load = 1, 0.0
    for c in costs:
        if load + c > limit:
            stages, load = stages + 1, 0.0
        load += c
    return stages


@pytest.mark.parametrize("case", spec.STAGES, ids=lambda c: c.name)
def test_slowest_stage_is_the_smallest_limit_a_greedy_cut_meets(case):
    costs, k = case.args
    best = spec.ref_slowest_stage(costs, k)
    # the smallest feasible limit is one of the sums of consecutive layers
    sums = sorted({sum(costs[a:b]) for a in range(len(costs)) for b in range(a + 1,
                                                                              len(costs) + 1)})
    smallest = next(s for s in sums if s >= max(costs) and _fewest_stages_within(costs, s) <= k)
    assert best == smallest


@pytest.mark.parametrize(("sizes", "p"), [([(3, 2)], 2), ([(3, 2), (2, 4)], 3),
                                          ([(5, 1), (1, 3)], 4)])
def test_zero_shards_cover_what_the_engine_keeps_on_each_rank(sizes, p):
    manual_seed(0)
    net = nn.Sequential(*[nn.Linear(i, o) for i, o in sizes])
    flat_params = [np.array(q.data, dtype=np.float32).reshape(-1) for q in net.parameters()]

    def program(g):
        return ZeroAdam(net, g, stage=1).master

    masters, _ = run_simulated(program, p)
    owned = spec.ref_zero_shards([a.size for a in flat_params], p)
    for rank, pieces in enumerate(owned):
        values = [flat_params[i][a:b] for i, a, b in pieces]
        mine = np.concatenate(values) if values else np.zeros(0, np.float32)
        padding = masters[rank][mine.size:]
        np.testing.assert_array_equal(masters[rank][:mine.size], mine)
        assert not padding.any(), f"rank {rank}: values beyond its pieces: {padding}"


def test_practice_spec_loads_from_its_folder():
    lab = load_lab(spec.CHAPTER.parent / "practice" / "ch3_distributed")
    assert [ex.id for ex in lab.exercises] == ["ch3_broadcast_rounds", "ch3_slowest_stage",
                                               "ch3_zero_shards"]
