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

PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1",
           "#ff9da7", "#9c755f", "#bab0ac"]


def live_bytes_per_step(plan) -> list[int]:
    size = {n.name: n.meta.nbytes for n in plan.order}
    return [sum(size[name] for name, (birth, death) in plan.intervals.items()
                if birth <= step <= death) for step in range(len(plan.order))]


def live_buffer_figure(plan, title: str = "Live values and the buffers they share"):
    """Top: one bar per intermediate from birth to last use, on the row of the
    buffer it was given (bars on one row never overlap). Bottom: bytes alive
    per step, against the naive total and the planned buffers."""
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08,
                        row_heights=[0.6, 0.4],
                        subplot_titles=("buffer assignment (bar = a value's lifetime)",
                                        "memory per step"))
    size = {n.name: n.meta.nbytes for n in plan.order}
    for name, (birth, death) in plan.intervals.items():
        buf = plan.buffer_of[name]
        fig.add_trace(go.Bar(
            x=[max(death - birth, 0.3)], base=[birth], y=[f"buffer {buf}"], orientation="h",
            width=0.6, marker_color=PALETTE[buf % len(PALETTE)], showlegend=False,
            text=[name], textposition="inside", insidetextanchor="middle",
            hovertemplate=f"{name}: steps {birth}-{death}, {size[name] / 1024:.1f} KiB"
                          "<extra></extra>"), row=1, col=1)
    steps = list(range(len(plan.order)))
    kib = [b / 1024 for b in live_bytes_per_step(plan)]
    fig.add_trace(go.Scatter(x=steps, y=kib, mode="lines+markers", name="alive (freed at last use)",
                             line_shape="hv"), row=2, col=1)
    for label, value, dash in (("naive: every value its own buffer", plan.naive_bytes, "dot"),
                               ("planned buffers", plan.planned_bytes, "dash")):
        fig.add_trace(go.Scatter(x=[steps[0], steps[-1]], y=[value / 1024] * 2, mode="lines",
                                 name=label, line_dash=dash), row=2, col=1)
    fig.update_layout(title=title, barmode="overlay", height=520, legend_orientation="h",
                      legend_y=-0.15, margin=dict(l=60, r=20, t=70, b=40))
    fig.update_xaxes(title_text="execution step", row=2, col=1)
    fig.update_yaxes(title_text="KiB", row=2, col=1)
    return fig


def live_buffer_summary(plan) -> str:
    peak = max(live_bytes_per_step(plan), default=0)
    return (f"{len(plan.intervals)} intermediate values over {len(plan.order)} steps share "
            f"{len(plan.buffer_bytes)} buffers. Naive allocation needs "
            f"{plan.naive_bytes / 1024:.1f} KiB, freeing each value after its last use peaks "
            f"at {peak / 1024:.1f} KiB, and the planned buffers total "
            f"{plan.planned_bytes / 1024:.1f} KiB.")


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


def working_set_figure(uses: dict, title: str = "Working set: held between calls + one call"):
    """Stacked bars per way of running: persistent bytes (allocated once, held
    between calls) under the bytes one call allocates."""
    rows = working_set_rows(uses)
    names = [r["name"] for r in rows]
    fig = go.Figure()
    for key, label, color in (("persistent_kib", "persistent (allocated once)", PALETTE[0]),
                              ("per_call_kib", "per call", PALETTE[1])):
        fig.add_trace(go.Bar(x=names, y=[r[key] for r in rows], name=label, marker_color=color,
                             hovertemplate="%{x}: %{y:.0f} KiB<extra>" + label + "</extra>"))
    fig.update_layout(title=title, barmode="stack", yaxis_title="KiB", height=400,
                      legend_orientation="h", legend_y=-0.2)
    return fig


def working_set_summary(uses: dict) -> str:
    """The figure in words: each bar's two parts and its total against the first bar."""
    rows = working_set_rows(uses)
    parts = [f"{r['name']}: {r['persistent_kib']:.0f} KiB persistent + {r['per_call_kib']:.0f} "
             f"KiB per call = {r['total_kib']:.0f} KiB ({r['relative']:.2f}x {rows[0]['name']})"
             for r in rows]
    return "Working set per way of running. " + "; ".join(parts) + "."
