"""Plotly pictures of memory: who lives when, in which buffer; what each run holds.

Reads a plan through the protocol of ``chapters.graph.memory.MemoryPlan``:
``order`` (nodes with ``name`` and ``meta.nbytes``), ``intervals``
(``name -> (birth step, last-use step)``), ``buffer_of`` (``name -> buffer``)
and ``naive_bytes`` / ``free_at_last_use_bytes`` / ``planned_bytes``; and
measured memory through ``chapters.graph.MemoryUse``'s ``persistent`` and
``per_call`` bytes (the working set of eager, planned and compiled runs).
"""

from __future__ import annotations

import plotly.graph_objects as go
from plotly.subplots import make_subplots

from vizkit.strings import check_table, words

PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
           "#ff9da7", "#9c755f", "#bab0ac"]

TEXT = check_table({
    "en": {
        "live_title": "Live values and the buffers they share",
        "assignment": "buffer assignment (bar = a value's lifetime)",
        "per_step": "memory per step",
        "buffer": "buffer {buf}",
        "lifetime_hover": "{name}: steps {birth}-{death}, {kib:.1f} KiB",
        "alive": "alive (freed at last use)",
        "naive": "naive: every value its own buffer",
        "planned": "planned buffers",
        "step": "execution step",
        "live_summary": ("{values} intermediate values over {steps} steps share {buffers} "
                         "buffers. Naive allocation needs {naive:.1f} KiB, freeing each value "
                         "after its last use peaks at {peak:.1f} KiB, and the planned buffers "
                         "total {planned:.1f} KiB."),
        "ws_title": "Working set: held between calls + one call",
        "persistent": "persistent (allocated once)",
        "per_call": "per call",
        "ws_row": ("{name}: {persistent:.0f} KiB persistent + {per_call:.0f} KiB per call = "
                   "{total:.0f} KiB ({relative:.2f}x {first})"),
        "ws_summary": "Working set per way of running. {rows}.",
        "join": "; ",
    },
    "zh": {
        "live_title": "存活的值及其共享的缓冲区",
        "assignment": "缓冲区分配（条形 = 一个值的生命周期）",
        "per_step": "每一步的内存",
        "buffer": "缓冲区 {buf}",
        "lifetime_hover": "{name}：第 {birth}-{death} 步，{kib:.1f} KiB",
        "alive": "存活（最后一次使用后释放）",
        "naive": "朴素分配：每个值独占一个缓冲区",
        "planned": "规划后的缓冲区",
        "step": "执行步",
        "live_summary": ("{values} 个中间值在 {steps} 步执行中共用 {buffers} 个缓冲区。"
                         "朴素分配需要 {naive:.1f} KiB；每个值在最后一次使用后立即释放，"
                         "峰值为 {peak:.1f} KiB；内存规划后的缓冲区合计 {planned:.1f} KiB。"),
        "ws_title": "工作集：调用之间常驻的内存 + 一次调用分配的内存",
        "persistent": "常驻（只分配一次）",
        "per_call": "每次调用",
        "ws_row": ("{name}：常驻 {persistent:.0f} KiB + 每次调用 {per_call:.0f} KiB = "
                   "{total:.0f} KiB（{first} 的 {relative:.2f}x）"),
        "ws_summary": "各种运行方式的工作集。{rows}。",
        "join": "；",
    },
})


def live_bytes_per_step(plan) -> list[int]:
    size = {n.name: n.meta.nbytes for n in plan.order}
    return [sum(size[name] for name, (birth, death) in plan.intervals.items()
                if birth <= step <= death) for step in range(len(plan.order))]


def live_buffer_figure(plan, title: str | None = None):
    """Top: one bar per intermediate from birth to last use, on the row of the
    buffer it was given (bars on one row never overlap). Bottom: bytes alive
    per step, against the naive total and the planned buffers."""
    text = words(TEXT)
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08,
                        row_heights=[0.6, 0.4],
                        subplot_titles=(text["assignment"], text["per_step"]))
    size = {n.name: n.meta.nbytes for n in plan.order}
    for name, (birth, death) in plan.intervals.items():
        buf = plan.buffer_of[name]
        fig.add_trace(go.Bar(
            x=[max(death - birth, 0.3)], base=[birth], y=[text["buffer"].format(buf=buf)],
            orientation="h",
            width=0.6, marker_color=PALETTE[buf % len(PALETTE)], showlegend=False,
            text=[name], textposition="inside", insidetextanchor="middle",
            hovertemplate=text["lifetime_hover"].format(name=name, birth=birth, death=death,
                                                        kib=size[name] / 1024)
                          + "<extra></extra>"), row=1, col=1)
    steps = list(range(len(plan.order)))
    kib = [b / 1024 for b in live_bytes_per_step(plan)]
    fig.add_trace(go.Scatter(x=steps, y=kib, mode="lines+markers", name=text["alive"],
                             line_shape="hv"), row=2, col=1)
    for label, value, dash in ((text["naive"], plan.naive_bytes, "dot"),
                               (text["planned"], plan.planned_bytes, "dash")):
        fig.add_trace(go.Scatter(x=[steps[0], steps[-1]], y=[value / 1024] * 2, mode="lines",
                                 name=label, line_dash=dash), row=2, col=1)
    fig.update_layout(title=title or text["live_title"], barmode="overlay", height=520,
                      legend_orientation="h", legend_y=-0.15, margin=dict(l=60, r=20, t=70, b=40))
    fig.update_xaxes(title_text=text["step"], row=2, col=1)
    fig.update_yaxes(title_text="KiB", row=2, col=1)
    return fig


def live_buffer_summary(plan) -> str:
    """The figure in words: values, steps, buffers, and the three totals in KiB."""
    peak = max(live_bytes_per_step(plan), default=0)
    return words(TEXT)["live_summary"].format(
        values=len(plan.intervals), steps=len(plan.order), buffers=len(plan.buffer_bytes),
        naive=plan.naive_bytes / 1024, peak=peak / 1024, planned=plan.planned_bytes / 1024)


def working_set_rows(uses: dict) -> list[dict]:
    """One row per way of running, from ``name -> measured use`` (objects with
    ``persistent`` and ``per_call`` bytes, as ``chapters.graph.MemoryUse``):
    name, persistent / per-call / total KiB, and the total relative to the first row."""
    first = next(iter(uses.values()))
    base = first.persistent + first.per_call
    return [{"name": name, "persistent_kib": use.persistent / 1024,
             "per_call_kib": use.per_call / 1024,
             "total_kib": (use.persistent + use.per_call) / 1024,
             "relative": (use.persistent + use.per_call) / base if base else float("nan")}
            for name, use in uses.items()]


def working_set_figure(uses: dict, title: str | None = None):
    """Stacked bars per way of running: persistent bytes (allocated once, held
    between calls) under the bytes one call allocates."""
    text = words(TEXT)
    rows = working_set_rows(uses)
    names = [r["name"] for r in rows]
    fig = go.Figure()
    for key, label, color in (("persistent_kib", text["persistent"], PALETTE[0]),
                              ("per_call_kib", text["per_call"], PALETTE[1])):
        fig.add_trace(go.Bar(x=names, y=[r[key] for r in rows], name=label, marker_color=color,
                             hovertemplate="%{x}: %{y:.0f} KiB<extra>" + label + "</extra>"))
    fig.update_layout(title=title or text["ws_title"], barmode="stack", yaxis_title="KiB",
                      height=400, legend_orientation="h", legend_y=-0.2)
    return fig


def working_set_summary(uses: dict) -> str:
    """The figure in words: each bar's two parts and its total against the first bar."""
    text = words(TEXT)
    rows = working_set_rows(uses)
    parts = [text["ws_row"].format(name=r["name"], persistent=r["persistent_kib"],
                                   per_call=r["per_call_kib"], total=r["total_kib"],
                                   relative=r["relative"], first=rows[0]["name"])
             for r in rows]
    return text["ws_summary"].format(rows=text["join"].join(parts))
