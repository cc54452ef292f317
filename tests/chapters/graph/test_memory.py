"""Memory planning: the plan is valid, and the executor really reuses buffers."""

from functools import partial

import numpy as np
from hypothesis import given, settings

from chapters.graph import (
    PlannedExecutor,
    measured_memory,
    optimize,
    plan_memory,
    run,
    trace,
)
from chapters.torchcheck import assert_close

from .graphs import random_graphs


def chain(x):
    a = x.tanh()
    b = a * 2.0
    c = b.exp()
    d = c - a
    return (d * d).sum(dim=1)


X = np.random.default_rng(0).standard_normal((256, 512)).astype(np.float32)


def assert_plan_is_valid(graph, plan):
    """Values that share a buffer never live at the same time, except an
    elementwise node writing over an input that dies at that very node."""
    by_name = {n.name: n for n in plan.order}
    names = list(plan.buffer_of)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            if plan.buffer_of[a] != plan.buffer_of[b]:
                continue
            (a0, a1), (b0, b1) = plan.intervals[a], plan.intervals[b]
            if a0 > b0:
                (a0, a1), (b0, b1), a, b = (b0, b1), (a0, a1), b, a
            assert a1 <= b0, f"{a} and {b} overlap in one buffer"
            if a1 == b0:  # in place: b is computed from a, elementwise, same meta
                assert by_name[a] in by_name[b].inputs and by_name[a].meta == by_name[b].meta
    for name, buf in plan.buffer_of.items():
        assert by_name[name].meta.nbytes <= plan.buffer_bytes[buf]


def test_plan_reuses_buffers_and_reports_three_peaks():
    plan = plan_memory(trace(chain, X))
    assert_plan_is_valid(None, plan)
    mib = 256 * 512 * 4
    assert plan.naive_bytes == 5 * mib  # tanh, mul, exp, sub, mul: each its own buffer
    assert plan.free_at_last_use_bytes == 3 * mib  # a lives until d, next to c and d
    assert plan.planned_bytes == 2 * mib and len(plan.buffer_bytes) == 2


@settings(max_examples=40, deadline=None)
@given(case=random_graphs())
def test_planned_execution_equals_interpretation(case):
    graph, arrays = case
    for optimized in (False, True):
        if optimized:
            optimize(graph)
        plan = plan_memory(graph)
        assert_plan_is_valid(graph, plan)
        assert plan.planned_bytes <= plan.naive_bytes
        executor = PlannedExecutor(graph, plan)
        expected = run(graph, *arrays)
        for _ in range(2):  # a second call reuses the same buffers
            got = executor(*arrays)
            for a, b in zip(got if isinstance(got, tuple) else (got,),
                            expected if isinstance(expected, tuple) else (expected,), strict=True):
                assert_close(a, b, rtol=0, atol=0, what="planned vs interpreted")


def test_executor_really_reuses_buffers_measured():
    graph = trace(chain, X)
    executor = PlannedExecutor(graph)
    interpreted = measured_memory(lambda: partial(run, graph, X))
    planned = measured_memory(lambda: partial(PlannedExecutor(graph), X))
    # the interpreter holds nothing between calls and allocates a fresh array per
    # node (three alive at its peak); the executor's buffers are allocated once,
    # when it is built, so a call allocates almost nothing
    assert interpreted.persistent < 0.01 * X.nbytes
    assert interpreted.per_call >= 3 * X.nbytes
    assert executor.plan.planned_bytes <= planned.persistent < 1.01 * executor.plan.planned_bytes
    assert planned.per_call < 0.1 * X.nbytes
    assert planned.working_set == planned.persistent + planned.per_call
    # two intermediates with the same buffer really are the same memory
    views = {n.name: executor.views[n.id] for n in executor.plan.order if n.id in executor.views}
    shared = [(a, b) for a in views for b in views if a < b
              and executor.plan.buffer_of[a] == executor.plan.buffer_of[b]]
    assert shared and all(np.shares_memory(views[a], views[b]) for a, b in shared)


def test_outputs_do_not_alias_the_buffers():
    executor = PlannedExecutor(trace(lambda x: (x.tanh() * 2).reshape(-1), X))
    first = executor(X).copy()
    kept = executor(X)
    executor(X * 2)
    assert_close(kept, first, rtol=0, atol=0, what="an earlier result after a later call")
