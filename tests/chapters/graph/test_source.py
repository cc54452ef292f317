"""Traced nodes remember the user's line; interpreter failures report it."""

import numpy as np
import pytest

from chapters.graph import Graph, NodeError, run, trace


def model(x, w):
    h = (x @ w).tanh()
    return (h - 2).log()  # NaN for every input: log of a negative number


def test_traced_nodes_record_the_users_file_and_line():
    with np.errstate(invalid="ignore"):  # tracing computes the example NaN too
        graph = trace(model, np.ones((2, 3), np.float32), np.ones((3, 4), np.float32))
    log = next(n for n in graph.nodes if n.op == "log")
    assert log.source.file == __file__
    assert log.source.code.startswith("return (h - 2).log()  # NaN for every input")
    assert model.__code__.co_firstlineno + 2 == log.source.line


def test_a_failing_node_names_op_shapes_and_the_users_line():
    x, w = np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)
    with np.errstate(invalid="ignore"):
        graph = trace(model, x, w)
    with np.errstate(invalid="raise"), pytest.raises(NodeError) as info:
        run(graph, x, w)
    message = str(info.value)
    assert "= log(...)" in message and "float32[2, 4]" in message
    assert "FloatingPointError" in message
    assert f'{__file__}", line {model.__code__.co_firstlineno + 2}' in message
    assert "return (h - 2).log()" in message


def test_a_hand_built_graph_says_it_has_no_source_line():
    g = Graph("hand")
    x = g.placeholder("x", (2,))
    g.set_outputs(g.call("log", x))
    with np.errstate(invalid="raise"), pytest.raises(NodeError, match="no source line"):
        run(g, -np.ones(2, np.float32))
