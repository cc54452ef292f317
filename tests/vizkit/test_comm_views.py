"""Distributed pictures: they show what the engine did (messages, ring steps,
bubbles, buckets), checked against the engine's own logs and formulas."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from chapters.distributed import all_reduce, run_simulated
from vizkit import comm_views as cv


def _ring_world(p, n_floats=12):
    def program(g):
        g.check_shapes = False
        all_reduce(g, np.ones(n_floats, np.float32), algorithm="ring")

    return run_simulated(program, p)[1]


def test_message_timeline_draws_every_message_once():
    world = _ring_world(4)
    fig = cv.message_timeline(world.messages, 4)
    arrows = sum(len([x for x in trace.x if x is not None]) // 2 for trace in fig.data)
    assert arrows == len(world.messages) == 2 * 3 * 4
    assert {trace.name for trace in fig.data} == {m.label for m in world.messages}
    text = cv.messages_summary(world.messages, 4)
    per_rank = 2 * 3 * 48 // 4             # 2(p-1)/p of a 48-byte buffer
    assert "24 messages" in text and f"rank 3: 6 messages / {per_rank} B" in text


@pytest.mark.parametrize("p", [2, 3, 5])
def test_ring_steps_match_the_messages_the_collective_sent(p):
    world = _ring_world(p, n_floats=4 * p)
    for step in range(1, 2 * (p - 1) + 1):
        phase = (f"reduce-scatter step {step}" if step < p
                 else f"all-gather step {step - (p - 1)}")
        logged = sorted((m.src, m.dst) for m in world.messages if m.label == phase)
        drawn = sorted((s, d) for s, d, _ in cv.ring_messages_at(p, step))
        assert logged == drawn, phase


@pytest.mark.parametrize("p", [2, 3, 4, 6])
def test_ring_state_reduces_then_gathers(p):
    after_rs = cv.ring_state(p, p - 1)
    for r in range(p):   # reduce-scatter leaves rank r the full sum of chunk r only
        assert [len(after_rs[r][c]) == p for c in range(p)] == [c == r for c in range(p)]
    done = cv.ring_state(p, 2 * (p - 1))
    assert all(len(cell) == p for row in done for cell in row)
    assert "Σ" in cv.ring_drawing(p, 2 * (p - 1)).dot
    assert "(all-gather)" in cv.ring_summary(p, p)


@dataclass
class _Iv:
    stage: int
    kind: str
    micro_batch: int
    start: float
    end: float


def _gpipe_unit_timeline(p, m):
    """GPipe with forward 1 and backward 2 time units, free communication."""
    out = []
    for s in range(p):
        for i in range(m):
            out.append(_Iv(s, "F", i, s + i, s + i + 1))
    f_end = p - 1 + m
    for s in reversed(range(p)):
        for i in range(m):
            start = f_end + 2 * (p - 1 - s) + 2 * i
            out.append(_Iv(s, "B", i, start, start + 2))
    return out


@pytest.mark.parametrize("p,m", [(2, 4), (4, 4), (4, 8)])
def test_pipeline_bubble_shading_is_the_ideal_bubble(p, m):
    intervals = _gpipe_unit_timeline(p, m)
    t_end = max(iv.end for iv in intervals)
    idle = sum(b - a for _, a, b in cv.idle_gaps(intervals, p))
    assert idle / (p * t_end) == pytest.approx((p - 1) / (m + p - 1))
    fig = cv.pipeline_figure(intervals, p)
    assert sum(len(t.x) for t in fig.data if t.name in ("forward", "backward")) == 2 * p * m
    assert f"{(p - 1) / (m + p - 1):.1%}" in cv.pipeline_summary(intervals, p, m, "GPipe")


@dataclass
class _Event:
    index: int
    nbytes: int
    ready: float
    start: float
    end: float


def test_bucket_overlap_is_measured_against_the_last_gradient_not_backwards_end():
    # the last gradient is ready at 1.5 s; backward returns at 4 s after waiting for DDP
    events = [_Event(0, 1024, 0.0, 0.5, 1.0), _Event(1, 1024, 1.5, 1.5, 4.0)]
    o = cv.bucket_overlap(events, backward=(0.0, 4.0))
    assert o["compute"] == 1.5 and o["wait"] == 2.5 and o["first_lead"] == 1.0
    assert o["early"] == 1 and o["overlap"] == pytest.approx(0.5 / 3.0)
    text = cv.bucket_summary(events, backward=(0.0, 4.0))
    assert "1 of 2 all-reduces start before the last gradient" in text
    assert "17% of the all-reduce time runs while backward is still computing" in text
    fig = cv.bucket_figure(events, backward=(0.0, 4.0), names=[["1.bias"], ["0.weight"]])
    assert len(fig.data) == 4 and "0.weight" in fig.data[0].y[1]


def test_scaling_and_memory_figures_report_their_numbers():
    text = cv.scaling_summary([1, 2, 4], [4e-3, 2e-3, 1e-3], [0.0, 1e-3, 2.5e-3])
    assert "fastest step is at 2 ranks (1.33x" in text
    measured = {0: {"parameters": 2, "gradients": 2, "optimizer state": 12},
                1: {"parameters": 2, "gradients": 2, "optimizer state": 3}}
    fig = cv.zero_memory_figure(measured, {0: 16, 1: 7})
    assert list(fig.data[-1].y) == [16, 7]
    assert fig.layout.title.text == "ZeRO: bytes per parameter per rank"
    assert [t.name for t in fig.data] == ["parameters", "gradients", "optimizer state",
                                          "paper's formula"]
    assert list(fig.data[0].x) == ["stage 0", "stage 1"]
    assert "stage 1: measured 7.00 B/param, paper 7.00" in cv.zero_memory_summary(
        measured, {0: 16, 1: 7})


def test_collective_explorer_redraws_when_the_slider_moves():
    box = cv.collective_explorer()
    algorithm, ranks, size = box.children[0].children
    summary, table = box.children[1], box.children[2]
    # rank 3: 2(p-1) = 6 messages, 2(p-1)/p of the 16384-byte buffer
    assert "<td>3</td><td>6</td><td>24576</td>" in table.value
    assert "16384 bytes on 4 ranks" in summary.value and "24 messages" in summary.value
    ranks.value = 2
    assert "4 messages" in summary.value               # 2 (p-1) p = 4 for p = 2
    size.value = 10
    assert "1024 bytes on 2 ranks" in summary.value
    algorithm.value = "naive"
    assert "2 messages" in summary.value


def test_ring_stepper_follows_its_slider():
    box = cv.ring_stepper(3)
    step, summary, picture = box.children
    assert "after step 0 of 4 (start)" in summary.value
    step.value = 2
    assert "after step 2 of 4 (reduce-scatter)" in summary.value
    step.value = 4
    assert "9 of 9 (rank, chunk) cells hold the full sum" in summary.value
    assert "<svg" in picture.value and "Σ" in picture.value


@pytest.mark.parametrize("p,m", [(2, 1), (3, 5), (4, 8)])
def test_schedule_timeline_gives_the_ideal_bubble_for_both_schedules(p, m):
    from chapters.distributed.pipeline import SCHEDULES

    for name, schedule in SCHEDULES.items():
        intervals = cv.schedule_timeline([schedule(p, m, s) for s in range(p)])
        end = max(iv.end for iv in intervals)
        assert end == pytest.approx((m + p - 1) * 3.0), name
        idle = sum(b - a for _, a, b in cv.idle_gaps(intervals, p))
        assert idle / (p * end) == pytest.approx((p - 1) / (m + p - 1)), name


def test_schedule_explorer_follows_its_sliders():
    box = cv.schedule_explorer(4)
    schedule, stages, micro = box.children[0].children
    summary = box.children[1]
    assert "ideal bubble (p-1)/(m+p-1) = 27.3%" in summary.value and "[4, 3, 2, 1]" in summary.value
    schedule.value = "gpipe"
    assert "[8, 8, 8, 8]" in summary.value
    micro.value = 2
    stages.value = 2
    assert "idle 33.3% of the time" in summary.value


def test_chinese_summaries_state_the_same_numbers_with_the_glossary_terms(in_both_languages):
    world = _ring_world(4)
    chinese = in_both_languages(lambda: cv.messages_summary(world.messages, 4))[1]
    assert "共 24 条消息" in chinese and "rank 3：6 条消息 / 72 B" in chinese
    chinese = in_both_languages(lambda: cv.ring_summary(4, 4))[1]
    assert "all-gather 阶段" in chinese and "环形 all-reduce" in chinese
    events = [_Event(0, 1024, 0.0, 0.5, 1.0), _Event(1, 1024, 1.5, 1.5, 4.0)]
    chinese = in_both_languages(lambda: cv.bucket_summary(events, backward=(0.0, 4.0)))[1]
    assert "共 2 个桶" in chinese and "2 个 all-reduce 中有 1 个" in chinese
    assert "17% 与反向传播的计算重叠" in chinese
    chinese = in_both_languages(
        lambda: cv.scaling_summary([1, 2, 4], [4e-3, 2e-3, 1e-3], [0.0, 1e-3, 2.5e-3]))[1]
    assert "最快的一步出现在 2 个 rank 时（比 1 个 rank 快 1.33x）" in chinese
    measured = {1: {"parameters": 2, "gradients": 2, "optimizer state": 3}}
    chinese = in_both_languages(lambda: cv.zero_memory_summary(measured, {1: 7}))[1]
    assert chinese == "阶段 1：实测 7.00 B/参数，论文公式 7.00。"


def test_chinese_pipeline_and_bucket_figures_label_rows_and_legends(in_both_languages):
    from chapters.distributed.pipeline import Interval

    intervals = [Interval(0, "F", 0, 0.0, 1.0), Interval(1, "F", 0, 1.0, 2.0),
                 Interval(1, "B", 0, 2.0, 4.0), Interval(0, "B", 0, 4.0, 6.0)]
    english, chinese = in_both_languages(lambda: cv.pipeline_figure(intervals, 2))
    assert [t.name for t in chinese.data] == ["前向", "反向", "气泡（空闲）"]
    assert chinese.data[0].y[0] == "阶段 0" and chinese.layout.title.text == "流水线调度"
    assert [list(t.x) for t in chinese.data] == [list(t.x) for t in english.data]
    summary = in_both_languages(lambda: cv.pipeline_summary(intervals, 2, 1, "GPipe"))[1]
    assert "2 个阶段，1 个微批次" in summary and "气泡" in summary
    events = [_Event(0, 1024, 0.0, 0.5, 1.0)]
    chinese = in_both_languages(lambda: cv.bucket_figure(events, names=[["0.weight"]]))[1]
    assert chinese.data[0].y[0] == "桶 0（1 KiB: 0.weight）"


def test_chinese_widgets_label_their_controls_and_report_the_same_traffic(chinese):
    box = cv.collective_explorer()
    algorithm, ranks, size = box.children[0].children
    assert (algorithm.description, ranks.description) == ("算法", "rank 数")
    assert "ring all-reduce：16384 字节，4 个 rank" in box.children[1].value
    assert "共 24 条消息" in box.children[1].value
    assert "<td>3</td><td>6</td><td>24576</td>" in box.children[2].value
    assert "发送的字节数" in box.children[2].value
    summary = cv.schedule_explorer(2).children[1].value
    assert "2 个阶段，8 个微批次" in summary and "每个阶段最多同时保存的激活" in summary


def test_the_zero_figure_speaks_chinese(chinese):
    measured = {0: {"parameters": 2, "gradients": 2, "optimizer state": 12}}
    fig = cv.zero_memory_figure(measured, {0: 16})
    assert fig.layout.title.text.startswith("ZeRO：")
    assert fig.layout.yaxis.title.text == "每个参数的字节数"
    assert [t.name for t in fig.data] == ["参数", "梯度", "优化器状态", "论文公式"]
    assert list(fig.data[0].y) == [2] and list(fig.data[2].y) == [12]  # keys unchanged
