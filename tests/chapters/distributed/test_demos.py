"""The chapter's experiment functions (chapters.distributed.demos) measure what
their docstrings say, checked against closed forms and deliberate corruption."""

from __future__ import annotations

import numpy as np
import pytest

from chapters.distributed import demos, run_simulated
from chapters.distributed.cost_model import predict
from chapters.distributed.zero import paper_bytes_per_param


@pytest.mark.parametrize("p", [2, 4])
def test_ring_traffic_counts_two_p_minus_one_over_p_buffers(p):
    floats = 8 * p
    run = demos.ring_traffic(p, floats, alpha=1e-5, beta=1e-9)
    assert run["sent"] == [2 * (p - 1) * 4 * floats // p] * p
    assert run["naive_root"] == (p - 1) * 4 * floats
    assert np.isclose(run["makespan"], predict("ring", p, 4 * floats, 1e-5, 1e-9))


def test_max_difference_takes_the_worst_array():
    got = {"a": np.zeros(3), "b": np.array([1.0, -2.5])}
    assert demos.max_difference(got, {"a": np.ones(3), "b": np.zeros(2)}) == 2.5


def test_tensor_parallel_check_is_small_and_catches_a_wrong_shard():
    runs, _ = run_simulated(demos.tensor_parallel_step, 2, 4, 6, 8)
    assert demos.tensor_parallel_vs_unsplit(runs, 6, 8) < 1e-5
    runs[1]["params"]["fc1.weight"] = runs[1]["params"]["fc1.weight"] + 0.5
    assert demos.tensor_parallel_vs_unsplit(runs, 6, 8) == pytest.approx(0.5)


def test_one_micro_batch_leaves_all_but_one_stage_idle():
    bubbles, stage_ms = demos.measured_bubbles(3, [1])
    assert bubbles == [pytest.approx(2 / 3)]
    assert len(stage_ms) == 3 and all(t > 0 for t in stage_ms)


def test_modelled_pipeline_step_takes_the_schedule_time():
    runs, _ = run_simulated(demos.pipeline_program, 2, "gpipe", 2, alpha=0, beta=0)
    end = max(iv.end for r in runs for iv in r.intervals)
    # two stages, two micro-batches, F = 1 ms, B = 2 ms: (m + p - 1) (F + B)
    assert end == pytest.approx(3 * 3e-3)


def test_zero_training_holds_the_papers_bytes_and_trains_identically():
    finals = {}
    for stage in (0, 3):
        runs, _ = run_simulated(demos.zero_training, 2, stage, 2)
        held, numel, finals[stage] = runs[0]
        assert sum(held.values()) / numel == pytest.approx(paper_bytes_per_param(stage, 2))
    np.testing.assert_array_equal(finals[0], finals[3])


def test_compressed_training_counts_bytes_after_the_first_broadcast():
    results, _ = run_simulated(demos.compressed_training, 2, None, None, 3)
    loss, sent = results[0]
    assert sent == 3 * 2 * (2 - 1) * 200 * 4 // 2  # 3 steps of ring all-reduce, 200 floats
    assert np.isfinite(loss)
