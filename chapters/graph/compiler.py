"""``compile(fn)``: trace once per input signature, optimise, plan, cache, run.

In the spirit of ``torch.compile`` and MindSpore's ``@jit`` (动静统一: write
eager code, run a static graph). The first call with a given signature — the
shapes and dtypes of the arguments — traces ``fn`` into a graph, runs the
:func:`~chapters.graph.passes.optimize` pipeline, plans its memory and keeps a
:class:`~chapters.graph.memory.PlannedExecutor` for it. Later calls with the
same signature skip Python and run the graph. A new shape is a new signature:
it is traced and cached next to the old one, not an error.

The last step is code generation (:mod:`.codegen`): every ``fused`` node's
program becomes one generated function, specialised to its input shapes and
dtypes: a C loop compiled through cffi (:mod:`.ckernel`), or generated numpy
where C cannot be used. :meth:`CompiledFunction.kernel_source` prints them, as
``TORCH_LOGS=output_code`` prints the kernels Inductor wrote for
``torch.compile``. A program the generator cannot handle keeps the blocked
interpreter, and its entry in ``kernels`` is ``None``.

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

from . import ckernel
from .ckernel import CKernel
from .codegen import GeneratedKernel, kernel_for, step_metas, why_not_generated
from .ir import Graph, format_call
from .memory import PlannedExecutor
from .passes import PIPELINE, PassReport, optimize
from .tracing import trace


def signature(args) -> tuple:
    return tuple((np.shape(a), np.asarray(a).dtype.str) for a in args)


def generate_kernels(graph: Graph) -> dict[str, GeneratedKernel | CKernel | None]:
    """Generate the kernel of every fused node of ``graph``, by node name."""
    return {node.name: kernel_for(node.attrs["program"], tuple(i.meta for i in node.inputs))
            for node in graph.topological_order() if node.op == "fused"}


def kernel_language(program, metas, kernel) -> str:
    """One line on which kind of kernel runs a fused node, and why not C."""
    if kernel is None:
        return "no kernel: the blocked interpreter runs it"
    if kernel.language == "C":
        return f"C kernel, compiled with {' '.join(ckernel.COMPILE_FLAGS)}"
    reason = ckernel.why_not_c(program, step_metas(program, metas)) or (
        "C kernels are off (codegen.kernels_in) or no C compiler works")
    return f"numpy kernel, not C: {reason}"


@dataclass
class CompiledEntry:
    """One signature's compilation: the optimised graph, what each pass did, the
    planned executor that runs it, and each fused node's generated kernel
    (``None`` where the program runs in the blocked interpreter)."""

    graph: Graph
    reports: list[PassReport]
    executor: PlannedExecutor
    kernels: dict[str, GeneratedKernel | CKernel | None] = field(default_factory=dict)

    def kernel_source(self) -> str:
        """The generated source of each fused node, headed by the node it computes
        and which graph value each ``in<i>`` argument is."""
        nodes = {n.name: n for n in self.graph.topological_order()}
        parts = []
        for name, kernel in self.kernels.items():
            node = nodes[name]
            header = [f"# {name} = {format_call(node)}"]
            header += [f"#   in{i} = {inp.name}: {inp.dtype}{list(inp.shape)}"
                       for i, inp in enumerate(node.inputs)]
            program, metas = node.attrs["program"], tuple(i.meta for i in node.inputs)
            header.append(f"#   {kernel_language(program, metas, kernel)}")
            body = kernel.source if kernel else (
                f"# not generated: {why_not_generated(program, metas)}; "
                "runs in the blocked interpreter (chapters.graph.fused.run_blocked)\n")
            parts.append("\n".join(header) + "\n" + body)
        return "\n".join(parts) or "# no fused nodes: nothing was generated\n"


@dataclass
class CompiledFunction:
    """``fn`` compiled: call it like ``fn``; ``cache`` maps each signature
    seen so far to its :class:`CompiledEntry`."""

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
            self.cache[key] = CompiledEntry(graph, reports, PlannedExecutor(graph),
                                            generate_kernels(graph))
            self.traces += 1
        return self.cache[key]

    def kernel_source(self, *args) -> str:
        """The generated kernels for the signature of ``args`` (compiling it if
        needed), or, with no arguments, for the signature compiled last."""
        if args:
            return self.entry_for(*(np.asarray(a) for a in args)).kernel_source()
        if not self.cache:
            raise RuntimeError(
                f"{getattr(self.fn, '__name__', 'this function')} has not been compiled yet: "
                "call it once (or pass example arguments to kernel_source) so that it is "
                "traced and its kernels are generated.")
        return list(self.cache.values())[-1].kernel_source()

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
