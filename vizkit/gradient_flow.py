"""Gradient flow (梯度流): how large each layer's gradient and update are, step by step.

Three layers of code, each testable on its own:

1. :func:`layer_statistics` — a **pure function** from arrays to numbers. For a
   parameter ``p`` with gradient ``g`` and value ``p'`` after the optimizer step:

   * ``grad_norm``     ``||g||_2``
   * ``grad_mean_abs`` ``mean |g|``
   * ``grad_max_abs``  ``max |g|``
   * ``update_ratio``  ``||p' - p||_2 / ||p||_2`` — the update:data ratio; around
     ``1e-3`` per step is a common healthy range, ``1e-1`` means the step is
     rewriting the weights, ``1e-6`` means they are frozen.

2. :class:`GradientFlowRecorder` — collects those numbers around each
   ``optimizer.step()`` for any model with ``named_parameters()`` (the course's
   engine or torch: values are read through :func:`chapters.autodiff.interop.to_numpy`).

3. :func:`gradient_flow_figure` — plotly, log scale, one line per layer, hover
   with layer name and shape; and :func:`vanishing_gradients_demo`, a widget.
"""

from __future__ import annotations

import math
from contextlib import contextmanager

import numpy as np

from chapters.autodiff.interop import to_numpy
from vizkit.strings import check_table, words

METRICS = ("grad_norm", "grad_mean_abs", "grad_max_abs", "update_ratio")
"""The numbers :func:`layer_statistics` gives per parameter and step, in plotting order."""

TEXT = check_table({
    "en": {
        "metrics": {"grad_norm": "gradient norm ||g||", "grad_mean_abs": "mean |g|",
                    "grad_max_abs": "max |g|",
                    "update_ratio": "update:data ratio ||Δp|| / ||p||"},
        "flow_title": "Gradient flow", "step": "step", "step_hover": "step %{x}",
        "layer_row": "{name}: ||g|| {first:.2g} -> {last:.2g}, median update ratio {ratio:.1e}",
        "flow_summary": "{steps} steps; {rows}.", "join": "; ",
        "input_grad": "||dL/dh|| (layer input)", "weight_grad": "||dL/dW|| (layer weight)",
        "layer_hover": "layer %{x}", "layer_axis": "layer (1 = closest to the input)",
        "norm_axis": "gradient norm",
        "verdicts": {"vanishing": "vanishing", "exploding": "exploding", "stable": "stable"},
        "vanishing": ("The gradient reaching layer {depth}'s input has norm {last:.2g}; at layer "
                      "1 it is {first:.2g}, a factor {ratio:.2g} ({verdict}). Weight-gradient "
                      "norms go from {last_weight:.2g} (last layer) to {first_weight:.2g} "
                      "(first)."),
        "demo_title": "{depth} layers, {activation}, init scale {init_scale:.2f}",
        "residual": ", residual", "layernorm": ", LayerNorm",
        "controls": {"depth": "depth", "activation": "activation", "init_scale": "init scale",
                     "residual": "residual", "normalization": "LayerNorm"},
    },
    "zh": {
        "metrics": {"grad_norm": "梯度范数 ||g||", "grad_mean_abs": "|g| 的均值",
                    "grad_max_abs": "|g| 的最大值",
                    "update_ratio": "更新量与参数之比 ||Δp|| / ||p||"},
        "flow_title": "梯度流", "step": "训练步", "step_hover": "第 %{x} 步",
        "layer_row": "{name}：||g|| 从 {first:.2g} 变为 {last:.2g}，更新比中位数 {ratio:.1e}",
        "flow_summary": "共 {steps} 步；{rows}。", "join": "；",
        "input_grad": "||dL/dh||（该层输入）", "weight_grad": "||dL/dW||（该层权重）",
        "layer_hover": "第 %{x} 层", "layer_axis": "层（1 = 最靠近输入）",
        "norm_axis": "梯度范数",
        "verdicts": {"vanishing": "梯度消失", "exploding": "梯度爆炸", "stable": "稳定"},
        "vanishing": ("到达第 {depth} 层输入的梯度范数为 {last:.2g}；到第 1 层时为 {first:.2g}，"
                      "相差 {ratio:.2g} 倍（{verdict}）。权重梯度的范数从 {last_weight:.2g}"
                      "（最后一层）变为 {first_weight:.2g}（第一层）。"),
        "demo_title": "{depth} 层，{activation}，初始化缩放 {init_scale:.2f}",
        "residual": "，残差连接", "layernorm": "，LayerNorm",
        "controls": {"depth": "深度", "activation": "激活函数", "init_scale": "初始化缩放",
                     "residual": "残差连接", "normalization": "LayerNorm"},
    },
})


def layer_statistics(name: str, data, grad, data_after=None) -> dict:
    """The numbers of one parameter at one step (``data_after``: its value after
    the update; without it ``update_ratio`` is NaN). ``grad=None`` gives NaNs."""
    data = np.asarray(data, dtype=np.float64)
    row = {"name": name, "shape": tuple(data.shape)}
    if grad is None:
        row.update(grad_norm=math.nan, grad_mean_abs=math.nan, grad_max_abs=math.nan)
    else:
        g = np.abs(np.asarray(grad, dtype=np.float64))
        row.update(grad_norm=float(np.sqrt(np.sum(g * g))), grad_mean_abs=float(g.mean()),
                   grad_max_abs=float(g.max()))
    if data_after is None:
        row["update_ratio"] = math.nan
    else:
        delta = np.asarray(data_after, dtype=np.float64) - data
        size = float(np.linalg.norm(data))
        row["update_ratio"] = float(np.linalg.norm(delta)) / size if size > 0 else math.inf
    return row


def model_statistics(model, before: dict | None = None) -> list[dict]:
    """:func:`layer_statistics` for every parameter of ``model``; ``before`` maps
    names to values taken before the step (the values now are then ``data_after``)."""
    rows = []
    for name, p in model.named_parameters():
        grad = None if p.grad is None else to_numpy(p.grad)
        now = to_numpy(p)
        if before is None:
            rows.append(layer_statistics(name, now, grad))
        else:
            rows.append(layer_statistics(name, before[name], grad, now))
    return rows


class GradientFlowRecorder:
    """Records per-layer statistics around each optimizer step::

        loss.backward()
        with recorder.step(model):
            optimizer.step()

    ``recorder.rows`` is a flat list of dicts (``step`` plus the keys of
    :func:`layer_statistics`), ready for :func:`gradient_flow_figure` or pandas.
    """

    def __init__(self):
        self.rows: list[dict] = []
        self.steps = 0

    @contextmanager
    def step(self, model):
        before = {name: to_numpy(p).copy() for name, p in model.named_parameters()}
        yield
        for row in model_statistics(model, before):
            self.rows.append({"step": self.steps, **row})
        self.steps += 1


def series(rows: list[dict], metric: str) -> dict[str, tuple[list[int], list[float]]]:
    """``{layer name: (steps, values)}`` of one metric, layers in first-seen order."""
    out: dict[str, tuple[list[int], list[float]]] = {}
    for row in rows:
        steps, values = out.setdefault(row["name"], ([], []))
        steps.append(row["step"])
        values.append(row[metric])
    return out


def gradient_flow_figure(rows: list[dict], metrics=METRICS, title: str | None = None):
    """One panel per metric (log y), one line per layer, hover: layer, shape, value."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    text = words(TEXT)
    labels = text["metrics"]
    unknown = [m for m in metrics if m not in METRICS]
    if unknown:
        raise ValueError(f"unknown metrics {unknown}; choose from {list(METRICS)}")
    columns = 2 if len(metrics) > 1 else 1
    rows_n = -(-len(metrics) // columns)
    fig = make_subplots(rows=rows_n, cols=columns, subplot_titles=[labels[m] for m in metrics])
    shapes = {row["name"]: row["shape"] for row in rows}
    palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
               "#7f7f7f", "#bcbd22", "#17becf"]
    for k, metric in enumerate(metrics):
        for j, (name, (steps, values)) in enumerate(series(rows, metric).items()):
            fig.add_trace(go.Scatter(
                x=steps, y=values, mode="lines", name=name, legendgroup=name,
                showlegend=k == 0, line={"color": palette[j % len(palette)]},
                customdata=[[name, str(shapes[name])]] * len(steps),
                hovertemplate="%{customdata[0]} %{customdata[1]}<br>" + text["step_hover"]
                              + "<br>" + labels[metric] + " = %{y:.3g}<extra></extra>"),
                row=k // columns + 1, col=k % columns + 1)
        fig.update_yaxes(type="log", row=k // columns + 1, col=k % columns + 1)
        fig.update_xaxes(title_text=text["step"], row=k // columns + 1, col=k % columns + 1)
    fig.update_layout(title=title or text["flow_title"], height=300 * rows_n + 80,
                      margin={"t": 70, "b": 40})
    return fig


def summarize(rows: list[dict]) -> str:
    """A text summary of a recording: per layer, the first and last gradient norm
    and the median update:data ratio."""
    text = words(TEXT)
    parts = []
    norms, ratios = series(rows, "grad_norm"), series(rows, "update_ratio")
    for name, (_, values) in norms.items():
        parts.append(text["layer_row"].format(name=name, first=values[0], last=values[-1],
                                              ratio=float(np.nanmedian(ratios[name][1]))))
    return text["flow_summary"].format(steps=len(set(r["step"] for r in rows)),
                                       rows=text["join"].join(parts))


# ------------------------------------------------------ vanishing / exploding


def deep_network_gradients(depth: int = 20, activation: str = "tanh", init_scale: float = 1.0,
                           residual: bool = False, normalization: bool = False,
                           width: int = 32, batch: int = 64, seed: int = 0) -> list[dict]:
    """Backpropagate once through a deep MLP of the course's engine and return,
    per layer, the norm of the gradient reaching its weight and of the
    activation gradient flowing into it.

    Layer ``l`` computes ``h_l = act(norm(W_l h_{l-1}))`` (plus ``h_{l-1}`` when
    ``residual``), with ``W_l ~ N(0, init_scale^2 / width)``: ``init_scale = 1``
    is LeCun init, ``sqrt(2)`` He init for ReLU. Backward multiplies by
    ``W_l^T diag(act'(.))`` once per layer, so the gradient shrinks or grows
    geometrically with depth unless that factor's typical size is 1 — which
    residual connections (an identity path) and normalization restore.
    """
    from chapters.autodiff import nn, tensor

    activations = {"sigmoid": nn.Sigmoid, "tanh": nn.Tanh, "relu": nn.ReLU}
    if activation not in activations:
        raise ValueError(f"activation must be one of {list(activations)}, got {activation!r}")
    rng = np.random.default_rng(seed)
    layers, norms = [], []
    for _ in range(depth):
        linear = nn.Linear(width, width, bias=False)
        linear.weight.data[...] = rng.normal(0, init_scale / math.sqrt(width), (width, width))
        layers.append(linear)
        norms.append(nn.LayerNorm(width) if normalization else None)
    act = activations[activation]()
    h = tensor(rng.standard_normal((batch, width)).astype(np.float32), requires_grad=True)
    inputs = []
    for linear, norm in zip(layers, norms, strict=True):
        if not h.is_leaf:
            h.retain_grad()  # keep the gradient of an intermediate activation
        inputs.append(h)
        z = linear(h)
        out = act(norm(z) if norm is not None else z)
        h = h + out if residual else out
    h.backward(tensor(rng.standard_normal(h.shape).astype(np.float32)))
    result = []
    for index, (linear, x) in enumerate(zip(layers, inputs, strict=True)):
        input_grad = math.nan if x.grad is None else float(np.linalg.norm(to_numpy(x.grad)))
        result.append({"layer": index + 1,
                       "weight_grad_norm": float(np.linalg.norm(to_numpy(linear.weight.grad))),
                       "input_grad_norm": input_grad})
    return result


def vanishing_gradients_figure(rows: list[dict], title: str):
    """Bars: ``||dL/dh||`` reaching each layer's input; line: ``||dL/dW||`` (log y)."""
    import plotly.graph_objects as go

    text = words(TEXT)
    layers = [r["layer"] for r in rows]
    fig = go.Figure([
        go.Bar(x=layers, y=[r["input_grad_norm"] for r in rows], name=text["input_grad"],
               hovertemplate=text["layer_hover"] + "<br>||dL/dh|| = %{y:.3g}<extra></extra>"),
        go.Scatter(x=layers, y=[r["weight_grad_norm"] for r in rows], mode="lines+markers",
                   name=text["weight_grad"],
                   hovertemplate=text["layer_hover"]
                                 + "<br>||dL/dW|| = %{y:.3g}<extra></extra>")])
    fig.update_layout(title=title, height=360, xaxis_title=text["layer_axis"],
                      yaxis_title=text["norm_axis"], yaxis_type="log", margin={"t": 50, "b": 40},
                      legend={"orientation": "h", "y": -0.25})
    return fig


def describe_vanishing(rows: list[dict]) -> str:
    """One sentence: how much the backward signal changes from the last layer to the first."""
    first, last = rows[0]["input_grad_norm"], rows[-1]["input_grad_norm"]
    ratio = first / last if last > 0 else math.inf
    verdict = ("vanishing" if ratio < 1e-2 else "exploding" if ratio > 1e2 else "stable")
    text = words(TEXT)
    return text["vanishing"].format(
        depth=len(rows), last=last, first=first, ratio=ratio, verdict=text["verdicts"][verdict],
        last_weight=rows[-1]["weight_grad_norm"], first_weight=rows[0]["weight_grad_norm"])


def vanishing_gradients_demo(depth: int = 20):
    """Sliders for depth, activation, init scale, residual and normalization;
    the chart of per-layer weight-gradient norms redraws on every change."""
    import ipywidgets as widgets

    from vizkit.figures import show

    text = words(TEXT)
    label = text["controls"]
    controls = {
        "depth": widgets.IntSlider(value=depth, min=2, max=60, description=label["depth"]),
        "activation": widgets.Dropdown(options=["sigmoid", "tanh", "relu"], value="tanh",
                                       description=label["activation"]),
        "init_scale": widgets.FloatLogSlider(value=1.0, base=2, min=-2, max=2, step=0.25,
                                             description=label["init_scale"]),
        "residual": widgets.Checkbox(value=False, description=label["residual"]),
        "normalization": widgets.Checkbox(value=False, description=label["normalization"]),
    }

    output = widgets.Output()

    def redraw(change=None) -> None:
        settings = {name: control.value for name, control in controls.items()}
        rows = deep_network_gradients(**settings)
        title = (text["demo_title"].format(**settings)
                 + (text["residual"] if settings["residual"] else "")
                 + (text["layernorm"] if settings["normalization"] else ""))
        if change is not None:
            output.clear_output(wait=True)
        with output:
            show(vanishing_gradients_figure(rows, title), describe_vanishing(rows))

    for control in controls.values():
        control.observe(redraw, names="value")
    redraw()
    return widgets.VBox([widgets.HBox(list(controls.values())[:3]),
                         widgets.HBox(list(controls.values())[3:]), output])
