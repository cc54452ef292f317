"""The graph IR (计算图的中间表示): ``Node`` and ``Graph``.

A computational graph is a directed acyclic graph. Each ``Node`` is one op
applied to the nodes it reads (``inputs``); the edges are tensors flowing from
a producer to its ``users``. A node also knows the *meta* of the tensor it
produces (shape, dtype), computed by the op's meta rule when the node is
created, so a graph can be checked, drawn and planned before it runs.

A graph does two jobs:

1. **execution order**: any topological order runs every node after its
   inputs (:func:`topological_sort`);
2. **topology for backward**: walking the same edges in reverse is exactly
   what reverse-mode differentiation does (chapter 2).

Chapter 2's eager ``Tensor`` records its history with these same nodes, so
everything here (ordering, printing, drawing) applies to it unchanged.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence

import numpy as np

from chapters.text_table import text_table

from .ops import TensorMeta, get_op
from .source import SourceLocation


class GraphError(ValueError):
    """A graph that is malformed: a cycle, a foreign node, a missing output."""


_ids = itertools.count()
# Graph.to_table's column heads, in the order of its columns
TABLE_HEADERS = ("name", "op", "inputs", "shape", "dtype", "users")


class Node:
    """One op application: ``op(*inputs, **attrs)`` producing ``meta``."""

    __slots__ = ("id", "op", "inputs", "attrs", "meta", "users", "name", "source",
                 "__weakref__")

    def __init__(self, op: str, inputs: Sequence[Node] = (), attrs: dict | None = None,
                 meta: TensorMeta | None = None, name: str | None = None,
                 source: SourceLocation | None = None):
        opdef = get_op(op)
        self.id = next(_ids)
        self.op = op
        self.inputs: tuple[Node, ...] = tuple(inputs)
        self.attrs: dict = dict(attrs or {})
        self.meta = meta if meta is not None else opdef.infer(
            *(i.meta for i in self.inputs), **self.attrs)
        self.users: list[Node] = []
        self.name = name or f"{op}_{self.id}"
        self.source = source  # the user's line that created it (set by tracing)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.meta.shape

    @property
    def dtype(self) -> np.dtype:
        return self.meta.dtype

    @property
    def is_elementwise(self) -> bool:
        return get_op(self.op).elementwise

    def __repr__(self) -> str:
        args = ", ".join(i.name for i in self.inputs)
        return f"<Node {self.name} = {self.op}({args}) : {self.dtype}{list(self.shape)}>"


def topological_sort(outputs: Iterable[Node]) -> list[Node]:
    """Every node reachable from ``outputs``, each after all of its inputs.

    Iterative depth-first search with an explicit stack, so a chain of a
    hundred thousand nodes needs no recursion. A node is *grey* while its
    inputs are being visited; meeting a grey node again means a cycle.
    """
    order: list[Node] = []
    state: dict[int, str] = {}  # id -> "grey" | "black"
    for root in outputs:
        if state.get(root.id) == "black":
            continue
        stack = [(root, iter(root.inputs))]
        state[root.id] = "grey"
        while stack:
            node, pending = stack[-1]
            child = next(pending, None)
            if child is None:
                stack.pop()
                state[node.id] = "black"
                order.append(node)
            elif state.get(child.id) == "grey":
                cycle = [n.name for n, _ in stack[[n.id for n, _ in stack].index(child.id):]]
                raise GraphError(
                    "the graph has a cycle: " + " -> ".join(cycle + [child.name])
                    + ". A computational graph must be acyclic; a value cannot depend on itself."
                )
            elif child.id not in state:
                state[child.id] = "grey"
                stack.append((child, iter(child.inputs)))
    return order


class Graph:
    """A define-then-run program: placeholders in, ``outputs`` out.

    Nodes are created through the graph (:meth:`placeholder`, :meth:`constant`,
    :meth:`call`) so that ``users`` stay in step with ``inputs``.
    """

    def __init__(self, name: str = "graph"):
        self.name = name
        self.nodes: list[Node] = []
        self.outputs: list[Node] = []
        self._ids: set[int] = set()
        self._next_name = 0  # nodes are named op_0, op_1, ... within one graph

    # ----------------------------------------------------------- building
    def _add(self, node: Node) -> Node:
        for inp in node.inputs:
            if inp.id not in self._ids:
                raise GraphError(
                    f"{node.op}: input {inp.name} belongs to another graph; "
                    "build every node of a graph through the same Graph object."
                )
            inp.users.append(node)
        self.nodes.append(node)
        self._ids.add(node.id)
        return node

    def placeholder(self, name: str, shape, dtype=np.float32) -> Node:
        return self._add(Node("placeholder", (), {"name": name, "shape": tuple(shape),
                                                  "dtype": np.dtype(dtype)}, name=name))

    def fresh_name(self, op: str) -> str:
        self._next_name += 1
        return f"{op}_{self._next_name}"

    def constant(self, value, name: str | None = None) -> Node:
        return self._add(Node("constant", (), {"value": np.asarray(value)},
                              name=name or self.fresh_name("constant")))

    def call(self, op: str, *inputs: Node, name: str | None = None, **attrs) -> Node:
        return self._add(Node(op, inputs, attrs, name=name or self.fresh_name(op)))

    def set_outputs(self, *outputs: Node) -> Graph:
        for out in outputs:
            if out.id not in self._ids:
                raise GraphError(f"output {out.name} is not a node of graph {self.name!r}.")
        self.outputs = list(outputs)
        return self

    # ------------------------------------------------------------ reading
    @property
    def placeholders(self) -> list[Node]:
        return [n for n in self.nodes if n.op == "placeholder"]

    def topological_order(self) -> list[Node]:
        """Nodes the outputs depend on, inputs first, plus every placeholder
        (a graph's signature keeps its inputs even when one goes unused)."""
        if not self.outputs:
            raise GraphError(f"graph {self.name!r} has no outputs; call set_outputs first.")
        order = topological_sort(self.outputs)
        reached = {n.id for n in order}
        unused = [p for p in self.placeholders if p.id not in reached]
        return unused + order

    def replace_all_uses(self, old: Node, new: Node) -> None:
        """Make every user of ``old`` (and the outputs) read ``new`` instead."""
        for user in old.users:
            user.inputs = tuple(new if i is old else i for i in user.inputs)
            new.users.append(user)
        old.users = []
        self.outputs = [new if o is old else o for o in self.outputs]

    def erase(self, node: Node) -> None:
        """Remove a node nobody uses."""
        if node.users or node in self.outputs:
            raise GraphError(f"cannot erase {node.name}: it is still used.")
        for inp in node.inputs:
            inp.users = [u for u in inp.users if u is not node]
        self.nodes.remove(node)
        self._ids.discard(node.id)

    def clone(self) -> Graph:
        """An independent copy with the same node names (so a pass can run on
        the copy and both versions can be drawn side by side)."""
        copy = Graph(self.name)
        twin: dict[int, Node] = {}
        for node in topological_sort(self.nodes):
            new = Node(node.op, [twin[i.id] for i in node.inputs], node.attrs, node.meta,
                       name=node.name, source=node.source)
            twin[node.id] = copy._add(new)
        copy.outputs = [twin[o.id] for o in self.outputs]
        copy._next_name = self._next_name
        return copy

    def __len__(self) -> int:
        return len(self.nodes)

    def __iter__(self):
        return iter(self.nodes)

    # ----------------------------------------------------------- printing
    def to_code(self) -> str:
        """The graph as a straight-line Python-like program, one op a line."""
        sig = ", ".join(p.name for p in self.placeholders)
        lines = [f"def {self.name}({sig}):"]
        for node in self.topological_order():
            if node.op == "placeholder":
                continue
            lines.append(f"    {node.name} = {format_call(node)}"
                         f"  # {node.dtype}{list(node.shape)}")
        lines.append(f"    return {', '.join(o.name for o in self.outputs)}")
        return "\n".join(lines)

    def to_table(self, headers: Sequence[str] = TABLE_HEADERS) -> str:
        """One row per node: name, op, inputs, shape, dtype, users, under
        ``headers`` (the same six columns in the reader's words; a Chinese head
        stays aligned, the table pads by display width)."""
        rows = [(node.name, node.op, ", ".join(i.name for i in node.inputs) or "-",
                 str(list(node.shape)), str(node.dtype),
                 ", ".join(u.name for u in node.users) or "-")
                for node in self.topological_order()]
        return text_table(rows, headers=headers, align="<" * len(headers))

    def __str__(self) -> str:
        return self.to_code()


def format_attr(value) -> str:
    if isinstance(value, np.ndarray):
        if value.size <= 4:
            return np.array2string(value, precision=4, separator=", ")
        return f"<array {value.dtype}{list(value.shape)}>"
    if isinstance(value, np.dtype):
        return str(value)
    return repr(value)


def format_call(node: Node) -> str:
    """``op(a, b, dim=1)``: how a node reads as code."""
    args = [i.name for i in node.inputs]
    args += [f"{k}={format_attr(v)}" for k, v in node.attrs.items()]
    return f"{node.op}({', '.join(args)})"
