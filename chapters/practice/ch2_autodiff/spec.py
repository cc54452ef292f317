"""Chapter 2's ungraded practice, self-checked with ``check("ch2_...")``.

Three exercises, each next to the idea it practises: the gradient as a sum over
paths (section 2), a forward-mode (JVP) rule (section 3) and a reverse-mode
(VJP) rule (section 4). They are neighbours of lab 2's graded exercises, not the
same ones. Every case is public; the first case of each is small enough to work
out by hand. The references enumerate paths explicitly or ask torch, so they
share no code with anything the chapter shows.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from autograder.spec import Case, Exercise, LabSpec

CHAPTER = Path(__file__).resolve().parents[2] / "02_automatic_differentiation.ipynb"


def ref_gradient_by_paths(edges, source, target):
    """Sum over every path from ``source`` to ``target`` of the product of the
    local derivatives along it, found by listing the paths one by one."""
    out_edges: dict = {}
    for tail, head, local in edges:
        out_edges.setdefault(tail, []).append((head, float(local)))

    def paths_from(node, product):
        if node == target:
            yield product
            return
        for head, local in out_edges.get(node, []):
            yield from paths_from(head, product * local)

    return float(sum(paths_from(source, 1.0)))


def _t(array):
    return torch.tensor(np.asarray(array, dtype=np.float64))


def ref_jvp_mul(a, b, ta, tb):
    _, tangent = torch.func.jvp(torch.mul, (_t(a), _t(b)), (_t(ta), _t(tb)))
    return tangent.numpy()


def ref_vjp_sigmoid(x, g):
    leaf = _t(x).requires_grad_()
    (grad,) = torch.autograd.grad(torch.sigmoid(leaf), leaf, _t(g))
    return grad.numpy()


_rng = np.random.default_rng(22)


def _r(*shape):
    return _rng.normal(size=shape)


def _a(*values):
    return np.array(values, dtype=np.float64)


def _diamonds(k):
    """``k`` diamonds in a row: y_i -> (t_i, s_i) -> y_{i+1}, 2**k paths."""
    edges = []
    for i in range(k):
        y, t, s, nxt = f"y{i}", f"t{i}", f"s{i}", f"y{i + 1}"
        edges += [[y, t, 0.5 + 0.1 * i], [y, s, 0.25], [t, nxt, 1.0], [s, nxt, 1.0]]
    return edges


PATHS = (
    Case("source_example_7", ([["x", "x**2", 4.0], ["x", "3x", 3.0], ["x**2", "y", 1.0],
                               ["3x", "y", 1.0]], "x", "y")),
    Case("one_chain", ([["x", "a", 2.0], ["a", "b", -1.5], ["b", "y", 4.0]], "x", "y")),
    Case("target_not_reachable", ([["x", "a", 2.0], ["b", "y", 3.0]], "x", "y")),
    Case("shared_middle_node", ([["x", "a", 2.0], ["x", "b", -1.0], ["a", "m", 3.0],
                                 ["b", "m", 0.5], ["m", "y", 2.0], ["a", "y", -4.0]],
                                "x", "y")),
    Case("ten_diamonds", (_diamonds(10), "y0", "y10")),
)

JVP_MUL = (
    Case("two_numbers", (_a(2.0), _a(3.0), _a(1.0), _a(0.0))),
    Case("both_tangents", (_a(1.0, -2.0), _a(0.5, 4.0), _a(1.0, 1.0), _a(2.0, -1.0))),
    Case("matrices", (_r(3, 4), _r(3, 4), _r(3, 4), _r(3, 4))),
)

VJP_SIGMOID = (
    Case("at_zero", (_a(0.0), _a(1.0))),
    Case("a_vector", (_a(-1.0, 0.5, 2.0), _a(1.0, -2.0, 0.5))),
    Case("matrix", (_r(4, 3), _r(4, 3))),
    Case("saturated_ends", (_a(-40.0, 40.0, -745.0, 745.0), _a(1.0, 1.0, 1.0, 1.0))),
)

LAB = LabSpec(
    id="ch2_autodiff",
    title="Chapter 2 practice — automatic differentiation",
    source=CHAPTER,
    exercises=(
        Exercise("ch2_gradient_by_paths", "gradient_by_paths", PATHS, ref_gradient_by_paths,
                 rtol=1e-10, atol=1e-12, hints=(
                     "Each edge [tail, head, d] says: head changes by d times tail's change. A "
                     "path multiplies its edges' d; different paths add.",
                     "Listing paths works for small graphs, but 2**k paths get slow. Instead "
                     "give every node its derivative d(node)/d(source): the source has 1, and a "
                     "node has the sum over its incoming edges of tail's value times d.",
                     "Visit nodes so that every tail comes before its heads (a topological "
                     "order), starting from {source: 1.0}; for each edge add value[tail] * d to "
                     "value[head]; return value.get(target, 0.0)."),
                 hints_zh=(
                     "每条边 [tail, head, d] 的意思是：tail 变化多少，head 就变化它的 d 倍。"
                     "一条路径把沿途各边的 d 相乘，不同路径的结果相加。",
                     "小图上逐条列出路径没问题，但路径多达 2**k 条时就太慢了。换个办法："
                     "给每个节点记下它的导数 d(node)/d(source)：源节点为 1，"
                     "其他节点等于它所有入边上 tail 的值乘以 d 之和。",
                     "按拓扑序访问节点（每条边的 tail 都排在 head 之前），从 {source: 1.0} "
                     "开始；对每条边把 value[tail] * d 加到 value[head] 上；最后返回 "
                     "value.get(target, 0.0)。")),
        Exercise("ch2_jvp_mul", "jvp_mul", JVP_MUL, ref_jvp_mul, rtol=1e-10, atol=1e-12,
                 forbid_imports=("torch",), hints=(
                     "Forward mode asks: if a moves by ta and b by tb, how much does a * b move?",
                     "The product rule, with tangents in place of dx: each input's tangent is "
                     "multiplied by the other input.",
                     "Return ta * b + a * tb (elementwise, numpy arrays)."),
                 hints_zh=(
                     "前向模式问的是：如果 a 变化 ta，b 变化 tb，那么 a * b 变化多少？",
                     "就是乘积的求导法则，只不过把 dx 换成切向量：每个输入的切向量乘以另一个"
                     "输入。",
                     "返回 ta * b + a * tb（逐元素运算，都是 numpy 数组）。")),
        Exercise("ch2_vjp_sigmoid", "vjp_sigmoid", VJP_SIGMOID, ref_vjp_sigmoid,
                 rtol=1e-9, atol=1e-12, forbid_imports=("torch",), hints=(
                     "The VJP is g times the derivative of sigmoid at x, element by element.",
                     "sigmoid'(x) = s (1 - s) with s = sigmoid(x): the rule needs only the "
                     "output, which is why the engine saves the output for sigmoid.",
                     "s = 1 / (1 + np.exp(-x)) (numpy warns about overflow at -745 but the "
                     "result is right; np.exp(-np.logaddexp(0, -x)) avoids it); return "
                     "g * s * (1 - s)."),
                 hints_zh=(
                     "VJP 就是 g 逐元素乘以 sigmoid 在 x 处的导数。",
                     "sigmoid'(x) = s (1 - s)，其中 s = sigmoid(x)：这条规则只用到输出，"
                     "所以引擎为 sigmoid 保存的是输出。",
                     "s = 1 / (1 + np.exp(-x))（x 低于 -745 时 numpy 会报溢出警告，"
                     "但结果是对的；改用 np.exp(-np.logaddexp(0, -x)) 可以避免）；返回 g * s "
                     "* (1 - s)。")),
    ),
)
