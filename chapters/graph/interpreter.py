"""The graph interpreter (图解释器): run a :class:`Graph` on inputs.

Execution is a walk over a topological order: each node's kernel runs on the
values of its inputs. A value is dropped right after its last user has run
(the order tells us when), so memory behaves like a careful eager program;
:mod:`.memory` goes further and reuses the buffers themselves.

When a kernel fails, the Python traceback ends in this loop, not in the
user's function, which is not even on the stack. :class:`NodeError` puts
back what the traceback lost: the node, its op, its inputs' shapes and dtypes,
and the user's line that created the node (recorded by tracing, see
:mod:`.source`). The ``try`` costs nothing until something raises.
"""

from __future__ import annotations

import numpy as np

from .ir import Graph, Node
from .ops import ShapeError, TensorMeta, get_op


class NodeError(RuntimeError):
    """A kernel failed while the interpreter ran one node of a graph."""

    def __init__(self, node: Node, inputs: list[np.ndarray], error: Exception):
        shapes = ", ".join(f"{i.name}: {np.asarray(v).dtype}{list(np.shape(v))}"
                           for i, v in zip(node.inputs, inputs, strict=True))
        where = (f"it was created by the user's code at\n  {node.source}" if node.source
                 else "no source line was recorded (it was not created by tracing)")
        super().__init__(f"node {node.name} = {node.op}(...) failed on inputs ({shapes}): "
                         f"{type(error).__name__}: {error}\n{where}")
        self.node = node


def bind_inputs(graph: Graph, args, kwargs) -> dict[int, np.ndarray]:
    """Match arrays to the graph's placeholders, by position then by name,
    and check each one's shape and dtype against the placeholder's."""
    placeholders = graph.placeholders
    if len(args) > len(placeholders):
        raise TypeError(f"graph {graph.name!r} takes {len(placeholders)} inputs "
                        f"({', '.join(p.name for p in placeholders)}), got {len(args)}.")
    given = dict(zip((p.name for p in placeholders), args, strict=False))
    for key, value in kwargs.items():
        if key in given:
            raise TypeError(f"graph {graph.name!r}: input {key!r} given twice.")
        given[key] = value
    env = {}
    for p in placeholders:
        if p.name not in given:
            raise TypeError(f"graph {graph.name!r}: missing input {p.name!r} "
                            f"({p.dtype}{list(p.shape)}).")
        value = np.asarray(given[p.name])
        if TensorMeta.of(value) != p.meta:
            raise ShapeError(
                f"graph {graph.name!r}: input {p.name!r} was traced as {p.dtype}{list(p.shape)} "
                f"but got {value.dtype}{list(value.shape)}. A traced graph is specialised to "
                "its input shapes and dtypes: trace it again for these inputs (compile() "
                "does this for you)."
            )
        env[p.id] = value
    return env


def last_uses(order: list[Node]) -> dict[int, int]:
    """For each node id, the step of the last node in ``order`` that reads it."""
    last = {}
    for step, node in enumerate(order):
        for inp in node.inputs:
            last[inp.id] = step
    return last


def evaluate(node: Node, inputs: list[np.ndarray]) -> np.ndarray:
    """One node's value from its inputs' values."""
    if node.op == "constant":
        return node.attrs["value"]
    return get_op(node.op).kernel(*inputs, **node.attrs)


def run(graph: Graph, *args, keep_all: bool = False, **kwargs):
    """Execute ``graph``. Returns the output (or a tuple of outputs); with
    ``keep_all``, returns ``{node name: value}`` for every node instead, which
    is what the drawings use to show values."""
    env = bind_inputs(graph, args, kwargs)
    order = graph.topological_order()
    last = last_uses(order)
    keep = {o.id for o in graph.outputs}
    everything = {}
    for step, node in enumerate(order):
        if node.op != "placeholder":
            inputs = [env[i.id] for i in node.inputs]
            try:
                env[node.id] = evaluate(node, inputs)
            except Exception as error:
                raise NodeError(node, inputs, error) from error
        if keep_all:
            everything[node.name] = env[node.id]
        for inp in node.inputs:
            if last[inp.id] == step and inp.id not in keep:
                env.pop(inp.id, None)
    if keep_all:
        return everything
    outs = tuple(env[o.id] for o in graph.outputs)
    return outs[0] if len(outs) == 1 else outs
