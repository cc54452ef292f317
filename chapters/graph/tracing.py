"""Tracing (追踪): turn a Python function into a :class:`Graph` by running it.

``trace(fn, *example_inputs)`` calls ``fn`` once on :class:`Value` proxies that
carry the example inputs' data and record every op into a fresh graph whose
placeholders are ``fn``'s parameters. The graph is then define-then-run
(静态图): it can be optimised as a whole and run again on new inputs of the
same shapes without Python.

Because the proxies carry real example data, Python control flow on that data
still *runs* — but only one way. ``if x.sum() > 0: ...`` takes the branch the
example input chooses, and the graph contains that branch alone: the branch is
**baked in**. This is the classic pitfall of tracing, the same as
``torch.jit.trace``, and we warn the same way (:class:`TracerWarning`).
``torch.fx.symbolic_trace`` instead uses proxies *without* data, so it cannot
even evaluate the condition and raises; ``torch.compile`` (TorchDynamo)
inspects the bytecode, inserts a guard or a graph break, and stays correct.
Control flow on *shapes* (``if x.shape[0] > 1``) is static here and safe, as
shapes are part of the signature a compiled function re-traces on.
"""

from __future__ import annotations

import numpy as np

from .eager import argument_names
from .frontend import Recorder, TracerWarning, Value
from .ir import Graph

__all__ = ["TraceError", "TracerWarning", "trace"]


class TraceError(TypeError):
    """A traced function returned something the graph cannot produce."""


def trace(fn, *example_inputs, name: str | None = None) -> Graph:
    """Run ``fn`` once on proxies of ``example_inputs`` and return the graph
    of the ops it performed. Its outputs are ``fn``'s return values (one value,
    or a tuple/list of values)."""
    graph = Graph(name or getattr(fn, "__name__", "traced"))
    recorder = Recorder(graph, mode="trace")
    names = argument_names(fn, len(example_inputs))
    proxies = [recorder.leaf(np.asarray(x), n) for x, n in zip(example_inputs, names, strict=True)]
    result = fn(*proxies)
    outs = result if isinstance(result, tuple | list) else (result,)
    for i, out in enumerate(outs):
        if not isinstance(out, Value) or out.recorder is not recorder:
            what = type(out).__name__
            where = f"output {i}" if isinstance(result, tuple | list) else "its return value"
            raise TraceError(
                f"trace({graph.name}): {where} is a {what}, not a value computed from "
                "the traced inputs, so the graph has nothing to return for it. "
                + ("Return the values themselves, not .numpy()/.item()/float() of them. "
                   if isinstance(out, np.ndarray | np.generic | int | float) else "")
                + "Every output must be produced by ops on the function's arguments."
            )
    if not outs:
        raise TraceError(f"trace({graph.name}): the function returned nothing to trace.")
    return graph.set_outputs(*(o.node for o in outs))
