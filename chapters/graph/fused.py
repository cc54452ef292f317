"""The ``fused`` op: a chain of elementwise ops run as one kernel (算子融合).

Run one by one, ``0.5 * x * (1 + tanh(...))`` makes numpy walk the whole
tensor once per op and allocate a full-size temporary for each. A fused node
holds the little program instead, and runs the *whole* program on one block
of rows at a time: the temporaries are block-sized, stay in cache, and the
result is written once. That is what a fusing compiler's generated loop does
(one read of the inputs, one write of the output).

Two ways run a program. Normally :mod:`.codegen` has generated one function
for it (a compiled C loop, or numpy calls with ``out=`` buffers over blocks
of rows), and :func:`run_fused_into` calls that. Programs with an op or a dtype the
generator does not handle run in :func:`run_blocked`, an interpreter over the
same blocks that calls each op's own kernel.

A :class:`FusedProgram` is a list of steps ``(op, argument slots, attrs)``.
Slots ``0 .. n_inputs-1`` are the fused node's inputs; slot ``n_inputs + k``
is the result of step ``k``; the last step is the output. Elementwise ops
broadcast, so the output shape is the broadcast of the input shapes.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from . import codegen
from .ops import TensorMeta, get_op, register_op


@dataclass(frozen=True)
class FusedProgram:
    n_inputs: int
    steps: tuple[tuple[str, tuple[int, ...], tuple], ...]

    @functools.cached_property
    def kernels(self) -> list[tuple]:
        """Per step: the kernel, its argument slots, its attrs, and the
        temporaries whose last use it is (so they can be dropped after it)."""
        last = {a: k for k, (_, args, _) in enumerate(self.steps) for a in args}
        return [(get_op(op).kernel, args, dict(attrs),
                 [a for a in set(args) if last[a] == k and a >= self.n_inputs])
                for k, (op, args, attrs) in enumerate(self.steps)]

    @property
    def ops(self) -> list[str]:
        return [op for op, _, _ in self.steps]

    def expression(self, names: list[str] | None = None) -> str:
        """The program as one formula, e.g. ``tanh(mul(a, b))``."""
        exprs = list(names or [f"in{i}" for i in range(self.n_inputs)])
        for op, slots, attrs in self.steps:
            args = [exprs[s] for s in slots] + [f"{k}={v!r}" for k, v in attrs]
            exprs.append(f"{op}({', '.join(args)})")
        return exprs[-1]

    def __repr__(self) -> str:
        return f"<{len(self.steps)} ops: {', '.join(self.ops)}>"


def _fused_meta(*metas: TensorMeta, program: FusedProgram) -> TensorMeta:
    return codegen.step_metas(program, metas)[-1]


# numpy ufuncs that compute an op straight into a given buffer (``out=``)
UFUNCS = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "pow": np.power,
          "maximum": np.maximum, "minimum": np.minimum, "neg": np.negative, "exp": np.exp,
          "log": np.log, "sqrt": np.sqrt, "abs": np.abs, "tanh": np.tanh, "div": np.true_divide,
          "eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
          "gt": np.greater, "ge": np.greater_equal}


def run_program(program: FusedProgram, arrays, out: np.ndarray) -> np.ndarray:
    """Run the steps on whole arrays with each op's own kernel, dropping each
    temporary after its last use; the last step writes into ``out``."""
    slots = list(arrays)
    *body, (op, args, attrs, _) = program.kernels
    for kernel, step_args, step_attrs, done in body:
        slots.append(kernel(*[slots[a] for a in step_args], **step_attrs))
        for a in done:
            slots[a] = None
    inputs = [slots[a] for a in args]
    if program.steps[-1][0] in UFUNCS and all(np.result_type(i).kind == "f" for i in inputs):
        UFUNCS[program.steps[-1][0]](*inputs, out=out)
    else:
        out[...] = op(*inputs, **attrs)
    return out


def run_fused_into(out: np.ndarray, arrays, program: FusedProgram) -> np.ndarray:
    """Compute the program into ``out``: with its generated kernel when
    :mod:`.codegen` could generate one, else with :func:`run_blocked`."""
    kernel = codegen.kernel_for(program, tuple(TensorMeta.of(a) for a in arrays))
    if kernel is None:
        return run_blocked(out, arrays, program)
    return kernel(out, *arrays)


def run_blocked(out: np.ndarray, arrays, program: FusedProgram) -> np.ndarray:
    """Interpret the program block by block of rows, writing each block of the
    result into ``out``. Inputs that span the rows are sliced with the block;
    broadcast ones (fewer dimensions, or one row) are passed whole."""
    if out.ndim == 0 or out.shape[0] == 1:
        run_program(program, arrays, out)
        return out
    rows = out.shape[0]
    row_size = max(1, out.size // rows)
    block = max(1, codegen.BLOCK_ELEMENTS // row_size)
    sliced = [a.ndim == out.ndim and a.shape[0] == rows for a in arrays]
    for start in range(0, rows, block):
        stop = min(start + block, rows)
        args = [a[start:stop] if s else a for a, s in zip(arrays, sliced, strict=True)]
        run_program(program, args, out[start:stop])
    return out


@register_op("fused", _fused_meta)
def fused(*arrays, program: FusedProgram):
    """Run a fused elementwise program (see the module docstring)."""
    metas = tuple(TensorMeta.of(a) for a in arrays)
    kernel = codegen.kernel_for(program, metas)
    if kernel is None:
        meta = _fused_meta(*metas, program=program)
        return run_blocked(np.empty(meta.shape, meta.dtype), arrays, program)
    return kernel(np.empty(kernel.out_meta.shape, kernel.out_meta.dtype), *arrays)
