"""Code generation (代码生成): each fused program becomes one function.

The compiler's last step. A :class:`~chapters.graph.fused.FusedProgram` is a
list of elementwise steps; :func:`generate_kernel` writes it out as the source
of one function, specialised to the shapes and dtypes of its inputs: a C loop
compiled with the system's C compiler (:mod:`.ckernel`) where it can, else
the numpy function this module generates and compiles with Python's own
``compile``, described here. Read it with ``print(kernel.source)``
(or :meth:`~chapters.graph.compiler.CompiledFunction.kernel_source`), the way
``TORCH_LOGS=output_code`` shows the code Inductor generated. For the GELU
``0.5 * h * (1 + tanh(0.79788 * (h + 0.044715 * h * h * h)))`` on
``h = x @ w1 + b1`` of 256 x 512 float32 values, the numpy kernel reads::

    def fused_kernel(out, in0, in1, in2, in3, in4, in5):
        t0 = np.empty((32, 512), 'float32')  # scratch
        t1 = np.empty((32, 512), 'float32')  # scratch
        t2 = np.empty((32, 512), 'float32')  # scratch
        for start in range(0, 256, 32):
            stop = min(start + 32, 256)
            b0 = in0[start:stop]             # this block's rows of x @ w1
            o = out[start:stop]
            np.add(b0, in1, out=t0)          # step 0: add    h = x @ w1 + b1
            np.multiply(in2, t0, out=t1)     # step 1: mul    0.5 * h
            np.multiply(t0, t0, out=t2)      # step 2: mul    h * h
            np.multiply(t2, t0, out=t2)      # step 3: mul    ... * h, over its dead input
            ...
            np.tanh(t0, out=t0)              # step 7: tanh
            np.add(in5, t0, out=t0)          # step 8: add
            np.multiply(t1, t0, out=o)       # step 9: mul, straight into the output
        return out

**What the generated code saves, and when that matters.** For a tensor of
``n`` elements and a chain of ``k`` ops, eager numpy allocates ``k``
full-size temporaries (large ones come fresh from the operating system, one
page fault per 4 KiB) and walks ``n`` elements ``k`` times, through main
memory once the tensor outgrows the caches. The kernel allocates its scratch
once per call, block-sized (``BLOCK_ELEMENTS`` elements, 64 KiB of float32,
so it stays in the core's own cache), reuses a scratch buffer as soon as the
value in it is dead (writing *over* the dead input, in place), and writes the
result once, straight into ``out``. The arithmetic is unchanged: each step is
the same numpy ufunc on the same dtype as in eager mode, so the results agree
with eager to the last bit for ``+ - * /`` and to within an ulp for the
transcendental functions. The saving is therefore memory traffic and
allocation, which pays when tensors are larger than the caches. On tensors
that fit in a core's cache, as in chapter 1's benchmark MLP, numpy's
separate passes are already fast, and a memory-planned unfused graph runs as
fast as the fused one (:mod:`.ablation` measures both). Nor does this
kernel remove the cost of an op itself: numpy's float ``pow`` on negative
numbers takes tens of nanoseconds per element, against a fraction of one for
``*``, inside the kernel as outside; rewriting ``x ** 3`` as ``x * x * x`` is
the simplification pass's job, and a faster ``pow`` the C kernel's.

**Why a C kernel first, and this numpy kernel as the fallback.** numpy's
ufuncs already run SIMD loops for ``tanh``, ``exp`` and arithmetic; but its
float32 ``pow`` on negative bases is scalar and slow: on the course's machine
(one thread, 10^6 float32 elements) the unfused GELU takes 63.8 ns per
element, most of it in ``np.power``, and this kernel keeps that ``pow``, so
fusion alone gained only about 1.05x over eager on chapter 1's MLP. numexpr
computes float32 ``tanh`` with the scalar C library (its fused GELU on
256 x 512 values took 3.2 ms against 0.18 ms for numpy's separate passes);
numba brings LLVM, a large dependency. The same program compiled as one C
loop at ``-O3 -ffast-math`` (:mod:`.ckernel`, through cffi) takes 17.4 ns per
element: GCC vectorises the loop and calls glibc's vector ``powf`` and
``tanhf``. So :func:`generate_kernel` builds the C kernel when it can, and
this numpy kernel when the program has an op, dtype or broadcast layout the C
kernel does not handle, or when no C compiler is installed (with one warning
that says how to install one). The numpy kernel needs nothing the course
does not install already, runs on one thread, and prints as Python that a
learner can read line by line.

**What cannot be generated** runs in the blocked interpreter
(:func:`~chapters.graph.fused.run_blocked`): a program with an op that has
no template in :data:`TEMPLATES` (``where``, ``sigmoid``, chapter 2's
``erf`` or ``cast`` ...), or with a step whose operands do not all have its
result's dtype (an integer ``exp`` computes in float32, which ``out=`` would
not reproduce). :func:`generate_kernel` returns ``None`` for those, and
:func:`why_not_generated` says why.
"""

from __future__ import annotations

import contextlib
import functools
import linecache
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from . import ckernel
from .ckernel import CKernel
from .ops import TensorMeta, get_op

LANGUAGES = ("C", "numpy")
KERNEL_LANGUAGE = "C"  # the language fused programs run in; kernels_in changes it
BLOCK_ELEMENTS = 1 << 14  # 64 KiB of float32 per scratch buffer: stays in the core's cache

# op -> the numpy call that computes it into a given buffer; {0}, {1}: operands
TEMPLATES = {
    "add": "np.add({0}, {1}, out={out})",
    "sub": "np.subtract({0}, {1}, out={out})",
    "mul": "np.multiply({0}, {1}, out={out})",
    "div": "np.true_divide({0}, {1}, out={out})",
    "pow": "np.power({0}, {1}, out={out})",
    "maximum": "np.maximum({0}, {1}, out={out})",
    "minimum": "np.minimum({0}, {1}, out={out})",
    "neg": "np.negative({0}, out={out})",
    "exp": "np.exp({0}, out={out})",
    "log": "np.log({0}, out={out})",
    "sqrt": "np.sqrt({0}, out={out})",
    "abs": "np.abs({0}, out={out})",
    "tanh": "np.tanh({0}, out={out})",
    "relu": "np.maximum({0}, 0, out={out})",
    "eq": "np.equal({0}, {1}, out={out})",
    "ne": "np.not_equal({0}, {1}, out={out})",
    "lt": "np.less({0}, {1}, out={out})",
    "le": "np.less_equal({0}, {1}, out={out})",
    "gt": "np.greater({0}, {1}, out={out})",
    "ge": "np.greater_equal({0}, {1}, out={out})",
}
COMPARISONS = {"eq", "ne", "lt", "le", "gt", "ge"}


def step_metas(program, metas: tuple[TensorMeta, ...]) -> list[TensorMeta]:
    """The meta of every slot: the inputs', then each step's (by its op's rule)."""
    slots = list(metas)
    for op, args, attrs in program.steps:
        slots.append(get_op(op).infer(*(slots[a] for a in args), **dict(attrs)))
    return slots


def why_not_generated(program, metas: tuple[TensorMeta, ...]) -> str | None:
    """Why ``program`` on inputs ``metas`` needs the interpreter, or ``None``
    when it can be generated."""
    slots = step_metas(program, metas)
    for k, (op, args, _) in enumerate(program.steps):
        if op not in TEMPLATES:
            return f"step {k} ({op}) has no code template"
        result = slots[program.n_inputs + k]
        operand_dtype = {slots[a].dtype for a in args}
        wanted = {result.dtype} if op not in COMPARISONS else operand_dtype
        if operand_dtype != wanted or len(operand_dtype) != 1:
            listed = ", ".join(str(d) for d in sorted(map(str, operand_dtype)))
            return f"step {k} ({op}) mixes dtypes ({listed} -> {result.dtype})"
    return None


@dataclass(frozen=True)
class GeneratedKernel:
    """A fused program as generated source and the function compiled from it:
    ``kernel(out, *inputs)`` writes the program's result into ``out``."""

    source: str
    fn: Callable[..., np.ndarray]
    out_meta: TensorMeta
    block_rows: int
    language: str = "numpy"

    def __call__(self, out: np.ndarray, *inputs: np.ndarray) -> np.ndarray:
        return self.fn(out, *inputs)


def spans_rows(meta: TensorMeta, out: TensorMeta) -> bool:
    """A value is cut into row blocks when it has the output's leading rows;
    anything else (a bias, a scalar, one broadcast row) is used whole."""
    return len(out.shape) > 0 and len(meta.shape) == len(out.shape) \
        and meta.shape[0] == out.shape[0]


def block_rows_for(out: TensorMeta) -> int:
    """Rows per block: as many as fit in ``BLOCK_ELEMENTS`` elements, at least one."""
    if not out.shape:
        return 1
    row = max(1, out.numel // max(out.shape[0], 1))
    return max(1, min(out.shape[0], BLOCK_ELEMENTS // row))


class ScratchAllocator:
    """Block-sized scratch buffers for a program's temporaries: a value gets a
    buffer of its dtype and shape, preferring one its op can overwrite (an
    operand that dies at this step), then a free one, then a new one."""

    def __init__(self):
        self.shapes: list[tuple[tuple[int, ...], np.dtype]] = []
        self.free: list[int] = []

    def take(self, key, dying: list[int]) -> int:
        for buffer in dying + self.free:
            if self.shapes[buffer] == key:
                if buffer in self.free:
                    self.free.remove(buffer)
                return buffer
        self.shapes.append(key)
        return len(self.shapes) - 1

    def release(self, buffers) -> None:
        for buffer in buffers:
            if buffer not in self.free:
                self.free.append(buffer)


def emit_steps(program, slots: list[TensorMeta], names: list[str], out_meta: TensorMeta,
               block: int) -> tuple[list[str], ScratchAllocator, set[int]]:
    """The loop body: one numpy call per step, each writing into a scratch
    buffer (``t<i>``) or, for the last step, into the output block ``o``.
    Returns the lines, the scratch buffers used, and which of them are
    block-shaped (they are cut short for the last, partial block)."""
    n_in, names = program.n_inputs, list(names)
    last_use = {a: k for k, (_, args, _) in enumerate(program.steps) for a in args}
    scratch, buffer_of, lines, blocked = ScratchAllocator(), {}, [], set()
    for k, (op, args, _) in enumerate(program.steps):
        slot = n_in + k
        dying = [buffer_of[a] for a in args if a in buffer_of and last_use[a] == k]
        if k == len(program.steps) - 1:
            target = "o"
        else:
            meta = slots[slot]
            rows = spans_rows(meta, out_meta)
            shape = ((block,) + meta.shape[1:]) if rows else meta.shape
            buffer_of[slot] = scratch.take((shape, meta.dtype), dying)
            if rows:
                blocked.add(buffer_of[slot])
            target = f"t{buffer_of[slot]}"
            names.append(target)
        scratch.release([b for b in dying if b != buffer_of.get(slot)])
        call = TEMPLATES[op].format(*(names[a] for a in args), out=target)
        lines.append(f"{call:<44s}  # step {k}: {op}")
    return lines, scratch, blocked


def kernel_source(program, metas: tuple[TensorMeta, ...], name: str = "fused_kernel") -> str:
    """The Python source of ``program`` specialised to inputs ``metas``."""
    slots = step_metas(program, metas)
    out_meta = slots[-1]
    block = block_rows_for(out_meta)
    sliced = [spans_rows(m, out_meta) for m in metas]
    names = [f"b{i}" if s else f"in{i}" for i, s in enumerate(sliced)]
    body, scratch, blocked = emit_steps(program, slots, names, out_meta, block)
    params = ", ".join(f"in{i}" for i in range(program.n_inputs))
    lines = [f"def {name}(out, {params}):",
             f'    """{len(program.steps)} elementwise ops, {out_meta.dtype}'
             f'{list(out_meta.shape)}, in blocks of {block} row(s)."""']
    lines += [f"    t{b} = np.empty({shape}, {str(dtype)!r})  # scratch"
              for b, (shape, dtype) in enumerate(scratch.shapes)]
    if not out_meta.shape:
        lines += ["    o = out"] + [f"    {line}" for line in body] + ["    return out"]
        return "\n".join(lines) + "\n"
    rows = out_meta.shape[0]
    lines.append(f"    for start in range(0, {rows}, {block}):")
    lines.append(f"        stop = min(start + {block}, {rows})")
    if rows % block and blocked:
        lines.append(f"        if stop - start < {block}:  # the last block is shorter")
        lines += [f"            t{b} = t{b}[:stop - start]" for b in sorted(blocked)]
    lines += [f"        b{i} = in{i}[start:stop]" for i, s in enumerate(sliced) if s]
    lines.append("        o = out[start:stop]")
    lines += [f"        {line}" for line in body]
    lines.append("    return out")
    return "\n".join(lines) + "\n"


def numpy_kernel(program, metas: tuple[TensorMeta, ...]) -> GeneratedKernel:
    """Generate the numpy kernel of ``program`` and compile it with Python's ``compile``."""
    source = kernel_source(program, metas)
    filename = f"<generated kernel {abs(hash((program, metas))):x}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"np": np}
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102  (our own generated code)
    out_meta = step_metas(program, metas)[-1]
    return GeneratedKernel(source, namespace["fused_kernel"], out_meta, block_rows_for(out_meta))


@functools.lru_cache(maxsize=512)
def generate_kernel(program, metas: tuple[TensorMeta, ...],
                    language: str = "C") -> GeneratedKernel | CKernel | None:
    """The kernel of ``program`` for inputs ``metas``: in C when ``language``
    is ``"C"`` and :mod:`.ckernel` can build it, else generated numpy, else
    ``None`` when it cannot be generated (see :func:`why_not_generated`).
    Cached: a program seen again with the same input metas reuses its kernel."""
    if language not in LANGUAGES:
        raise ValueError(f"kernel language {language!r} is not one of {LANGUAGES}")
    if why_not_generated(program, metas) is not None:
        return None
    if language == "C" and (kernel := ckernel.build(program, step_metas(program, metas))):
        return kernel
    return numpy_kernel(program, metas)


def kernel_for(program, metas: tuple[TensorMeta, ...]) -> GeneratedKernel | CKernel | None:
    """:func:`generate_kernel` in the language chosen by :func:`kernels_in` (C by default)."""
    return generate_kernel(program, metas, KERNEL_LANGUAGE)


@contextlib.contextmanager
def kernels_in(language: str):
    """Within the block, fused programs run as ``language`` kernels (``"C"`` or
    ``"numpy"``), e.g. to time the numpy kernel against the C one."""
    if language not in LANGUAGES:
        raise ValueError(f"kernel language {language!r} is not one of {LANGUAGES}")
    global KERNEL_LANGUAGE
    saved, KERNEL_LANGUAGE = KERNEL_LANGUAGE, language
    try:
        yield
    finally:
        KERNEL_LANGUAGE = saved
