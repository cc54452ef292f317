"""Graph drawings: DOT content, highlights, large graphs, missing `dot`, widgets."""

import re

import numpy as np
import pytest

from chapters.graph import plan_memory, run, trace
from tests.system_deps import require_dot
from vizkit import graphviz_views as gv
from vizkit.execution_stepper import execution_stepper, step_text
from vizkit.memory_views import live_buffer_figure, live_buffer_summary


def mlp(x, w):
    h = (x @ w).tanh()
    return (h * 0.5).sum(dim=1)


ARGS = (np.ones((4, 3), np.float32), np.ones((3, 5), np.float32))


def dot_node_count(dot: str) -> int:
    return len(re.findall(r"^\s+\w+ \[label=", dot, flags=re.M))


def test_dot_has_ops_inputs_and_typed_edges():
    dot = gv.to_dot(trace(mlp, *ARGS))
    assert dot.startswith("digraph G {") and "rankdir=LR" in dot
    assert 'label="x\\nf32[4, 3]"' in dot and "shape=ellipse" in dot
    assert "\\ntanh" in dot and 'label="f32[4, 5]"' in dot
    assert dot.count("peripheries=2") == 1  # the one output
    assert 'label="0.5"' in dot  # the constant shows its value


def test_highlight_and_values():
    graph = trace(mlp, *ARGS)
    tanh = next(n for n in graph.nodes if n.op == "tanh")
    values = run(graph, *ARGS, keep_all=True)
    dot = gv.to_dot(graph, highlight={tanh.name: "#ff0000"}, values=values)
    line = next(line for line in dot.splitlines() if f"{tanh.name}\\ntanh" in line)
    assert 'fillcolor="#ff0000"' in line and f"mean {np.tanh(3.0):.3g}" in line


def test_large_graphs_collapse_chains_and_cut_by_depth():
    def deep(x):
        for i in range(50):
            x = (x * 1.01 + 0.1).tanh() if i % 5 else x + x.sum()
        return x

    graph = trace(deep, np.ones(4, np.float32))
    assert len(graph) > 200
    full = gv.to_dot(graph, collapse=0)
    collapsed = gv.to_dot(graph)  # collapses by default above 60 nodes
    assert dot_node_count(collapsed) < dot_node_count(full) / 5
    assert "ops: add → mul → add" in collapsed
    shallow = gv.to_dot(graph, depth=4, collapse=0)
    assert dot_node_count(shallow) <= 10 and "earlier nodes" in shallow
    require_dot()
    assert gv.render_svg(collapsed).lstrip().startswith("<?xml")


def test_protocol_objects_draw_without_chapter_one_classes():
    class Meta:
        shape, dtype = (2,), np.float32

    class Item:
        def __init__(self, name, op, inputs=()):
            self.name, self.op, self.inputs, self.meta = name, op, list(inputs), Meta()

    a = Item("a", "placeholder")
    b = Item("b", "exp", [a])
    c = Item("c", "mul", [b, a])
    dot = gv.to_dot(c)
    assert "a\\nf32[2]" in dot and "c\\nmul" in dot and dot.count("->") == 3
    assert "c = mul(b, a)" in gv.summarize(c)


def test_svg_when_dot_exists():
    drawing = gv.GraphDrawing(gv.to_dot(trace(mlp, *ARGS)), "summary")
    bundle = drawing._repr_mimebundle_()
    assert "<svg" in bundle["image/svg+xml"] and bundle["text/plain"] == "summary"


def test_missing_dot_gives_install_hint_and_dot_text(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))  # hide every program, `dot` included
    assert gv.dot_program() is None
    drawing = gv.GraphDrawing(gv.to_dot(trace(mlp, *ARGS)))
    bundle = drawing._repr_mimebundle_()
    assert "image/svg+xml" not in bundle
    assert "conda install -c conda-forge graphviz" in bundle["text/markdown"]
    assert "```dot\ndigraph G {" in bundle["text/markdown"]


def test_summary_lists_every_op():
    text = gv.summarize(trace(mlp, *ARGS), highlight=["x"])
    assert text.startswith("Graph of 4 ops")
    assert "input x f32[4, 3] [highlighted]" in text and "[output]" in text


@pytest.mark.parametrize("hide_dot", [False, True])
def test_stepper_slider_changes_the_picture_and_text(hide_dot, monkeypatch, tmp_path):
    if hide_dot:
        monkeypatch.setenv("PATH", str(tmp_path))
    graph = trace(mlp, *ARGS)
    plan = plan_memory(graph)
    box = execution_stepper(graph, plan)
    slider, _, caption, picture = box.children
    before = (caption.value, picture.value)
    slider.value = 3
    assert caption.value != before[0] and picture.value != before[1]
    assert f"step 4/{len(plan.order)}" in caption.value
    assert ("<svg" in picture.value) != hide_dot


def test_live_buffer_figure_matches_the_plan():
    plan = plan_memory(trace(mlp, *ARGS))
    fig = live_buffer_figure(plan)
    bars = [t for t in fig.data if t.type == "bar"]
    assert len(bars) == len(plan.intervals)
    assert {t.y[0] for t in bars} == {f"buffer {b}" for b in plan.buffer_of.values()}
    assert f"{len(plan.buffer_bytes)} buffers" in live_buffer_summary(plan)


def test_graph_summary_in_chinese_lists_the_same_nodes(in_both_languages):
    graph = trace(mlp, *ARGS)
    english, chinese = in_both_languages(lambda: gv.summarize(graph, highlight=["x"]))
    ops = english.split(" ops ")[0].removeprefix("Graph of ")
    assert chinese.startswith(f"计算图共有 {ops} 个算子")
    assert "输入 x f32[4, 3] [高亮]" in chinese and "[输出]" in chinese
    english, chinese = in_both_languages(lambda: gv.value_label(np.arange(10.0)))
    assert english == "mean 4.5, range [0, 9]" and chinese == "均值 4.5，范围 [0, 9]"


def test_stepper_text_in_chinese_names_the_same_node_and_bytes(in_both_languages):
    plan = plan_memory(trace(mlp, *ARGS))
    english, chinese = in_both_languages(lambda: step_text(plan, 1))
    node = plan.order[1]
    assert chinese.startswith(f"第 2/{len(plan.order)} 步：执行了 {node.name} = {node.op}(")
    assert "中间值" in chinese
    box = in_both_languages(lambda: execution_stepper(trace(mlp, *ARGS), plan))[1]
    assert box.children[0].description == "执行步" and "正在执行" in box.children[1].value


def test_live_buffer_summary_in_chinese_states_the_same_plan(in_both_languages):
    plan = plan_memory(trace(mlp, *ARGS))
    english, chinese = in_both_languages(lambda: live_buffer_summary(plan))
    assert f"共用 {len(plan.buffer_bytes)} 个缓冲区" in chinese and "内存规划" in chinese
    figure = in_both_languages(lambda: live_buffer_figure(plan))[1]
    assert {t.y[0] for t in figure.data if t.type == "bar"} == {
        f"缓冲区 {b}" for b in plan.buffer_of.values()}


def test_dead_nodes_a_graph_still_holds_are_drawn():
    from chapters.graph.passes import eliminate_dead_code

    graph = trace(lambda x: (x.exp().sum(), x * 2)[1], np.ones(3, np.float32))
    dead = [n.name for n in graph.nodes if n.op in ("exp", "sum")]
    assert all(f"{name}\\n" in gv.to_dot(graph) for name in dead)
    assert all(f"{name}\\n" not in gv.to_dot(graph.outputs) for name in dead)
    eliminate_dead_code(graph)
    assert all(f"{name}\\n" not in gv.to_dot(graph) for name in dead)
