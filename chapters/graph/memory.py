"""Memory planning (内存规划): liveness analysis and buffer reuse.

Fix an execution order. Every intermediate value is then *born* at the step of
the node that produces it and *dies* after the step of its last user: its
**live interval**. Two values whose intervals do not overlap can share one
buffer. The planner walks the order once, frees buffers at death, and gives
each new value the smallest free buffer large enough (best fit), opening a new
buffer only when none fits. With ``inplace``, an elementwise node may even
write over an input that dies at this very step and has its exact shape and
dtype (each output element depends only on the same input element).

Three numbers compare strategies, counting intermediates only (inputs belong
to the caller, constants to the graph):

* ``naive_bytes``: every value keeps its own buffer for the whole run (a graph
  executor without memory planning);
* ``free_at_last_use_bytes``: the peak of the live intervals (a node's inputs
  and its output counted together), what a careful eager program or
  :func:`~chapters.graph.interpreter.run` reaches;
* ``planned_bytes``: the total size of the buffers the plan allocates.

:class:`PlannedExecutor` really runs that plan: it allocates the buffers once
and writes each node's result into its buffer with numpy ``out=`` kernels, so
a call allocates only the outputs it returns (they must not alias buffers the
next call will overwrite). :func:`measured_memory` measures both parts: the
buffers, held between calls, and what each call allocates.
"""

from __future__ import annotations

import gc
import tracemalloc
from dataclasses import dataclass

import numpy as np

from chapters.language import language

from .fused import UFUNCS, run_fused_into
from .interpreter import bind_inputs, evaluate, last_uses
from .ir import Graph, Node
from .ops import get_op

# MemoryPlan.summary's sentence in each language the course speaks (chapters.language picks one)
SUMMARY = {
    "en": "{values} intermediates in {buffers} buffers: naive {naive:.1f} KiB, freed at last use "
          "{at_last_use:.1f} KiB peak, planned {planned:.1f} KiB",
    "zh": "{values} 个中间值共用 {buffers} 个缓冲区：朴素分配 {naive:.1f} KiB，"
          "最后一次使用后即释放的峰值 {at_last_use:.1f} KiB，规划后 {planned:.1f} KiB",
}


@dataclass
class MemoryPlan:
    order: list[Node]
    intervals: dict[str, tuple[int, int]]  # name -> (birth step, last-use step)
    buffer_of: dict[str, int]  # name -> buffer index (intermediates only)
    buffer_bytes: list[int]
    naive_bytes: int
    free_at_last_use_bytes: int

    @property
    def planned_bytes(self) -> int:
        return sum(self.buffer_bytes)

    def live_after(self, step: int) -> list[str]:
        """Names of intermediates alive once node ``step`` has run."""
        return [n for n, (birth, death) in self.intervals.items() if birth <= step < death]

    def summary(self) -> str:
        """One line in the course's language: intermediates, buffers, and the bytes
        of the three allocation strategies (KiB, one decimal)."""
        return SUMMARY[language()].format(
            values=len(self.intervals), buffers=len(self.buffer_bytes),
            naive=self.naive_bytes / 1024, at_last_use=self.free_at_last_use_bytes / 1024,
            planned=self.planned_bytes / 1024)


def is_intermediate(node: Node, outputs: set[int]) -> bool:
    return node.op not in ("placeholder", "constant") and node.id not in outputs


def can_write_over(node: Node, victim: Node) -> bool:
    return (node.is_elementwise or node.op == "fused") and victim.meta == node.meta


def plan_memory(graph: Graph, inplace: bool = True) -> MemoryPlan:
    order = graph.topological_order()
    outputs = {o.id for o in graph.outputs}
    last = last_uses(order)
    intervals, buffer_of, sizes, free = {}, {}, [], []
    live_bytes, peak, naive = 0, 0, 0
    dying: dict[int, list[Node]] = {}
    for step, node in enumerate(order):
        if not is_intermediate(node, outputs):
            continue
        nbytes = node.meta.nbytes
        death = last.get(node.id, step)
        intervals[node.name] = (step, death)
        dying.setdefault(death, []).append(node)
        naive += nbytes
    for step, node in enumerate(order):
        dead_now = [d for d in dying.get(step, []) if d.name in buffer_of]
        if node.name in intervals:
            nbytes = node.meta.nbytes
            reuse = None
            if inplace:
                reuse = next((buffer_of[d.name] for d in dead_now if d in node.inputs
                              and can_write_over(node, d)), None)
                if reuse is not None:
                    dead_now = [d for d in dead_now if buffer_of[d.name] != reuse]
            if reuse is None:
                fits = [b for b in free if sizes[b] >= nbytes]
                reuse = min(fits, key=lambda b: sizes[b]) if fits else None
                if reuse is None:
                    reuse = len(sizes)
                    sizes.append(nbytes)
                else:
                    free.remove(reuse)
            buffer_of[node.name] = reuse
            live_bytes += nbytes
            peak = max(peak, live_bytes)
        for d in dead_now:  # values whose last user just ran: their buffers are free
            free.append(buffer_of[d.name])
        live_bytes -= sum(d.meta.nbytes for d in dying.get(step, []))
    return MemoryPlan(order, intervals, buffer_of, sizes, naive, peak)


def compute_into(node: Node, inputs: list[np.ndarray], out: np.ndarray) -> None:
    """Write ``node``'s result into ``out`` without a full-size temporary
    where numpy allows (``out=``); other ops compute, then copy."""
    if node.op in UFUNCS:
        UFUNCS[node.op](*inputs, out=out)
    elif node.op == "matmul":
        np.matmul(*inputs, out=out)
    elif node.op == "relu":
        np.maximum(inputs[0], np.zeros((), out.dtype), out=out)
    elif node.op == "fused":
        run_fused_into(out, inputs, node.attrs["program"])
    elif node.op in ("sum", "mean") and node.attrs.get("dim") is not None:
        axes = tuple(np.atleast_1d(node.attrs["dim"]) % max(inputs[0].ndim, 1))
        fn = np.sum if node.op == "sum" else np.mean
        fn(inputs[0], axis=axes, keepdims=node.attrs.get("keepdim", False), out=out)
    else:
        np.copyto(out, get_op(node.op).kernel(*inputs, **node.attrs))


class PlannedExecutor:
    """Run ``graph`` with the buffers of ``plan`` (allocated once, reused on
    every call); outputs are fresh arrays."""

    def __init__(self, graph: Graph, plan: MemoryPlan | None = None):
        self.graph = graph
        self.plan = plan or plan_memory(graph)
        self.buffers = [np.empty(n, np.uint8) for n in self.plan.buffer_bytes]
        self.views: dict[int, np.ndarray] = {}
        for node in self.plan.order:
            if node.name in self.plan.buffer_of:
                raw = self.buffers[self.plan.buffer_of[node.name]][:node.meta.nbytes]
                self.views[node.id] = raw.view(node.dtype).reshape(node.shape)

    def __call__(self, *args, **kwargs):
        env = bind_inputs(self.graph, args, kwargs)
        for node in self.plan.order:
            if node.op == "placeholder":
                continue
            inputs = [env[i.id] for i in node.inputs]
            if node.id in self.views:
                out = self.views[node.id]
                compute_into(node, inputs, out)
                env[node.id] = out
            elif node.op == "constant":
                env[node.id] = node.attrs["value"]
            else:  # a graph output: a fresh array the caller keeps
                env[node.id] = evaluate(node, inputs)
        outs = tuple(env[o.id] for o in self.graph.outputs)
        outs = tuple(np.array(o) if o.base is not None or o.ndim == 0 else o for o in outs)
        return outs[0] if len(outs) == 1 else outs


@dataclass(frozen=True)
class MemoryUse:
    """Bytes one way of running a function needs, split by when they are allocated.

    ``persistent``: allocated while building the runner and warming it up, and
    still held afterwards (a planned executor's buffers, a compiled graph);
    ``per_call``: the most bytes one later call allocates on top of that.
    """

    persistent: int
    per_call: int

    @property
    def working_set(self) -> int:
        """All the memory a call needs: what is held between calls plus its own peak."""
        return self.persistent + self.per_call


def measured_memory(build) -> MemoryUse:
    """Measure, with ``tracemalloc`` (which sees numpy's allocations), the memory
    of the zero-argument runner that ``build()`` returns.

    Building it and one warm-up call (caches, lazily planned buffers) count as
    persistent for what they leave allocated; a second call's peak above that
    is per call. Inputs created before ``build`` is called are not counted.
    """
    tracemalloc.start()
    try:
        runner = build()
        runner()
        gc.collect()  # a discarded result's reference cycles (a recorded graph) are not held
        persistent = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        runner()
        return MemoryUse(persistent, tracemalloc.get_traced_memory()[1] - persistent)
    finally:
        tracemalloc.stop()
