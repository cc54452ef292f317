"""Graph passes (图优化): each rewrites a :class:`Graph` in place, keeps its
results, and returns a :class:`PassReport` naming what it removed and added.

:func:`optimize` runs the standard pipeline; the order matters: simplification
and folding expose duplicates for CSE, all three leave dead nodes for DCE, and
fusion runs last, on the smallest graph.
"""

from __future__ import annotations

from ..ir import Graph
from .constant_folding import fold_constants
from .cse import eliminate_common_subexpressions
from .dce import eliminate_dead_code
from .fusion import fuse_elementwise
from .report import PassReport
from .simplify import simplify

PIPELINE = (fold_constants, simplify, eliminate_common_subexpressions, eliminate_dead_code,
            fuse_elementwise)


def optimize(graph: Graph, passes=PIPELINE) -> list[PassReport]:
    """Run ``passes`` over ``graph`` in place; return their reports."""
    return [p(graph) for p in passes]


__all__ = ["PIPELINE", "PassReport", "eliminate_common_subexpressions", "eliminate_dead_code",
           "fold_constants", "fuse_elementwise", "optimize", "simplify"]
