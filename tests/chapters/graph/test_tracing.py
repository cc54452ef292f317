"""Eager recording, tracing, the control-flow pitfall, and the interpreter."""

import warnings

import numpy as np
import pytest
import torch
import torch.fx

from chapters.graph import (
    ShapeError,
    TraceError,
    TracerWarning,
    run,
    run_eager,
    trace,
    where,
)
from chapters.torchcheck import assert_close

RTOL, ATOL = 1e-5, 1e-6


def mlp(x, w1, b1, w2):
    h = (x @ w1 + b1).relu()
    return (h @ w2).softmax(dim=-1), h.mean()


def branchy(x):
    if x.sum() > 0:  # Python control flow on data
        return x * 2
    return -x


def inputs(seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(np.float32) for s in [(5, 3), (3, 4), (4,), (4, 2)]]


def test_trace_then_run_equals_eager_on_new_inputs():
    graph = trace(mlp, *inputs(0))
    assert [p.name for p in graph.placeholders] == ["x", "w1", "b1", "w2"]
    for seed in (1, 2):
        eager = run_eager(mlp, *inputs(seed), record=False).outputs
        ours = run(graph, *inputs(seed))
        for a, b in zip(ours, eager, strict=True):
            assert_close(a, b, rtol=0, atol=0, what="graph vs eager")


def test_eager_records_the_ops_that_ran():
    result = run_eager(mlp, *inputs(0))
    ops = [n.op for n in result.graph.nodes if n.op not in ("placeholder", "constant")]
    assert ops == ["matmul", "add", "relu", "matmul", "softmax", "mean"]
    assert [o.name for o in result.graph.outputs] == [
        n.name for n in result.graph.nodes if n.op in ("softmax", "mean")]
    assert run_eager(mlp, *inputs(0), record=False).graph is None


def test_tracing_bakes_in_the_branch_and_warns():
    positive, negative = np.ones(3, np.float32), -np.ones(3, np.float32)
    with pytest.warns(TracerWarning, match="Python bool.*baked into the graph"):
        graph = trace(branchy, positive)
    assert [n.op for n in graph.nodes if n.op != "constant"] == ["placeholder", "sum", "gt", "mul"]
    # eager takes the right branch for each input; the traced graph does not
    assert np.array_equal(run_eager(branchy, negative).outputs, np.ones(3))
    assert np.array_equal(run(graph, negative), -2 * np.ones(3))
    # eager graphs differ per input: each records only the branch it took
    ops_neg = [n.op for n in run_eager(branchy, negative).graph.nodes]
    assert "neg" in ops_neg and "mul" not in ops_neg


def test_where_is_the_traceable_branch():
    def choose(x):
        return where(x.sum() > 0, x * 2, -x)

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no TracerWarning
        graph = trace(choose, np.ones(3, np.float32))
    for x in (np.ones(3, np.float32), -np.ones(3, np.float32)):
        assert np.array_equal(run(graph, x), branchy(x))


def test_torch_fx_refuses_the_same_branch():
    with pytest.raises(torch.fx.proxy.TraceError, match="symbolically traced variables"):
        torch.fx.symbolic_trace(branchy)


@pytest.mark.filterwarnings("ignore:`torch.jit.trace` is deprecated:DeprecationWarning")
def test_torch_jit_trace_warns_like_ours():
    with pytest.warns(torch.jit.TracerWarning):
        traced = torch.jit.trace(branchy, torch.ones(3))
    assert torch.equal(traced(-torch.ones(3)), -2 * torch.ones(3))  # baked in there too


def test_torch_compile_breaks_the_graph_at_the_branch_instead():
    captured = []

    def record_graph(graph_module, example_inputs):
        captured.append([str(getattr(n.target, "__name__", n.target))
                         for n in graph_module.graph.nodes
                         if n.op in ("call_function", "call_method")])
        return graph_module.forward

    torch._dynamo.reset()
    compiled = torch.compile(branchy, backend=record_graph)
    for x in (torch.ones(3), -torch.ones(3)):
        assert torch.equal(compiled(x), branchy(x))
    assert captured == [["sum", "gt"], ["mul"], ["neg"]]  # the condition, then each branch


@pytest.mark.parametrize("bad,what", [
    (lambda x: x.numpy(), "ndarray"),
    (lambda x: float(x.sum()), "float"),
    (lambda x: (x * 2, 3), "output 1 is a int"),
    (lambda x: None, "NoneType"),
])
def test_returning_non_traced_values_is_a_clear_error(bad, what):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TracerWarning)
        with pytest.raises(TraceError, match=f"{what}.*not a value computed from"):
            trace(bad, np.ones(3, np.float32))


def test_running_a_graph_on_the_wrong_shape_says_retrace():
    graph = trace(mlp, *inputs(0))
    x, w1, b1, w2 = inputs(0)
    with pytest.raises(ShapeError, match=r"input 'x' was traced as float32\[5, 3\] but got "
                                         r"float32\[7, 3\].*trace it again"):
        run(graph, np.ones((7, 3), np.float32), w1, b1, w2)
    with pytest.raises(TypeError, match="missing input 'w2'"):
        run(graph, x, w1, b1)
    assert_close(run(graph, x, w1, b1=b1, w2=w2)[0], run(graph, x, w1, b1, w2)[0],
                 rtol=0, atol=0)


def test_shape_errors_surface_while_tracing():
    with pytest.raises(ShapeError, match=r"add: shapes \(2, 3\) and \(4,\)"):
        trace(lambda a, b: a + b, np.ones((2, 3)), np.ones(4))


def test_values_of_two_traces_cannot_mix():
    leaked = []
    trace(lambda x: leaked.append(x) or x * 1, np.ones(2))
    with pytest.raises(ValueError, match="different runs"):
        trace(lambda y: y + leaked[0], np.ones(2))


def test_arrays_on_the_left_of_an_operator_are_captured_as_constants():
    w = np.arange(6, dtype=np.float32).reshape(2, 3)

    def left(x):
        return w @ x + np.ones(2, np.float32) * x.sum()

    x = np.linspace(0, 1, 3, dtype=np.float32)
    graph = trace(left, x)
    assert [n.op for n in graph.nodes].count("constant") == 2
    assert_close(run(graph, x * 2), w @ (x * 2) + (x * 2).sum(), rtol=RTOL, atol=ATOL)
