"""Constant folding (常量折叠): compute at compile time whatever does not
depend on an input.

A node whose inputs are all constants is run once, now, and replaced by a
constant holding its result. Folding a node can make its users foldable, so a
single walk in topological order folds whole constant subgraphs. Results
larger than ``max_bytes`` are left alone: folding ``broadcast_to(0.5, big)``
would trade one multiply per call for a big array kept in the graph forever. Constants
left without users are dead-code elimination's to remove.
"""

from __future__ import annotations

from ..interpreter import evaluate
from ..ir import Graph
from .report import PassReport


def fold_constants(graph: Graph, max_bytes: int = 1 << 20) -> PassReport:
    report = PassReport("constant folding")
    for node in graph.topological_order():
        if node.op in ("placeholder", "constant") or not node.inputs:
            continue
        if not all(i.op == "constant" for i in node.inputs) or node.meta.nbytes > max_bytes:
            continue
        value = evaluate(node, [i.attrs["value"] for i in node.inputs])
        folded = graph.constant(value, name=f"{node.name}_c")
        graph.replace_all_uses(node, folded)
        graph.erase(node)
        report.removed.append(node.name)
        report.added.append(folded.name)
    return report
