"""Pictures of distributed training: messages, rings, pipelines, buckets, memory.

Read engine results through small protocols (no engine import needed):

* a **message** has ``src``, ``dst``, ``nbytes``, ``start``, ``end`` and
  ``label`` (``chapters.distributed.Message``, from the simulated world's log);
* an **interval** has ``stage``, ``kind`` ("F"/"B"), ``micro_batch``,
  ``start``, ``end`` (``chapters.distributed.pipeline.Interval``);
* a **bucket event** has ``index``, ``nbytes``, ``ready``, ``start``, ``end``
  (``chapters.distributed.ddp.BucketEvent``).

Every function returns a plotly figure, a Graphviz drawing or a widget, plus
(where useful) a ``*_summary`` function giving the same facts as text; show
figures with :func:`vizkit.figures.show`.
"""

from __future__ import annotations

import plotly.graph_objects as go

from vizkit.strings import check_table, words

from .graphviz_views import FONT, GraphDrawing

PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf"]
MICRO = 1e6  # plot times in microseconds

TEXT = check_table({
    "en": {
        "messages": "Messages", "message": "message", "rank": "rank",
        "model_time": "model time (µs)", "time_ms": "time (ms)",
        "message_hover": "{label}: rank {src} -> {dst}, {nbytes} B",
        "rank_row": "rank {rank}: {count} messages / {sent} B", "list": ", ", "join": "; ",
        "messages_summary": ("{count} messages, {total} bytes in total, finished at {end:.1f} µs "
                             "of model time. Sent per rank — {per_rank}."),
        "phases": {"start": "start", "reduce-scatter": "reduce-scatter",
                   "all-gather": "all-gather", "done": "done"},
        "send": "{src}->{dst}: chunk {chunk}", "nothing": "nothing",
        "ring_summary": ("Ring all-reduce over {p} ranks after step {step} of {steps} ({phase}): "
                         "{full} of {cells} (rank, chunk) cells hold the full sum. "
                         "Next step sends {sends}."),
        "pipeline": "Pipeline schedule", "stage": "stage {stage}",
        "forward": "forward", "backward": "backward", "bubble": "bubble (idle)",
        "box_hover": "stage {stage} {name} micro-batch {micro}: {ms:.2f} ms",
        "pipeline_summary": ("{schedule} schedule, {p} stages, {m} micro-batches: the step takes "
                             "{ms:.2f} ms; stages are idle {idle:.1%} of the time (ideal bubble "
                             "(p-1)/(m+p-1) = {ideal:.1%})."),
        "buckets": "DDP gradient buckets", "bucket": "bucket {index} ({kib:.0f} KiB", "close": ")",
        "waiting": "ready, waiting for the link", "all_reduce": "all-reduce",
        "computing": "backward computing", "ddp_wait": "backward waiting for DDP",
        "last_grad": "last gradient ready",
        "bucket_summary": ("{count} buckets; the first all-reduce starts {start:.2f} ms after "
                           "the first bucket is ready, the last ends {end:.2f} ms after it."),
        "overlap_summary": (" Backward computes for {compute:.2f} ms until the last gradient is "
                            "ready, then waits {wait:.2f} ms for the all-reduces; {early} of "
                            "{count} all-reduces start before the last gradient (the first "
                            "{lead:.2f} ms before it), and {overlap:.0%} of the all-reduce time "
                            "runs while backward is still computing."),
        "scaling": "Time per step vs ranks", "compute": "compute",
        "communication": "communication", "speedup_vs_1": "speed-up vs 1 rank",
        "ranks": "ranks", "ms_per_step": "ms per step", "speedup": "speed-up",
        "scaling_row": "{p} ranks: {compute:.2f} ms compute + {comm:.2f} ms communication",
        "scaling_summary": ("{rows}. The fastest step is at {best} ranks ({gain:.2f}x faster "
                            "than 1 rank); beyond it, communication grows faster than compute "
                            "shrinks."),
        "zero_row": "stage {stage}: measured {measured:.2f} B/param, paper {paper:.2f}",
        "zero_summary": "{rows}.",
        "zero_title": "ZeRO: bytes per parameter per rank",
        "zero_kinds": {"parameters": "parameters", "gradients": "gradients",
                       "optimizer state": "optimizer state"},
        "zero_paper": "paper's formula", "bytes_per_param": "bytes per parameter",
        "rank_table": ("<table><tr><th>rank</th><th>messages sent</th><th>bytes sent</th></tr>"
                       "{rows}</table><p>model time: {us:.1f} µs</p>"),
        "algorithm": "algorithm", "ranks_widget": "ranks", "log2_bytes": "log2 bytes",
        "explorer_title": "{algorithm} all-reduce of {nbytes} bytes on {ranks} ranks",
        "step_widget": "step", "schedule": "schedule", "stages": "stages",
        "micro_batches": "micro-batches", "colon": ": ",
        "peaks": " Activations held at most, per stage: {peaks}.",
    },
    "zh": {
        "messages": "消息", "message": "消息", "rank": "rank",
        "model_time": "模型时间（µs）", "time_ms": "时间（ms）",
        "message_hover": "{label}：rank {src} -> {dst}，{nbytes} B",
        "rank_row": "rank {rank}：{count} 条消息 / {sent} B", "list": "，", "join": "；",
        "messages_summary": ("共 {count} 条消息，合计 {total} 字节，在模型时间 {end:.1f} µs "
                             "时结束。各 rank 发送量：{per_rank}。"),
        "phases": {"start": "尚未开始", "reduce-scatter": "reduce-scatter 阶段",
                   "all-gather": "all-gather 阶段", "done": "已完成"},
        "send": "{src}->{dst}：块 {chunk}", "nothing": "无",
        "ring_summary": ("{p} 个 rank 上的环形 all-reduce，已完成第 {step} 步（共 {steps} 步，"
                         "{phase}）：{cells} 个（rank，块）格子中有 {full} 个已持有完整的和。"
                         "下一步发送：{sends}。"),
        "pipeline": "流水线调度", "stage": "阶段 {stage}",
        "forward": "前向", "backward": "反向", "bubble": "气泡（空闲）",
        "box_hover": "阶段 {stage} {name} 微批次 {micro}：{ms:.2f} ms",
        "pipeline_summary": ("{schedule} 调度，{p} 个阶段，{m} 个微批次：一步耗时 {ms:.2f} ms；"
                             "各阶段有 {idle:.1%} 的时间处于空闲（理论气泡占比 "
                             "(p-1)/(m+p-1) = {ideal:.1%}）。"),
        "buckets": "DDP 梯度桶", "bucket": "桶 {index}（{kib:.0f} KiB", "close": "）",
        "waiting": "已就绪，等待链路", "all_reduce": "all-reduce",
        "computing": "反向传播计算中", "ddp_wait": "反向传播等待 DDP",
        "last_grad": "最后一个梯度就绪",
        "bucket_summary": ("共 {count} 个桶；第一个 all-reduce 在第一个桶就绪后 {start:.2f} ms "
                           "开始，最后一个在其后 {end:.2f} ms 结束。"),
        "overlap_summary": ("反向传播计算 {compute:.2f} ms 后最后一个梯度就绪，随后再等待 "
                            "{wait:.2f} ms 让 all-reduce 完成；{count} 个 all-reduce 中有 "
                            "{early} 个在最后一个梯度就绪之前开始（最早的提前 {lead:.2f} ms），"
                            "all-reduce 总时间的 {overlap:.0%} 与反向传播的计算重叠。"),
        "scaling": "每步耗时与 rank 数", "compute": "计算",
        "communication": "通信", "speedup_vs_1": "相对 1 个 rank 的加速比",
        "ranks": "rank 数", "ms_per_step": "每步毫秒数", "speedup": "加速比",
        "scaling_row": "{p} 个 rank：计算 {compute:.2f} ms + 通信 {comm:.2f} ms",
        "scaling_summary": ("{rows}。最快的一步出现在 {best} 个 rank 时（比 1 个 rank 快 "
                            "{gain:.2f}x）；再增加 rank，通信时间的增长就超过了计算时间的减少。"),
        "zero_row": "阶段 {stage}：实测 {measured:.2f} B/参数，论文公式 {paper:.2f}",
        "zero_summary": "{rows}。",
        "zero_title": "ZeRO：每个 rank 上每个参数占用的字节数",
        "zero_kinds": {"parameters": "参数", "gradients": "梯度", "optimizer state": "优化器状态"},
        "zero_paper": "论文公式", "bytes_per_param": "每个参数的字节数",
        "rank_table": ("<table><tr><th>rank</th><th>发送的消息数</th><th>发送的字节数</th></tr>"
                       "{rows}</table><p>模型时间：{us:.1f} µs</p>"),
        "algorithm": "算法", "ranks_widget": "rank 数", "log2_bytes": "log2 字节数",
        "explorer_title": "{algorithm} all-reduce：{nbytes} 字节，{ranks} 个 rank",
        "step_widget": "步", "schedule": "调度", "stages": "阶段数",
        "micro_batches": "微批次数", "colon": "：",
        "peaks": "每个阶段最多同时保存的激活（微批次数）：{peaks}。",
    },
})


def _phase_colours(labels) -> dict[str, str]:
    ordered = list(dict.fromkeys(labels))
    return {label: PALETTE[i % len(PALETTE)] for i, label in enumerate(ordered)}


# ------------------------------------------------------------ message timelines

def message_timeline(messages, world_size: int, title: str | None = None) -> go.Figure:
    """Space-time diagram: one horizontal line per rank, one arrow per message
    from (start, src) to (end, dst), coloured by the algorithm's phase."""
    words_ = words(TEXT)
    colours = _phase_colours(m.label for m in messages)
    fig = go.Figure()
    for label, colour in colours.items():
        xs, ys, hover = [], [], []
        for m in messages:
            if m.label != label:
                continue
            xs += [m.start * MICRO, m.end * MICRO, None]
            ys += [m.src, m.dst, None]
            text = words_["message_hover"].format(label=label, src=m.src, dst=m.dst,
                                                  nbytes=m.nbytes)
            hover += [text, text, None]
        fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines+markers", name=label or words_["message"],
                                 line={"color": colour, "width": 2},
                                 marker={"symbol": ["circle", "arrow-right", "circle"]
                                         * (len(xs) // 3), "size": 8, "color": colour},
                                 hovertext=hover, hoverinfo="text"))
    end = max((m.end for m in messages), default=0) * MICRO
    for r in range(world_size):
        fig.add_shape(type="line", x0=0, x1=end, y0=r, y1=r,
                      line={"color": "#cccccc", "width": 1}, layer="below")
    fig.update_layout(title=title or words_["messages"], xaxis_title=words_["model_time"],
                      height=160 + 45 * world_size,
                      yaxis={"title": words_["rank"], "tickvals": list(range(world_size)),
                             "autorange": "reversed"}, legend={"orientation": "h", "y": -0.3})
    return fig


def messages_summary(messages, world_size: int) -> str:
    """Counts and bytes per rank, and the finishing time, in words."""
    sent = [0] * world_size
    count = [0] * world_size
    for m in messages:
        sent[m.src] += m.nbytes
        count[m.src] += 1
    end = max((m.end for m in messages), default=0.0)
    text = words(TEXT)
    per_rank = text["list"].join(text["rank_row"].format(rank=r, count=count[r], sent=sent[r])
                                 for r in range(world_size))
    return text["messages_summary"].format(count=len(messages), total=sum(sent),
                                           end=end * MICRO, per_rank=per_rank)


# ------------------------------------------------------------ the ring, step by step

def ring_state(p: int, step: int) -> list[list[frozenset]]:
    """Which ranks' contributions each rank holds in each chunk after ``step``
    steps of ring all-reduce (steps 1..p-1 reduce-scatter, p..2p-2 all-gather).

    ``state[rank][chunk]`` is a set of rank numbers. The schedule is that of
    :mod:`chapters.distributed.collectives`: in reduce-scatter step ``s``
    (0-based) rank ``r`` sends chunk ``r - s - 1`` to ``r + 1``, so rank ``r``
    ends owning the full sum of chunk ``r``; in all-gather step ``s`` it sends
    chunk ``r - s`` (indices mod ``p``)."""
    state = [[frozenset([r]) for _ in range(p)] for r in range(p)]
    for s in range(min(step, 2 * (p - 1))):
        new = [row[:] for row in state]
        for r in range(p):
            right = (r + 1) % p
            if s < p - 1:                       # reduce-scatter: add into the neighbour
                c = (r - s - 1) % p
                new[right][c] = state[right][c] | state[r][c]
            else:                               # all-gather: overwrite the neighbour
                c = (r - (s - (p - 1))) % p
                new[right][c] = state[r][c]
        state = new
    return state


def ring_messages_at(p: int, step: int) -> list[tuple[int, int, int]]:
    """``(src, dst, chunk)`` sent in ring step ``step`` (1-based)."""
    s = step - 1
    if not 0 <= s < 2 * (p - 1):
        return []
    if s < p - 1:
        return [(r, (r + 1) % p, (r - s - 1) % p) for r in range(p)]
    return [(r, (r + 1) % p, (r - (s - (p - 1))) % p) for r in range(p)]


def ring_drawing(p: int, step: int) -> GraphDrawing:
    """Graphviz drawing of the ring after ``step`` steps: each rank's chunks
    (green when fully reduced, the ranks summed so far otherwise) and the
    chunk each rank sends in the next step."""
    state = ring_state(p, step)
    nxt = {src: chunk for src, _, chunk in ring_messages_at(p, step + 1)}
    lines = ["digraph ring {", f'  layout=circo; node [shape=plaintext fontname="{FONT}"];',
             f'  edge [fontname="{FONT}" fontsize=10];']
    for r in range(p):
        cells = []
        for c in range(p):
            have = state[r][c]
            full = len(have) == p
            colour = "#b7e1b0" if full else ("#ffe0a0" if len(have) > 1 else "#eeeeee")
            text = "Σ" if full else "+".join(str(x) for x in sorted(have))
            border = ' BORDER="3" COLOR="#d62728"' if nxt.get(r) == c else ""
            cells.append(f'<TD BGCOLOR="{colour}"{border}>c{c}: {text}</TD>')
        lines.append(f'  r{r} [label=<<TABLE BORDER="0" CELLBORDER="1" CELLSPACING="0">'
                     f'<TR><TD COLSPAN="{p}"><B>rank {r}</B></TD></TR><TR>{"".join(cells)}'
                     f"</TR></TABLE>>];")
    for r in range(p):
        label = f"c{nxt[r]}" if r in nxt else ""
        lines.append(f'  r{r} -> r{(r + 1) % p} [label="{label}" color="#d62728"];')
    lines.append("}")
    return GraphDrawing("\n".join(lines), ring_summary(p, step))


def ring_summary(p: int, step: int) -> str:
    phase = ("start" if step == 0 else "reduce-scatter" if step <= p - 1
             else "all-gather" if step <= 2 * (p - 1) else "done")
    state = ring_state(p, step)
    full = sum(len(state[r][c]) == p for r in range(p) for c in range(p))
    text = words(TEXT)
    sends = text["list"].join(text["send"].format(src=s, dst=d, chunk=c)
                              for s, d, c in ring_messages_at(p, step + 1))
    return text["ring_summary"].format(p=p, step=step, steps=2 * (p - 1),
                                       phase=text["phases"][phase], full=full, cells=p * p,
                                       sends=sends or text["nothing"])


# ------------------------------------------------------------ pipelines

def pipeline_figure(intervals, p: int, title: str | None = None) -> go.Figure:
    """One row per stage: forward (blue) and backward (green) boxes labelled by
    micro-batch; idle time inside the step (the bubble) shaded red."""
    text = words(TEXT)
    fig = go.Figure()
    t0 = min(iv.start for iv in intervals)
    t_end = max(iv.end for iv in intervals)
    scale = 1e3  # milliseconds
    for kind, colour, name in (("F", "#1f77b4", text["forward"]),
                               ("B", "#2ca02c", text["backward"])):
        chosen = [iv for iv in intervals if iv.kind == kind]
        fig.add_trace(go.Bar(
            y=[text["stage"].format(stage=iv.stage) for iv in chosen],
            x=[(iv.end - iv.start) * scale for iv in chosen],
            base=[(iv.start - t0) * scale for iv in chosen], orientation="h",
            marker={"color": colour, "line": {"color": "white", "width": 1}}, name=name,
            text=[f"{kind}{iv.micro_batch}" for iv in chosen], textposition="inside",
            hovertext=[text["box_hover"].format(stage=iv.stage, name=name, micro=iv.micro_batch,
                                                ms=(iv.end - iv.start) * scale)
                       for iv in chosen]))
    gaps = idle_gaps(intervals, p)
    fig.add_trace(go.Bar(y=[text["stage"].format(stage=s) for s, _, _ in gaps],
                         x=[(b - a) * scale for _, a, b in gaps],
                         base=[(a - t0) * scale for _, a, _ in gaps], orientation="h",
                         marker={"color": "rgba(214,39,40,0.25)"}, name=text["bubble"]))
    fig.update_layout(title=title or text["pipeline"], barmode="overlay",
                      xaxis_title=text["time_ms"],
                      yaxis={"autorange": "reversed"}, height=140 + 50 * p,
                      xaxis_range=[0, (t_end - t0) * scale])
    return fig


def idle_gaps(intervals, p: int) -> list[tuple[int, float, float]]:
    """``(stage, start, end)`` of every idle stretch of a stage within the step."""
    t0 = min(iv.start for iv in intervals)
    t_end = max(iv.end for iv in intervals)
    gaps = []
    for s in range(p):
        mine = sorted((iv.start, iv.end) for iv in intervals if iv.stage == s)
        cursor = t0
        for a, b in mine:
            if a > cursor:
                gaps.append((s, cursor, a))
            cursor = max(cursor, b)
        if cursor < t_end:
            gaps.append((s, cursor, t_end))
    return gaps


def pipeline_summary(intervals, p: int, m: int, schedule: str) -> str:
    t0 = min(iv.start for iv in intervals)
    t_end = max(iv.end for iv in intervals)
    idle = sum(b - a for _, a, b in idle_gaps(intervals, p))
    return words(TEXT)["pipeline_summary"].format(
        schedule=schedule, p=p, m=m, ms=(t_end - t0) * 1e3, idle=idle / (p * (t_end - t0)),
        ideal=(p - 1) / (m + p - 1))


# ------------------------------------------------------------ DDP buckets

def bucket_overlap(events, backward: tuple[float, float]) -> dict:
    """How much of one step's all-reduce ran while backward was still computing.

    ``backward`` is (start, end) of ``loss.backward()``, whose end includes DDP
    waiting for the all-reduces; the computing ends when the last gradient is
    ready, the latest ``ready`` of the buckets. Returns seconds: ``compute``
    (backward start -> last gradient), ``wait`` (last gradient -> backward
    returns), ``first_lead`` (first all-reduce start -> last gradient, positive
    when it started earlier), the fraction ``overlap`` of all-reduce time
    before the last gradient, and ``early``, how many buckets started before it.
    """
    last_grad = max(e.ready for e in events)
    busy = sum(e.end - e.start for e in events)
    inside = sum(max(0.0, min(e.end, last_grad) - max(e.start, backward[0])) for e in events)
    return {"compute": last_grad - backward[0], "wait": backward[1] - last_grad,
            "first_lead": last_grad - min(e.start for e in events),
            "overlap": inside / busy if busy > 0 else 0.0,
            "early": sum(e.start < last_grad for e in events)}


def bucket_figure(events, backward: tuple[float, float] | None = None,
                  names: list[list[str]] | None = None,
                  title: str | None = None) -> go.Figure:
    """Per bucket: waiting to start (grey, ready -> start) and its all-reduce
    (orange, start -> end). ``backward`` (start, end) is drawn as two bands:
    computing until the last gradient is ready (blue), then DDP waiting for
    the all-reduces (light blue). ``names`` labels each bucket's parameters."""
    t0 = min([e.ready for e in events] + ([backward[0]] if backward else []))
    scale = 1e3
    text = words(TEXT)
    rows = [text["bucket"].format(index=e.index, kib=e.nbytes / 1024)
            + (f": {', '.join(names[e.index])}" if names else "") + text["close"] for e in events]
    fig = go.Figure()
    fig.add_trace(go.Bar(y=rows, x=[(e.start - e.ready) * scale for e in events],
                         base=[(e.ready - t0) * scale for e in events], orientation="h",
                         marker={"color": "#cccccc"}, name=text["waiting"]))
    fig.add_trace(go.Bar(y=rows, x=[(e.end - e.start) * scale for e in events],
                         base=[(e.start - t0) * scale for e in events], orientation="h",
                         marker={"color": "#ff7f0e"}, name=text["all_reduce"]))
    if backward:
        last_grad = max(e.ready for e in events)
        for a, b, color, label in ((backward[0], last_grad, "#1f77b4", text["computing"]),
                                   (last_grad, backward[1], "#9ecae1", text["ddp_wait"])):
            fig.add_trace(go.Bar(y=["loss.backward()"], x=[(b - a) * scale],
                                 base=[(a - t0) * scale], orientation="h",
                                 marker={"color": color}, name=label))
        fig.add_vline(x=(last_grad - t0) * scale, line_dash="dash",
                      annotation_text=text["last_grad"])
    fig.update_layout(title=title or text["buckets"], barmode="overlay",
                      xaxis_title=text["time_ms"],
                      yaxis={"autorange": "reversed"}, height=160 + 40 * (len(events) + 1))
    return fig


def bucket_summary(events, backward: tuple[float, float] | None = None) -> str:
    """One step's buckets in words; with ``backward``, the overlap measured
    against the moment the last gradient was ready (see :func:`bucket_overlap`)."""
    first = min(e.ready for e in events)
    last = max(e.end for e in events)
    table = words(TEXT)
    text = table["bucket_summary"].format(
        count=len(events), start=(min(e.start for e in events) - first) * 1e3,
        end=(last - first) * 1e3)
    if backward:
        o = bucket_overlap(events, backward)
        text += table["overlap_summary"].format(
            compute=o["compute"] * 1e3, wait=o["wait"] * 1e3, early=o["early"],
            count=len(events), lead=o["first_lead"] * 1e3, overlap=o["overlap"])
    return text


# ------------------------------------------------------------ scaling and memory

def scaling_figure(ranks, compute, comm, title: str | None = None) -> go.Figure:
    """Stacked bars of compute and communication seconds per step for each
    world size, and the speed-up over one rank as a line (right axis)."""
    total = [a + b for a, b in zip(compute, comm, strict=True)]
    speedup = [total[0] / t for t in total]
    text = words(TEXT)
    fig = go.Figure()
    fig.add_trace(go.Bar(x=list(ranks), y=[c * 1e3 for c in compute], name=text["compute"],
                         marker={"color": "#1f77b4"}))
    fig.add_trace(go.Bar(x=list(ranks), y=[c * 1e3 for c in comm], name=text["communication"],
                         marker={"color": "#ff7f0e"}))
    fig.add_trace(go.Scatter(x=list(ranks), y=speedup, name=text["speedup_vs_1"],
                             yaxis="y2", mode="lines+markers", line={"color": "#2ca02c"}))
    fig.update_layout(title=title or text["scaling"], barmode="stack",
                      xaxis_title=text["ranks"], yaxis={"title": text["ms_per_step"]},
                      yaxis2={"title": text["speedup"], "overlaying": "y", "side": "right"},
                      height=420)
    return fig


def scaling_summary(ranks, compute, comm) -> str:
    total = [a + b for a, b in zip(compute, comm, strict=True)]
    best = min(range(len(total)), key=total.__getitem__)
    text = words(TEXT)
    rows = text["join"].join(text["scaling_row"].format(p=p, compute=c * 1e3, comm=m * 1e3)
                             for p, c, m in zip(ranks, compute, comm, strict=True))
    return text["scaling_summary"].format(rows=rows, best=list(ranks)[best],
                                          gain=total[0] / total[best])


def zero_memory_figure(measured: dict, paper: dict, title: str | None = None) -> go.Figure:
    """``measured[stage] = {"parameters": B, "gradients": B, "optimizer state": B}``
    (bytes per parameter) stacked per stage; ``paper[stage]`` as diamonds. The
    title, by default, and the legend speak the course's language."""
    text = words(TEXT)
    stages = sorted(measured)
    names = [text["stage"].format(stage=s) for s in stages]
    fig = go.Figure()
    for kind, colour in zip(text["zero_kinds"], ("#1f77b4", "#ff7f0e", "#2ca02c"), strict=True):
        fig.add_trace(go.Bar(x=names, y=[measured[s][kind] for s in stages],
                             name=text["zero_kinds"][kind], marker={"color": colour}))
    fig.add_trace(go.Scatter(x=names, y=[paper[s] for s in stages],
                             mode="markers", marker={"symbol": "diamond", "size": 14,
                                                     "color": "black"},
                             name=text["zero_paper"]))
    fig.update_layout(title=title or text["zero_title"], barmode="stack",
                      yaxis_title=text["bytes_per_param"], height=400)
    return fig


def zero_memory_summary(measured: dict, paper: dict) -> str:
    text = words(TEXT)
    return text["zero_summary"].format(rows=text["join"].join(
        text["zero_row"].format(stage=s, measured=sum(measured[s].values()), paper=paper[s])
        for s in sorted(measured)))


# ------------------------------------------------------------ widgets

def _rank_table_html(messages, world_size: int, model_time: float) -> str:
    sent, count = [0] * world_size, [0] * world_size
    for m in messages:
        sent[m.src] += m.nbytes
        count[m.src] += 1
    rows = "".join(f"<tr><td>{r}</td><td>{count[r]}</td><td>{sent[r]}</td></tr>"
                   for r in range(world_size))
    return words(TEXT)["rank_table"].format(rows=rows, us=model_time * 1e6)


def collective_explorer(world_sizes=(2, 3, 4, 5, 6, 8), alpha: float = 1e-5,
                        beta: float = 1e-9):
    """Choose an all-reduce algorithm, a world size and a buffer size; the
    simulated world runs it and the per-rank traffic table and summary update.
    (Plain HTML widgets: no nested outputs, so it also works where a notebook
    is executed headless.)"""
    import ipywidgets as widgets
    import numpy as np

    from chapters.distributed import ALL_REDUCE_ALGORITHMS, all_reduce, run_simulated

    text = words(TEXT)
    algorithm = widgets.Dropdown(options=ALL_REDUCE_ALGORITHMS, value="ring",
                                 description=text["algorithm"])
    ranks = widgets.SelectionSlider(options=list(world_sizes), value=4,
                                    description=text["ranks_widget"])
    size = widgets.IntSlider(value=14, min=6, max=24, description=text["log2_bytes"])
    summary = widgets.HTML()
    table = widgets.HTML()

    def redraw(*_):
        n_floats = max(1, 2 ** size.value // 4)

        def program(g):
            g.check_shapes = False
            all_reduce(g, np.ones(n_floats, np.float32), algorithm=algorithm.value)

        _, world = run_simulated(program, ranks.value, alpha=alpha, beta=beta)
        title = text["explorer_title"].format(algorithm=algorithm.value, nbytes=4 * n_floats,
                                              ranks=ranks.value)
        summary.value = (f"<b>{title}</b>{text['colon']}"
                         f"{messages_summary(world.messages, ranks.value)}")
        table.value = _rank_table_html(world.messages, ranks.value, world.makespan())

    for w in (algorithm, ranks, size):
        w.observe(redraw, names="value")
    redraw()
    return widgets.VBox([widgets.HBox([algorithm, ranks, size]), summary, table])


def ring_stepper(p: int = 4):
    """A slider over the steps of ring all-reduce on ``p`` ranks; the ring
    drawing (Graphviz SVG, inline) and its text summary follow the slider."""
    import ipywidgets as widgets

    step = widgets.IntSlider(value=0, min=0, max=2 * (p - 1),
                             description=words(TEXT)["step_widget"])
    summary = widgets.HTML()
    picture = widgets.HTML()

    def redraw(*_):
        drawing = ring_drawing(p, step.value)
        summary.value = ring_summary(p, step.value)
        picture.value = drawing.svg or f"<pre>{drawing.dot}</pre>"

    step.observe(redraw, names="value")
    redraw()
    return widgets.VBox([step, summary, picture])


def schedule_timeline(actions_per_stage, forward: float = 1.0, backward: float = 2.0):
    """Intervals of a pipeline schedule with fixed costs and free communication.

    ``actions_per_stage[s]`` is stage ``s``'s list of ``("F", i)``/``("B", i)``
    (e.g. from :func:`chapters.distributed.pipeline.one_f_one_b_schedule`).
    Forward ``i`` on stage ``s`` waits for forward ``i`` on stage ``s-1``;
    backward ``i`` waits for backward ``i`` on stage ``s+1`` (the last stage:
    for its own forward ``i``); each stage runs its actions in order."""
    from types import SimpleNamespace

    p = len(actions_per_stage)
    done: dict[tuple[str, int, int], float] = {}
    cursor = [0] * p
    free = [0.0] * p
    out = []
    while any(cursor[s] < len(actions_per_stage[s]) for s in range(p)):
        progressed = False
        for s in range(p):
            if cursor[s] == len(actions_per_stage[s]):
                continue
            kind, i = actions_per_stage[s][cursor[s]]
            dep = (("F", s - 1, i) if s > 0 else None) if kind == "F" else (
                ("B", s + 1, i) if s < p - 1 else ("F", s, i))
            if dep is not None and dep not in done:
                continue
            start = max(free[s], done.get(dep, 0.0) if dep else 0.0)
            end = start + (forward if kind == "F" else backward)
            done[(kind, s, i)] = free[s] = end
            out.append(SimpleNamespace(stage=s, kind=kind, micro_batch=i, start=start, end=end))
            cursor[s] += 1
            progressed = True
        if not progressed:
            raise ValueError("schedule_timeline: the schedule deadlocks (an action waits for "
                             "one that comes later on another stage)")
    return out


def schedule_explorer(p: int = 4):
    """Sliders for stages and micro-batches, a schedule chooser; the idle
    fraction, step time and activations held per stage update as text."""
    import ipywidgets as widgets

    from chapters.distributed.pipeline import SCHEDULES, peak_in_flight

    text = words(TEXT)
    schedule = widgets.Dropdown(options=list(SCHEDULES), value="1f1b",
                                description=text["schedule"])
    stages = widgets.IntSlider(value=p, min=2, max=8, description=text["stages"])
    micro = widgets.IntSlider(value=8, min=1, max=32, description=text["micro_batches"])
    summary = widgets.HTML()

    def redraw(*_):
        s_count, m = stages.value, micro.value
        actions = [SCHEDULES[schedule.value](s_count, m, s) for s in range(s_count)]
        intervals = schedule_timeline(actions)
        peaks = [peak_in_flight(stage_actions) for stage_actions in actions]
        summary.value = (pipeline_summary(intervals, s_count, m, schedule.value)
                         + text["peaks"].format(peaks=peaks))

    for w in (schedule, stages, micro):
        w.observe(redraw, names="value")
    redraw()
    return widgets.VBox([widgets.HBox([schedule, stages, micro]), summary])
