"""Algebraic simplification (代数化简): rewrite nodes by identities.

=====================  ============  =========================================
pattern                becomes       why it is safe
=====================  ============  =========================================
``x * 1``, ``1 * x``   ``x``         exact in IEEE arithmetic
``x + 0``, ``0 + x``   ``x``         exact, except ``-0.0 + 0 = +0.0`` (sign of zero only)
``x - 0``, ``x / 1``   ``x``         exact
``x ** 1``             ``x``         exact
``x ** 2``             ``x * x``     strength reduction: one multiply instead of ``pow``
``x ** 3``             ``x * x * x`` the same; ``pow`` takes a general exp/log path
``-(-x)``              ``x``         exact
``reshape(x, x.shape)`` ``x``        no-op
=====================  ============  =========================================

Every rule fires only when the replacement has exactly the node's shape and
dtype: ``x * ones((4, 3))`` with ``x`` of shape ``(3,)`` *broadcasts*, and
``int_x * 1.0`` *promotes*, so neither is the identity. ``x * 0 -> 0`` is
deliberately absent: it is false for ``inf`` and ``nan``.
"""

from __future__ import annotations

import numpy as np

from ..ir import Graph, Node
from .report import PassReport


def constant_equal(node: Node, number: float) -> bool:
    return node.op == "constant" and bool(np.all(node.attrs["value"] == number))


def rewrite(graph: Graph, node: Node) -> Node | None:
    """The simpler node that computes ``node``, or None when no rule applies."""
    ins = node.inputs
    if node.op in ("mul", "add"):
        unit = 1 if node.op == "mul" else 0
        for keep, other in ((ins[0], ins[1]), (ins[1], ins[0])):
            if constant_equal(other, unit) and keep.meta == node.meta:
                return keep
    if node.op in ("sub", "div", "pow") and constant_equal(ins[1], 1 if node.op != "sub" else 0):
        return ins[0] if ins[0].meta == node.meta else None
    if node.op == "pow" and ins[0].meta == node.meta:
        for power in (2, 3):
            if constant_equal(ins[1], power) and ins[1].meta.shape == ():
                square = graph.call("mul", ins[0], ins[0])
                return square if power == 2 else graph.call("mul", square, ins[0])
    if node.op == "neg" and ins[0].op == "neg":
        return ins[0].inputs[0]
    if node.op == "reshape" and ins[0].shape == node.shape:
        return ins[0]
    return None


def simplify(graph: Graph) -> PassReport:
    report = PassReport("algebraic simplification")
    for node in graph.topological_order():
        if node.op in ("placeholder", "constant"):
            continue
        new = rewrite(graph, node)
        if new is None:
            continue
        graph.replace_all_uses(node, new)
        graph.erase(node)
        report.removed.append(node.name)
        if new.name not in report.added and new.id > node.id:
            report.added.append(new.name)
    return report
