"""Gradient-flow numbers (pure, checked against direct numpy/torch computations),
the plotly figure built from them, and the vanishing-gradient experiment."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from vizkit import gradient_flow as gf


def test_layer_statistics_formulas():
    data = np.array([[3.0, 4.0]])
    grad = np.array([[-1.0, 2.0]])
    after = np.array([[3.0, 4.5]])
    row = gf.layer_statistics("w", data, grad, after)
    assert row["shape"] == (1, 2)
    assert row["grad_norm"] == pytest.approx(math.sqrt(5))
    assert row["grad_mean_abs"] == pytest.approx(1.5)
    assert row["grad_max_abs"] == pytest.approx(2.0)
    assert row["update_ratio"] == pytest.approx(0.5 / 5)
    missing = gf.layer_statistics("b", data, None)
    assert math.isnan(missing["grad_norm"]) and math.isnan(missing["update_ratio"])


def test_recorder_on_a_torch_model_matches_torch_norms():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    recorder = gf.GradientFlowRecorder()
    x = torch.randn(16, 4)
    for _ in range(3):
        opt.zero_grad()
        model(x).pow(2).mean().backward()
        expected = {n: p.grad.norm().item() for n, p in model.named_parameters()}
        before = {n: p.detach().clone() for n, p in model.named_parameters()}
        with recorder.step(model):
            opt.step()
        for row in recorder.rows[-4:]:
            p = dict(model.named_parameters())[row["name"]]
            assert row["grad_norm"] == pytest.approx(expected[row["name"]], rel=1e-6)
            ratio = ((p.detach() - before[row["name"]]).norm() / before[row["name"]].norm())
            assert row["update_ratio"] == pytest.approx(ratio.item(), rel=1e-5)
    assert [r["step"] for r in recorder.rows] == [0] * 4 + [1] * 4 + [2] * 4
    steps, values = gf.series(recorder.rows, "grad_norm")["2.weight"]
    assert steps == [0, 1, 2] and len(values) == 3


def test_figure_has_one_log_panel_per_metric_and_hover_names():
    rows = [{"step": s, **gf.layer_statistics(name, np.ones((2, 3)), np.full((2, 3), 0.1 * s + 1),
                                              np.ones((2, 3)) * 1.01)}
            for s in range(4) for name in ("fc1.weight", "fc2.weight")]
    fig = gf.gradient_flow_figure(rows)
    assert len(fig.data) == 2 * len(gf.METRICS)
    assert all(fig.layout[f"yaxis{i if i > 1 else ''}"].type == "log" for i in range(1, 5))
    first = fig.data[0]
    assert first.name == "fc1.weight" and first.customdata[0][1] == "(2, 3)"
    assert "%{customdata[0]}" in first.hovertemplate
    np.testing.assert_allclose(first.y, [math.sqrt(6) * (0.1 * s + 1) for s in range(4)])
    assert "fc2.weight" in gf.summarize(rows)
    with pytest.raises(ValueError, match="unknown metrics"):
        gf.gradient_flow_figure(rows, metrics=("loss",))


def test_deep_sigmoid_net_vanishes_and_residual_layernorm_helps():
    plain = gf.deep_network_gradients(depth=20, activation="sigmoid", init_scale=1.0)
    helped = gf.deep_network_gradients(depth=20, activation="sigmoid", init_scale=1.0,
                                       residual=True, normalization=True)
    ratio_plain = plain[0]["input_grad_norm"] / plain[-1]["input_grad_norm"]
    ratio_helped = helped[0]["input_grad_norm"] / helped[-1]["input_grad_norm"]
    assert ratio_plain < 1e-6  # sigmoid' <= 1/4: each layer can shrink it 4x
    assert 1e-2 < ratio_helped < 1e2
    assert "vanishing" in gf.describe_vanishing(plain)


def test_large_init_relu_explodes():
    rows = gf.deep_network_gradients(depth=20, activation="relu", init_scale=2.0)
    # ReLU keeps half the variance: each layer multiplies the backward signal by about
    # init_scale / sqrt(2) = sqrt(2), so 19 layers give about 2**9.5 = 724
    assert rows[0]["input_grad_norm"] / rows[-1]["input_grad_norm"] > 1e2
    assert "exploding" in gf.describe_vanishing(rows)


def test_deep_network_gradients_match_torch():
    """The same weights in torch give the same per-layer weight-gradient norms."""
    rows = gf.deep_network_gradients(depth=6, activation="tanh", init_scale=1.5, residual=True,
                                     width=8, batch=4, seed=3)
    rng = np.random.default_rng(3)
    weights = [torch.tensor(rng.normal(0, 1.5 / math.sqrt(8), (8, 8)).astype(np.float32),
                            requires_grad=True) for _ in range(6)]
    h = torch.tensor(rng.standard_normal((4, 8)).astype(np.float32))
    for w in weights:
        h = h + torch.tanh(h @ w.T)
    h.backward(torch.tensor(rng.standard_normal((4, 8)).astype(np.float32)))
    for row, w in zip(rows, weights, strict=True):
        assert row["weight_grad_norm"] == pytest.approx(w.grad.norm().item(), rel=1e-4)


def test_demo_widget_builds_with_all_controls():
    demo = gf.vanishing_gradients_demo(depth=4)
    descriptions = [w.description for box in demo.children[:2] for w in box.children]
    assert descriptions == ["depth", "activation", "init scale", "residual", "LayerNorm"]


def test_moving_a_control_recomputes_with_the_new_setting(monkeypatch):
    seen = []
    real = gf.deep_network_gradients

    def recording(**settings):
        seen.append(settings)
        return real(**{**settings, "width": 4, "batch": 2})

    monkeypatch.setattr(gf, "deep_network_gradients", recording)
    demo = gf.vanishing_gradients_demo(depth=4)
    depth, activation = demo.children[0].children[:2]
    residual = demo.children[1].children[0]
    depth.value = 7
    activation.value = "relu"
    residual.value = True
    assert [s["depth"] for s in seen] == [4, 7, 7, 7]
    assert seen[-1] == {"depth": 7, "activation": "relu", "init_scale": 1.0, "residual": True,
                        "normalization": False}


def test_chinese_summaries_and_panels_state_the_same_numbers(in_both_languages):
    rows = [{"step": s, **gf.layer_statistics(name, np.ones((2, 3)), np.full((2, 3), 0.1 * s + 1),
                                              np.ones((2, 3)) * 1.01)}
            for s in range(3) for name in ("fc1.weight", "fc2.weight")]
    english, chinese = in_both_languages(lambda: gf.summarize(rows))
    assert chinese.startswith("共 3 步；fc1.weight：||g|| 从 2.4 变为 2.9")
    english_fig, chinese_fig = in_both_languages(lambda: gf.gradient_flow_figure(rows))
    titles = [a.text for a in chinese_fig.layout.annotations]
    assert titles[0] == "梯度范数 ||g||" and chinese_fig.layout.title.text == "梯度流"
    assert [list(t.y) for t in chinese_fig.data] == [list(t.y) for t in english_fig.data]
    deep = gf.deep_network_gradients(depth=8, activation="sigmoid", width=8, batch=4)
    english, chinese = in_both_languages(lambda: gf.describe_vanishing(deep))
    assert "梯度消失" in chinese and "到达第 8 层输入的梯度范数" in chinese
