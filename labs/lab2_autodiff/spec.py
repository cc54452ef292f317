"""Lab 2's exercises: VJP rules, un-broadcasting, the backward traversal, accumulation.

Every reference is ``torch.autograd`` in float64 with the case's cotangent: the
learner's rule must agree with what PyTorch's own derivative formulas give.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from autograder.spec import Case, Exercise, LabSpec


def _t(array, grad=True):
    return torch.tensor(np.asarray(array, dtype=np.float64), requires_grad=grad)


def _vjp(fn, inputs, g):
    """Gradients of ``fn(*inputs)`` against cotangent ``g``, one per input."""
    leaves = [_t(x) for x in inputs]
    out = fn(*leaves)
    grads = torch.autograd.grad(out, leaves, _t(g, grad=False), allow_unused=True)
    return [gr.numpy() for gr in grads]


def ref_unbroadcast(grad, shape):
    return _vjp(lambda x: x.broadcast_to(np.shape(grad)), [np.zeros(shape)], grad)[0]


def ref_vjp_mul(a, b, g):
    return _vjp(torch.mul, [a, b], g)


def ref_vjp_div(a, b, g):
    return _vjp(torch.div, [a, b], g)


def ref_vjp_matmul(a, b, g):
    return _vjp(torch.matmul, [a, b], g)


def ref_vjp_softmax(x, g, dim=-1):
    return _vjp(lambda t: torch.softmax(t, dim=dim), [x], g)[0]


_TORCH_OPS = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "neg": torch.neg,
              "matmul": torch.matmul, "tanh": torch.tanh, "exp": torch.exp,
              "relu": torch.relu, "sum": torch.sum}


def ref_gradients_of(program, calls=1, seed=None):
    leaves = {name: _t(array) for name, array in program["leaves"].items()}
    values = dict(leaves)
    for name, op, *inputs in program["ops"]:
        values[name] = _TORCH_OPS[op](*(values[i] for i in inputs))
    out = values[program["output"]]
    seed_t = torch.ones_like(out) if seed is None else _t(seed, grad=False)
    for k in range(calls):
        out.backward(seed_t, retain_graph=k < calls - 1)
    return {name: None if leaf.grad is None else leaf.grad.numpy()
            for name, leaf in leaves.items()}


def ref_accumulate_gradients(w, X, y, micro_batch_size):
    wt = _t(w)
    loss = torch.mean((_t(X, grad=False) @ wt - _t(y, grad=False)) ** 2)
    loss.backward()
    return {"loss": float(loss.item()), "grad": wt.grad.numpy()}


# ------------------------------------------------------------------ cases

_rng = np.random.default_rng(2)


def _r(*shape):
    return _rng.normal(size=shape)


def _pos(*shape):
    return _rng.uniform(0.5, 2.0, size=shape) * _rng.choice([-1, 1], size=shape)


UNBROADCAST = (
    Case("same_shape", (_r(2, 3), (2, 3))),
    Case("leading_dims", (_r(4, 2, 3), (2, 3))),
    Case("size_one_dims", (_r(2, 3, 4), (2, 1, 4))),
    Case("to_a_scalar", (_r(3, 2), ())),
    Case("both_kinds_at_once", (_r(5, 2, 3, 4), (3, 1)), hidden=True),
    Case("keeps_size_one_when_grad_has_it", (_r(2, 1, 4), (1, 1, 4)), hidden=True),
    Case("vector_to_size_one", (_r(6), (1,)), hidden=True),
)


def _bin(sa, sb, pos_b=False):
    a, b = _r(*sa), (_pos(*sb) if pos_b else _r(*sb))
    return a, b, _r(*np.broadcast_shapes(sa, sb))


MUL = (
    Case("same_shape", _bin((2, 3), (2, 3))),
    Case("row_times_column", _bin((3, 1), (1, 4))),
    Case("scalar_operand", _bin((), (2, 3)), hidden=True),
    Case("batched_broadcast", _bin((2, 1, 3), (4, 3)), hidden=True),
)

DIV = (
    Case("same_shape", _bin((2, 3), (2, 3), pos_b=True)),
    Case("divide_by_a_row", _bin((4, 3), (3,), pos_b=True)),
    Case("scalar_denominator", _bin((2, 2), (), pos_b=True), hidden=True),
    Case("both_broadcast", _bin((3, 1, 2), (1, 4, 1), pos_b=True), hidden=True),
)


def _mm(sa, sb):
    a, b = _r(*sa), _r(*sb)
    return a, b, _r(*np.matmul(a, b).shape)


MATMUL = (
    Case("matrix_matrix", _mm((3, 4), (4, 2))),
    Case("batched", _mm((5, 3, 4), (5, 4, 2))),
    Case("batch_broadcasts", _mm((2, 1, 3, 4), (6, 4, 2)), hidden=True),
    Case("batched_times_matrix", _mm((5, 3, 4), (4, 2)), hidden=True),
    Case("vector_matrix", _mm((4,), (4, 3)), hidden=True),
    Case("matrix_vector", _mm((3, 4), (4,)), hidden=True),
    Case("vector_vector", _mm((4,), (4,)), hidden=True),
    Case("batched_vector", _mm((2, 3, 4), (4,)), hidden=True),
)

SOFTMAX = (
    Case("last_dim", (_r(3, 5), _r(3, 5))),
    Case("one_row", (_r(6), _r(6))),
    Case("dim_zero", (_r(4, 3), _r(4, 3)), {"dim": 0}, hidden=True),
    Case("large_logits_are_stable", (_r(2, 4) * 500, _r(2, 4)), hidden=True),
    Case("middle_dim_3d", (_r(2, 3, 4), _r(2, 3, 4)), {"dim": 1}, hidden=True),
)


def _program(leaves, ops, output):
    return {"leaves": leaves, "ops": [list(op) for op in ops], "output": output}


_mlp = _program({"x": _r(4, 3), "w1": _r(3, 5), "w2": _r(5, 2)},
                [("h", "matmul", "x", "w1"), ("a", "tanh", "h"), ("o", "matmul", "a", "w2"),
                 ("r", "relu", "o"), ("s", "sum", "r")], "s")
_shared = _program({"x": _r(3), "y": _r(3)},
                   [("p", "mul", "x", "y"), ("q", "add", "p", "x"), ("e", "exp", "q"),
                    ("d", "sub", "e", "p"), ("m", "mul", "d", "d"), ("s", "sum", "m")], "s")
_unused = _program({"x": _r(2), "z": _r(2)}, [("n", "neg", "x"), ("t", "tanh", "n")], "t")
_chain = _program({"x": np.array(0.5), "c": np.array(1.0)},
                  [("v0", "add", "x", "c")]
                  + [(f"v{k}", "add", f"v{k - 1}", "x") for k in range(1, 5000)], "v4999")

BACKWARD = (
    Case("mlp", (_mlp,), points=2.0),
    Case("value_used_twice", (_shared,), points=2.0),
    Case("unused_leaf_has_no_grad", (_unused,), {"seed": _r(2)}, hidden=True),
    Case("two_calls_accumulate", (_shared,), {"calls": 2}, hidden=True, points=2.0),
    Case("seeded_non_scalar_output", (_program({"a": _r(2, 3), "b": _r(3, 2)},
                                               [("c", "matmul", "a", "b"), ("d", "exp", "c")],
                                               "d"),), {"seed": _r(2, 2)}, hidden=True),
    Case("chain_of_5000_ops", (_chain,), hidden=True, points=2.0),
    Case("same_leaf_twice_in_one_op", (_program({"x": _r(3)}, [("y", "mul", "x", "x"),
                                                               ("s", "sum", "y")], "s"),),
         hidden=True),
)

_X, _y, _w = _r(23, 4), _r(23), _r(4)
ACCUMULATE = (
    Case("even_split", (_w, _X[:20], _y[:20], 5)),
    Case("uneven_last_micro_batch", (_w, _X, _y, 5), points=2.0),
    Case("one_row_at_a_time", (_w, _X, _y, 1), hidden=True),
    Case("micro_batch_larger_than_batch", (_w, _X, _y, 64), hidden=True),
    Case("very_uneven", (_w, _X, _y, 11), hidden=True, points=2.0),
)

FROM_SCRATCH = ("torch",)
"""Modules the learner's code may not import: the lesson is writing this by hand."""

LAB = LabSpec(
    id="lab2_autodiff",
    title="Lab 2 — Automatic differentiation: reverse mode by hand",
    source=Path(__file__).with_name("source.ipynb"),
    exercises=(
        Exercise("unbroadcast", "unbroadcast", UNBROADCAST, ref_unbroadcast, rtol=1e-10,
                 atol=1e-12, forbid_imports=FROM_SCRATCH,
                 hint="First sum the leading axes the shape lacks, then sum with keepdims "
                      "where the shape has size 1."),
        Exercise("vjp_mul", "vjp_mul", MUL, ref_vjp_mul, rtol=1e-10, atol=1e-12,
                 forbid_imports=FROM_SCRATCH, hint="g * b for a, g * a for b, then unbroadcast."),
        Exercise("vjp_div", "vjp_div", DIV, ref_vjp_div, rtol=1e-10, atol=1e-12,
                 forbid_imports=FROM_SCRATCH, hint="d(a/b)/db = -a / b**2."),
        Exercise("vjp_matmul", "vjp_matmul", MATMUL, ref_vjp_matmul, rtol=1e-10, atol=1e-12,
                 forbid_imports=FROM_SCRATCH,
                 hint="Promote vectors to matrices, use np.swapaxes(x, -1, -2), unbroadcast, "
                      "then reshape back to the inputs' shapes."),
        Exercise("vjp_softmax", "vjp_softmax", SOFTMAX, ref_vjp_softmax, rtol=1e-9, atol=1e-12,
                 forbid_imports=FROM_SCRATCH, hint="y * (g - sum(g * y, dim, keepdims=True))."),
        Exercise("backward", "gradients_of", BACKWARD, ref_gradients_of, rtol=1e-9,
                 atol=1e-12, forbid_imports=FROM_SCRATCH, timeout_s=20.0,
                 hint="Reverse topological order; add contributions, never overwrite; leaves "
                      "accumulate into .grad."),
        Exercise("accumulate_gradients", "accumulate_gradients", ACCUMULATE,
                 ref_accumulate_gradients, rtol=1e-9, atol=1e-12, forbid_imports=FROM_SCRATCH,
                 hint="Weight each micro-batch by its number of rows over the batch's rows."),
    ),
)
