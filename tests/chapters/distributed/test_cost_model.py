"""The cost model's consequences that chapter 3 claims: tensor parallelism's bytes
against data parallelism's, and the rank count where a data-parallel step is
fastest. Checked against bytes counted in the simulated world and against a
brute-force search over the written-out step-time formula."""

from __future__ import annotations

import numpy as np
import pytest

from chapters.distributed import all_reduce, demos, run_simulated
from chapters.distributed.cost_model import (
    data_parallel_step_seconds,
    fastest_rank_count,
    tensor_parallel_bytes_per_rank,
    tp_exceeds_dp_batch,
)


def tp_bytes_counted(p, batch, features, hidden):
    """Bytes rank 0 sent in one simulated step of the Megatron-split MLP."""
    runs, _ = run_simulated(demos.tensor_parallel_step, p, batch, features, hidden)
    return runs[0]["bytes_sent"]


def dp_bytes_counted(p, grad_bytes):
    """Bytes rank 0 sent in a simulated ring all-reduce of ``grad_bytes`` of float32."""
    def program(g):
        g.check_shapes = False
        all_reduce(g, np.zeros(grad_bytes // 4, np.float32))
        return g.bytes_sent

    return run_simulated(program, p)[0][0]


@pytest.mark.parametrize(("p", "batch"), [(2, 3), (2, 10), (4, 8)])
def test_tensor_parallel_bytes_match_the_simulated_messages(p, batch):
    assert tensor_parallel_bytes_per_rank(p, batch, 8) == tp_bytes_counted(p, batch, 8, 16)


@pytest.mark.parametrize("p", [2, 4])
def test_crossover_batch_is_where_counted_tp_bytes_pass_counted_dp_bytes(p):
    features, hidden = 8, 16
    grad_bytes = 4 * sum(q.data.size for q in demos.mlp(features, hidden, features).parameters())
    batch = tp_exceeds_dp_batch(features, grad_bytes)
    dp = dp_bytes_counted(p, grad_bytes)
    assert tp_bytes_counted(p, batch - 1, features, hidden) <= dp < tp_bytes_counted(
        p, batch, features, hidden)
    assert abs(batch - hidden) <= 2  # about the hidden width, biases aside


def test_crossover_batch_at_exact_equality_is_the_next_one():
    assert tp_exceeds_dp_batch(4, 2 * 4 * 4 * 10) == 11  # 10 examples tie, 11 exceed


def written_out_step_time(p, c, n, alpha, beta):
    return c / p + 2 * (p - 1) * alpha + 2 * (p - 1) / p * n * beta


@pytest.mark.parametrize("seed", range(20))
def test_fastest_rank_count_matches_a_brute_force_search(seed):
    rng = np.random.default_rng(seed)
    c, n = 10 ** rng.uniform(-3, 0), 10 ** rng.uniform(3, 8)
    alpha, beta = 10 ** rng.uniform(-6, -4), 10 ** rng.uniform(-11, -9)
    times = {p: written_out_step_time(p, c, n, alpha, beta) for p in range(1, 2000)}
    for p in (1, 7, 100):
        assert data_parallel_step_seconds(p, c, n, alpha, beta) == pytest.approx(times[p])
    assert fastest_rank_count(c, n, alpha, beta) == min(times, key=times.get)


def test_one_rank_is_fastest_when_bandwidth_alone_outweighs_compute():
    assert fastest_rank_count(1e-3, 1e6, 1e-5, 1e-9) == 1  # 2 n beta = 2 ms > 1 ms


def test_no_latency_has_no_fastest_count_and_says_so():
    with pytest.raises(ValueError, match="alpha > 0"):
        fastest_rank_count(1e-2, 1e5, 0.0, 1e-9)
