"""Eager execution (动态图, define-by-run): run the ops as Python reaches them.

Each op computes its result immediately, so ``print``, ``if`` and a debugger
all see real numbers. What ran can be *recorded* as it runs, which is how an
eager framework gets a graph at all: PyTorch records (only) the backward graph
of ops on tensors that require grad, rebuilt from scratch on every iteration.
That per-iteration bookkeeping is the overhead :func:`run_eager` lets us
measure: ``record=True`` builds a :class:`~chapters.graph.ir.Graph` of every op
(node creation, shape inference, user lists) next to the computation;
``record=False`` is the same numpy work with no graph at all.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

from .frontend import Recorder, Value
from .ir import Graph


@dataclass
class EagerRun:
    """The outputs of one eager run (arrays) and the graph of what ran
    (``None`` when nothing was recorded)."""

    outputs: object
    graph: Graph | None


def argument_names(fn, count: int) -> list[str]:
    """The function's parameter names for its first ``count`` arguments."""
    try:
        params = [p.name for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    return [params[i] if i < len(params) else f"arg{i}" for i in range(count)]


def unwrap(result):
    """Values back to arrays, keeping a tuple/list structure."""
    if isinstance(result, Value):
        return result.data
    if isinstance(result, tuple | list):
        return type(result)(unwrap(r) for r in result)
    return result


def run_eager(fn, *inputs, record: bool = True) -> EagerRun:
    """Call ``fn`` on ``inputs`` eagerly; with ``record``, also return the
    graph of the ops that actually ran (only the branch Python took)."""
    graph = Graph(getattr(fn, "__name__", "eager")) if record else None
    recorder = Recorder(graph, mode="eager")
    names = argument_names(fn, len(inputs))
    values = [recorder.leaf(x, name) for x, name in zip(inputs, names, strict=True)]
    result = fn(*values)
    if graph is not None:
        outs = result if isinstance(result, tuple | list) else (result,)
        graph.set_outputs(*(o.node for o in outs if isinstance(o, Value)))
    return EagerRun(unwrap(result), graph)
