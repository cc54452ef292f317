"""Plotly pictures of chapter 1's measurements: what one call costs, per tensor size.

Reads timings through the protocol of :class:`vizkit.timing.Timing`: ``median``,
``low`` and ``high`` (seconds per call, the interquartile range around the
median) and ``str()`` for a short text. :func:`overhead_series` turns the
measured rows into the numbers a figure plots (a pure function, tested without
any UI); :func:`overhead_figure` draws them and :func:`overhead_summary` says
the same in words.
"""

from __future__ import annotations

import plotly.graph_objects as go

from vizkit.strings import check_table, words

MICROSECONDS = 1e6

TEXT = check_table({
    "en": {"title": "Per-call time (median, bars: IQR)", "x": "elements",
           "y": "microseconds per call", "size": "{size} elements: ",
           "summary": "Median and interquartile range per call. {parts}.", "join": "; ",
           "list": ", "},
    "zh": {"title": "每次调用的耗时（中位数，误差棒：四分位距 IQR）", "x": "元素个数",
           "y": "每次调用的微秒数", "size": "{size} 个元素：",
           "summary": "每次调用耗时的中位数与四分位距（IQR）。{parts}。", "join": "；",
           "list": "，"},
})


def overhead_series(sizes, rows, labels: dict[str, str]) -> list[dict]:
    """One series per variant, in microseconds per call.

    ``rows[i]`` maps each variant key to its timing at ``sizes[i]``; ``labels``
    maps the keys to plot, in order, to their legend names. Each series holds
    ``x`` (the sizes), ``median`` and the distances ``below`` and ``above`` the
    median to the ends of the interquartile range (what an error bar draws).
    """
    if len(sizes) != len(rows):
        raise ValueError(f"overhead_series: {len(sizes)} sizes but {len(rows)} rows of "
                         "timings; give one row per size")
    series = []
    for key, label in labels.items():
        median = [r[key].median * MICROSECONDS for r in rows]
        series.append({
            "name": label, "x": list(sizes), "median": median,
            "below": [m - r[key].low * MICROSECONDS for m, r in zip(median, rows, strict=True)],
            "above": [r[key].high * MICROSECONDS - m for m, r in zip(median, rows, strict=True)],
        })
    return series


def overhead_figure(sizes, rows, labels: dict[str, str], title: str | None = None) -> go.Figure:
    """Median time per call against tensor size, log-log, one line per variant,
    with the interquartile range as error bars."""
    text = words(TEXT)
    fig = go.Figure()
    for s in overhead_series(sizes, rows, labels):
        fig.add_trace(go.Scatter(
            x=s["x"], y=s["median"], mode="lines+markers", name=s["name"],
            error_y={"type": "data", "array": s["above"], "arrayminus": s["below"]}))
    fig.update_layout(title=title or text["title"], xaxis_type="log", yaxis_type="log",
                      xaxis_title=text["x"], yaxis_title=text["y"], height=420)
    return fig


def overhead_summary(sizes, rows, labels: dict[str, str]) -> str:
    """The figure in words: every variant's median and IQR at the smallest and the
    largest size."""
    text = words(TEXT)
    ends = sorted({0, len(sizes) - 1})
    parts = [text["size"].format(size=sizes[i])
             + text["list"].join(f"{label} {rows[i][key]}" for key, label in labels.items())
             for i in ends]
    return text["summary"].format(parts=text["join"].join(parts))
