"""Dead-code elimination (死代码消除): drop every node no output depends on.

A node is live when some output is reachable from it along the edges; the
topological order from the outputs *is* the live set. Placeholders stay, since
they are the graph's signature.
"""

from __future__ import annotations

from ..ir import Graph, topological_sort
from .report import PassReport


def eliminate_dead_code(graph: Graph) -> PassReport:
    live = {n.id for n in graph.topological_order()}
    dead = [n for n in graph.nodes if n.id not in live]
    dead_ids = {n.id for n in dead}
    # users before producers, so each node is unused when it is erased
    for node in reversed(topological_sort(dead)):
        if node.id in dead_ids:
            graph.erase(node)
    return PassReport("dead-code elimination", removed=[n.name for n in dead])
