"""Chapter 2's op registration (算子注册): what autograd knows about each op.

Chapter 1's registry (:mod:`chapters.graph.ops`) gives an op its name, numpy
kernel and shape/dtype rule. Chapter 2 adds one :class:`OpInfo` per op, made
by :func:`register` in the op family's module (:mod:`.ops`), next to the
kernel and the rules it names:

* ``vjp(ctx, g)`` returns one gradient per positional input of the op
  (``None`` where none is needed), given ``g``, the gradient of the loss with
  respect to the op's output. ``ctx`` is the op's history node: ``ctx.saved``
  are the tensors the op asked to keep (``saves``: input indices and/or
  ``"out"``), ``ctx.attrs`` its attributes, ``ctx.needs_input_grad`` which
  inputs want a gradient. Rules are written with Tensor ops, so running them
  with grad mode on (``create_graph=True``) records *their* history and gives
  higher-order gradients with no extra code. Gradients may come back
  broadcast or in the op's compute dtype: the engine sums and casts each one
  back to its input's shape and dtype in one place (:func:`.engine.sum_to`).
* ``vjp_fast(ctx, g)`` (optional) is the same rule on numpy arrays: ``g`` is
  the output gradient's array, ``ctx.saved_arrays`` the saved values as
  arrays, and it returns one array (or ``None``) per input, equal in value and
  dtype to what ``vjp`` returns, or ``None`` alone to leave a call to ``vjp``
  (a dtype it does not handle: :data:`FULL_PRECISION`). A fused numpy expression allocates once
  where the Tensor rule runs (and allocates for) every op of the formula. The
  engine uses it only when nothing needs the Tensor path: no graph of the
  backward to record (``create_graph=False``) and no observer watching the
  rules (anomaly detection, forward mode). ``vjp`` stays the rule that
  defines the derivative; tests check ``vjp_fast`` against it, and the
  engine runs ``vjp_fast`` only while ``VJP[op]`` is still that rule (a rule
  replaced by a learner's own, or broken on purpose by a test, runs itself).
* ``jvp(primals, tangents, out, **attrs)`` is forward mode: the tangent of the
  output given the tangents of the inputs (``None`` for a zero tangent).
* facts the dispatch core reads: ``view`` (the result may share memory with
  input 0, and then shares its version counter), ``movement`` (the op only
  moves, selects or compares values, so float16/bfloat16 inputs run as they
  are; every other op computes them in float32 and rounds the result), and
  torch's ``grad_fn`` name, with ``grad_fn_variant`` for ops whose name
  depends on the call (``x.sum(0)`` is ``SumBackward1``, ``x.sum()``
  ``SumBackward0``).

Two more per-op facts sit at the op's other registrations: its autocast
category at its public op (``public("bmm", autocast={...})``,
:mod:`.dispatch`), its torch.fx node targets at chapter 1's
``register_op(..., fx_targets=...)``.

``VJP``, ``VJP_FAST``, ``JVP`` and ``SAVES`` are the same rules as plain tables, op name ->
entry: the engine and forward mode look rules up there.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

VJP: dict[str, Callable] = {}
#: the dtypes in which a ``vjp_fast`` form that reorders allocations or fuses
#: reductions still rounds as its Tensor rule does (float16/bfloat16 rules round
#: after every op, and reduce in float32: such forms leave those to the rule)
FULL_PRECISION = (np.dtype(np.float32), np.dtype(np.float64))
#: op -> (the vjp it agrees with, vjp_fast)
VJP_FAST: dict[str, tuple[Callable, Callable]] = {}
SAVES: dict[str, tuple] = {}
JVP: dict[str, Callable] = {}


@dataclass(frozen=True)
class OpInfo:
    """Chapter 2's facts about one op (see the module docstring)."""

    name: str
    vjp: Callable | None = None
    jvp: Callable | None = None
    saves: tuple = ()
    view: bool = False
    movement: bool = False
    grad_fn: str = ""
    grad_fn_variant: Callable | None = None
    grad_fn_variants: Mapping = field(default_factory=dict)
    module: str = ""
    vjp_fast: Callable | None = None

    def backward_name(self, attrs: dict, input_meta: tuple, out_ndim: int) -> str:
        """torch's grad_fn name for one call: ``grad_fn_variant(attrs, input_meta,
        out_ndim)`` picks an entry of ``grad_fn_variants``, else ``grad_fn``."""
        if self.grad_fn_variant is not None:
            variant = self.grad_fn_variant(attrs, input_meta, out_ndim)
            if variant in self.grad_fn_variants:
                return self.grad_fn_variants[variant]
        return self.grad_fn


OPS: dict[str, OpInfo] = {}


def default_grad_fn(op: str) -> str:
    """torch's usual backward name: ``"log_softmax"`` -> ``"LogSoftmaxBackward0"``."""
    return "".join(part.capitalize() for part in re.split(r"_+", op) if part) + "Backward0"


def register(op: str, *, vjp: Callable | None = None, jvp: Callable | None = None,
             saves: tuple = (), view: bool = False, movement: bool = False,
             grad_fn: str | None = None, grad_fn_variant: Callable | None = None,
             grad_fn_variants: Mapping | None = None,
             vjp_fast: Callable | None = None) -> OpInfo:
    """Give op ``op`` (already in chapter 1's registry) its chapter 2 entry."""
    if op in OPS:
        raise ValueError(f"op {op!r} already has a chapter 2 registration (in "
                         f"{OPS[op].module}); register each op once")
    info = OpInfo(op, vjp, jvp, tuple(saves), view, movement, grad_fn or default_grad_fn(op),
                  grad_fn_variant, dict(grad_fn_variants or {}),
                  sys._getframe(1).f_globals.get("__name__", ""), vjp_fast)
    if vjp_fast is not None and vjp is None:
        raise ValueError(f"op {op!r}: vjp_fast is a faster form of vjp; register vjp too, "
                         "the rule it must agree with")
    OPS[op] = info
    if vjp is not None:
        VJP[op], SAVES[op] = vjp, info.saves
    if vjp_fast is not None:
        VJP_FAST[op] = vjp, vjp_fast
    if jvp is not None:
        JVP[op] = jvp
    return info


def info(op: str) -> OpInfo:
    """The op's entry; an op registered only in chapter 1 gets the defaults
    (computes, not a view, no rules)."""
    return OPS.get(op) or OpInfo(op, grad_fn=default_grad_fn(op))


def vjp_rule(op: str, saves: tuple = ()):
    """Decorator: add a reverse-mode rule to ``op`` (for ops defined outside
    :mod:`.ops`, e.g. a learner's custom op); ``saves`` names what forward keeps."""

    def decorate(fn):
        if op in VJP:
            raise ValueError(f"op {op!r} already has a VJP rule")
        VJP[op], SAVES[op] = fn, tuple(saves)
        return fn

    return decorate


def jvp_rule(op: str):
    """Decorator: add a forward-mode rule to ``op`` (see :func:`vjp_rule`)."""

    def decorate(fn):
        if op in JVP:
            raise ValueError(f"op {op!r} already has a JVP rule")
        JVP[op] = fn
        return fn

    return decorate
