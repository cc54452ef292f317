"""Backward-graph drawings of engine and torch tensors, from one shared lambda."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chapters.autodiff as ad
from tests.system_deps import require_dot
from vizkit import autograd_views as av

LIBS = {"engine": lambda a: ad.tensor(a, requires_grad=True),
        "torch": lambda a: torch.tensor(a, requires_grad=True)}


def source_example(make):
    """The source text's example: y = x**2 + 3x at x = 2, dy/dx = 7."""
    x = make(np.array([2.0], np.float32))
    y = x**2 + 3 * x
    return x, y


@pytest.mark.parametrize("lib", list(LIBS))
def test_source_example_labels_data_and_grad(lib):
    x, y = source_example(LIBS[lib])
    y.backward(retain_graph=True)
    drawing = av.backward_graph(y, {"x": x})
    assert "x  [1] | data 2.0000 | grad 7.0000" in drawing.dot
    assert "output  [1] | data 10.0000 | grad -" in drawing.dot
    assert "PowBackward0" in drawing.dot and "AddBackward0" in drawing.dot
    assert "1 leaf accumulators" in drawing.summary


def test_engine_and_torch_graphs_have_the_same_backward_functions():
    rng = np.random.default_rng(0)
    w, x = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal(4).astype(
        np.float32)
    roots = {}
    for lib, make in LIBS.items():
        wt, xt = make(w), make(x)
        roots[lib] = ((wt * xt).tanh() * wt.exp() + xt).sum()
    assert av.op_names(roots["engine"]) == av.op_names(roots["torch"])
    drawing = av.side_by_side(roots["engine"], roots["torch"])
    assert drawing.dot.count("subgraph cluster_") == 2
    assert "course engine: backward graph" in drawing.summary
    assert "TanhBackward0" in drawing.summary


@pytest.mark.parametrize("lib", list(LIBS))
def test_saved_tensors_shown_then_freed(lib):
    make = LIBS[lib]
    x = make(np.ones((2, 3), np.float32))
    y = (x * x).sum()
    before = av.backward_graph(y, show_saved=True)
    assert "[2, 3] float32" in before.dot  # mul saved its inputs
    y.backward()
    after = av.backward_graph(y, show_saved=True)
    assert "freed" in after.dot


def test_named_intermediate_with_retained_grad():
    x = ad.tensor(np.array([1.0, 2.0], np.float32), requires_grad=True)
    h = x * 3
    h.retain_grad()
    (h * h).sum().backward()
    dot = av.backward_graph(h * 1, {"h": h, "x": x}).dot
    assert "h  [2] | data [3, 6] | grad [6, 12]" in dot


def test_summaries_of_values():
    assert av.summarize_values(None) == "-"
    assert av.summarize_values(np.float32(7)) == "7.0000"
    assert av.summarize_values(np.array([1.0, 2.0])) == "[1, 2]"
    assert av.summarize_values(np.arange(10.0)) == "mean 4.5, std 2.87"


def test_drawing_renders_to_svg_when_dot_is_installed():
    require_dot()
    x, y = source_example(LIBS["torch"])
    drawing = av.backward_graph(y, {"x": x})
    assert drawing.svg.lstrip().startswith(("<?xml", "<svg"))
    assert "image/svg+xml" in drawing._repr_mimebundle_()


@pytest.mark.parametrize("lib", list(LIBS))
def test_summary_calls_a_zero_dimensional_result_a_scalar(lib):
    x = LIBS[lib](np.array([1.0, 2.0], np.float32))
    assert av.describe((x * x).sum()).startswith("backward graph of a scalar tensor")
    assert av.describe(x * x).startswith("backward graph of a [2] tensor")


def micrograd_expression(make):
    """micrograd's example: L = (a * b + c) * f, with every intermediate kept."""
    a, b, c, f = (make(np.array(v)) for v in (2.0, -3.0, 10.0, -2.0))
    e = a * b
    d = e + c
    loss = d * f
    for t in (e, d):
        t.retain_grad()
    return {"a": a, "b": b, "c": c, "f": f, "e": e, "d": d, "L": loss}


@pytest.mark.parametrize("lib", list(LIBS))
def test_every_value_labels_intermediates_with_data_and_grad(lib):
    named = micrograd_expression(LIBS[lib])
    named["L"].backward()
    dot = av.backward_graph(named["L"], named, every_value=True).dot
    # by hand: e = -6, d = 4, L = -8; dL/dd = f = -2, dL/de = -2, dL/da = -2 b = 6
    assert "e  [] | data -6.0000 | grad -2.0000" in dot
    assert "d  [] | data 4.0000 | grad -2.0000" in dot
    assert "L  [] | data -8.0000" in dot
    assert "a  [] | data 2.0000 | grad 6.0000" in dot


def test_every_value_names_the_missing_intermediate():
    named = micrograd_expression(LIBS["engine"])
    del named["e"]
    with pytest.raises(ValueError, match="MulBackward0.*not in named="):
        av.backward_graph(named["L"], named, every_value=True)


@pytest.mark.parametrize("lib", list(LIBS))
def test_chinese_summary_counts_the_same_backward_functions(lib, in_both_languages):
    x = LIBS[lib](np.array([1.0, 2.0], np.float32))
    english, chinese = in_both_languages(lambda: av.describe((x * x).sum()))
    assert chinese.startswith("标量张量的反向计算图：2 个反向函数")
    assert "叶子梯度累加器（AccumulateGrad）" in chinese
    chinese = in_both_languages(lambda: av.describe(x * x))[1]
    assert chinese.startswith("形状为 [2] 的张量的反向计算图")


def test_chinese_side_by_side_titles_and_value_summaries(in_both_languages):
    x = LIBS["engine"](np.array([1.0, 2.0], np.float32))
    y = LIBS["torch"](np.array([1.0, 2.0], np.float32))
    english, chinese = in_both_languages(lambda: av.side_by_side((x * x).sum(),
                                                                  (y * y).sum()).summary)
    assert chinese.startswith("课程的参考引擎：标量张量的反向计算图")
    assert " | PyTorch：标量张量的反向计算图" in chinese
    english, chinese = in_both_languages(lambda: av.summarize_values(np.arange(10.0)))
    assert chinese == "均值 4.5，标准差 2.87"
