"""Chapter 3's measurement figures: each picture comes as three functions.

``*_series`` (or ``*_matrix``) turns the measurements into the numbers that are
plotted — pure, no plotting, unit-tested; ``*_figure`` draws them with plotly;
``*_summary`` says in one paragraph what the figure shows, for readers who
cannot see it. The notebook runs the experiment and passes the measurements in.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from vizkit.strings import check_table, words

SECONDS_PER_YEAR = 86400 * 365
STATE_BYTES_PER_PARAM = {"fp16 weights": 2, "fp16 gradients": 2, "fp32 master + Adam m, v": 12}
"""Mixed-precision Adam: 2 + 2 + (4 + 4 + 4) = 16 bytes per parameter."""

TEXT = check_table({
    "en": {
        "legend": {},
        "list": ", ", "join": "; ",
        "state_title": "Training state per model (no activations)",
        "device_line": "one {gb} GB accelerator",
        "state_row": "{name}: {gb:.0f} GB, {years:.1f} device-years for {tokens:.0e} tokens",
        "too_big": " From {name} on ({gb:.0f} GB) the state alone exceeds one accelerator.",
        "fits": " Every model's state fits on one device.",
        "state_summary": ("Stacked bars of weights, gradients and optimizer state against a "
                          "{gb} GB line: {rows}.{verdict}"),
        "traffic_title": "All-reduce traffic of a {nbytes}-byte buffer",
        "ranks_p": "ranks p", "multiples": "multiples of the buffer size n",
        "traffic_summary": ("Ring bytes per rank: {per_rank}. Total over all ranks grows from "
                            "{first:.0f} n to {last:.0f} n; the naive root sends (p-1) n, "
                            "{root:.0f} n at p={p}. Modelled ring time grows from {t0:.0f} to "
                            "{t1:.0f} µs, all of it the 2(p-1) alpha term."),
        "p2p_title": "One-way message time between two real processes", "bytes": "bytes",
        "p2p_summary": ("Measured one-way times: {times}; the fitted line alpha={alpha:.0f} µs, "
                        "beta={beta:.2f} ns/B."),
        "tp_dp_title": "Bytes each of 2 ranks sends per step, one MLP block",
        "examples": "examples (tokens) per step",
        "tp_dp_summary": ("Measured: tensor parallelism sent {tp} B per rank for a batch of "
                          "{batch} ({per:.0f} B per example, growing with the batch); data "
                          "parallelism's gradient all-reduce sends {dp:.0f} B whatever the "
                          "batch. They cross at about {cross:.0f} examples; a transformer step "
                          "has thousands of tokens per rank, so its tensor-parallel traffic is "
                          "far from small."),
        "bubble_title": "Bubble fraction, {p} stages", "micro_batches": "micro-batches m",
        "idle": "idle fraction", "bubble_row": "m={m}: ideal {ideal:.2f}, measured {measured:.2f}",
        "stage_row": "stage {stage}: {ms:.2f} ms",
        "bubble_summary": ("Bubble fraction against micro-batches: {rows}. Measured compute per "
                           "micro-batch (forward + backward) by stage: {stages}. The formula "
                           "assumes equal stages; the slowest one sets the pace and the others "
                           "wait, so the measured bubble stays above the ideal — balancing "
                           "stages matters as much as m."),
        "to": "to {rank}", "from": "from {rank}",
        "matrix_summary": "Traffic matrix in KiB: {pairs}. Pairs that never talk: {silent}.",
        "none": "none",
        "loss_label": "loss {loss:.3g}",
        "compression_title": "Bytes sent per rank in {steps} steps, and the final loss",
        "compression_row": "{name}: {kib:.1f} KiB, final loss {loss:.3g}",
        "end": ".",
    },
    "zh": {
        "legend": {"fp16 weights": "fp16 权重", "fp16 gradients": "fp16 梯度",
                   "fp32 master + Adam m, v": "fp32 主权重 + Adam 的 m、v",
                   "ring: bytes sent per rank / n": "环形：每个 rank 发送的字节数 / n",
                   "ring: total bytes, all ranks / n": "环形：所有 rank 合计的字节数 / n",
                   "naive: bytes rank 0 sends / n": "朴素做法：rank 0 发送的字节数 / n",
                   "measured": "实测",
                   "tensor parallel: activations": "张量并行：激活",
                   "data parallel: gradients": "数据并行：梯度",
                   "measured (simulated world)": "实测（模拟环境）",
                   "measured (1F1B, real compute)": "实测（1F1B，真实计算）"},
        "list": "，", "join": "；",
        "state_title": "各模型的训练状态（不含激活）",
        "device_line": "单个 {gb} GB 加速器",
        "state_row": "{name}：{gb:.0f} GB，用 {tokens:.0e} 个 token 训练需 {years:.1f} 设备·年",
        "too_big": "从 {name} 起（{gb:.0f} GB），仅训练状态就超出了单个加速器的显存。",
        "fits": "每个模型的训练状态都能放进单个设备。",
        "state_summary": ("权重、梯度和优化器状态的堆叠柱状图，对照 {gb} GB 的横线："
                          "{rows}。{verdict}"),
        "traffic_title": "{nbytes} 字节缓冲区的 all-reduce 通信量",
        "ranks_p": "rank 数 p", "multiples": "缓冲区大小 n 的倍数",
        "traffic_summary": ("环形算法中每个 rank 发送的字节数：{per_rank}。所有 rank 的总量从 "
                            "{first:.0f} n 增长到 {last:.0f} n；朴素做法的根节点要发送 (p-1) n，"
                            "p={p} 时为 {root:.0f} n。按模型估算的环形 all-reduce 时间从 "
                            "{t0:.0f} µs 增长到 {t1:.0f} µs，增长的全是 2(p-1) alpha 这一项。"),
        "p2p_title": "两个真实进程之间的单程消息时间", "bytes": "字节",
        "p2p_summary": ("实测单程时间：{times}；拟合直线 alpha={alpha:.0f} µs，"
                        "beta={beta:.2f} ns/B。"),
        "tp_dp_title": "2 个 rank 各自每步发送的字节数（一个 MLP 块）",
        "examples": "每步样本（token）数",
        "tp_dp_summary": ("实测：batch 为 {batch} 时，张量并行每个 rank 发送 {tp} B（每个样本 "
                          "{per:.0f} B，随 batch 线性增长）；数据并行的梯度 all-reduce 无论 batch "
                          "多大都发送 {dp:.0f} B。两者大约在 {cross:.0f} 个样本处相交；"
                          "Transformer 的一步里每个 rank 要处理成千上万个 token，"
                          "所以张量并行的通信量一点也不小。"),
        "bubble_title": "气泡占比，{p} 个阶段", "micro_batches": "微批次数 m",
        "idle": "空闲占比", "bubble_row": "m={m}：理论 {ideal:.2f}，实测 {measured:.2f}",
        "stage_row": "阶段 {stage}：{ms:.2f} ms",
        "bubble_summary": ("气泡占比随微批次数的变化：{rows}。各阶段每个微批次的实测计算时间"
                           "（前向 + 反向）：{stages}。公式假设各阶段耗时相同；实际上最慢的阶段"
                           "决定节奏，其余阶段只能等它，所以实测气泡始终高于理论值——"
                           "让各阶段负载均衡，与增大 m 同样重要。"),
        "to": "发往 {rank}", "from": "来自 {rank}",
        "matrix_summary": "通信矩阵（KiB）：{pairs}。从不通信的 rank 对：{silent}。",
        "none": "无",
        "loss_label": "损失 {loss:.3g}",
        "compression_title": "{steps} 步内每个 rank 发送的字节数，以及最终损失",
        "compression_row": "{name}：{kib:.1f} KiB，最终损失 {loss:.3g}",
        "end": "。",
    },
})


def _legend(name: str) -> str:
    """A series' legend entry in the current language (series keys stay English)."""
    return words(TEXT)["legend"].get(name, name)


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
    text = words(TEXT)
    fig = go.Figure([go.Bar(x=list(models), y=gb, name=_legend(kind))
                     for kind, gb in training_state_series(models).items()])
    fig.add_hline(y=device_gb, line_dash="dash",
                  annotation_text=text["device_line"].format(gb=device_gb))
    fig.update_layout(barmode="stack", title=text["state_title"],
                      yaxis_title="GB", height=380)
    return fig


def training_state_summary(models: dict[str, float], device_gb: float,
                           flops_per_second: float, tokens: float = 1e12) -> str:
    text = words(TEXT)
    totals = [sum(gb) for gb in zip(*training_state_series(models).values(), strict=True)]
    rows = text["join"].join(
        text["state_row"].format(name=name, gb=gb, tokens=tokens,
                                 years=training_years(n, tokens, flops_per_second))
        for (name, n), gb in zip(models.items(), totals, strict=True))
    too_big = [(name, gb) for name, gb in zip(models, totals, strict=True) if gb > device_gb]
    verdict = (text["too_big"].format(name=too_big[0][0], gb=too_big[0][1]) if too_big
               else text["fits"])
    return text["state_summary"].format(gb=device_gb, rows=rows, verdict=verdict)


# ------------------------------------------------------------ §4 all-reduce traffic

def traffic_series(per_rank, total, naive_root, nbytes: int) -> dict[str, list[float]]:
    """The three traffic curves in multiples of the buffer size ``nbytes``."""
    return {"ring: bytes sent per rank / n": [b / nbytes for b in per_rank],
            "ring: total bytes, all ranks / n": [b / nbytes for b in total],
            "naive: bytes rank 0 sends / n": [b / nbytes for b in naive_root]}


def traffic_figure(ranks, series: dict[str, list[float]], nbytes: int) -> go.Figure:
    text = words(TEXT)
    fig = go.Figure([go.Scatter(x=list(ranks), y=ys, name=_legend(name))
                     for name, ys in series.items()])
    fig.update_layout(title=text["traffic_title"].format(nbytes=nbytes),
                      xaxis_title=text["ranks_p"], yaxis_title=text["multiples"], height=380)
    return fig


def traffic_summary(ranks, series: dict[str, list[float]], model_time) -> str:
    per_rank, total, root = series.values()
    text = words(TEXT)
    return text["traffic_summary"].format(
        per_rank=text["list"].join(f"p={p}: {b:.2f} n"
                                   for p, b in zip(ranks, per_rank, strict=True)),
        first=total[0], last=total[-1], root=root[-1], p=ranks[-1],
        t0=model_time[0] * 1e6, t1=model_time[-1] * 1e6)


# ------------------------------------------------------------ §5 the measured link

def p2p_series(p2p, alpha: float, beta: float) -> dict[str, list[float]]:
    """Message sizes (bytes), measured one-way times and the fitted line's (ms)."""
    sizes = [s for s, _ in p2p]
    return {"bytes": sizes, "measured": [t * 1e3 for _, t in p2p],
            "alpha + n beta": [(alpha + s * beta) * 1e3 for s in sizes]}


def p2p_figure(p2p, alpha: float, beta: float) -> go.Figure:
    series = p2p_series(p2p, alpha, beta)
    text = words(TEXT)
    fig = go.Figure([
        go.Scatter(x=series["bytes"], y=series["measured"], mode="markers",
                   name=_legend("measured")),
        go.Scatter(x=series["bytes"], y=series["alpha + n beta"], name="alpha + n beta"),
    ])
    fig.update_layout(title=text["p2p_title"], height=360, xaxis_type="log", yaxis_type="log",
                      xaxis_title=text["bytes"], yaxis_title="ms")
    return fig


def p2p_summary(p2p, alpha: float, beta: float) -> str:
    text = words(TEXT)
    return text["p2p_summary"].format(
        times=text["list"].join(f"{s} B: {t * 1e3:.3f} ms" for s, t in p2p),
        alpha=alpha * 1e6, beta=beta * 1e9)


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
    text = words(TEXT)
    lines = [go.Scatter(x=series["batches"], y=series[name], name=_legend(name))
             for name in ("tensor parallel: activations", "data parallel: gradients")]
    point = go.Scatter(x=[batch], y=[tp_bytes / 1024], mode="markers", marker_size=12,
                       name=_legend("measured (simulated world)"))
    fig = go.Figure([*lines, point])
    fig.update_layout(title=text["tp_dp_title"], xaxis_type="log", yaxis_type="log",
                      yaxis_title="KiB", xaxis_title=text["examples"], height=380)
    return fig


def tp_dp_summary(tp_bytes: int, batch: int, dp_bytes: float) -> str:
    crossover = tp_dp_series(tp_bytes, batch, dp_bytes, [batch])["crossover"]
    return words(TEXT)["tp_dp_summary"].format(tp=tp_bytes, batch=batch, per=tp_bytes / batch,
                                               dp=dp_bytes, cross=crossover)


# ------------------------------------------------------------ §8 bubbles

def bubble_series(p: int, micro_batches, measured) -> dict[str, list[float]]:
    """The ideal bubble ``(p-1)/(m+p-1)`` and the measured one, per ``m``."""
    return {"(p-1)/(m+p-1)": [(p - 1) / (m + p - 1) for m in micro_batches],
            "measured (1F1B, real compute)": list(measured)}


def bubble_figure(p: int, micro_batches, measured) -> go.Figure:
    """The ideal bubble as a line, the measured one as markers."""
    series = bubble_series(p, micro_batches, measured)
    modes = {"(p-1)/(m+p-1)": "lines", "measured (1F1B, real compute)": "markers"}
    text = words(TEXT)
    fig = go.Figure([go.Scatter(x=list(micro_batches), y=ys, name=_legend(name),
                                mode=modes[name])
                     for name, ys in series.items()])
    fig.update_layout(title=text["bubble_title"].format(p=p), xaxis_title=text["micro_batches"],
                      yaxis_title=text["idle"], xaxis_type="log", height=360)
    return fig


def bubble_summary(p: int, micro_batches, measured, stage_ms) -> str:
    ideal = bubble_series(p, micro_batches, measured)["(p-1)/(m+p-1)"]
    text = words(TEXT)
    rows = text["join"].join(text["bubble_row"].format(m=m, ideal=i, measured=b)
                             for m, i, b in zip(micro_batches, ideal, measured, strict=True))
    stages = text["list"].join(text["stage_row"].format(stage=s, ms=t)
                               for s, t in enumerate(stage_ms))
    return text["bubble_summary"].format(rows=rows, stages=stages)


# ------------------------------------------------------------ §9 who talks to whom

def traffic_matrix(messages, world_size: int) -> np.ndarray:
    """``matrix[src, dst]``: bytes rank ``src`` sent to rank ``dst``."""
    matrix = np.zeros((world_size, world_size))
    for m in messages:
        matrix[m.src, m.dst] += m.nbytes
    return matrix


def traffic_heatmap(matrix: np.ndarray, title: str) -> go.Figure:
    p = len(matrix)
    text = words(TEXT)
    fig = go.Figure(go.Heatmap(z=matrix / 1024, x=[text["to"].format(rank=r) for r in range(p)],
                               y=[text["from"].format(rank=r) for r in range(p)],
                               colorscale="Blues",
                               text=np.round(matrix / 1024, 1), texttemplate="%{text}"))
    fig.update_layout(title=title, height=360, yaxis_autorange="reversed")
    return fig


def traffic_matrix_summary(matrix: np.ndarray) -> str:
    p = len(matrix)
    pairs = [f"{s}->{d}: {matrix[s, d] / 1024:.1f}" for s in range(p) for d in range(p)
             if matrix[s, d]]
    silent = [f"{s}-{d}" for s in range(p) for d in range(s + 1, p)
              if not matrix[s, d] and not matrix[d, s]]
    text = words(TEXT)
    return text["matrix_summary"].format(pairs=text["join"].join(pairs),
                                         silent=text["list"].join(silent) or text["none"])


# ------------------------------------------------------------ §12 compression

def compression_bars(results: dict[str, tuple[float, int]]) -> dict[str, list]:
    """``results[name] = (final loss, bytes sent)`` as bar names, KiB and labels."""
    return {"names": list(results), "kib": [b / 1024 for _, b in results.values()],
            "labels": [words(TEXT)["loss_label"].format(loss=loss) for loss, _ in results.values()]}


def compression_figure(results: dict[str, tuple[float, int]], steps: int) -> go.Figure:
    bars = compression_bars(results)
    fig = go.Figure(go.Bar(x=bars["names"], y=bars["kib"], text=bars["labels"],
                           textposition="outside"))
    fig.update_layout(title=words(TEXT)["compression_title"].format(steps=steps),
                      yaxis_title="KiB", height=380)
    return fig


def compression_summary(results: dict[str, tuple[float, int]]) -> str:
    text = words(TEXT)
    return text["join"].join(text["compression_row"].format(name=name, kib=b / 1024, loss=loss)
                             for name, (loss, b) in results.items()) + text["end"]
