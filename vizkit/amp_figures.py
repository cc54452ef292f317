"""Figures of mixed-precision training runs (chapters 4 and 5).

Each figure has two halves: a pure function that turns a run's measurements
into the numbers to plot or to quote (tested without any UI), and a thin
plotly function that draws them. Display with :func:`vizkit.figures.show`
and a text summary.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go


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
    fig.update_layout(title="Float16 without masters: Adam breaks, SGD loses updates",
                      xaxis_title="step", yaxis={"title": f"loss (Adam, lr {adam_lr:g})"},
                      yaxis2={"title": f"% updates lost (SGD, lr {sgd_lr:g})", "overlaying": "y",
                              "side": "right", "rangemode": "tozero"}, height=420)
    return fig


def half_precision_summary(findings: dict, modes) -> str:
    """The figure's text summary, from :func:`half_precision_findings`."""
    reference, bare, master = modes
    final, nan = findings["final"], findings["first_nan"]
    broke = (f"turns NaN at step {nan} (gaps in the line)" if nan is not None
             else f"ends at {final[bare]:.3f}")
    return (f"Adam: float32 ends at loss {final[reference]:.3f}, float16 with float32 masters at "
            f"{final[master]:.3f}; float16 without masters {broke}. SGD: without masters "
            f"{findings['lost_bare']:.0f}% of the weight updates are rounded away per step, with "
            f"masters {findings['lost_master']:.1f}%.")
