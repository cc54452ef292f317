"""Common-subexpression elimination (公共子表达式消除).

Two nodes with the same op, the same inputs and the same attributes compute
the same value (our ops are pure), so the later one can read the earlier one's
result instead. Walking in topological order makes this transitive:
once ``a2`` is merged into ``a1``, ``f(a2)`` and ``f(a1)`` have equal keys too.
Constants with equal values merge as well; placeholders never do.
"""

from __future__ import annotations

import numpy as np

from ..ir import Graph, Node
from .report import PassReport


def attr_key(value):
    """A hashable stand-in for an attribute (arrays by dtype, shape, bytes)."""
    if isinstance(value, np.ndarray):
        return ("array", value.dtype.str, value.shape, value.tobytes())
    if isinstance(value, list | tuple):
        return tuple(attr_key(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, attr_key(v)) for k, v in value.items()))
    return value


def node_key(node: Node):
    return (node.op, tuple(i.id for i in node.inputs),
            tuple(sorted((k, attr_key(v)) for k, v in node.attrs.items())))


def eliminate_common_subexpressions(graph: Graph) -> PassReport:
    seen: dict = {}
    removed = []
    for node in graph.topological_order():
        if node.op == "placeholder":
            continue
        key = node_key(node)
        if key in seen:
            graph.replace_all_uses(node, seen[key])
            graph.erase(node)
            removed.append(node.name)
        else:
            seen[key] = node
    return PassReport("common-subexpression elimination", removed=removed)
