"""Chapter 3's measurement figures: each picture comes as three functions.

``*_series`` (or ``*_matrix``) turns the measurements into the numbers that are
plotted — pure, no plotting, unit-tested; ``*_figure`` draws them with plotly;
``*_summary`` says in one paragraph what the figure shows, for readers who
cannot see it. The notebook runs the experiment and passes the measurements in.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

SECONDS_PER_YEAR = 86400 * 365
STATE_BYTES_PER_PARAM = {"fp16 weights": 2, "fp16 gradients": 2, "fp32 master + Adam m, v": 12}
"""Mixed-precision Adam: 2 + 2 + (4 + 4 + 4) = 16 bytes per parameter."""


# ------------------------------------------------------------ §1 training state

def training_state_series(models: dict[str, float]) -> dict[str, list[float]]:
    """GB of each kind of training state for each model: ``bytes/param * params / 1e9``."""
    return {kind: [per_param * n / 1e9 for n in models.values()]
            for kind, per_param in STATE_BYTES_PER_PARAM.items()}


def training_years(params: float, tokens: float, flops_per_second: float) -> float:
    """Years on one device to train ``params`` parameters on ``tokens`` tokens at
    ``6 * params`` FLOPs per token (2 forward, 4 backward)."""
    return 6 * params * tokens / flops_per_second / SECONDS_PER_YEAR


def training_state_figure(models: dict[str, float], device_gb: float) -> go.Figure:
    """Stacked bars of the state per model, with the device's memory as a line."""
    fig = go.Figure([go.Bar(x=list(models), y=gb, name=kind)
                     for kind, gb in training_state_series(models).items()])
    fig.add_hline(y=device_gb, line_dash="dash",
                  annotation_text=f"one {device_gb} GB accelerator")
    fig.update_layout(barmode="stack", title="Training state per model (no activations)",
                      yaxis_title="GB", height=380)
    return fig


def training_state_summary(models: dict[str, float], device_gb: float,
                           flops_per_second: float, tokens: float = 1e12) -> str:
    totals = [sum(gb) for gb in zip(*training_state_series(models).values(), strict=True)]
    rows = "; ".join(f"{name}: {gb:.0f} GB, {training_years(n, tokens, flops_per_second):.1f} "
                     f"device-years for {tokens:.0e} tokens"
                     for (name, n), gb in zip(models.items(), totals, strict=True))
    too_big = [(name, gb) for name, gb in zip(models, totals, strict=True) if gb > device_gb]
    verdict = (f" From {too_big[0][0]} on ({too_big[0][1]:.0f} GB) the state alone exceeds "
               "one accelerator." if too_big else " Every model's state fits on one device.")
    return (f"Stacked bars of weights, gradients and optimizer state against a {device_gb} GB "
            f"line: {rows}.{verdict}")


# ------------------------------------------------------------ §4 all-reduce traffic

def traffic_series(per_rank, total, naive_root, nbytes: int) -> dict[str, list[float]]:
    """The three traffic curves in multiples of the buffer size ``nbytes``."""
    return {"ring: bytes sent per rank / n": [b / nbytes for b in per_rank],
            "ring: total bytes, all ranks / n": [b / nbytes for b in total],
            "naive: bytes rank 0 sends / n": [b / nbytes for b in naive_root]}


def traffic_figure(ranks, series: dict[str, list[float]], nbytes: int) -> go.Figure:
    fig = go.Figure([go.Scatter(x=list(ranks), y=ys, name=name) for name, ys in series.items()])
    fig.update_layout(title=f"All-reduce traffic of a {nbytes}-byte buffer",
                      xaxis_title="ranks p", yaxis_title="multiples of the buffer size n",
                      height=380)
    return fig


def traffic_summary(ranks, series: dict[str, list[float]], model_time) -> str:
    per_rank, total, root = series.values()
    return ("Ring bytes per rank: "
            + ", ".join(f"p={p}: {b:.2f} n" for p, b in zip(ranks, per_rank, strict=True))
            + f". Total over all ranks grows from {total[0]:.0f} n to {total[-1]:.0f} n; the "
            f"naive root sends (p-1) n, {root[-1]:.0f} n at p={ranks[-1]}. Modelled ring time "
            f"grows from {model_time[0] * 1e6:.0f} to {model_time[-1] * 1e6:.0f} µs, all of "
            "it the 2(p-1) alpha term.")


# ------------------------------------------------------------ §5 the measured link

def p2p_series(p2p, alpha: float, beta: float) -> dict[str, list[float]]:
    """Message sizes (bytes), measured one-way times and the fitted line's (ms)."""
    sizes = [s for s, _ in p2p]
    return {"bytes": sizes, "measured": [t * 1e3 for _, t in p2p],
            "alpha + n beta": [(alpha + s * beta) * 1e3 for s in sizes]}


def p2p_figure(p2p, alpha: float, beta: float) -> go.Figure:
    series = p2p_series(p2p, alpha, beta)
    fig = go.Figure([
        go.Scatter(x=series["bytes"], y=series["measured"], mode="markers", name="measured"),
        go.Scatter(x=series["bytes"], y=series["alpha + n beta"], name="alpha + n beta"),
    ])
    fig.update_layout(title="One-way message time between two real processes", height=360,
                      xaxis_type="log", yaxis_type="log", xaxis_title="bytes", yaxis_title="ms")
    return fig


def p2p_summary(p2p, alpha: float, beta: float) -> str:
    return ("Measured one-way times: " + ", ".join(f"{s} B: {t * 1e3:.3f} ms" for s, t in p2p)
            + f"; the fitted line alpha={alpha * 1e6:.0f} µs, beta={beta * 1e9:.2f} ns/B.")


# ------------------------------------------------------------ §7 tensor vs data parallel

def tp_dp_series(tp_bytes: int, batch: int, dp_bytes: float, batches) -> dict:
    """KiB per rank and step: tensor parallelism's grow with the batch (measured
    ``tp_bytes`` at ``batch`` examples, scaled per example), data parallelism's
    gradient all-reduce is the same for any batch. ``crossover``: the batch at
    which they are equal."""
    per_example = tp_bytes / batch
    return {"batches": list(batches),
            "tensor parallel: activations": [per_example * b / 1024 for b in batches],
            "data parallel: gradients": [dp_bytes / 1024 for _ in batches],
            "crossover": dp_bytes / per_example}


def tp_dp_figure(tp_bytes: int, batch: int, dp_bytes: float, batches) -> go.Figure:
    series = tp_dp_series(tp_bytes, batch, dp_bytes, batches)
    lines = [go.Scatter(x=series["batches"], y=series[name], name=name)
             for name in ("tensor parallel: activations", "data parallel: gradients")]
    point = go.Scatter(x=[batch], y=[tp_bytes / 1024], mode="markers", marker_size=12,
                       name="measured (simulated world)")
    fig = go.Figure([*lines, point])
    fig.update_layout(title="Bytes each of 2 ranks sends per step, one MLP block",
                      xaxis_type="log", yaxis_type="log", yaxis_title="KiB",
                      xaxis_title="examples (tokens) per step", height=380)
    return fig


def tp_dp_summary(tp_bytes: int, batch: int, dp_bytes: float) -> str:
    crossover = tp_dp_series(tp_bytes, batch, dp_bytes, [batch])["crossover"]
    return (f"Measured: tensor parallelism sent {tp_bytes} B per rank for a batch of {batch} "
            f"({tp_bytes / batch:.0f} B per example, growing with the batch); data "
            f"parallelism's gradient all-reduce sends {dp_bytes:.0f} B whatever the batch. They "
            f"cross at about {crossover:.0f} examples; a transformer step has thousands of "
            "tokens per rank, so its tensor-parallel traffic is far from small.")


# ------------------------------------------------------------ §8 bubbles

def bubble_series(p: int, micro_batches, measured) -> dict[str, list[float]]:
    """The ideal bubble ``(p-1)/(m+p-1)`` and the measured one, per ``m``."""
    return {"(p-1)/(m+p-1)": [(p - 1) / (m + p - 1) for m in micro_batches],
            "measured (1F1B, real compute)": list(measured)}


def bubble_figure(p: int, micro_batches, measured) -> go.Figure:
    """The ideal bubble as a line, the measured one as markers."""
    series = bubble_series(p, micro_batches, measured)
    modes = {"(p-1)/(m+p-1)": "lines", "measured (1F1B, real compute)": "markers"}
    fig = go.Figure([go.Scatter(x=list(micro_batches), y=ys, name=name, mode=modes[name])
                     for name, ys in series.items()])
    fig.update_layout(title=f"Bubble fraction, {p} stages", xaxis_title="micro-batches m",
                      yaxis_title="idle fraction", xaxis_type="log", height=360)
    return fig


def bubble_summary(p: int, micro_batches, measured, stage_ms) -> str:
    ideal = bubble_series(p, micro_batches, measured)["(p-1)/(m+p-1)"]
    return ("Bubble fraction against micro-batches: "
            + ", ".join(f"m={m}: ideal {i:.2f}, measured {b:.2f}"
                        for m, i, b in zip(micro_batches, ideal, measured, strict=True))
            + ". Measured compute per micro-batch (forward + backward) by stage: "
            + ", ".join(f"stage {s}: {t:.2f} ms" for s, t in enumerate(stage_ms))
            + ". The formula assumes equal stages; the slowest one sets the pace and the "
            "others wait, so the measured bubble stays above the ideal — balancing stages "
            "matters as much as m.")


# ------------------------------------------------------------ §9 who talks to whom

def traffic_matrix(messages, world_size: int) -> np.ndarray:
    """``matrix[src, dst]``: bytes rank ``src`` sent to rank ``dst``."""
    matrix = np.zeros((world_size, world_size))
    for m in messages:
        matrix[m.src, m.dst] += m.nbytes
    return matrix


def traffic_heatmap(matrix: np.ndarray, title: str) -> go.Figure:
    p = len(matrix)
    fig = go.Figure(go.Heatmap(z=matrix / 1024, x=[f"to {r}" for r in range(p)],
                               y=[f"from {r}" for r in range(p)], colorscale="Blues",
                               text=np.round(matrix / 1024, 1), texttemplate="%{text}"))
    fig.update_layout(title=title, height=360, yaxis_autorange="reversed")
    return fig


def traffic_matrix_summary(matrix: np.ndarray) -> str:
    p = len(matrix)
    pairs = [f"{s}->{d}: {matrix[s, d] / 1024:.1f}" for s in range(p) for d in range(p)
             if matrix[s, d]]
    silent = [f"{s}-{d}" for s in range(p) for d in range(s + 1, p)
              if not matrix[s, d] and not matrix[d, s]]
    return ("Traffic matrix in KiB: " + "; ".join(pairs) + ". Pairs that never talk: "
            + (", ".join(silent) or "none") + ".")


# ------------------------------------------------------------ §12 compression

def compression_bars(results: dict[str, tuple[float, int]]) -> dict[str, list]:
    """``results[name] = (final loss, bytes sent)`` as bar names, KiB and labels."""
    return {"names": list(results), "kib": [b / 1024 for _, b in results.values()],
            "labels": [f"loss {loss:.3g}" for loss, _ in results.values()]}


def compression_figure(results: dict[str, tuple[float, int]], steps: int) -> go.Figure:
    bars = compression_bars(results)
    fig = go.Figure(go.Bar(x=bars["names"], y=bars["kib"], text=bars["labels"],
                           textposition="outside"))
    fig.update_layout(title=f"Bytes sent per rank in {steps} steps, and the final loss",
                      yaxis_title="KiB", height=380)
    return fig


def compression_summary(results: dict[str, tuple[float, int]]) -> str:
    return "; ".join(f"{name}: {b / 1024:.1f} KiB, final loss {loss:.3g}"
                     for name, (loss, b) in results.items()) + "."
