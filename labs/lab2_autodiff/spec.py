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


def _a(*rows):
    """A float64 array written out by hand (the small first case of an exercise)."""
    return np.array(rows, dtype=np.float64)


UNBROADCAST = (
    Case("rows_add_up", (_a([1, 2], [3, 4]), (2,))),
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
    Case("two_numbers_each", (_a(1, 2), _a(3, -1), _a(1, 0.5))),
    Case("same_shape", _bin((2, 3), (2, 3))),
    Case("row_times_column", _bin((3, 1), (1, 4))),
    Case("scalar_operand", _bin((), (2, 3)), hidden=True),
    Case("batched_broadcast", _bin((2, 1, 3), (4, 3)), hidden=True),
)

DIV = (
    Case("two_numbers_each", (_a(1, 6), _a(2, 4), _a(1, 1))),
    Case("same_shape", _bin((2, 3), (2, 3), pos_b=True)),
    Case("divide_by_a_row", _bin((4, 3), (3,), pos_b=True)),
    Case("scalar_denominator", _bin((2, 2), (), pos_b=True), hidden=True),
    Case("both_broadcast", _bin((3, 1, 2), (1, 4, 1), pos_b=True), hidden=True),
)


def _mm(sa, sb):
    a, b = _r(*sa), _r(*sb)
    return a, b, _r(*np.matmul(a, b).shape)


MATMUL = (
    Case("two_by_two_times_column", (_a([1, 2], [3, 4]), _a([1], [0]), _a([1], [1]))),
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
    Case("two_equal_logits", (_a(0, 0), _a(1, 0))),
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
    Case("x_used_twice", (_program({"x": _a(2), "y": _a(3)},
                                   [("p", "mul", "x", "y"), ("q", "add", "p", "x"),
                                    ("s", "sum", "q")], "s"),)),
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
    Case("three_rows_in_two_micro_batches", (_a(2), _a([1], [2], [3]), _a(1, 2, 3), 2)),
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
    title_zh="实验 2 · 自动微分：亲手实现反向模式",
    source=Path(__file__).with_name("source.ipynb"),
    exercises=(
        Exercise("unbroadcast", "unbroadcast", UNBROADCAST, ref_unbroadcast, rtol=1e-10,
                 atol=1e-12, forbid_imports=FROM_SCRATCH, hints=(
                     "Each element of the small input was copied to many places of the big "
                     "result, so its gradient is the total over all of its copies.",
                     "There are two kinds of copies: leading dimensions the target shape does "
                     "not have at all, and dimensions where the target shape has size 1. Sum "
                     "over both, and nothing else.",
                     "First sum over the first grad.ndim - len(shape) axes. Then sum, keeping "
                     "the dimension (keepdims), over every axis where shape has 1 but grad does "
                     "not. Reshape to shape at the end; that also covers the scalar shape ()."),
                 hints_zh=(
                     "小输入的每个元素都被复制到了大结果的许多位置上，"
                     "所以它的梯度是它所有副本上梯度的总和。",
                     "副本分两种：目标形状根本没有的前导维度，以及目标形状中大小为 1 的维度。"
                     "对这两种维度求和，其他维度不动。",
                     "先对前 grad.ndim - len(shape) 个轴求和。然后对 shape 中为 1 而 grad "
                     "中不为 1 的每个轴求和，并保留该维度（keepdims）。最后 reshape 成 "
                     "shape；标量形状 () 也就一并处理了。")),
        Exercise("vjp_mul", "vjp_mul", MUL, ref_vjp_mul, rtol=1e-10, atol=1e-12,
                 forbid_imports=FROM_SCRATCH, hints=(
                     "Use the product rule: how much does the output move when a moves a "
                     "little and b stays fixed? Then mind the shapes.",
                     "The gradient for a is the cotangent times b, and for b the cotangent "
                     "times a. Both products have the broadcast shape, so sum each back to its "
                     "own input's shape.",
                     "grad_a is g * b summed back to a's shape with your unbroadcast, grad_b is "
                     "g * a summed back to b's shape; return the two in a list."),
                 hints_zh=(
                     "用乘积的求导法则：b 不动、a 动一点点时，输出动多少？然后注意形状。",
                     "a 的梯度是余切向量乘以 b，b 的梯度是余切向量乘以 a。"
                     "两个乘积都是广播后的形状，所以要各自求和，回到自己那个输入的形状。",
                     "grad_a 是 g * b 用你的 unbroadcast 求和回 a 的形状，grad_b 是 g * a "
                     "求和回 b 的形状；把两者放在一个列表里返回。")),
        Exercise("vjp_div", "vjp_div", DIV, ref_vjp_div, rtol=1e-10, atol=1e-12,
                 forbid_imports=FROM_SCRATCH, hints=(
                     "Use the quotient rule: differentiate a / b with respect to a and to b "
                     "separately, then mind the shapes.",
                     "d(a/b)/da = 1/b and d(a/b)/db = -a/b**2. Multiply each by the cotangent "
                     "g, then sum each back to its own input's shape.",
                     "grad_a is g / b and grad_b is -g * a / (b * b), each passed through your "
                     "unbroadcast with the shape of a and of b respectively."),
                 hints_zh=(
                     "用商的求导法则：分别对 a 和 b 求 a / b 的导数，然后注意形状。",
                     "d(a/b)/da = 1/b，d(a/b)/db = -a/b**2。各自乘以余切向量 g，"
                     "再分别求和回各自输入的形状。",
                     "grad_a 是 g / b，grad_b 是 -g * a / (b * b)，再分别按 a 和 b "
                     "的形状经过你的 unbroadcast。")),
        Exercise("vjp_matmul", "vjp_matmul", MATMUL, ref_vjp_matmul, rtol=1e-10, atol=1e-12,
                 forbid_imports=FROM_SCRATCH, hints=(
                     "Get the plain matrix case right first; then make vectors and stacks of "
                     "matrices look like that case.",
                     "For 2-D: dL/da = g @ b.T and dL/db = a.T @ g. With batch dimensions, "
                     "transpose only the last two axes and un-broadcast each result. A 1-D a "
                     "acts as a (1, k) row and a 1-D b as a (k, 1) column, and g lacks that "
                     "dimension too.",
                     "Promote a vector a to a[None, :] and a vector b to b[:, None], and give g "
                     "the axis each one gained (a last axis for a vector b, a second-to-last "
                     "for a vector a). Multiply by the other operand with np.swapaxes(.., -1, "
                     "-2), unbroadcast to the promoted shapes, then reshape to a.shape and "
                     "b.shape."),
                 hints_zh=(
                     "先把普通矩阵的情形做对；再让向量和成批的矩阵都变成这种情形。",
                     "二维时：dL/da = g @ b.T，dL/db = a.T @ g。有批次维度时，"
                     "只转置最后两个轴，并对每个结果做 unbroadcast。一维的 a 相当于 (1, k) "
                     "的行向量，一维的 b 相当于 (k, 1) 的列向量，g 也同样缺这一维。",
                     "把向量 a 提升为 a[None, :]，向量 b 提升为 b[:, None]，并给 g "
                     "补上它们各自多出的那个轴（向量 b 补在最后一个轴，向量 a "
                     "补在倒数第二个轴）。与另一个操作数的 np.swapaxes(.., -1, -2) 相乘，"
                     "unbroadcast 到提升后的形状，再 reshape 成 a.shape 和 b.shape。")),
        Exercise("vjp_softmax", "vjp_softmax", SOFTMAX, ref_vjp_softmax, rtol=1e-9, atol=1e-12,
                 forbid_imports=FROM_SCRATCH, hints=(
                     "You never need the Jacobian matrix: work out the gradient for one slice, "
                     "then write it with whole-array operations.",
                     "Compute y = softmax(x) stably (subtract the maximum along dim before "
                     "exponentiating). The gradient is y times (g minus the y-weighted sum of g "
                     "along dim).",
                     "With keepdims=True along dim: e = exp(x - max of x), y = e / sum of e, "
                     "s = sum of g * y, and the answer is y * (g - s)."),
                 hints_zh=(
                     "根本用不着雅可比矩阵：先推出一个切片上的梯度，再用整数组运算把它写出"
                     "来。",
                     "以数值稳定的方式计算 y = softmax(x)（取指数之前先沿 dim 减去最大值）。"
                     "梯度是 y 乘以（g 减去沿 dim 以 y 为权重的 g 的加权和）。",
                     "沿 dim 计算时都用 keepdims=True：e = exp(x - x 的最大值)，y = e / e "
                     "的和，s = g * y 的和，答案是 y * (g - s)。")),
        Exercise("backward", "gradients_of", BACKWARD, ref_gradients_of, rtol=1e-9,
                 atol=1e-12, forbid_imports=FROM_SCRATCH, timeout_s=20.0, hints=(
                     "A value must have received every contribution to its gradient before it "
                     "passes gradient on to its parents: which visiting order guarantees that?",
                     "Sort the values root depends on so that parents come before children "
                     "(iteratively, with your own stack), then visit them in reverse. Keep a "
                     "dict from each value (by id) to its gradient so far: add contributions, "
                     "never overwrite.",
                     "Seed the dict with root's gradient (ones shaped like root.data when grad "
                     "is None). In reverse order skip values that got no gradient; at a leaf "
                     "add it into leaf.grad (None counts as zero); otherwise call value.vjp "
                     "with it and add each returned gradient to that parent's entry."),
                 hints_zh=(
                     "一个值必须先收齐对它梯度的所有贡献，才能把梯度继续传给它的父节点："
                     "哪种访问顺序能保证这一点？",
                     "把 root 依赖的值排好序，让父节点排在子节点之前（用你自己的栈迭代地"
                     "做），然后逆序访问。用一个字典记下每个值（以 id 为键）目前累积的梯度："
                     "贡献只能累加，绝不能覆盖。",
                     "先把 root 的梯度放进字典（grad 为 None 时用形状与 root.data 相同的全 1 "
                     "数组）。逆序访问时跳过没有收到梯度的值；遇到叶子就把梯度加到 leaf.grad "
                     "上（None 当作 0）；否则用它调用 value.vjp，"
                     "并把返回的每个梯度加到对应父节点的条目上。")),
        Exercise("accumulate_gradients", "accumulate_gradients", ACCUMULATE,
                 ref_accumulate_gradients, rtol=1e-9, atol=1e-12, forbid_imports=FROM_SCRATCH,
                 hints=(
                     "The full batch's mean loss is a weighted average of the micro-batches' "
                     "mean losses. What is each weight when the last micro-batch is smaller?",
                     "Cut the rows into slices of micro_batch_size (the last may be shorter), "
                     "call mse_and_grad on each, and weight its loss and its gradient by the "
                     "rows in the slice over the rows in the batch.",
                     "Start from a loss of 0 and a gradient of zeros like w. For each start in "
                     "steps of micro_batch_size take rows start to start + micro_batch_size, "
                     "get that slice's loss and gradient, and add both times (rows in the "
                     "slice / len(y))."),
                 hints_zh=(
                     "整个批次的平均损失是各个微批次平均损失的加权平均。"
                     "最后一个微批次更小时，每个权重是多少？",
                     "把各行按 micro_batch_size 切成若干片（最后一片可以更短），对每片调用 "
                     "mse_and_grad，它的损失和梯度都乘以权重：这片的行数除以整个批次的行数。",
                     "损失从 0 开始，梯度从与 w 形状相同的全零数组开始。start 以 "
                     "micro_batch_size 为步长，取第 start 到 start + micro_batch_size 行，"
                     "求出这片的损失和梯度，两者都乘以（这片的行数 / len(y)）后累加。")),
    ),
)
