"""Each pass keeps results (property tests over random graphs), and does its job."""

import numpy as np
import pytest
from hypothesis import given, settings

from chapters.graph import Graph, run, trace
from chapters.graph.passes import (
    PIPELINE,
    eliminate_common_subexpressions,
    eliminate_dead_code,
    fold_constants,
    fuse_elementwise,
    optimize,
    simplify,
)
from chapters.torchcheck import assert_close

from .graphs import random_graphs

RTOL, ATOL = 1e-9, 1e-12  # float64: passes may reassociate nothing, only x**3 -> x*x*x


def outputs_of(graph, arrays):
    out = run(graph, *arrays)
    return out if isinstance(out, tuple) else (out,)


def check_pass_keeps_results(graph, arrays, passes):
    expected = outputs_of(graph, arrays)
    optimized = graph.clone()
    optimize(optimized, passes)
    optimized.topological_order()  # still acyclic and complete
    for got, want in zip(outputs_of(optimized, arrays), expected, strict=True):
        assert_close(got, want, rtol=RTOL, atol=ATOL, what="optimized vs original")
    return optimized


@pytest.mark.parametrize("one_pass", PIPELINE, ids=[p.__name__ for p in PIPELINE])
@settings(max_examples=40, deadline=None)
@given(case=random_graphs())
def test_each_pass_preserves_results(one_pass, case):
    graph, arrays = case
    check_pass_keeps_results(graph, arrays, [one_pass])


@settings(max_examples=60, deadline=None)
@given(case=random_graphs())
def test_the_whole_pipeline_preserves_results(case):
    graph, arrays = case
    optimized = check_pass_keeps_results(graph, arrays, PIPELINE)
    assert len(optimized.topological_order()) <= len(graph.topological_order())


def test_constant_folding_computes_constant_subgraphs_once():
    g = Graph("f")
    x = g.placeholder("x", (3,))
    c = g.call("exp", g.call("mul", g.constant(np.float32(2)), g.constant(np.ones(3, np.float32))))
    g.set_outputs(g.call("add", x, c))
    report = fold_constants(g)
    eliminate_dead_code(g)
    assert sorted(n.op for n in g.topological_order()) == ["add", "constant", "placeholder"]
    assert len(report.removed) == 2
    assert_close(run(g, np.zeros(3, np.float32)), np.full(3, np.exp(2), np.float32),
                 rtol=1e-6, atol=0)


def test_dce_removes_what_no_output_needs():
    g = trace(lambda x: (x.exp().sum(), x * 2)[1], np.ones(3, np.float32))
    report = eliminate_dead_code(g)
    assert sorted(report.removed) and {n.op for n in g} == {"placeholder", "constant", "mul"}


def test_cse_merges_repeated_expressions():
    g = trace(lambda x: (x * 2).tanh() + (x * 2).tanh(), np.ones(3, np.float32))
    report = eliminate_common_subexpressions(g)
    assert len(report.removed) == 3  # the second constant 2, mul and tanh
    assert [n.op for n in g.topological_order()].count("tanh") == 1


def test_simplify_rules_and_their_limits():
    g = trace(lambda x: (x * 1 + 0 - 0) / 1 ** 1, np.ones((2, 3), np.float32))
    simplify(g)
    eliminate_dead_code(g)
    assert g.outputs[0].op == "placeholder" and len(g) == 1  # all four identities fired
    # x * ones((2, 3)) broadcasts x of shape (3,): not the identity, so kept
    g = Graph("b")
    x = g.placeholder("x", (3,))
    g.set_outputs(g.call("mul", x, g.constant(np.ones((2, 3), np.float32))))
    assert not simplify(g).changed and g.outputs[0].shape == (2, 3)
    # integer x times 1.0 promotes: kept
    g = trace(lambda x: x * 1.0, np.arange(3))
    assert not simplify(g).changed
    # x ** 3 becomes two multiplies
    g = trace(lambda x: x ** 3, np.full(4, 1.5, np.float32))
    simplify(g)
    eliminate_dead_code(g)
    assert [n.op for n in g.topological_order() if n.op != "placeholder"] == ["mul", "mul"]
    assert_close(run(g, np.full(4, 1.5, np.float32)), np.full(4, 3.375, np.float32),
                 rtol=0, atol=0)


def test_fusion_makes_one_node_of_an_elementwise_chain():
    def gelu(x):
        return 0.5 * x * (1 + (0.7978845608 * (x + 0.044715 * x * x * x)).tanh())

    x = np.linspace(-4, 4, 64, dtype=np.float32).reshape(8, 8)
    g = trace(gelu, x)
    expected = run(g, x)
    report = fuse_elementwise(g)
    ops = [n.op for n in g.topological_order() if n.op not in ("placeholder", "constant")]
    assert ops == ["fused"] and len(report.removed) == 9
    program = g.outputs[0].attrs["program"]
    assert program.ops.count("mul") == 6 and "tanh" in program.ops
    # the C kernel (-ffast-math, vector tanhf): a few ulp from numpy on values of order 1
    assert_close(run(g, x), expected, rtol=2e-6, atol=1e-6, what="fused gelu")


def test_fusion_stops_at_values_used_outside_the_group():
    def two_outputs(x):
        t = x.tanh()
        return (t * 2).exp(), t.sum()  # t feeds a reduction: it must be materialised

    g = trace(two_outputs, np.ones((4, 4), np.float32))
    fuse_elementwise(g)
    ops = [n.op for n in g.topological_order() if n.op not in ("placeholder", "constant")]
    assert ops.count("tanh") == 1 and ops.count("fused") == 1 and "sum" in ops


def test_fused_kernel_handles_broadcast_inputs_in_blocks(monkeypatch):
    import chapters.graph.codegen as codegen
    from chapters.graph.fused import run_blocked

    monkeypatch.setattr(codegen, "BLOCK_ELEMENTS", 7)  # many small blocks
    monkeypatch.setattr(codegen, "KERNEL_LANGUAGE", "numpy")  # blocks are the numpy kernel's
    codegen.generate_kernel.cache_clear()
    rng = np.random.default_rng(0)
    x, b, s = rng.standard_normal((9, 5)), rng.standard_normal(5), rng.standard_normal((1, 5))
    g = trace(lambda x, b, s: ((x + b) * s).tanh() - b, x, b, s)
    expected = run(g, x, b, s)
    fuse_elementwise(g)
    assert_close(run(g, x, b, s), expected, rtol=0, atol=0, what="generated kernel")
    program = g.outputs[0].attrs["program"]
    assert_close(run_blocked(np.empty_like(x), [x, b, s], program), expected, rtol=0, atol=0,
                 what="blocked interpreter")
    codegen.generate_kernel.cache_clear()
