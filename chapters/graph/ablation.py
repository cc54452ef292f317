"""Per-pass ablation (消融实验): what each pass is worth on its own.

A compiler's speedup is a sum of very different effects, and the total says
nothing about which pass earned it. :func:`ablation` runs one function many
ways, all on the same inputs and timed in the same interleaved rounds:

* **eager**, the baseline: every op runs as Python reaches it, each result a
  fresh full-size array, and the graph of what ran is recorded;
* **the traced graph** run by the interpreter, with no pass at all;
* **each pass alone** on the traced graph, run by the interpreter, so a row
  differs from the traced graph only by that pass (fusion's kernels are C
  where :mod:`.ckernel` can build them);
* **fusion alone with numpy kernels**, the same graph with its fused programs
  run as generated numpy (:mod:`.codegen`), to separate what fusing is worth
  from what compiling the loop to C is worth;
* **memory planning alone** (the planned executor on the traced graph);
* a few **combinations** that isolate one effect: fusion with and without
  simplification, and the whole compiler with and without fusion;
* **everything**: ``compile(fn)``, all passes, generated kernels and the plan.

Each row keeps its time (median and interquartile range), its speedup over
eager (the ratio of medians, and the range from the quartiles: eager's
fastest quarter over the row's slowest, and the other way round), how many
kernels one call runs, and the most bytes one call has allocated at once
(:func:`bytes_per_call`; deterministic, unlike the times). The timer is a
parameter (the engine does not import the course's plotting and timing
package) and is called once with every variant, e.g.
``partial(vizkit.timing.interleaved_medians, repeats=7, number=3)``.

Reading the table for chapter 1's GELU MLP (``bench/graph_bench.py``): the
model's cost is numpy's float ``pow`` (tens of nanoseconds per element on
negative numbers, against a fraction of one for ``*``). Simplification
removes it (``h ** 3 -> h * h * h``). Fusion alone keeps it, and what it
gains depends on the kernel: as generated numpy, the ``pow`` is still numpy's
and fusion saves little time; as one C loop, the compiler vectorises ``powf``
and ``tanhf`` (glibc's vector math library) and the whole chain takes one
pass over memory with no temporaries, which is faster than eager by a wide
margin. Fusion also removes kernels and full-size temporaries (the kernel
and byte columns). Memory planning removes the allocations of the ops that
fusion did not absorb.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from chapters.language import language
from chapters.text_table import text_table

from .codegen import kernels_in
from .compiler import compile
from .eager import run_eager
from .interpreter import run
from .ir import Graph
from .memory import PlannedExecutor
from .passes import PIPELINE, fuse_elementwise, optimize, simplify
from .tracing import trace

EAGER = "eager (records its graph)"

# format_table's words in each language the course speaks (chapters.language picks one): the
# column heads, and each row's name as shown; a row name is also the key the code looks rows up
# by, so it stays English and a language without an entry for it shows it as it is
TABLE_WORDS = {
    "en": {"headers": ("", "kernels", "KiB/call", "median ms", "IQR ms", "vs eager", "range"),
           "rows": {}},
    "zh": {"headers": ("", "内核数", "KiB/次", "中位数 ms", "IQR ms", "相对即时执行", "范围"),
           "rows": {EAGER: "即时执行（记录计算图）",
                    "traced graph, no pass": "追踪得到的图，不做任何遍",
                    "constant folding only": "仅常量折叠",
                    "algebraic simplification only": "仅代数化简",
                    "common-subexpression elimination only": "仅公共子表达式消除",
                    "dead-code elimination only": "仅死代码消除",
                    "elementwise fusion only": "仅逐元素融合",
                    "fusion only, numpy kernels": "仅融合，numpy 内核",
                    "memory planning only": "仅内存规划",
                    "simplification + fusion": "化简 + 融合",
                    "compile without fusion": "compile，不做融合",
                    "compile (all passes, kernels, plan)": "compile（全部遍、内核、内存规划）"}},
}


@dataclass(frozen=True)
class Variant:
    """One way to run the function: a zero-argument call and the kernels it runs."""

    call: Callable[[], object]
    kernels: int


@dataclass(frozen=True)
class AblationRow:
    """One variant's measurements; ``time`` and ``eager`` are timings with
    ``median``, ``low`` and ``high`` seconds (e.g. ``vizkit.timing.Timing``)."""

    name: str
    kernels: int
    per_call_bytes: int
    time: object
    eager: object

    @property
    def speedup(self) -> float:
        """Eager's median time over this variant's."""
        return self.eager.median / self.time.median

    @property
    def speedup_range(self) -> tuple[float, float]:
        """The speedup from the quartiles: eager's fast quartile over this row's
        slow one, and eager's slow quartile over this row's fast one."""
        return self.eager.low / self.time.high, self.eager.high / self.time.low


def bytes_per_call(call: Callable[[], object]) -> int:
    """The peak of the bytes one call of ``call`` allocates (tracemalloc sees
    numpy's allocations), its result included; a first, unmeasured call fills
    caches and compiles what needs compiling."""
    call()
    tracemalloc.start()
    try:
        call()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def kernel_count(graph: Graph) -> int:
    """Ops that run a kernel when the graph runs (not inputs or constants)."""
    return sum(n.op not in ("placeholder", "constant") for n in graph.topological_order())


def pass_label(one_pass) -> str:
    """A pass's name as its report gives it (run on an empty graph)."""
    graph = Graph()
    graph.set_outputs(graph.constant(0.0))
    return one_pass(graph).name


def interpreted(traced: Graph, args, passes) -> Variant:
    graph = traced.clone()
    optimize(graph, passes)
    return Variant(partial(run, graph, *args), kernel_count(graph))


def compiled(fn, args, passes) -> Variant:
    fast = compile(fn, passes=passes)
    return Variant(partial(fast, *args), kernel_count(fast.entry_for(*args).graph))


def in_numpy_kernels(call: Callable[[], object]) -> object:
    """Run ``call`` with its fused programs as generated numpy, not C."""
    with kernels_in("numpy"):
        return call()


def variants(fn, args, passes=PIPELINE) -> dict[str, Variant]:
    """Every way :func:`ablation` runs ``fn``, by row name, in table order."""
    traced = trace(fn, *args)
    eager_ops = kernel_count(run_eager(fn, *args).graph)
    rows = {
        EAGER: Variant(partial(run_eager, fn, *args), eager_ops),
        "traced graph, no pass": interpreted(traced, args, ()),
    }
    for one_pass in passes:
        rows[f"{pass_label(one_pass)} only"] = interpreted(traced, args, (one_pass,))
    fused = rows[f"{pass_label(fuse_elementwise)} only"]
    rows["fusion only, numpy kernels"] = Variant(partial(in_numpy_kernels, fused.call),
                                                 fused.kernels)
    rows["memory planning only"] = Variant(partial(PlannedExecutor(traced), *args),
                                           kernel_count(traced))
    rows["simplification + fusion"] = interpreted(traced, args, (simplify, fuse_elementwise))
    without_fusion = tuple(p for p in passes if p is not fuse_elementwise)
    rows["compile without fusion"] = compiled(fn, args, without_fusion)
    rows["compile (all passes, kernels, plan)"] = compiled(fn, args, passes)
    return rows


def ablation(fn, args, timer, passes=PIPELINE) -> list[AblationRow]:
    """Run ``fn(*args)`` every way of :func:`variants`, time all the ways in one
    call of ``timer`` (``{name: call} -> {name: timing}``), and return one row
    per way, in table order."""
    ways = variants(fn, tuple(args), passes)
    times = timer({name: way.call for name, way in ways.items()})
    return [AblationRow(name, way.kernels, bytes_per_call(way.call), times[name], times[EAGER])
            for name, way in ways.items()]


def format_table(rows: list[AblationRow]) -> str:
    """The rows as a text table in the course's language, times in milliseconds,
    columns aligned by display width (a Chinese character takes two)."""
    words = TABLE_WORDS[language()]
    lines = []
    for r in rows:
        low, high = r.speedup_range
        lines.append((words["rows"].get(r.name, r.name), r.kernels,
                      f"{r.per_call_bytes / 1024:.0f}", f"{r.time.median * 1e3:.3f}",
                      f"{r.time.low * 1e3:.2f}-{r.time.high * 1e3:.2f}", f"{r.speedup:.2f}x",
                      f"{low:.2f}-{high:.2f}x"))
    return text_table(lines, headers=words["headers"])
