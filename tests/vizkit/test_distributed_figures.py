"""Chapter 3's figures: the numbers they plot, checked against hand-computed
values and the engine's own logs, without any UI."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from chapters.distributed import all_reduce, run_simulated
from vizkit import distributed_figures as df


def test_training_state_is_sixteen_bytes_per_parameter():
    series = df.training_state_series({"1 B": 1e9, "7 B": 7e9})
    assert series == {"fp16 weights": [2.0, 14.0], "fp16 gradients": [2.0, 14.0],
                      "fp32 master + Adam m, v": [12.0, 84.0]}
    text = df.training_state_summary({"1 B": 1e9, "7 B": 7e9}, 80, 1e15)
    assert "1 B: 16 GB" in text and "From 7 B on (112 GB)" in text
    assert "fits" in df.training_state_summary({"1 B": 1e9}, 80, 1e15)


def test_training_years_are_six_flops_per_parameter_and_token():
    # 6 * 1e9 params * 1e12 tokens = 6e21 FLOPs, at 6e21 FLOPs per year: one year
    assert df.training_years(1e9, 1e12, 6e21 / df.SECONDS_PER_YEAR) == pytest.approx(1.0)


def test_traffic_series_are_multiples_of_the_buffer():
    series = df.traffic_series([100, 150], [400, 600], [300], nbytes=200)
    assert list(series.values()) == [[0.5, 0.75], [2.0, 3.0], [1.5]]


def test_traffic_summary_reads_the_ring_from_a_real_run():
    _, world = run_simulated(lambda g: all_reduce(g, np.ones(8, np.float32)), 4)
    # minus the shape check: one 64-byte header per rank
    ring = [s - 64 for s in world.bytes_sent_per_rank()]
    series = df.traffic_series([max(ring)], [sum(ring)], [96], nbytes=32)
    assert series["ring: bytes sent per rank / n"] == [2 * 3 / 4]  # 2(p-1)/p
    text = df.traffic_summary([4], series, [world.makespan()])
    assert "p=4: 1.50 n" in text


def test_p2p_series_puts_the_fitted_line_through_alpha_and_beta():
    series = df.p2p_series([(0, 1e-3), (1000, 2e-3)], alpha=1e-3, beta=1e-6)
    assert series["bytes"] == [0, 1000]
    assert series["measured"] == pytest.approx([1.0, 2.0])
    assert series["alpha + n beta"] == pytest.approx([1.0, 2.0])


def test_tp_grows_with_the_batch_and_crosses_dp():
    series = df.tp_dp_series(tp_bytes=1024, batch=4, dp_bytes=2048, batches=[1, 4, 8, 16])
    assert series["tensor parallel: activations"] == [0.25, 1.0, 2.0, 4.0]
    assert series["data parallel: gradients"] == [2.0] * 4
    assert series["crossover"] == 8
    assert "cross at about 8 examples" in df.tp_dp_summary(1024, 4, 2048)


def test_ideal_bubble_is_p_minus_one_over_m_plus_p_minus_one():
    series = df.bubble_series(4, [1, 5], [0.8, 0.4])
    assert series["(p-1)/(m+p-1)"] == [3 / 4, 3 / 8]
    text = df.bubble_summary(4, [1, 5], [0.8, 0.4], [1.0, 2.0, 1.0, 1.0])
    assert "m=5: ideal 0.38, measured 0.40" in text and "stage 1: 2.00 ms" in text


@dataclass
class _Message:
    src: int
    dst: int
    nbytes: int


def test_traffic_matrix_sums_bytes_per_ordered_pair():
    msgs = [_Message(0, 1, 10), _Message(0, 1, 5), _Message(2, 0, 7)]
    matrix = df.traffic_matrix(msgs, 3)
    expected = np.zeros((3, 3))
    expected[0, 1], expected[2, 0] = 15, 7
    np.testing.assert_array_equal(matrix, expected)
    assert "never talk: 1-2" in df.traffic_matrix_summary(matrix)


def test_traffic_matrix_of_a_ring_has_only_right_neighbours():
    def program(g):
        g.check_shapes = False
        all_reduce(g, np.ones(12, np.float32))

    _, world = run_simulated(program, 3)
    matrix = df.traffic_matrix(world.messages, 3)
    assert all(matrix[s, d] == (2 * 2 * 16 if d == (s + 1) % 3 else 0)
               for s in range(3) for d in range(3))


def test_compression_bars_are_kib_with_the_loss_as_label():
    bars = df.compression_bars({"a": (0.5, 2048), "b": (0.25, 512)})
    assert bars == {"names": ["a", "b"], "kib": [2.0, 0.5],
                    "labels": ["loss 0.5", "loss 0.25"]}
    assert df.compression_summary({"a": (0.5, 2048)}) == "a: 2.0 KiB, final loss 0.5."


def test_figures_draw_every_series():
    assert len(df.training_state_figure({"1 B": 1e9}, 80).data) == 3
    assert len(df.traffic_figure([2], df.traffic_series([1], [2], [3], 1), 1).data) == 3
    assert len(df.p2p_figure([(8, 1e-4)], 1e-4, 1e-9).data) == 2
    assert len(df.tp_dp_figure(1024, 4, 2048, [1, 4]).data) == 3
    assert len(df.bubble_figure(4, [1], [0.75]).data) == 2
    assert df.traffic_heatmap(np.eye(2), "t").data[0].z.shape == (2, 2)
    assert df.compression_figure({"a": (0.5, 2048)}, 40).data[0].y == (2.0,)


def test_chinese_summaries_keep_every_number_and_use_the_glossary(in_both_languages):
    chinese = in_both_languages(
        lambda: df.training_state_summary({"1 B": 1e9, "7 B": 7e9}, 80, 1e15))[1]
    assert "1 B：16 GB" in chinese and "从 7 B 起（112 GB）" in chinese and "优化器状态" in chinese
    series = df.traffic_series([100, 150], [400, 600], [300, 450], nbytes=200)
    chinese = in_both_languages(lambda: df.traffic_summary([2, 3], series, [1e-5, 3e-5]))[1]
    assert "p=3: 0.75 n" in chinese and "2(p-1) alpha" in chinese
    chinese = in_both_languages(lambda: df.tp_dp_summary(1024, 4, 2048))[1]
    assert "张量并行" in chinese and "数据并行" in chinese and "约 8 个样本" not in chinese
    assert "大约在 8 个样本处相交" in chinese
    chinese = in_both_languages(
        lambda: df.bubble_summary(4, [1, 5], [0.8, 0.4], [1.0, 2.0, 1.0, 1.0]))[1]
    assert "m=5：理论 0.38，实测 0.40" in chinese and "阶段 1：2.00 ms" in chinese
    assert "气泡" in chinese and "微批次" in chinese
    matrix = df.traffic_matrix([_Message(0, 1, 1024)], 3)
    chinese = in_both_languages(lambda: df.traffic_matrix_summary(matrix))[1]
    assert chinese == "通信矩阵（KiB）：0->1: 1.0。从不通信的 rank 对：0-2，1-2。"
    chinese = in_both_languages(lambda: df.compression_summary({"a": (0.5, 2048)}))[1]
    assert chinese == "a：2.0 KiB，最终损失 0.5。"


def test_chinese_figures_translate_legends_but_not_the_numbers(in_both_languages):
    english, chinese = in_both_languages(
        lambda: df.training_state_figure({"1 B": 1e9, "7 B": 7e9}, 80))
    assert [t.name for t in chinese.data] == ["fp16 权重", "fp16 梯度",
                                              "fp32 主权重 + Adam 的 m、v"]
    assert [list(t.y) for t in chinese.data] == [list(t.y) for t in english.data]
    assert "训练状态" in chinese.layout.title.text
    chinese = in_both_languages(lambda: df.bubble_figure(4, [1, 5], [0.8, 0.4]))[1]
    assert chinese.layout.title.text == "气泡占比，4 个阶段"
    assert chinese.data[1].name == "实测（1F1B，真实计算）"
