"""Elementwise fusion (算子融合): merge chains of elementwise ops into one
``fused`` node (see :mod:`chapters.graph.fused` for the kernel).

Groups are grown backwards from a *root*: walking the graph from outputs to
inputs, an elementwise node that is not yet in a group starts one, and an
elementwise producer joins the group when **all** of its users are already
in it and it is not a graph output. So only the root's value leaves the group;
every other member's value is consumed inside it and never needs a full-size
buffer. That condition also keeps the merged graph acyclic: no path can leave
the group and come back, because nothing but the root has users outside it.
"""

from __future__ import annotations

from ..fused import FusedProgram
from ..ir import Graph, Node
from .report import PassReport


def grow_group(root: Node, grouped: set[int], outputs: set[int]) -> list[Node]:
    group = {root.id: root}
    frontier = [root]
    while frontier:
        node = frontier.pop()
        for producer in node.inputs:
            if (producer.id in group or producer.id in grouped or producer.id in outputs
                    or producer.op in ("placeholder", "constant") or not producer.is_elementwise):
                continue
            if all(u.id in group for u in producer.users):
                group[producer.id] = producer
                frontier.append(producer)
    return list(group.values())


def build_program(members: list[Node]) -> tuple[FusedProgram, list[Node]]:
    """The members (in topological order) as a program over external inputs."""
    member_ids = {m.id: k for k, m in enumerate(members)}
    externals: list[Node] = []
    for m in members:
        for i in m.inputs:
            if i.id not in member_ids and i not in externals:
                externals.append(i)
    slot = {e.id: k for k, e in enumerate(externals)}
    steps = []
    for k, m in enumerate(members):
        steps.append((m.op, tuple(slot[i.id] for i in m.inputs), tuple(sorted(m.attrs.items()))))
        slot[m.id] = len(externals) + k
    return FusedProgram(len(externals), tuple(steps)), externals


def fuse_elementwise(graph: Graph, min_ops: int = 2) -> PassReport:
    report = PassReport("elementwise fusion")
    order = graph.topological_order()
    position = {n.id: k for k, n in enumerate(order)}
    outputs = {o.id for o in graph.outputs}
    grouped: set[int] = set()
    for root in reversed(order):
        if root.id in grouped or root.op in ("placeholder", "constant") or not root.is_elementwise:
            continue
        members = sorted(grow_group(root, grouped, outputs), key=lambda n: position[n.id])
        grouped.update(m.id for m in members)
        if len(members) < min_ops:
            continue
        program, externals = build_program(members)
        node = graph.call("fused", *externals, program=program)
        graph.replace_all_uses(root, node)
        for m in reversed(members):
            graph.erase(m)
        report.removed += [m.name for m in members]
        report.added.append(node.name)
    return report
