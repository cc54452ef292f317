"""Data, tensor and pipeline parallelism and ZeRO on engine modules: every
split run equals the single-process run (and torch's DDP), on real processes
and in the simulated world."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chapters.autodiff.functional as F
from chapters.autodiff import Tensor, nn
from chapters.distributed import run_simulated
from chapters.distributed.ddp import FIRST_BUCKET_BYTES, DistributedDataParallel, build_buckets
from chapters.distributed.launcher import launch
from chapters.distributed.pipeline import (
    bubble_fraction,
    gpipe_schedule,
    ideal_bubble_fraction,
    one_f_one_b_schedule,
    peak_in_flight,
)
from chapters.distributed.zero import paper_bytes_per_param
from chapters.torchcheck import assert_close, torch_ddp_buckets

from . import engine_programs as programs

FWD = dict(rtol=1e-5, atol=1e-6)
GRAD = dict(rtol=1e-4, atol=1e-6)


@pytest.fixture(scope="module", params=[2, 3, 4])
def suite(request):
    return request.param, launch(programs.engine_suite, request.param, timeout=180)


def _same(a: dict, b: dict, what: str, **tol):
    assert a.keys() == b.keys(), what
    for k in a:
        assert_close(a[k], b[k], **tol, what=f"{what} {k}")


def test_ddp_equals_one_process_with_the_whole_batch_and_torch_ddp(suite):
    p, results = suite
    for key, accumulate, batch, steps in (("ddp", 1, 4, 3), ("ddp_accumulate", 2, 3, 2)):
        runs = [r[key] for r in results]
        for r in runs[1:]:   # rank 0's start was broadcast: every replica identical
            _same(r["start"], runs[0]["start"], f"{key} start", rtol=0, atol=0)
            _same(r["ours"], runs[0]["ours"], f"{key} replicas", rtol=0, atol=0)
        single = programs.single_process_training(runs[0]["start"], steps, p * batch,
                                                  accumulate)
        _same(runs[0]["ours"], single, f"{key} vs one process", **FWD)
        _same(runs[0]["ours"], runs[0]["torch"], f"{key} vs torch DDP", **FWD)
        assert not np.allclose(runs[0]["ours"]["0.weight"], runs[0]["start"]["0.weight"])
    names = results[0]["ddp"]["buckets"]
    assert names[0][0] == "4.bias" and names[-1][-1] == "0.weight"


def test_megatron_mlp_equals_the_unsplit_mlp(suite):
    p, results = suite
    _check_tensor_parallel([r["tp"] for r in results])


def _check_tensor_parallel(runs):
    p = len(runs)
    full = runs[0]["full"]
    ref = {k: torch.tensor(v, requires_grad=True) for k, v in full.items()}
    x = torch.tensor(runs[0]["x"], requires_grad=True)
    out = torch.nn.functional.linear(
        torch.nn.functional.gelu(torch.nn.functional.linear(x, ref["fc1.weight"],
                                                            ref["fc1.bias"])),
        ref["fc2.weight"], ref["fc2.bias"])
    out.backward(torch.tensor(runs[0]["cotangent"]))
    h = programs.TP_HIDDEN // p
    for rank, run in enumerate(runs):
        rows = slice(rank * h, (rank + 1) * h)
        assert_close(run["out"], out, **FWD, what=f"rank {rank} output")
        assert_close(run["x.grad"], x.grad, **GRAD, what=f"rank {rank} input gradient")
        assert_close(run["grad fc1.weight"], ref["fc1.weight"].grad[rows], **GRAD,
                     what=f"rank {rank} column-parallel weight grad")
        assert_close(run["grad fc1.bias"], ref["fc1.bias"].grad[rows], **GRAD, what="fc1.bias")
        assert_close(run["grad fc2.weight"], ref["fc2.weight"].grad[:, rows], **GRAD,
                     what=f"rank {rank} row-parallel weight grad")
        assert_close(run["grad fc2.bias"], ref["fc2.bias"].grad, **GRAD, what="fc2.bias")


@pytest.mark.parametrize("p", [2, 4])
def test_megatron_mlp_in_the_simulated_world(p):
    runs, world = run_simulated(programs.tensor_parallel_mlp, p)
    _check_tensor_parallel(runs)
    # one all-reduce forward (g) and one backward (f), each of a 5 x 8 float32 activation
    payload = [m for m in world.messages if m.label != "shape check"]
    assert sum(m.nbytes for m in payload) == 2 * 2 * (p - 1) * 5 * 8 * 4


def _full_pipeline_grads(run):
    net = programs.deep_net()
    F.mse_loss(net(Tensor(run["x"])), Tensor(run["target"])).backward()
    return {n: p.grad.data for n, p in net.named_parameters()}


def _check_pipeline(runs, schedule, m):
    """``runs``: each rank's result of one pipeline step with ``schedule``."""
    p = len(runs)
    got = {}
    for rank, run in enumerate(runs):
        got.update(run["grads"])
        assert run["peak"] == (m if schedule == "gpipe" else min(m, p - rank)), (schedule, rank)
    _same(got, _full_pipeline_grads(runs[0]), f"{schedule} grads", **GRAD)


def test_pipeline_gradients_equal_the_whole_model(suite):
    p, results = suite
    for schedule in ("gpipe", "1f1b"):
        _check_pipeline([r["pipeline"][schedule] for r in results], schedule, m=4)


@pytest.mark.parametrize("schedule", ["gpipe", "1f1b"])
def test_pipeline_bubble_in_the_simulated_world(schedule):
    for p, m in ((4, 8), (3, 2), (2, 6)):
        runs, _ = run_simulated(programs.pipeline_step, p, schedule, m, batch=4 * m,
                                modelled_cost={"F": 1e-3, "B": 2e-3}, alpha=0, beta=0)
        _check_pipeline(runs, schedule, m)
        intervals = [iv for r in runs for iv in r["intervals"]]
        assert bubble_fraction(intervals, p) == pytest.approx(ideal_bubble_fraction(p, m))
        # with equal stages the step takes (m + p - 1)(F + B)
        assert max(iv.end for iv in intervals) == pytest.approx((m + p - 1) * 3e-3)


def test_schedules_run_each_micro_batch_once_and_1f1b_bounds_activations():
    for p, m in ((2, 1), (3, 5), (4, 8)):
        for s in range(p):
            for schedule in (gpipe_schedule, one_f_one_b_schedule):
                actions = schedule(p, m, s)
                assert sorted(actions) == sorted([("F", i) for i in range(m)]
                                                 + [("B", i) for i in range(m)])
                held, peak = 0, 0
                for kind, _ in actions:
                    held += 1 if kind == "F" else -1
                    peak = max(peak, held)
                    assert held >= 0
                expected = m if schedule is gpipe_schedule else min(m, p - s)
                assert peak == expected == peak_in_flight(actions)


def test_zero_stages_equal_plain_data_parallel_adam(suite):
    p, results = suite
    zero = [r["zero"] for r in results]
    for stage in (1, 2, 3):
        for rank in range(p):
            assert_close(zero[rank][stage]["params"], zero[0][0]["params"], rtol=0, atol=0,
                         what=f"stage {stage} rank {rank} vs stage 0")
    # stage 0 against torch.optim.Adam on one process with the whole batch
    start = zero[0][0]["start"]
    net = programs.make_net(0)
    ref = programs.torch_net(net)
    flat = torch.from_numpy(start)
    torch.nn.utils.vector_to_parameters(flat, ref.parameters())
    opt = torch.optim.Adam(ref.parameters(), lr=1e-2)
    x, y = programs.data(p * 4 * 3)
    for step in range(3):
        opt.zero_grad()
        sl = slice(step * p * 4, (step + 1) * p * 4)
        out = ref(torch.from_numpy(x[sl]))
        torch.nn.functional.mse_loss(out, torch.from_numpy(y[sl])).backward()
        opt.step()
    assert_close(zero[0][0]["params"], torch.nn.utils.parameters_to_vector(ref.parameters()),
                 **FWD, what="ZeRO stage 0 vs torch Adam on the whole batch")


@pytest.mark.parametrize("p", [2, 4])
def test_zero_bytes_per_rank_follow_the_paper(p):
    def program(g):
        return {s: programs.zero_training(g, s, steps=1, half=True) for s in (0, 1, 2, 3)}

    runs, _ = run_simulated(program, p)
    numel = runs[0][0]["numel"]
    shard = -(-numel // p)            # the flat vector is padded to p equal shards
    exact = {0: 16 * numel, 1: 4 * numel + 12 * shard, 2: 2 * numel + 14 * shard,
             3: 16 * shard}
    for stage in (0, 1, 2, 3):
        for rank in range(p):
            measured = sum(runs[rank][stage]["bytes"].values())
            assert measured == exact[stage], (stage, rank, runs[rank][stage]["bytes"])
        per_param = exact[stage] / numel
        assert per_param == pytest.approx(paper_bytes_per_param(stage, p), rel=0.01)


def _mixed_net():
    return nn.Sequential(nn.Linear(100, 100), nn.Linear(100, 10), nn.Linear(10, 10),
                         nn.Linear(10, 4).double(), nn.Linear(4, 3))


@pytest.mark.parametrize("cap", [0, 400, 41000, 45000, 25 * 2**20])
def test_buckets_are_assigned_as_torch_ddp_assigns_them(cap):
    named = list(_mixed_net().named_parameters())
    buckets = build_buckets(named, bucket_cap_bytes=cap)
    assert [b.names for b in buckets] == torch_ddp_buckets(named, [cap])
    assert sorted(n for b in buckets for n in b.names) == sorted(n for n, _ in named)
    for b in buckets:  # a bucket overshoots the cap by at most its last parameter
        assert b.nbytes - b.params[-1].data.nbytes < max(cap, 1)


@pytest.mark.parametrize("first, cap", [(0, 41000), (400, 45000), (41000, 400),
                                        (45000, 25 * 2**20), (100, 0)])
def test_first_bucket_limit_is_applied_as_torch_applies_it(first, cap):
    named = list(_mixed_net().named_parameters())
    buckets = build_buckets(named, cap, first_bucket_cap_bytes=first)
    assert [b.names for b in buckets] == torch_ddp_buckets(named, [first, cap])


def test_default_ddp_caps_its_first_bucket_at_torchs_first_bucket_bytes():
    import torch.distributed as dist

    assert FIRST_BUCKET_BYTES == dist._DEFAULT_FIRST_BUCKET_BYTES
    net = nn.Sequential(nn.Linear(256, 512), nn.Linear(512, 512), nn.Linear(512, 512))
    named = list(net.named_parameters())

    def names(cap_mb):
        def build(g):
            return [b.names for b in DistributedDataParallel(net, g, cap_mb).buckets]
        return run_simulated(build, 1)[0][0]

    limits = [dist._DEFAULT_FIRST_BUCKET_BYTES, 25 * 2**20]
    assert names(None) == torch_ddp_buckets(named, limits) == [
        ["2.bias", "2.weight"], ["1.bias", "1.weight", "0.bias", "0.weight"]]
    assert names(25.0) == torch_ddp_buckets(named, [25 * 2**20]) and len(names(25.0)) == 1


def test_buckets_take_parameters_in_reverse_order():
    net = nn.Sequential(nn.Linear(100, 100), nn.Linear(100, 10), nn.Linear(10, 10))
    named = list(net.named_parameters())
    buckets = build_buckets(named, bucket_cap_bytes=41000)
    order = [n for b in buckets for n in b.names]
    assert order == [n for n, _ in reversed(named)]
    assert len(build_buckets(named, 0)) == len(named)
    assert len(build_buckets(named, 25 * 2**20)) == 1


def test_hybrid_data_times_tensor_parallel_equals_one_process():
    from chapters.distributed import demos

    x, y = demos.regression_data(16, 6, 3)
    runs, world = run_simulated(demos.hybrid_training, 4, x, y, 3, 2)
    reference = demos.mlp(6, 32, 3)
    demos.train_single(reference, x, y, 3)
    expected = {n: p.data for n, p in reference.named_parameters()}
    for row in (runs[:2], runs[2:]):          # each mesh row holds a whole (split) model
        _same(demos.assemble_tensor_parallel(row), expected, "hybrid vs one process", **FWD)
    # tensor-parallel traffic stays inside rows, data-parallel traffic inside columns
    pairs = {(m.src, m.dst) for m in world.messages}
    assert pairs <= {(0, 1), (1, 0), (2, 3), (3, 2), (0, 2), (2, 0), (1, 3), (3, 1)}


def test_ddp_reports_a_parameter_that_got_no_gradient():
    from chapters.distributed import DistributedError
    from chapters.distributed.ddp import DistributedDataParallel

    class TwoHeads(nn.Module):
        def __init__(self):
            super().__init__()
            self.used, self.unused = nn.Linear(3, 1), nn.Linear(3, 1)

        def forward(self, x):
            return self.used(x)

    def program(g):
        model = DistributedDataParallel(TwoHeads(), g)
        x = Tensor(np.ones((2, 3), np.float32))
        model(x).sum().backward()
        model(x)

    with pytest.raises(DistributedError, match=r"no gradient in the last backward: "
                                               r"\['unused.bias', 'unused.weight'\]"):
        run_simulated(program, 2)
