"""Chapter 1's reference engine: computational graphs (计算图).

* :mod:`.ops` — the op registry: name, numpy kernel, shape/dtype rule;
* :mod:`.ir` — ``Graph`` and ``Node``, topological order, printing;
* :mod:`.frontend` — ``Value``, the array type user functions compute with;
* :mod:`.eager` and :mod:`.tracing` — the two ways to get a graph;
* :mod:`.source` — the user's line each traced node came from;
* :mod:`.interpreter` — running a graph;
* :mod:`.passes` — constant folding, DCE, CSE, simplification, fusion;
* :mod:`.fused` — the fused elementwise op; :mod:`.codegen` and :mod:`.ckernel`
  — its generated kernels (numpy, and C through cffi); :mod:`.memory` — memory planning;
* :mod:`.compiler` — ``compile(fn)``; :mod:`.fx_compare` — checks against torch.fx;
* :mod:`.serialize` — ``save``/``load``; :mod:`.runtime` — run a saved graph.

The graph-building front end (``compile``, ``trace``, ``run_eager``, ``Value``
...) loads on first use (PEP 562 ``__getattr__``), so the deploy runtime,
which imports this package, never loads the code that builds graphs.
"""

from importlib import import_module

from . import fused as _fused  # noqa: F401  (registers the "fused" op)
from .interpreter import NodeError, run
from .ir import Graph, GraphError, Node, topological_sort
from .memory import MemoryPlan, MemoryUse, PlannedExecutor, measured_memory, plan_memory
from .ops import (
    REGISTRY,
    OpDef,
    ShapeError,
    TensorMeta,
    UnknownOpError,
    broadcast_shapes,
    get_op,
    register_op,
)
from .passes import optimize
from .serialize import load, save
from .source import SourceLocation

FRONT_END = {  # name -> module that defines it, imported on first access
    "CompiledFunction": "compiler", "compile": "compiler",
    "EagerRun": "eager", "run_eager": "eager",
    "TracerWarning": "frontend", "Value": "frontend", "maximum": "frontend",
    "minimum": "frontend", "where": "frontend",
    "TraceError": "tracing", "trace": "tracing",
}


def __getattr__(name: str):
    if name in FRONT_END:
        return getattr(import_module(f".{FRONT_END[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "REGISTRY", "CompiledFunction", "EagerRun", "Graph", "GraphError", "MemoryPlan", "MemoryUse",
    "Node", "NodeError", "OpDef", "PlannedExecutor", "ShapeError", "SourceLocation", "TensorMeta",
    "TraceError", "TracerWarning", "UnknownOpError", "Value", "broadcast_shapes", "compile",
    "get_op", "load", "maximum", "measured_memory", "minimum", "optimize", "plan_memory",
    "register_op", "run", "run_eager", "save", "topological_sort", "trace", "where",
]
