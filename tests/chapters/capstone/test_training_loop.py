"""The capstone loop on the engine and in PyTorch, on 2 real processes, gives the
same loss curve and the same weights; gradient sync placement, clipping and a
NaN batch behave as the notebook says. One launch trains every configuration."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from chapters.capstone import engine_loop, side_by_side, torch_loop
from chapters.capstone.clip import clip_grad_norm_
from chapters.capstone.recipe import LoopConfig, OneProcess, accuracy, digits, held_out_digits
from chapters.torchcheck import assert_close

STEPS = 12
CONFIGS = {
    "fp32": LoopConfig(steps=STEPS, amp_dtype="float32"),
    "fp16": LoopConfig(steps=STEPS),
    "manual": LoopConfig(steps=STEPS, sync="manual"),
    "after_step": LoopConfig(steps=STEPS, sync="after_step"),
    "none": LoopConfig(steps=STEPS, sync="none"),
    "clip": LoopConfig(steps=STEPS, clip_norm=0.3),
    "poison": LoopConfig(steps=STEPS, poison_step=4, init_scale=2.0**12),
}
# loss of the global batch: float32 agrees to rounding, float16 autocast within
# the rounding of float16 matmuls (numpy and torch accumulate differently); the
# notebook states the same tolerances
LOSS_TOL = {"float32": {"rtol": 1e-5, "atol": 0}, "float16": {"rtol": 1e-3, "atol": 1e-3}}
WEIGHT_ATOL = {"float32": 1e-6, "float16": 1e-3}


@pytest.fixture(scope="module")
def runs():
    return side_by_side.run_many(CONFIGS, world_size=2, timeout=300)


@pytest.mark.parametrize("label", ["fp32", "fp16", "manual", "clip"])
def test_engine_and_torch_reach_the_same_loss_curve_and_weights(runs, label):
    engine, reference = runs[label]["engine"], runs[label]["torch"]
    dtype = CONFIGS[label].amp_dtype
    assert_close(engine.loss, reference.loss, **LOSS_TOL[dtype], what=f"{label} loss")
    for name, value in reference.weights[0].items():
        assert_close(engine.weights[0][name], value, rtol=0, atol=WEIGHT_ATOL[dtype],
                     what=f"{label} {name}")
    assert engine.loss[-1] < engine.loss[0] - 0.05, "the loss should fall"


@pytest.mark.parametrize("label", ["fp16", "manual", "clip", "poison"])
def test_synchronised_replicas_stay_identical(runs, label):
    for framework in ("engine", "torch"):
        assert runs[label][framework].replica_spread() == 0.0


@pytest.mark.parametrize("label", ["after_step", "none"])
def test_sync_after_the_step_or_never_lets_replicas_drift(runs, label):
    for framework in ("engine", "torch"):
        assert runs[label][framework].replica_spread() > 1e-4


def test_ddp_and_the_fixed_manual_all_reduce_train_identically(runs):
    assert_close(runs["manual"]["engine"].loss, runs["fp16"]["engine"].loss, rtol=1e-6, atol=0,
                 what="manual sync vs DDP")


def test_clipping_the_unscaled_synchronised_gradient_changes_training(runs):
    assert not np.allclose(runs["clip"]["engine"].loss, runs["fp16"]["engine"].loss, rtol=1e-4)


def test_two_ranks_equal_one_process_on_the_whole_batch(runs):
    config = CONFIGS["fp32"]
    alone = engine_loop.train(OneProcess(), config, digits(config.seed))
    assert_close(runs["fp32"]["engine"].loss, np.asarray(alone["loss"]), rtol=1e-5, atol=0,
                 what="2 ranks x 32 vs 1 process x 64")


def test_a_nan_on_one_rank_makes_every_rank_skip_that_step(runs):
    step = CONFIGS["poison"].poison_step
    for framework in ("engine", "torch"):
        run = runs["poison"][framework]
        assert list(np.flatnonzero(run.skipped)) == [step], framework
        assert run.scale[step + 1] == run.scale[step] / 2
        assert np.isnan(run.loss[step]) and np.isfinite(run.loss[step + 1:]).all()
    assert_close(runs["poison"]["engine"].loss, runs["poison"]["torch"].loss, rtol=1e-3, atol=0,
                 what="poisoned run")


def test_torch_loop_alone_matches_engine_alone_in_one_process():
    config = LoopConfig(steps=6)
    data = digits(config.seed)
    engine = engine_loop.train(OneProcess(), config, data)
    reference = torch_loop.train(OneProcess(), config, data)
    assert_close(np.asarray(engine["loss"]), np.asarray(reference["loss"]), rtol=1e-3, atol=0,
                 what="one-process loss")


def test_the_default_loop_learns_digits_on_both_frameworks():
    config = LoopConfig()
    data, test = digits(config.seed), held_out_digits(config.seed)
    engine = engine_loop.train(OneProcess(), config, data)
    reference = torch_loop.train(OneProcess(), config, data)
    assert_close(np.asarray(engine["loss"]), np.asarray(reference["loss"]),
                 **LOSS_TOL[config.amp_dtype], what="default run's loss")
    for name, run in (("engine", engine), ("torch", reference)):
        assert accuracy(run["weights"], test) >= 0.9, name
        assert not any(run["skipped"]), f"{name}: the scaler skipped a step"


def test_standardize_uses_the_training_statistics_only():
    from chapters.capstone.recipe import standardize

    train = np.array([[0.0, 1.0], [0.0, 3.0]], dtype=np.float32)
    other = np.array([[0.5, 2.0]], dtype=np.float32)
    scaled_train, scaled_other = standardize(train, other)
    np.testing.assert_allclose(scaled_train, [[0.0, -1.0], [0.0, 1.0]])
    np.testing.assert_allclose(scaled_other, [[0.5, 0.0]])


@pytest.mark.parametrize("max_norm", [0.05, 1.0, 100.0])
def test_clip_grad_norm_matches_torch(max_norm):
    from chapters.autodiff import tensor

    rng = np.random.default_rng(3)
    grads = [rng.standard_normal(s).astype(np.float32) for s in [(4, 3), (3,), (2, 2, 2)]]
    ours = [tensor(np.zeros_like(g), requires_grad=True) for g in grads]
    theirs = [torch.zeros(g.shape, requires_grad=True) for g in grads]
    for p, q, g in zip(ours, theirs, grads, strict=True):
        p.grad = tensor(g.copy())
        q.grad = torch.from_numpy(g.copy())
    norm = clip_grad_norm_(ours, max_norm)
    expected = torch.nn.utils.clip_grad_norm_(theirs, max_norm)
    assert norm == pytest.approx(float(expected), rel=1e-6)
    for p, q in zip(ours, theirs, strict=True):
        assert_close(p.grad, q.grad, rtol=1e-6, atol=1e-7, what="clipped grad")


def test_the_source_loops_all_reduce_argument_is_a_generator():
    model = torch.nn.Linear(3, 2)
    with pytest.raises(AttributeError, match="generator"):
        model.parameters().grad  # noqa: B018 - the source text's expression


@pytest.mark.cuda
def test_torch_loop_on_cuda_matches_the_engine():
    config = LoopConfig(steps=6)
    data = digits(config.seed)
    engine = engine_loop.train(OneProcess(), config, data)
    reference = torch_loop.train(OneProcess(), config, data, device="cuda")
    # CUDA float16 matmuls accumulate in float32, numpy's in float16: looser than on CPU
    assert_close(np.asarray(engine["loss"]), np.asarray(reference["loss"]), rtol=1e-2, atol=0,
                 what="one-process loss, engine vs torch on cuda")
