"""Chapter 2's figure data: measurements in, series out (no UI needed)."""

from __future__ import annotations

import math

import pytest

from vizkit import autodiff_figures as figs


def test_relative_error_is_clipped_for_log_axes():
    assert figs.relative_error(1.1, 1.0) == pytest.approx(0.1)
    assert figs.relative_error(-3.0, -2.0) == pytest.approx(0.5)
    assert figs.relative_error(2.0, 2.0) == figs.LOG_FLOOR


def test_derivative_error_series_has_a_curve_and_a_flat_ad_line_per_dtype():
    steps = [1e-6, 1e-4, 1e-2]
    series = figs.derivative_error_series(steps, {"float64": [1e-9, 0.0, 1e-5]},
                                          {"float64": 0.0})
    curve, flat = series
    assert curve.name == "central difference, float64" and curve.x == tuple(steps)
    assert curve.y == (1e-9, figs.LOG_FLOOR, 1e-5)
    assert flat.dashed and not flat.markers
    assert flat.x == (1e-6, 1e-2) and flat.y == (figs.LOG_FLOOR, figs.LOG_FLOOR)


def test_derivative_error_series_refuses_mismatched_lengths():
    with pytest.raises(ValueError, match="one error per step"):
        figs.derivative_error_series([1e-3, 1e-2], {"float32": [0.1]}, {"float32": 0.0})


def test_cost_series_take_one_column_each():
    rows = [(2, 0.1, 0.2, 0.3, 1e-10), (4, 0.1, 0.4, 0.6, 1e-10)]
    ad, fd, sym = figs.gradient_cost_series(rows)
    assert ad.x == fd.x == sym.x == (2.0, 4.0)
    assert (ad.y, fd.y, sym.y) == ((0.1, 0.1), (0.2, 0.4), (0.3, 0.6))
    forward, reverse = figs.forward_reverse_series([(2, 0.4, 0.1), (8, 1.6, 0.1)])
    assert forward.y == (0.4, 1.6) and reverse.y == (0.1, 0.1)


def test_speedup_text_divides_forward_by_reverse():
    assert figs.speedup_text([(2, 0.4, 0.1), (8, 1.6, 0.2)]) == "n=2: 4x, n=8: 8x"


def test_chinese_legends_and_speedups_name_the_same_lines(in_both_languages):
    english, chinese = in_both_languages(lambda: figs.speedup_text([(2, 0.4, 0.1), (8, 1.6, 0.2)]))
    assert chinese == "n=2：4x，n=8：8x"
    steps, fd, ad = [1e-1, 1e-2], {"float64": [1e-3, 1e-5]}, {"float64": 0.0}
    english, chinese = in_both_languages(lambda: figs.derivative_error_series(steps, fd, ad))
    assert [s.name for s in chinese] == ["中心差分，float64", "自动微分（参考引擎），float64"]
    assert [s.y for s in chinese] == [s.y for s in english]
    forward, reverse = in_both_languages(
        lambda: figs.forward_reverse_series([(2, 0.4, 0.1)]))[1]
    assert "前向模式" in forward.name and "反向模式" in reverse.name


def test_memory_series_are_megabytes_per_iteration_and_torch_is_dashed():
    ours, theirs = figs.memory_series({"engine: total += loss": [2_000_000, 4_000_000],
                                       "torch: total += loss": [1_000_000, 1_500_000]})
    assert ours.x == (0.0, 1.0) and ours.y == (2.0, 4.0) and not ours.dashed
    assert theirs.y == (1.0, 1.5) and theirs.dashed


def test_loss_series_and_figure():
    series = figs.loss_series({"engine": [2.3, 1.0], "torch": [2.3, 1.0]})
    assert [s.dashed for s in series] == [False, True]
    fig = figs.line_figure(series, "loss", "step", "cross-entropy", log_y=True)
    assert len(fig.data) == 2 and fig.layout.yaxis.type == "log"
    assert fig.layout.xaxis.type == "linear" and fig.data[1].line.dash == "dash"
    assert math.isclose(fig.data[0].y[-1], 1.0)


def test_loglog_slope_recovers_the_exponent_of_a_power_law():
    h = [1e-4, 1e-3, 1e-2]
    assert figs.loglog_slope(h, [3 * v**2 for v in h]) == pytest.approx(2.0)
    assert figs.loglog_slope(h, [1e-16 / v for v in h]) == pytest.approx(-1.0)
    with pytest.raises(ValueError, match="two or more"):
        figs.loglog_slope([1.0], [1.0])


class _Node:
    """A stand-in backward function: only ``next_functions``, like both engines'."""

    def __init__(self, *inputs):
        self.next_functions = tuple((i, 0) for i in inputs)


class AccumulateGrad(_Node):
    """Named like the leaf accumulator both engines use, which backward_edges skips."""


class _Root:
    def __init__(self, grad_fn):
        self.grad_fn = grad_fn


def _diamond():
    """y = add(tanh(x), sigmoid(x)) with x = mul(leaf): x has two users."""
    mul = _Node(AccumulateGrad(), None)
    tanh, sigmoid = _Node(mul), _Node(mul)
    add = _Node(tanh, sigmoid)
    return add, tanh, sigmoid, mul


def test_backward_edges_lists_each_edge_once_and_skips_accumulators():
    add, tanh, sigmoid, mul = _diamond()
    edges = figs.backward_edges(_Root(add))
    assert sorted(map(id, (u for u, _ in edges))) == sorted(map(id, (add, add, tanh, sigmoid)))
    assert {(id(u), id(s)) for u, s in edges} == {
        (id(add), id(tanh)), (id(add), id(sigmoid)), (id(tanh), id(mul)), (id(sigmoid), id(mul))}


def test_out_of_order_edges_finds_a_node_visited_before_one_of_its_users():
    add, tanh, sigmoid, mul = _diamond()
    edges = figs.backward_edges(_Root(add))
    assert figs.out_of_order_edges([add, sigmoid, tanh, mul], edges) == []
    early = figs.out_of_order_edges([add, tanh, mul, sigmoid], edges)
    assert early == [(sigmoid, mul)]
    missing = figs.out_of_order_edges([add, tanh, sigmoid], edges)
    assert {(id(u), id(s)) for u, s in missing} == {(id(tanh), id(mul)), (id(sigmoid), id(mul))}
