"""Our tracer against torch.fx on the same functions: op sequences and results."""

import operator

import numpy as np
import pytest
import torch

from chapters.graph import optimize, run, trace
from chapters.graph.fx_compare import (
    fx_op_sequence,
    fx_target,
    fx_targets,
    op_sequence,
    our_name_for,
    side_by_side,
)
from chapters.graph.memory import PlannedExecutor
from chapters.graph.ops import REGISTRY
from chapters.torchcheck import assert_close, available_devices, to_torch

RTOL, ATOL = 1e-5, 1e-5  # float32 forward; the GPU's matmul may round differently


def gelu_mlp(x, w1, b1, w2):
    h = x @ w1 + b1
    return (0.5 * h * (1 + (0.7978845608 * (h + 0.044715 * h ** 3)).tanh())) @ w2


def attention(q, k, v):
    scores = (q @ k.transpose(0, 1)) / 4.0
    return scores.softmax(dim=-1) @ v


def normalize(x, w1, b1, w2):
    centred = x - x.mean(dim=-1, keepdim=True)
    var = (centred * centred).mean(dim=-1, keepdim=True)
    return (centred / (var + 1e-5).sqrt()).sigmoid().reshape(-1).exp().sum()


def mixed(x, w1, b1, w2):
    h = (x @ w1).relu().maximum(b1) + (-(x @ w1)).abs()
    return h.permute(1, 0).log().tanh().sum(dim=1)


FUNCTIONS = [
    (gelu_mlp, [(6, 8), (8, 16), (16,), (16, 4)]),
    (attention, [(5, 8), (7, 8), (7, 3)]),
    (normalize, [(6, 8), (8, 16), (16,), (16, 4)]),
    (mixed, [(6, 8), (8, 16), (16,), (16, 4)]),
]


def example(shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.uniform(0.1, 1.0, s).astype(np.float32) for s in shapes]


@pytest.mark.parametrize("fn,shapes", FUNCTIONS, ids=[f.__name__ for f, _ in FUNCTIONS])
def test_op_sequence_matches_torch_fx(fn, shapes):
    ours = op_sequence(trace(fn, *example(shapes)))
    theirs = fx_op_sequence(fn)
    assert ours == theirs, side_by_side(fn, trace(fn, *example(shapes)))
    assert all(fx_targets(op) for op in ours)


@pytest.mark.parametrize("device", available_devices())
@pytest.mark.parametrize("fn,shapes", FUNCTIONS, ids=[f.__name__ for f, _ in FUNCTIONS])
def test_results_match_torch_fx(fn, shapes, device):
    arrays = example(shapes)
    graph = trace(fn, *arrays)
    module = torch.fx.symbolic_trace(fn)
    expected = module(*(to_torch(a, device) for a in arrays))
    assert_close(run(graph, *arrays), expected, rtol=RTOL, atol=ATOL, what=f"{fn.__name__} traced")
    optimize(graph)
    new = example(shapes, seed=1)  # a traced graph is a program: run it on new inputs
    expected = module(*(to_torch(a, device) for a in new))
    assert_close(PlannedExecutor(graph)(*new), expected, rtol=RTOL, atol=ATOL,
                 what=f"{fn.__name__} optimized on {device}")


def test_table_lists_both_sides():
    table = side_by_side(attention, trace(attention, *example(FUNCTIONS[1][1])))
    assert "call_method softmax" in table and "_operator.matmul" in table
    assert len(table.splitlines()) == 1 + 5  # header + transpose, matmul, div, softmax, matmul


def test_each_registered_fx_target_is_a_torch_fx_name():
    """The strings in the registrations resolve to what torch.fx records: an
    operator or torch function (call_function), or a Tensor method's name."""
    named = {op: fx_targets(op) for op in REGISTRY if REGISTRY[op].fx_targets}
    assert {"add", "matmul", "tanh", "softmax", "broadcast_to", "lt"} <= set(named)
    for op, targets in named.items():
        for target in targets:
            assert isinstance(target, str) and callable(getattr(torch.Tensor, target)) \
                or callable(target), (op, target)
            assert our_name_for(target) == op, f"{target} maps to two ops"
    assert fx_targets("mul")[:2] == (operator.mul, torch.mul)
    assert fx_targets("relu")[1] is torch.nn.functional.relu
    assert fx_targets("broadcast_to")[-1] == "expand"


def test_a_misspelt_fx_target_is_a_clear_error():
    with pytest.raises(ValueError, match="'torch.tanhh' names nothing"):
        fx_target("torch.tanhh")
    with pytest.raises(ValueError, match="'Tensor.<method>'"):
        fx_target("tanh")
