"""The four pitfalls of the source text's 3.6, measured (see chapters/capstone/pitfalls.py)."""

from __future__ import annotations

import numpy as np
import pytest

from chapters import autodiff as ad
from chapters.capstone import pitfalls
from chapters.capstone.recipe import digits
from chapters.distributed.cost_model import predict


@pytest.fixture(scope="module")
def data():
    return digits(0)


def test_adam_on_float16_weights_without_masters_diverges_with_masters_it_tracks_float32(data):
    runs = pitfalls.half_precision_runs(data, steps=30, lr=1e-3, optimizer="Adam")
    full, bare, mixed = (np.asarray(runs[m]["loss"]) for m in pitfalls.HALF_MODES)
    assert not np.isfinite(bare[-1])
    assert np.isfinite(mixed).all()
    np.testing.assert_allclose(mixed, full, rtol=5e-3)


def test_sgd_on_float16_weights_loses_updates_that_masters_keep(data):
    runs = pitfalls.half_precision_runs(data, steps=10, lr=0.01, optimizer="SGD")
    assert np.mean(runs[pitfalls.HALF_MODES[1]]["lost"]) > 0.1
    assert max(runs[pitfalls.HALF_MODES[2]]["lost"]) < 0.01
    assert max(runs[pitfalls.HALF_MODES[0]]["lost"]) < 0.01


def test_inference_without_no_grad_keeps_every_graph_alive(data):
    held = pitfalls.graph_lifetime(data, iterations=6)
    leaking = np.asarray(held[pitfalls.LIFETIME_MODES[0]])
    per_iteration = np.diff(leaking)
    assert leaking[0] > 0 and np.all(per_iteration == leaking[0])   # linear growth
    assert held[pitfalls.LIFETIME_MODES[1]] == [0] * 6
    assert held[pitfalls.LIFETIME_MODES[2]] == [0] * 6


def test_graphs_alive_before_the_call_are_not_the_loops(data):
    """A graph kept by the caller (a notebook's earlier loss) is not counted as held by
    the loops: the leaking loop still starts at one iteration's bytes."""
    fresh = pitfalls.graph_lifetime(data, iterations=3)
    weight = ad.tensor(np.ones((4, 4), np.float32), requires_grad=True)
    kept = (weight * weight).sum()                     # saves two 4x4 float32 arrays
    assert ad.saved_tensor_bytes() >= 2 * 4 * 4 * 4
    assert pitfalls.graph_lifetime(data, iterations=3) == fresh
    del kept


def test_scaling_curve_follows_the_ring_cost_model():
    alpha, beta, step, nbytes = 50e-6, 1e-9, 2e-3, 4e6
    curve = pitfalls.scaling_curve(step, nbytes, alpha, beta, [1, 2, 4, 8, 16])
    assert curve["efficiency"][0] == 1.0 and curve["comm"][0] == 0.0
    assert np.all(np.diff(curve["efficiency"]) < 0)
    p = 8
    expected = step / (p * (step / p + 2 * (p - 1) * (alpha + nbytes / p * beta)))
    assert curve["efficiency"][3] == pytest.approx(expected)
    assert curve["comm"][3] == pytest.approx(predict("ring", 8, nbytes, alpha, beta))
    first = next(k for k in [1, 2, 4, 8, 16]
                 if predict("ring", k, nbytes, alpha, beta) >= step / k)
    assert curve["comm_exceeds_compute_at"] == first


def test_custom_op_without_float16_kernel_falls_back_to_float32(data):
    out = pitfalls.engine_fallback(data, hidden=16, batch_size=32)
    assert out["float16 kernel"]["dtype"] == "float16"
    assert out["float16 kernel"]["fallbacks"] == []
    assert out["float32-only kernel"]["dtype"] == "float32"
    assert out["float32-only kernel"]["fallbacks"] == [(pitfalls.CUSTOM_OP, "float16")]
    assert any("runs in float32" in w for w in out["float32-only kernel"]["warnings"])
    assert out["no autocast (float32)"]["dtype"] == "float32"
