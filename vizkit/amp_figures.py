"""Figures of mixed-precision training runs (chapters 4 and 5).

Each figure has two halves: a pure function that turns a run's measurements
into the numbers to plot or to quote (tested without any UI), and a thin
plotly function that draws them. Display with :func:`vizkit.figures.show`
and a text summary.
"""

from __future__ import annotations

import graphviz
import numpy as np
import plotly.graph_objects as go

from vizkit.strings import check_table, label, words

from .graphviz_views import FONT

TEXT = check_table({
    "en": {
        "half_title": "Float16 without masters: Adam breaks, SGD loses updates",
        "step": "step", "adam_axis": "loss (Adam, lr {lr:g})",
        "sgd_axis": "% updates lost (SGD, lr {lr:g})",
        "turns_nan": "turns NaN at step {step} (gaps in the line)",
        "ends_at": "ends at {loss:.3f}",
        "half_summary": ("Adam: float32 ends at loss {reference:.3f}, float16 with float32 masters "
                         "at {master:.3f}; float16 without masters {broke}. SGD: without masters "
                         "{lost_bare:.0f}% of the weight updates are rounded away per step, with "
                         "masters {lost_master:.1f}%."),
        "lost_title": "Fraction of updates rounded away",
        "lost_x": "log2(|update| / |weight|)", "lost_y": "fraction lost",
        "format_phrase": "{fmt} {phrase}", "join": "; ", "end": ".", "list": ", ",
        "and": " and ",
        "all_lost": "loses at least {share:.0%} of the updates up to 2**{ratio:g} of the weight",
        "half_after": "about half at 2**{ratio:g}",
        "half_first": "loses about half at 2**{ratio:g}",
        "none_from": "at most {share:.0%} from 2**{ratio:g} up",
        "never_none": "more than {share:.0%} at every ratio measured",
        "nodes": {"fwd": "forward under autocast\n(float16 matmuls)",
                  "scale": "scaler.scale(loss)\nloss x S",
                  "bwd": "backward\n(gradients x S)",
                  "unscale": "unscale_: grads / S (float32)\nfound_inf = any inf/NaN?",
                  "step": "optimizer.step()\n(float32 masters)",
                  "skip": "skip the step",
                  "update": "update():\ninf: S *= 0.5, tracker = 0\nelse: tracker += 1;\n"
                            "tracker == interval: S *= 2"},
        "edges": {"finite": "finite", "inf / NaN": "inf / NaN", "next batch": "next batch"},
        "frameworks": {"engine": "engine", "torch": "PyTorch"},
        "overlay": "{framework}, {label}",
        "spread_title": "Largest weight difference between the two replicas after training",
        "spread_axis": "max |w_rank0 - w_rank1| ({floor:g} = identical)",
        "table_head": ("| run | final loss, engine | final loss, PyTorch | max rel. diff | "
                       "replica spread, engine | replica spread, PyTorch | "
                       "skipped steps (e / t) |"),
        "held_title": "Bytes held by saved tensors after each iteration",
        "iteration": "iteration", "mb_held": "MB held",
        "scale_name": "loss scale, {name}", "skipped_name": "skipped step, {name}",
        "scale_axis": "scale S",
    },
    "zh": {
        "half_title": "没有主权重的 float16：Adam 崩溃，SGD 丢失更新",
        "step": "训练步", "adam_axis": "损失（Adam，lr {lr:g}）",
        "sgd_axis": "被丢失的更新占比 %（SGD，lr {lr:g}）",
        "turns_nan": "在第 {step} 步变成 NaN（曲线中断处）", "ends_at": "最终为 {loss:.3f}",
        "half_summary": ("Adam：float32 的最终损失为 {reference:.3f}，"
                         "带 float32 主权重的 float16 为 {master:.3f}；"
                         "没有主权重的 float16 {broke}。SGD：没有主权重时，每步有 "
                         "{lost_bare:.0f}% 的权重更新被舍入掉，有主权重时为 {lost_master:.1f}%。"),
        "lost_title": "被舍入掉的更新所占比例",
        "lost_x": "log2(|更新量| / |权重|)", "lost_y": "丢失比例",
        "format_phrase": "{fmt}：{phrase}", "join": "；", "end": "。", "list": "，",
        "and": "，",
        "all_lost": "更新量不超过权重的 2**{ratio:g} 倍时，至少丢失 {share:.0%} 的更新",
        "half_after": "在 2**{ratio:g} 处约丢失一半",
        "half_first": "在 2**{ratio:g} 处约丢失一半",
        "none_from": "从 2**{ratio:g} 起至多丢失 {share:.0%}",
        "never_none": "在测量的每个比值上丢失都超过 {share:.0%}",
        "nodes": {"fwd": "autocast 下的前向传播\n（float16 矩阵乘）",
                  "scale": "scaler.scale(loss)\nloss x S",
                  "bwd": "反向传播\n（梯度 x S）",
                  "unscale": "unscale_：grads / S（float32）\nfound_inf = 有 inf/NaN 吗？",
                  "step": "optimizer.step()\n（float32 主权重）",
                  "skip": "跳过这一步",
                  "update": "update()：\ninf：S *= 0.5，tracker = 0\n否则：tracker += 1；\n"
                            "tracker == interval：S *= 2"},
        "edges": {"finite": "有限", "inf / NaN": "inf / NaN", "next batch": "下一个 batch"},
        "frameworks": {"engine": "参考引擎", "torch": "PyTorch"},
        "overlay": "{framework}，{label}",
        "spread_title": "训练后两个副本之间权重的最大差异",
        "spread_axis": "max |w_rank0 - w_rank1|（{floor:g} = 完全相同）",
        "table_head": ("| 运行 | 最终损失，参考引擎 | 最终损失，PyTorch | 最大相对差异 | "
                       "副本差异，参考引擎 | 副本差异，PyTorch | 跳过的步数（e / t） |"),
        "held_title": "每次迭代后被保存的张量占用的字节数",
        "iteration": "迭代", "mb_held": "占用的 MB",
        "scale_name": "损失缩放因子，{name}", "skipped_name": "跳过的步，{name}",
        "scale_axis": "缩放因子 S",
    },
})


def half_precision_findings(adam: dict, sgd: dict, modes) -> dict:
    """What the "float16 without masters" runs show, from
    :func:`chapters.capstone.pitfalls.half_precision_runs` results.

    ``modes`` = (float32, float16 without masters, float16 with masters), in that
    order. Returns ``first_nan`` (the first step whose Adam loss, without masters,
    is not finite, or ``None``), ``lost_bare`` and ``lost_master`` (mean
    percentage of SGD updates rounded away per step, without and with masters)
    and ``final`` (each mode's last Adam loss)."""
    reference, bare, master = modes
    bare_loss = np.asarray(adam[bare]["loss"], dtype=np.float64)
    broken = np.flatnonzero(~np.isfinite(bare_loss))
    return {"first_nan": int(broken[0]) if broken.size else None,
            "lost_bare": 100 * float(np.mean(sgd[bare]["lost"])),
            "lost_master": 100 * float(np.mean(sgd[master]["lost"])),
            "final": {m: float(adam[m]["loss"][-1]) for m in (reference, bare, master)}}


def half_precision_series(adam: dict, sgd: dict, modes) -> list[dict]:
    """The curves of the half-precision figure: per mode, Adam's loss (a non-finite
    loss becomes ``None``, a gap in the line) on the left axis, and SGD's percentage
    of lost updates (dotted) on the right axis."""
    series = []
    for mode in modes:
        loss = np.asarray(adam[mode]["loss"], dtype=np.float64)
        series.append({"name": f"Adam: {mode}", "axis": "y", "dash": None,
                       "y": [float(v) if np.isfinite(v) else None for v in loss]})
    for mode in modes:
        series.append({"name": f"SGD: {mode}", "axis": "y2", "dash": "dot",
                       "y": [100 * float(v) for v in sgd[mode]["lost"]]})
    return series


def half_precision_figure(adam: dict, sgd: dict, modes, adam_lr: float,
                          sgd_lr: float) -> go.Figure:
    """Adam's loss and SGD's lost updates per step, for float32, float16 without
    masters and float16 with float32 masters, on two y axes."""
    fig = go.Figure([go.Scatter(y=s["y"], name=s["name"], yaxis=s["axis"],
                                line={"dash": s["dash"]})
                     for s in half_precision_series(adam, sgd, modes)])
    text = words(TEXT)
    fig.update_layout(title=text["half_title"], xaxis_title=text["step"],
                      yaxis={"title": text["adam_axis"].format(lr=adam_lr)},
                      yaxis2={"title": text["sgd_axis"].format(lr=sgd_lr), "overlaying": "y",
                              "side": "right", "rangemode": "tozero"}, height=420)
    return fig


def half_precision_summary(findings: dict, modes) -> str:
    """The figure's text summary, from :func:`half_precision_findings`."""
    reference, bare, master = modes
    final, nan = findings["final"], findings["first_nan"]
    text = words(TEXT)
    broke = (text["turns_nan"].format(step=nan) if nan is not None
             else text["ends_at"].format(loss=final[bare]))
    return text["half_summary"].format(reference=final[reference], master=final[master],
                                       broke=broke, lost_bare=findings["lost_bare"],
                                       lost_master=findings["lost_master"])


# ------------------------------------------------------------ chapter 4: lost updates

ALL_LOST, NONE_LOST = 0.99, 0.01
"""A point of a lost-update curve counts as "every update lost" at or above ALL_LOST,
and as "none lost" at or below NONE_LOST."""


def lost_update_thresholds(log2_ratios, fractions: dict) -> dict:
    """Where each format's lost-update curve crosses its levels.

    ``fractions[fmt][i]`` is the fraction of updates of size ``2**log2_ratios[i]``
    (relative to the weight) that rounding threw away; ``log2_ratios`` increases.
    Per format: ``all_lost_up_to`` (the largest ratio up to which every point is at
    least ``ALL_LOST``), ``none_lost_from`` (the smallest ratio from which every point is
    at most ``NONE_LOST``) and ``half_lost_at`` (the point closest to one half)."""
    x = np.asarray(log2_ratios, dtype=np.float64)
    found = {}
    for fmt, values in fractions.items():
        y = np.asarray(values, dtype=np.float64)
        if y.shape != x.shape:
            raise ValueError(f"lost_update_thresholds: {fmt} has {y.size} fractions for "
                             f"{x.size} ratios; measure one fraction per ratio")
        all_lost = np.flatnonzero(np.minimum.accumulate(y) >= ALL_LOST)
        none_lost = np.flatnonzero(np.maximum.accumulate(y[::-1])[::-1] <= NONE_LOST)
        found[fmt] = {"all_lost_up_to": float(x[all_lost[-1]]) if all_lost.size else None,
                      "none_lost_from": float(x[none_lost[0]]) if none_lost.size else None,
                      "half_lost_at": float(x[np.argmin(np.abs(y - 0.5))])}
    return found


def lost_update_figure(log2_ratios, fractions: dict) -> go.Figure:
    """One line per format: the fraction of updates rounded away against log2(|u| / |w|)."""
    fig = go.Figure([go.Scatter(x=list(log2_ratios), y=list(values), name=fmt,
                                mode="lines+markers") for fmt, values in fractions.items()])
    text = words(TEXT)
    fig.update_layout(title=text["lost_title"], xaxis_title=text["lost_x"],
                      yaxis_title=text["lost_y"], height=320)
    return fig


def lost_update_summary(thresholds: dict) -> str:
    """The lost-update figure's text summary, from :func:`lost_update_thresholds`."""
    text = words(TEXT)
    return text["join"].join(text["format_phrase"].format(fmt=fmt, phrase=_lost_update_phrase(t))
                             for fmt, t in thresholds.items()) + text["end"]


def _lost_update_phrase(t: dict) -> str:
    text = words(TEXT)
    clauses = []
    if t["all_lost_up_to"] is not None:
        clauses.append(text["all_lost"].format(share=ALL_LOST, ratio=t["all_lost_up_to"]))
    half = text["half_after"] if clauses else text["half_first"]
    clauses.append(half.format(ratio=t["half_lost_at"]))
    if t["none_lost_from"] is not None:
        clauses.append(text["none_from"].format(share=NONE_LOST, ratio=t["none_lost_from"]))
    else:
        clauses.append(text["never_none"].format(share=NONE_LOST))
    return text["list"].join(clauses[:-1]) + text["and"] + clauses[-1]


# ------------------------------------------------------------ chapter 4: the scaler loop

SCALER_LOOP_NODES = tuple(TEXT["en"]["nodes"])
"""The flow chart's boxes; their labels, per language, are ``TEXT[lang]["nodes"]``."""
SCALER_LOOP_EDGES = (("fwd", "scale", ""), ("scale", "bwd", ""), ("bwd", "unscale", ""),
                     ("unscale", "step", "finite"), ("unscale", "skip", "inf / NaN"),
                     ("step", "update", ""), ("skip", "update", ""),
                     ("update", "fwd", "next batch"))


def scaler_loop_diagram():
    """The GradScaler iteration as a Graphviz flow chart, the skip branch in red."""
    text = words(TEXT)
    loop = graphviz.Digraph(graph_attr={"rankdir": "LR"},
                            node_attr={"shape": "box", "fontname": FONT},
                            edge_attr={"fontname": FONT})
    for name in SCALER_LOOP_NODES:
        style = {"style": "filled", "fillcolor": "#ffcdd2"} if name == "skip" else {}
        loop.node(name, text["nodes"][name], **style)
    for tail, head, edge in SCALER_LOOP_EDGES:
        loop.edge(tail, head, label=text["edges"][edge] if edge else None,
                  style="dashed" if edge == "next batch" else None)
    return loop


# ------------------------------------------------------------ chapter 5: engine against PyTorch

FRAMEWORK_NAMES = tuple(TEXT["en"]["frameworks"])
"""The two frameworks compared; their display names are ``TEXT[lang]["frameworks"]``."""


def overlay_series(pairs: dict) -> list[dict]:
    """Curves that draw the engine on top of PyTorch: ``pairs[label] = (engine, torch,
    dash)`` gives, per label, PyTorch's curve wide and grey underneath and the engine's
    thin one over it (where they agree, a thin line runs inside a grey band)."""
    text = words(TEXT)
    series = []
    for name, (engine, reference, dash) in pairs.items():
        series.append({"name": text["overlay"].format(framework=text["frameworks"]["torch"],
                                                      label=name),
                       "y": [float(v) for v in reference],
                       "line": {"width": 6, "color": "#bbbbbb", "dash": dash}})
        series.append({"name": text["overlay"].format(framework=text["frameworks"]["engine"],
                                                      label=name),
                       "y": [float(v) for v in engine],
                       "line": {"width": 2, "dash": dash}})
    return series


def engine_over_torch_figure(pairs: dict, title: str, yaxis_title: str) -> go.Figure:
    """Per step, the engine's curve over PyTorch's (see :func:`overlay_series`)."""
    fig = go.Figure([go.Scatter(y=s["y"], name=s["name"], line=s["line"])
                     for s in overlay_series(pairs)])
    fig.update_layout(title=title, xaxis_title=words(TEXT)["step"], yaxis_title=yaxis_title,
                      height=380)
    return fig


SPREAD_FLOOR = 1e-12
"""Replica spreads are drawn on a log axis; an exact 0 is drawn at this height."""


def replica_spreads(runs: dict) -> dict:
    """``{"labels": [...], "engine": [...], "torch": [...]}``: each run's replica spread
    (largest weight difference between ranks) per framework, at least ``SPREAD_FLOOR``.
    ``runs[label][framework]`` has a ``replica_spread()``; labels starting with ``_``
    hold other measurements and are left out."""
    labels = [k for k in runs if not k.startswith("_")]
    return {"labels": labels, **{fw: [max(runs[k][fw].replica_spread(), SPREAD_FLOOR)
                                      for k in labels] for fw in FRAMEWORK_NAMES}}


def replica_spread_figure(runs: dict) -> go.Figure:
    """Grouped bars of :func:`replica_spreads`, log scale; each run is named by its
    key, in the current language (:func:`vizkit.strings.label`)."""
    spreads = replica_spreads(runs)
    text = words(TEXT)
    names = [label(key) for key in spreads["labels"]]
    fig = go.Figure([go.Bar(x=names, y=spreads[fw], name=text["frameworks"][fw])
                     for fw in FRAMEWORK_NAMES])
    fig.update_layout(title=text["spread_title"],
                      yaxis={"type": "log",
                             "title": text["spread_axis"].format(floor=SPREAD_FLOOR)},
                      barmode="group", height=420, xaxis={"tickangle": -20})
    return fig


def runs_table(runs: dict) -> str:
    """A markdown table of the side-by-side runs: final losses, the largest relative
    difference between the two frameworks' losses (over the steps where PyTorch's is
    finite), both replica spreads and the skipped steps. Each run is named by its key,
    in the current language (:func:`vizkit.strings.label`)."""
    rows = [words(TEXT)["table_head"], "|---|---|---|---|---|---|---|"]
    for key in (k for k in runs if not k.startswith("_")):
        e, t = runs[key]["engine"], runs[key]["torch"]
        finite = np.isfinite(t.loss)
        gap = np.max(np.abs(e.loss - t.loss)[finite] / t.loss[finite])
        name = label(key)
        rows.append(f"| {name} | {e.loss[-1]:.4f} | {t.loss[-1]:.4f} | {gap:.1e} | "
                    f"{e.replica_spread():.1e} | {t.replica_spread():.1e} | "
                    f"{int(e.skipped.sum())} / {int(t.skipped.sum())} |")
    return "\n".join(rows)


# ------------------------------------------------------------ chapter 5: pitfalls

def held_bytes_findings(held: dict, leaking: str, budget_bytes: int,
                        larger_by: int = 1000) -> dict:
    """From ``{mode: [bytes held after each iteration]}``: the leaking mode's growth
    per iteration, its last value, how many iterations it takes to fill
    ``budget_bytes``, and the same for activations ``larger_by`` times larger."""
    if leaking not in held:
        raise KeyError(f"held_bytes_findings: no loop named {leaking!r}; the loops measured "
                       f"are {list(held)}")
    leak = [int(b) for b in held[leaking]]
    per_iteration = leak[0]
    if per_iteration <= 0:
        raise ValueError(f"held_bytes_findings: the loop {leaking!r} held no bytes after its "
                         "first iteration, so it does not leak; name the loop that keeps its "
                         "graphs alive")
    return {"per_iteration": per_iteration, "last": leak[-1], "iterations": len(leak),
            "to_budget": budget_bytes // per_iteration,
            "to_budget_larger": budget_bytes // (larger_by * per_iteration),
            "others_stay_at_zero": all(max(v) == 0 for k, v in held.items() if k != leaking)}


def held_bytes_figure(held: dict) -> go.Figure:
    """Megabytes held by saved tensors after each iteration, one line per loop."""
    fig = go.Figure([go.Scatter(y=np.asarray(v) / 1e6, name=k, mode="lines+markers")
                     for k, v in held.items()])
    text = words(TEXT)
    fig.update_layout(title=text["held_title"], xaxis_title=text["iteration"],
                      yaxis_title=text["mb_held"], height=380)
    return fig


def skip_markers(run) -> dict:
    """The steps ``run`` skipped and the loss scale at each (``run.scale`` is the scale
    before every step, ``run.skipped`` a boolean per step)."""
    steps = np.flatnonzero(np.asarray(run.skipped))
    return {"steps": [int(s) for s in steps],
            "scales": [float(s) for s in np.asarray(run.scale)[steps]]}


def scale_and_skips_figure(runs: dict, title: str) -> go.Figure:
    """Per framework, the loss scale before each step, with a cross on every skipped step."""
    text = words(TEXT)
    fig = go.Figure()
    for name, run in runs.items():
        marks = skip_markers(run)
        fig.add_trace(go.Scatter(y=[float(s) for s in run.scale],
                                 name=text["scale_name"].format(name=name), mode="lines+markers"))
        fig.add_trace(go.Scatter(x=marks["steps"], y=marks["scales"], mode="markers",
                                 marker={"size": 14, "symbol": "x"},
                                 name=text["skipped_name"].format(name=name)))
    fig.update_layout(title=title, xaxis_title=text["step"],
                      yaxis={"type": "log", "title": text["scale_axis"]}, height=360)
    return fig
