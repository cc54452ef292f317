import numpy as np
import pytest

from chapters.graph import Graph, GraphError, run, topological_sort


def small_graph():
    g = Graph("f")
    x = g.placeholder("x", (2, 3))
    w = g.placeholder("w", (3, 4))
    h = g.call("matmul", x, w, name="h")
    y = g.call("tanh", h, name="y")
    return g.set_outputs(y)


def test_topological_order_puts_inputs_first():
    g = small_graph()
    order = [n.name for n in g.topological_order()]
    for node in g.nodes:
        for inp in node.inputs:
            assert order.index(inp.name) < order.index(node.name)
    assert [u.name for u in g.nodes[0].users] == ["h"]


def test_a_100000_node_chain_sorts_without_recursion():
    g = Graph("chain")
    node = g.placeholder("x", (1,))
    for _ in range(100_000):
        node = g.call("neg", node)
    g.set_outputs(node)
    order = g.topological_order()
    assert len(order) == 100_001 and order[0].name == "x" and order[-1] is node
    assert run(g, np.ones(1, np.float32))[0] == 1.0  # an even number of negations


def test_hand_built_cycle_is_reported_with_its_path():
    g = small_graph()
    h, y = g.nodes[2], g.nodes[3]
    h.inputs = (h.inputs[0], y)  # h now reads y, which reads h
    with pytest.raises(GraphError, match=r"cycle: .*h -> y -> h|cycle: .*y -> h -> y"):
        g.topological_order()
    with pytest.raises(GraphError, match="cycle"):
        run(g, np.ones((2, 3), np.float32), np.ones((3, 4), np.float32))


def test_code_and_table_show_every_node():
    g = small_graph()
    code = g.to_code()
    assert code.splitlines()[0] == "def f(x, w):"
    assert "h = matmul(x, w)  # float32[2, 4]" in code and code.endswith("return y")
    table = g.to_table()
    assert table.splitlines()[0].split() == ["name", "op", "inputs", "shape", "dtype", "users"]
    assert any(line.split()[:2] == ["y", "tanh"] for line in table.splitlines())
    chinese = g.to_table(headers=("名称", "算子", "输入", "形状", "dtype", "使用者")).splitlines()
    assert chinese[0].split() == ["名称", "算子", "输入", "形状", "dtype", "使用者"]
    assert [row.split() for row in chinese[2:]] == [row.split() for row in table.splitlines()[2:]]


def test_clone_is_independent():
    g = small_graph()
    c = g.clone()
    assert [n.name for n in c.topological_order()] == [n.name for n in g.topological_order()]
    c.outputs = [c.nodes[2]]
    c.erase(c.nodes[3])
    assert len(g) == 4 and len(c) == 3 and g.outputs[0].name == "y"


def test_nodes_of_another_graph_are_refused():
    g1, g2 = small_graph(), Graph("other")
    with pytest.raises(GraphError, match="belongs to another graph"):
        g2.call("neg", g1.nodes[0])
    with pytest.raises(GraphError, match="not a node"):
        g2.set_outputs(g1.nodes[0])


def test_sorting_helper_dedupes_shared_inputs():
    g = small_graph()
    order = topological_sort([g.outputs[0], g.nodes[2]])
    assert len(order) == len({n.id for n in order}) == 4


def test_names_are_per_graph_and_stay_unique_across_clones():
    g = Graph("n")
    x = g.placeholder("x", (2,))
    g.set_outputs(g.call("neg", g.call("exp", x)))
    assert [n.name for n in g.nodes] == ["x", "exp_1", "neg_2"]
    c = g.clone()
    extra = c.call("tanh", c.nodes[-1])
    assert extra.name not in {n.name for n in g.nodes} and extra.name == "tanh_3"
