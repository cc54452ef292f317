"""Chapter 1's reference engine: computational graphs (计算图).

* :mod:`.ops` — the op registry: name, numpy kernel, shape/dtype rule;
* :mod:`.ir` — ``Graph`` and ``Node``, topological order, printing;
* :mod:`.frontend` — ``Value``, the array type user functions compute with;
* :mod:`.eager` and :mod:`.tracing` — the two ways to get a graph;
* :mod:`.interpreter` — running a graph;
* :mod:`.passes` — constant folding, DCE, CSE, simplification, fusion;
* :mod:`.fused` — the fused elementwise op; :mod:`.memory` — memory planning;
* :mod:`.compiler` — ``compile(fn)``; :mod:`.fx_compare` — checks against torch.fx.
"""

from . import fused as _fused  # noqa: F401  (registers the "fused" op)
from .compiler import CompiledFunction, compile
from .eager import EagerRun, run_eager
from .frontend import TracerWarning, Value, maximum, minimum, where
from .interpreter import run
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
from .tracing import TraceError, trace

__all__ = [
    "REGISTRY", "CompiledFunction", "EagerRun", "Graph", "GraphError", "MemoryPlan", "MemoryUse",
    "Node", "OpDef", "PlannedExecutor", "ShapeError", "TensorMeta", "TraceError", "TracerWarning",
    "UnknownOpError", "Value", "broadcast_shapes", "compile", "get_op", "maximum",
    "measured_memory", "minimum", "optimize", "plan_memory", "register_op", "run", "run_eager",
    "topological_sort", "trace",
    "where",
]
