"""Gradient compression as DDP comm hooks: bytes saved, and what error feedback buys."""

from __future__ import annotations

import numpy as np
import pytest

import chapters.autodiff.functional as F
from chapters.autodiff import Tensor, manual_seed, nn, optim
from chapters.distributed import run_simulated
from chapters.distributed.compression import TopKCompressor, fp16_compress_hook
from chapters.distributed.ddp import DistributedDataParallel

FEATURES = 200


def _problem(seed=0):
    """Linear regression whose true weights are spread over every coordinate,
    with a few large ones: top-k alone keeps picking the large ones."""
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(FEATURES).astype(np.float32) * 0.3
    w[:5] *= 20
    x = rng.standard_normal((512, FEATURES)).astype(np.float32)
    return x, (x @ w)[:, None].astype(np.float32)


def _train(group, hook=None, state=None, steps=60):
    """Final loss and the bytes this rank sent while training (not at set-up)."""
    manual_seed(0)
    group.check_shapes = False
    net = nn.Linear(FEATURES, 1, bias=False)
    model = DistributedDataParallel(net, group)
    group.bytes_sent = 0
    if hook is not None:
        model.register_comm_hook(state, hook)
    opt = optim.SGD(model.parameters(), lr=0.05)
    x, y = _problem()
    shard = slice(group.rank * 256, (group.rank + 1) * 256)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.mse_loss(model(Tensor(x[shard])), Tensor(y[shard]))
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses[-1], group.bytes_sent


def test_fp16_halves_the_bytes_and_keeps_training():
    dense, _ = run_simulated(_train, 2)
    half, _ = run_simulated(_train, 2, fp16_compress_hook)
    (loss_dense, bytes_dense), (loss_half, bytes_half) = dense[0], half[0]
    payload_dense = FEATURES * 4 * 60          # ring, p = 2: each rank sends n bytes per step
    assert bytes_dense == payload_dense
    assert bytes_half == payload_dense // 2
    assert loss_half == pytest.approx(loss_dense, rel=0.05)


def test_top_k_needs_error_feedback():
    dense = run_simulated(_train, 2)[0][0][0]
    with_ef = run_simulated(lambda g: _train(g, TopKCompressor.hook, TopKCompressor(0.05)), 2)
    without = run_simulated(
        lambda g: _train(g, TopKCompressor.hook, TopKCompressor(0.05, error_feedback=False)), 2)
    (loss_ef, bytes_ef), (loss_no, _) = with_ef[0][0], without[0][0]
    k = int(np.ceil(0.05 * FEATURES))
    # per step: an all-gather of k int64 indices and one of k float32 values (p = 2)
    assert bytes_ef == 60 * (k * 8 + k * 4)
    assert bytes_ef < 0.4 * FEATURES * 4 * 60
    assert loss_ef < 0.5 * loss_no                  # error feedback recovers what top-k drops
    assert loss_ef < 10 * dense + 1e-3
