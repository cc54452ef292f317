"""The capstone GPT: one model source built on torch and on the engines, compared
forward and backward; its schedule and decay groups; training curves step by
step, in one process and over two under torchrun; a killed run resumed from its
checkpoint continues the same curve."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

import chapters.as_torch as engines
from chapters.capstone import gpt, gpt_comm
from chapters.capstone.gpt_train import main, train
from chapters.torchcheck import assert_close
from vizkit.timing import Timing

ROOT = Path(__file__).resolve().parents[3]
SMALL = gpt.GPTConfig(steps=8, batch=4, accumulate=2)


def _forward_backward(lib, config):
    model = gpt.build(lib, config)
    x, y = (lib.from_numpy(a) for a in gpt.batch_at(config, 0, 0, 0, 1))
    loss = model(x, y)
    loss.backward()
    return model, loss.item(), {n: p.grad.numpy().copy() for n, p in model.named_parameters()}


@pytest.mark.parametrize("attention", gpt.ATTENTION)
def test_engines_match_torch_forward_and_every_gradient(attention):
    config = SMALL.but(attention=attention)
    m_e, loss_e, grads_e = _forward_backward(engines, config)
    m_t, loss_t, grads_t = _forward_backward(torch, config)
    assert loss_t == pytest.approx(math.log(len(gpt.vocabulary())), rel=0.05)  # near-uniform
    assert loss_e == pytest.approx(loss_t, rel=1e-6, abs=1e-6)
    assert grads_e.keys() == grads_t.keys() == gpt.parameter_shapes(config).keys()
    for name in grads_t:
        assert_close(grads_e[name], grads_t[name], rtol=1e-4, atol=2e-6, what=name)
    assert m_e.head.weight is m_e.tok.weight and m_t.head.weight is m_t.tok.weight
    assert (sum(p.numel() for p in m_e.parameters())
            == sum(p.numel() for p in m_t.parameters()))


def test_the_two_attention_paths_agree():
    outputs = []
    for attention in gpt.ATTENTION:
        model = gpt.build(engines, SMALL.but(attention=attention))
        x, _ = gpt.batch_at(SMALL, 0, 0, 0, 1)
        outputs.append(model(engines.from_numpy(x)).detach().numpy())
    assert_close(outputs[0], outputs[1], rtol=1e-5, atol=1e-6, what="logits")


def test_learning_rate_warms_up_then_follows_a_cosine_to_its_floor():
    c = gpt.GPTConfig(steps=20, warmup=4, lr=1.0, min_lr_ratio=0.1)
    lrs = [gpt.learning_rate(c, s) for s in range(c.steps)]
    assert lrs[:4] == pytest.approx([0.25, 0.5, 0.75, 1.0])
    assert lrs[-1] == pytest.approx(0.1)
    middle = 4 + (c.steps - 1 - 4) / 2   # half way along the cosine: the mean of lr and floor
    assert gpt.learning_rate(c, int(middle)) > 0.55 > gpt.learning_rate(c, int(middle) + 1)
    assert all(a >= b for a, b in zip(lrs[3:], lrs[4:], strict=False))


def test_weight_decay_only_on_matrices_and_embeddings():
    model = gpt.build(engines, SMALL)
    decayed, plain = gpt.optimizer(engines, model, SMALL).param_groups
    names = {id(p): n for n, p in model.named_parameters()}
    assert decayed["weight_decay"] == SMALL.weight_decay and plain["weight_decay"] == 0.0
    assert all(p.dim() >= 2 for p in decayed["params"])
    assert {names[id(p)].rsplit(".", 1)[-1] for p in plain["params"]} == {"weight", "bias"}
    assert all(".ln" in names[id(p)] or names[id(p)].startswith("ln")
               or names[id(p)].endswith("bias") for p in plain["params"])


@pytest.mark.parametrize("amp_dtype", ["float32", "bfloat16", "float16"])
def test_one_process_training_follows_torch_step_by_step(amp_dtype):
    config = SMALL.but(amp_dtype=amp_dtype)
    ours = train(engines, config)["history"]
    theirs = train(torch, config)["history"]
    tol = 1e-5 if amp_dtype == "float32" else 2e-3   # low precision: rounding differs
    assert_close(np.array(ours["loss"]), np.array(theirs["loss"]), rtol=tol, atol=0,
                 what=f"{amp_dtype} loss curve")
    assert theirs["loss"][-1] < theirs["loss"][0] - 0.3
    assert ours["lr"] == theirs["lr"] and not any(ours["skipped"])


def test_timing_the_all_reduce_needs_two_ranks():
    with pytest.raises(SystemExit, match="--world-size 2 or more"):
        main(["--world-size", "1", "--comm-repeats", "5"])


def _command(tmp_path: Path, name: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "chapters.capstone.gpt_train", "--steps", "10", "--batch", "4",
            "--no-progress", "--sample", "20", "--eval-every", "5",
            "--out", str(tmp_path / f"{name}.json"), *extra]


def _run(tmp_path: Path, name: str, *extra: str) -> dict:
    done = subprocess.run(_command(tmp_path, name, *extra), capture_output=True, text=True,
                          cwd=ROOT, timeout=240, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    return json.loads((tmp_path / f"{name}.json").read_text())


@pytest.mark.slow
def test_two_processes_with_ddp_follow_torch_and_a_killed_run_resumes_the_same_curve(tmp_path):
    ours = _run(tmp_path, "engines", "--engines", "--comm-repeats", "5")
    theirs = _run(tmp_path, "torch", "--comm-repeats", "5")
    assert ours["world_size"] == theirs["world_size"] == 2
    for numbers in (ours, theirs):
        comm = {name: Timing(**t) for name, t in numbers["comm"].items()}
        assert set(comm) == {*gpt_comm.MODES, "all_reduce"}
        assert all(t.rounds == 5 and 0 < t.low <= t.median <= t.high for t in comm.values())
        assert comm["all_reduce"].median < comm["after"].median   # a part of that step
        assert all(0 <= share < 1 for share in gpt_comm.shares(comm).values())
    assert_close(np.array(ours["history"]["loss"]), np.array(theirs["history"]["loss"]),
                 rtol=2e-3, atol=0, what="2-rank bfloat16 loss curve")
    assert len(ours["history"]["val"]) == 2

    checkpoint = tmp_path / "gpt.ckpt"
    resumable = ("--engines", "--checkpoint", str(checkpoint), "--checkpoint-every", "2")
    first = subprocess.Popen(_command(tmp_path, "killed", *resumable), cwd=ROOT,
                             env={**os.environ, "PYTHONPATH": str(ROOT)},
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and first.poll() is None:
        if checkpoint.exists() and engines.load(checkpoint)["step"] >= 4:
            break
        time.sleep(0.05)
    assert first.poll() is None, "the run ended before it could be killed"
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    at_kill = engines.load(checkpoint)["step"]
    assert 4 <= at_kill < 10
    resumed = _run(tmp_path, "resumed", *resumable)["history"]
    assert resumed["loss"] == ours["history"]["loss"], "the resumed curve is the same curve"
