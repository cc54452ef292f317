"""Collectives: against torch.distributed on gloo (real processes), and in the
simulated world against numpy for more world sizes, with their exact traffic."""

from __future__ import annotations

import time

import numpy as np
import pytest

from chapters.distributed import (
    ALL_REDUCE_ALGORITHMS,
    DistributedError,
    ReduceOp,
    all_gather,
    all_reduce,
    broadcast,
    reduce_scatter,
    run_simulated,
)
from chapters.distributed import reduce as cm_reduce
from chapters.distributed.cost_model import fit_alpha_beta, measure_p2p, predict
from chapters.distributed.launcher import launch

from . import collective_programs as programs


@pytest.mark.parametrize("world_size", [2, 3, 4])
def test_every_collective_matches_torch_on_gloo(world_size):
    checks = launch(programs.check_against_torch, world_size, timeout=120)
    assert checks[0] > 100 and len(set(checks)) == 1


def test_integer_reductions_are_exact_and_failures_are_reported():
    launch(programs.integer_max, 3, timeout=60)
    with pytest.raises(DistributedError, match=r"shape \(1[012],\).*same shape"):
        launch(programs.mismatched_shapes, 3, timeout=30)
    with pytest.raises(DistributedError, match=r"rank 1 of 3 failed:(.|\n)*rank one gives up"):
        launch(programs.rank_one_raises, 3, timeout=30)
    with pytest.raises(DistributedError, match=r"rank 1 of 3 exited with code 7"):
        launch(programs.rank_one_dies, 3, timeout=30)
    start = time.monotonic()
    with pytest.raises(DistributedError, match=r"did not finish within 3 s"):
        launch(programs.everyone_waits, 2, timeout=3)
    assert time.monotonic() - start < 15


def _reference_run(world_size, size, op, algorithm):
    rng = np.random.default_rng(world_size * 100 + size)
    inputs = rng.standard_normal((world_size, size))
    combined = {ReduceOp.SUM: inputs.sum(0), ReduceOp.AVG: inputs.mean(0),
                ReduceOp.MAX: inputs.max(0), ReduceOp.MIN: inputs.min(0),
                ReduceOp.PRODUCT: inputs.prod(0)}[op]
    results, world = run_simulated(
        lambda g: all_reduce(g, inputs[g.rank].copy(), op, algorithm=algorithm), world_size)
    return results, combined


@pytest.mark.parametrize("world_size", [1, 2, 3, 5, 6, 7, 8])
@pytest.mark.parametrize("algorithm", ALL_REDUCE_ALGORITHMS)
def test_all_reduce_in_the_simulated_world(world_size, algorithm):
    for size in (1, 5, 64):
        for op in ReduceOp:
            results, expected = _reference_run(world_size, size, op, algorithm)
            for rank, got in enumerate(results):
                np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12,
                                           err_msg=f"rank {rank} {op.name} n={size}")
            # every rank ends with bit-identical values (replicas must not drift)
            assert all(np.array_equal(results[0], r) for r in results)


def test_gather_scatter_broadcast_in_the_simulated_world():
    p, n = 5, 12
    inputs = np.arange(p * n, dtype=np.float64).reshape(p, n) ** 1.5

    def program(g):
        mine = inputs[g.rank].copy()
        return (all_gather(g, mine), reduce_scatter(g, mine.copy()),
                broadcast(g, mine.copy(), src=3))

    results, _ = run_simulated(program, p)
    chunks = np.array_split(inputs.sum(0), p)
    for rank, (gathered, scattered, bcast) in enumerate(results):
        np.testing.assert_array_equal(np.stack(gathered), inputs)
        np.testing.assert_allclose(scattered, chunks[rank], rtol=1e-13)
        np.testing.assert_array_equal(bcast, inputs[3])


def _traffic(algorithm, p, n_floats, alpha, beta):
    def program(g):
        g.check_shapes = False
        all_reduce(g, np.ones(n_floats, np.float32), algorithm=algorithm)
        return g.bytes_sent

    sent, world = run_simulated(program, p, alpha=alpha, beta=beta)
    return sent, world


@pytest.mark.parametrize("p", [2, 4, 8])
def test_ring_bytes_per_rank_and_time_follow_the_alpha_beta_model(p):
    n_floats, alpha, beta = 4096, 2e-5, 1e-9
    n = 4 * n_floats
    sent, world = _traffic("ring", p, n_floats, alpha, beta)
    assert sent == [2 * (p - 1) * n // p] * p          # 2(p-1)/p n per rank...
    assert sum(sent) == 2 * (p - 1) * n                 # ...so the total grows with p
    assert world.makespan() == pytest.approx(2 * (p - 1) * (alpha + n / p * beta))
    assert sent == world.bytes_sent_per_rank()


def test_naive_all_reduce_funnels_everything_through_rank_zero():
    p, n_floats = 4, 1024
    sent, world = _traffic("naive", p, n_floats, 0.0, 1e-9)
    n = 4 * n_floats
    assert sent == [(p - 1) * n] + [n] * (p - 1)
    # rank 0's one incoming and one outgoing link each carry (p-1) n bytes
    assert world.makespan() == pytest.approx(2 * (p - 1) * n * 1e-9)
    received_by_zero = sum(m.nbytes for m in world.messages if m.dst == 0)
    assert received_by_zero == (p - 1) * n


def test_simulated_failures_name_the_rank_and_never_hang():
    def program(g):
        if g.rank == 2:
            raise RuntimeError("rank two broke")
        all_reduce(g, np.ones(4))

    with pytest.raises(DistributedError, match="rank 2 of 4 failed(.|\n)*rank two broke"):
        run_simulated(program, 4)
    with pytest.raises(DistributedError, match=r"rank 0 has a buffer of shape \(3,\)"):
        run_simulated(lambda g: all_reduce(g, np.ones(3 + g.rank)), 2)
    with pytest.raises(DistributedError, match=r"shape \(3,\) and a different dtype"):
        run_simulated(lambda g: all_reduce(g, np.ones(3, [np.float32, np.float64][g.rank])), 2)
    with pytest.raises(DistributedError, match="deadlock, every rank is waiting: rank 0 waits "
                                               "for a message from rank 1; rank 1 waits"):
        run_simulated(lambda g: g.recv(np.empty(1), 1 - g.rank), 2)


@pytest.mark.parametrize("p", [2, 3, 4, 5, 8])
@pytest.mark.parametrize("algorithm", ["ring", "naive", "recursive_doubling", "broadcast",
                                       "reduce", "all_gather", "reduce_scatter"])
def test_cost_model_predicts_the_simulated_network_exactly(p, algorithm):
    alpha, beta, n_floats = 3e-5, 2e-9, 120 * 8   # divisible by every p above
    calls = {"broadcast": lambda g, x: broadcast(g, x, src=0),
             "reduce": lambda g, x: cm_reduce(g, x, dst=0),
             "all_gather": lambda g, x: all_gather(g, x[:n_floats // p].copy()),
             "reduce_scatter": lambda g, x: reduce_scatter(g, x)}

    def program(g):
        g.check_shapes = False
        x = np.ones(n_floats)
        calls.get(algorithm, lambda g, x: all_reduce(g, x, algorithm=algorithm))(g, x)

    _, world = run_simulated(program, p, alpha=alpha, beta=beta)
    predicted = predict(algorithm, p, 8 * n_floats, alpha, beta)
    if algorithm == "reduce" and p & (p - 1):
        # uneven trees: short branches reach the root early and overlap
        assert predicted * 0.6 < world.makespan() <= predicted
    else:
        assert world.makespan() == pytest.approx(predicted)


def test_alpha_beta_fit_recovers_the_simulated_link():
    sizes = [8, 1024, 65536, 1 << 20]
    times, _ = run_simulated(lambda g: measure_p2p(g, sizes, repeats=2), 3,
                             alpha=7e-6, beta=3e-10)
    alpha, beta = fit_alpha_beta(sizes, times[0])
    assert alpha == pytest.approx(7e-6, rel=1e-6) and beta == pytest.approx(3e-10, rel=1e-6)
    assert times[0] == times[2]
