"""Chapter 2's figures (自动微分): measurements in, line plots out.

Each figure is two steps. A pure function turns the chapter's measurements
into :class:`Series` (named x/y lists, plus whether the line is dashed); it
needs no plotting library and is unit-tested. :func:`line_figure` then draws
any list of series as one plotly figure. The notebook cell keeps only the
experiment and the ``show(figure, summary)`` call.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from vizkit.strings import check_table, words

TEXT = check_table({
    "en": {"central": "central difference, {dtype}", "ad": "AD (engine), {dtype}",
           "cost_names": ("reverse-mode AD (engine)", "central differences",
                          "sympy: differentiate + lambdify"),
           "jvps": "n forward-mode passes (jvp)", "backward": "one reverse-mode pass (backward)",
           "speedup": "n={n}: {ratio:.0f}x", "list": ", "},
    "zh": {"central": "中心差分，{dtype}", "ad": "自动微分（参考引擎），{dtype}",
           "cost_names": ("反向模式自动微分（参考引擎）", "中心差分",
                          "sympy：符号求导 + lambdify"),
           "jvps": "n 次前向模式传播（jvp）", "backward": "一次反向模式传播（backward）",
           "speedup": "n={n}：{ratio:.0f}x", "list": "，"},
})

LOG_FLOOR = 1e-17
"""Errors are clipped to this before plotting: an exact 0 has no place on a log axis."""


@dataclass(frozen=True)
class Series:
    """One line of a figure: ``y`` against ``x``, labelled ``name``."""

    name: str
    x: tuple[float, ...]
    y: tuple[float, ...]
    dashed: bool = False
    markers: bool = True


def _floats(values) -> tuple[float, ...]:
    return tuple(float(v) for v in values)


def relative_error(estimate: float, exact: float) -> float:
    """``|estimate - exact| / |exact|``, clipped below at :data:`LOG_FLOOR`."""
    return max(abs(estimate - exact) / abs(exact), LOG_FLOOR)


def derivative_error_series(steps: Sequence[float], fd_errors: Mapping[str, Sequence[float]],
                            ad_errors: Mapping[str, float]) -> list[Series]:
    """Finite-difference error against step ``h``, one line per dtype, and AD's
    error (which has no step) as a flat dashed line across the same range.

    ``fd_errors[dtype][i]`` is the relative error at ``steps[i]``."""
    text = words(TEXT)
    span = (float(steps[0]), float(steps[-1]))
    series = []
    for dtype, errors in fd_errors.items():
        if len(errors) != len(steps):
            raise ValueError(f"{dtype}: {len(errors)} errors for {len(steps)} steps; "
                             "give one error per step")
        series.append(Series(text["central"].format(dtype=dtype), _floats(steps),
                             _floats(np.maximum(errors, LOG_FLOOR))))
        series.append(Series(text["ad"].format(dtype=dtype), span,
                             (max(ad_errors[dtype], LOG_FLOOR),) * 2, dashed=True, markers=False))
    return series


def gradient_cost_series(rows: Sequence[tuple]) -> list[Series]:
    """Seconds per full gradient against n, from rows ``(n, t_ad, t_fd, t_sym, ...)``."""
    n = _floats(r[0] for r in rows)
    names = words(TEXT)["cost_names"]
    return [Series(name, n, _floats(r[k] for r in rows)) for k, name in enumerate(names, start=1)]


def forward_reverse_series(cost: Sequence[tuple]) -> list[Series]:
    """Seconds per full gradient against n, from rows ``(n, t_jvps, t_backward)``."""
    text = words(TEXT)
    n = _floats(c[0] for c in cost)
    return [Series(text["jvps"], n, _floats(c[1] for c in cost)),
            Series(text["backward"], n, _floats(c[2] for c in cost))]


def speedup_text(cost: Sequence[tuple]) -> str:
    """``n=2: 3x, n=4: 5x`` — forward-mode time over reverse-mode time per n."""
    text = words(TEXT)
    return text["list"].join(text["speedup"].format(n=n, ratio=forward / reverse)
                             for n, forward, reverse in cost)


def memory_series(curves: Mapping[str, Sequence[int]]) -> list[Series]:
    """Bytes held per iteration, in MB; curves whose name starts with ``torch`` are dashed."""
    return [Series(name, _floats(range(len(held))), _floats(np.asarray(held) / 1e6),
                   dashed=name.startswith("torch"))
            for name, held in curves.items()]


def loss_series(losses: Mapping[str, Sequence[float]]) -> list[Series]:
    """Loss per step for each engine; torch's line is dashed so both stay visible."""
    return [Series(name, _floats(range(len(values))), _floats(values),
                   dashed=name == "torch", markers=False)
            for name, values in losses.items()]


def line_figure(series: Sequence[Series], title: str, x_title: str, y_title: str,
                log_x: bool = False, log_y: bool = False, height: int = 360):
    """One plotly figure with a line per series."""
    fig = go.Figure([go.Scatter(x=s.x, y=s.y, name=s.name,
                                mode="lines+markers" if s.markers else "lines",
                                line={"dash": "dash"} if s.dashed else {})
                     for s in series])
    fig.update_layout(title=title, height=height,
                      xaxis={"type": "log" if log_x else "linear", "title": x_title},
                      yaxis={"type": "log" if log_y else "linear", "title": y_title})
    return fig


def loglog_slope(x: Sequence[float], y: Sequence[float]) -> float:
    """The exponent ``p`` of ``y ≈ c x^p``: the least-squares slope of
    ``log10 y`` against ``log10 x`` (2 for an error that shrinks like ``h^2``)."""
    if len(x) != len(y) or len(x) < 2:
        raise ValueError(f"a slope needs two or more (x, y) pairs of equal length, got "
                         f"{len(x)} x and {len(y)} y values")
    slope, _ = np.polyfit(np.log10(np.asarray(x, float)), np.log10(np.asarray(y, float)), 1)
    return float(slope)


def backward_edges(root) -> list[tuple]:
    """The ``(user, input)`` edges between the backward functions of ``root``'s
    history (engine or torch: both expose ``grad_fn.next_functions``). Leaf
    accumulators (``AccumulateGrad``) are left out: they run no VJP rule."""
    edges, seen, stack = [], set(), [root.grad_fn]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        for source, _ in node.next_functions:
            if source is not None and type(source).__name__ != "AccumulateGrad":
                edges.append((node, source))
                stack.append(source)
    return edges


def out_of_order_edges(visits: Sequence, edges: Sequence[tuple]) -> list[tuple]:
    """The edges ``(user, input)`` that ``visits`` (nodes in the order backward
    reached them) does not respect as a reverse topological order: the input
    visited before its user, or either one never visited. Empty when every node
    waited for all of its users, which is what makes each gradient complete
    (the sum over all paths) before it is passed on."""
    position = {node: i for i, node in enumerate(visits)}
    return [(user, source) for user, source in edges
            if user not in position or source not in position
            or position[source] < position[user]]
