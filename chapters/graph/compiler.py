"""``compile(fn)``: trace once per input signature, optimise, plan, cache, run.

In the spirit of ``torch.compile`` and MindSpore's ``@jit`` (动静统一: write
eager code, run a static graph). The first call with a given signature — the
shapes and dtypes of the arguments — traces ``fn`` into a graph, runs the
:func:`~chapters.graph.passes.optimize` pipeline, plans its memory and keeps a
:class:`~chapters.graph.memory.PlannedExecutor` for it. Later calls with the
same signature skip Python and run the graph. A new shape is a new signature:
it is traced and cached next to the old one, not an error.

Where we differ from ``torch.compile``: a signature holds only shapes and
dtypes. Python control flow on *data* is baked in at trace time (tracing warns
with :class:`~chapters.graph.frontend.TracerWarning`); TorchDynamo would
instead guard on it or split the graph. Like ``torch.jit.trace``, our compile
is only correct for functions whose control flow does not depend on values.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np

from .ir import Graph
from .memory import PlannedExecutor
from .passes import PIPELINE, PassReport, optimize
from .tracing import trace


def signature(args) -> tuple:
    return tuple((np.shape(a), np.asarray(a).dtype.str) for a in args)


@dataclass
class CompiledEntry:
    graph: Graph
    reports: list[PassReport]
    executor: PlannedExecutor


@dataclass
class CompiledFunction:
    """``fn`` compiled: call it like ``fn``; ``cache`` maps each signature
    seen so far to its graph, pass reports and executor."""

    fn: object
    passes: tuple = PIPELINE
    cache: dict[tuple, CompiledEntry] = field(default_factory=dict)
    traces: int = 0

    def __post_init__(self):
        functools.update_wrapper(self, self.fn)

    def entry_for(self, *args) -> CompiledEntry:
        key = signature(args)
        if key not in self.cache:
            graph = trace(self.fn, *args)
            reports = optimize(graph, self.passes)
            self.cache[key] = CompiledEntry(graph, reports, PlannedExecutor(graph))
            self.traces += 1
        return self.cache[key]

    def __call__(self, *args):
        args = tuple(np.asarray(a) for a in args)
        return self.entry_for(*args).executor(*args)


def compile(fn=None, *, passes=True):  # noqa: A001  (the name torch uses)
    """Decorator: ``@compile``, or ``@compile(passes=...)`` with ``False`` (no
    optimisation, only tracing and memory planning) or a sequence of passes."""
    chosen = PIPELINE if passes is True else () if passes is False else tuple(passes)
    if fn is None:
        return lambda f: CompiledFunction(f, chosen)
    return CompiledFunction(fn, chosen)
