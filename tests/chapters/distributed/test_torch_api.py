"""chapters.distributed.torch_api against real torch.distributed: 2 processes
started as torchrun starts them (env://, gloo on 127.0.0.1, a free port), each
check run by both on the same inputs; and an ordinary torch DDP script run
under real torchrun, once with PyTorch and once on the engines."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import numpy as np
import pytest
import torch
import torch.distributed as tdist

from chapters.autodiff import Tensor
from chapters.distributed import torch_api as dist
from tests.notebooks.harness import ROOT

from .env_ranks import run_ranks

PROGRAMS = ["collectives", "misuse", "ddp_accumulation", "ddp_buffers", "forgotten"]


@pytest.fixture(scope="module")
def ranks() -> list[dict]:
    """Every rank program in one launch; "forgotten" (last) exits without destroying
    its group and with an async all-reduce never waited on: run_ranks fails unless
    both processes exit 0."""
    outputs = run_ranks(["-m", "tests.chapters.distributed.torch_api_programs", *PROGRAMS],
                        world_size=2, timeout=300)
    found = []
    for out in outputs:
        line = [x for x in out.splitlines() if x.startswith("RESULT ")]
        assert line, out[-2000:]
        found.append(json.loads(line[-1][len("RESULT "):]))
    return found


def test_every_collective_matches_torch(ranks):
    # all_reduce x 5 ops, reduce, reduce_scatter(_tensor), broadcast, all_gather(_into_tensor),
    # all_to_all over 3 dtypes x 3 shapes; transposed views, send/recv, isend/irecv, new_group
    assert all(r["collectives"]["checks"] >= 180 for r in ranks)


def test_misuse_raises_torch_errors(ranks):
    for rank in ranks:
        found = rank["misuse"]
        assert found["twice"][0] == found["twice"][1]            # ours == torch's
        assert found["self-send"][0] == found["self-send"][1]
        assert found["BAND"][0][0] == "NotImplementedError" and "MAX" in found["BAND"][0][1]
        assert found["torch tensor"][0][0] == "TypeError"
        assert "real torch" in found["torch tensor"][0][1]
        assert found["wrong size"][0][0] == "RuntimeError"
        assert found["list length"][0][0] == "ValueError"
        assert found["tag"][0][0] == "NotImplementedError"
        assert found["gather"][0] == ["NotImplementedError", found["gather"][0][1]]
        assert "all_gather" in found["gather"][0][1]
        assert found["unused parameters"][0][0] == "NotImplementedError"
        assert found["device_ids"][0][0] == "ValueError"


@pytest.mark.parametrize("call", [
    lambda d, t: d.get_rank(),
    lambda d, t: d.get_world_size(),
    lambda d, t: d.barrier(),
    lambda d, t: d.all_reduce(t),
    lambda d, t: d.broadcast(t, src=0),
    lambda d, t: d.destroy_process_group(),
])
def test_before_init_process_group_the_errors_are_torchs(call):
    assert not tdist.is_initialized() and not dist.is_initialized()
    errors = []
    for module, tensor in ((dist, Tensor(np.ones(2))), (tdist, torch.ones(2))):
        with pytest.raises(Exception) as caught:
            call(module, tensor)
        errors.append((type(caught.value), str(caught.value)))
    assert errors[0] == errors[1]


def test_init_reads_torchs_environment(monkeypatch):
    for name in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ValueError, match="environment variable RANK expected, but not set"):
        dist.init_process_group("gloo")
    assert not dist.is_initialized()


def test_ddp_no_sync_matches_torch_ddp_and_sends_nothing_inside(ranks):
    for rank in ranks:
        found = rank["ddp_accumulation"]
        # 3 steps x 3 micro-batches, 2 of each under no_sync: not one byte inside
        assert found["sent_inside"] == [0] * 6
        # each synchronized backward: a ring all-reduce on 2 ranks sends every float32
        # gradient element once, plus one 64-byte shape check per bucket
        assert found["sent_synced"] == [4 * found["n_params"] + 64 * found["buckets"]] * 3
        assert found["grad_diff"] <= 1e-6        # float32, |grad| ~ 1e-1
        assert found["param_diff"] <= 1e-6


def test_ddp_buffers_follow_torch(ranks):
    for rank in ranks:
        assert rank["ddp_buffers"]["worst"] <= 1e-6


def _torchrun(*target: str) -> list[str]:
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
             *target, "tests/programs/ddp_no_sync.py"],
            cwd=ROOT, capture_output=True, text=True, timeout=240)
        # real torch's gloo teardown now and then aborts a rank after the program has
        # finished ("terminate called without an active exception"): run it once more
        if done.returncode == 0 or target or "terminate called" not in done.stderr:
            break
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    # the two ranks share one pipe, so one's line may run into the other's: match up to the end
    lines = re.findall(r"rank \d/2: .*?loss \S+ -> -?\d+\.\d{4}", done.stdout)
    assert len(lines) == 2, done.stdout
    return lines


def _numbers(line: str) -> dict[str, float]:
    pattern = (r"start spread (\S+) -> after DDP (\S+); grad spread inside no_sync (\S+), "
               r"after sync (\S+); synced grad vs mean of local grads (\S+);")
    keys = ("start", "drift", "inside", "after", "versus_mean")
    return dict(zip(keys, map(float, re.search(pattern, line).groups()), strict=True))


@pytest.mark.slow
@pytest.mark.parametrize("runner", [(), ("-m", "chapters.as_torch")],
                         ids=["pytorch", "engines"])
def test_torch_ddp_script_under_torchrun(runner):
    for line in _torchrun(*runner):
        found = _numbers(line)
        assert found["start"] == 0 and found["drift"] == 0        # rank 0's init, no drift
        assert found["inside"] > 0.01                           # no_sync: local gradients
        assert found["after"] == 0                              # synced: identical everywhere
        assert found["versus_mean"] <= 1e-6                     # ... and the mean of the locals
