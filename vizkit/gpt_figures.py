"""Chapter 6's figure: the capstone GPT's loss per step, one or several runs.

:func:`loss_figure` draws each run's training loss per step as a line and its held-out
loss as markers, from the ``history`` that ``chapters.capstone.gpt_train.train``
returns; :func:`loss_summary` says the same in one sentence.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from vizkit.strings import check_table, words

TEXT = check_table({
    "en": {
        "title": "Capstone GPT: loss per step",
        "train": "{run}: training loss", "held_out": "{run}: held-out loss",
        "x": "step", "y": "cross-entropy (nats per character)",
        "runs": {"engines": "engines", "torch": "torch"},
        "summary": "{runs}.", "run": "{run}: {first:.3f} -> {last:.3f} in {steps} steps",
        "join": "; ",
    },
    "zh": {
        "title": "综合实战 GPT：每一步的损失",
        "train": "{run}：训练损失", "held_out": "{run}：留出损失",
        "x": "步", "y": "交叉熵（每个字符的奈特数）",
        "runs": {"engines": "引擎", "torch": "torch"},
        "summary": "{runs}。", "run": "{run}：{steps} 步内从 {first:.3f} 降到 {last:.3f}",
        "join": "；",
    },
})


def _name(run: str) -> str:
    return words(TEXT)["runs"].get(run, run)


def loss_figure(histories: dict[str, dict]) -> go.Figure:
    """``{run: history}`` -> the training loss per step (lines) and the held-out loss
    (markers) of every run, in the course's language."""
    text = words(TEXT)
    fig = go.Figure()
    for run, history in histories.items():
        steps = np.arange(1, len(history["loss"]) + 1)
        fig.add_trace(go.Scatter(x=steps, y=history["loss"], mode="lines",
                                 name=text["train"].format(run=_name(run))))
        if history["val"]:
            at, val = zip(*history["val"], strict=True)
            fig.add_trace(go.Scatter(x=at, y=val, mode="markers",
                                     name=text["held_out"].format(run=_name(run))))
    fig.update_layout(title=text["title"], xaxis_title=text["x"], yaxis_title=text["y"],
                      template="plotly_white", height=380)
    return fig


def loss_summary(histories: dict[str, dict]) -> str:
    """One sentence: each run's first and last training loss."""
    text = words(TEXT)
    runs = text["join"].join(text["run"].format(run=_name(run), first=h["loss"][0],
                                                last=h["loss"][-1], steps=len(h["loss"]))
                             for run, h in histories.items())
    return text["summary"].format(runs=runs)
