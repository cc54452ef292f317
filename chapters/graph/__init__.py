"""Chapter 1's reference engine: computational graphs (计算图).

The op registry (:mod:`.ops`), the graph IR (:mod:`.ir`), and everything built
on them in later modules of this package.
"""

from .ir import Graph, GraphError, Node, topological_sort
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

__all__ = [
    "REGISTRY", "Graph", "GraphError", "Node", "OpDef", "ShapeError", "TensorMeta",
    "UnknownOpError", "broadcast_shapes", "get_op", "register_op", "topological_sort",
]
