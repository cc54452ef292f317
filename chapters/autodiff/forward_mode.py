"""Forward mode (前向模式) with levels: ``jvp`` and ``forward_ad``'s dual tensors.

Forward mode carries, next to each value x, its tangent dx = dx/dt along one
input direction t. Each op turns input tangents into the output tangent with
its JVP rule (``rules.JVP``), *while* the forward pass runs: no graph is kept.
One pass gives J t, a column-space view of the Jacobian; the full gradient
of a scalar loss with n parameters takes n passes, where reverse mode takes
one. :func:`chapters.autodiff.cost.jvp_vs_vjp_cost` measures that.

**Levels (层级).** Each ``dual_level`` (and each ``jvp``, which opens one) is a
:class:`ForwardMode` observer with a level number, 0 for the outermost; the
levels nest, as torch.func's transforms and Autodidax's interpreter stack do.
A tensor may carry one tangent per level. Level k's JVP rule is ordinary code
made of ops, and those ops are watched by the *outer* levels (< k) only, and
recorded by autograd when grad mode is on and an input requires grad. So a
tangent is itself differentiable:

* ``jvp`` of ``jvp``: the outer level differentiates the inner rule's ops;
* ``jvp`` of a gradient (forward-over-reverse, the Hessian-vector product
  H v in one forward and one backward pass): the backward pass's ops are
  ordinary ops, watched like any other;
* ``grad`` of a ``jvp`` output (reverse-over-forward): the rule's ops are in
  the history.

Deliberate difference from torch: ``torch.autograd.forward_ad.dual_level``
refuses to nest (only torch.func nests); here ``dual_level`` nests too.
What does not compose raises (an in-place write to a tensor with a tangent,
``backward()`` inside a level; :mod:`.autograd.function` for custom Functions).
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from . import dtypes
from .modes import MODES, OpObserver, observing
from .rules import JVP
from .tensor import Tensor, apply

UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])


class ForwardMode(OpObserver):
    """One level of forward mode: ``tangents`` maps ``id(tensor) -> (tensor,
    tangent)`` (the tensor is kept so its id cannot be reused); ``by_node``
    finds the tangent of an op's output again when backward unpacks it from
    the op's saved values as a new tensor object with the same ``grad_fn``."""

    def __init__(self, level: int):
        self.level = level
        self.tangents: dict = {}
        self.by_node: dict = {}

    def tangent_of(self, x) -> Tensor | None:
        """``x``'s tangent at this level, None if it has none."""
        entry = self.tangents.get(id(x))
        if entry is None and x.grad_fn is not None:
            entry = self.by_node.get(x.grad_fn)
            if entry is not None and entry[0].data is not x.data:
                entry = None
        return None if entry is None else entry[1]

    def set_tangent(self, x: Tensor, tangent: Tensor) -> None:
        self.tangents[id(x)] = (x, tangent)

    def op_ran(self, op: str, inputs: tuple, attrs: dict, result: Tensor) -> None:
        """Record the tangent of ``result``: the op's JVP rule applied to the
        tangents of its inputs (zero for an input without one)."""
        known = [self.tangent_of(x) if isinstance(x, Tensor) else None for x in inputs]
        if all(k is None for k in known) or not dtypes.is_floating(result.data.dtype):
            return
        rule = JVP.get(op)
        if rule is None:
            raise NotImplementedError(
                f"jvp: op {op!r} has no forward-mode (JVP) rule; register one with "
                "chapters.autodiff.rules.jvp_rule.")
        primals, tangents = _primals_and_tangents(inputs, known)
        with outer_levels_only(self):  # the rule's ops: seen by outer levels only
            tangent = _fit_tangent(rule(primals, tangents, result, **attrs), result)
        self.set_tangent(result, tangent)
        if result.grad_fn is not None:
            self.by_node[result.grad_fn] = (result, tangent)

    def inplace_checked(self, op: str, x, other) -> None:
        """Refuse an in-place write that involves a tensor with a tangent here:
        the write would not move the tangent, which would then be wrong."""
        for t in (x, other):
            if isinstance(t, Tensor) and self.tangent_of(t) is not None:
                raise RuntimeError(
                    f"{op}: an in-place op on (or from) a tensor that carries a forward-mode "
                    f"tangent (level {self.level}) is not supported: its tangent would not "
                    "follow the write. Use the out-of-place form (y = x.exp() instead of "
                    "x.exp_()).")

    def backward_called(self) -> None:
        """Refuse ``backward()`` here: ``.grad`` accumulates in place, where a
        tangent of the gradient cannot follow."""
        raise RuntimeError(
            f"backward() inside forward mode (level {self.level}) is not supported: the "
            "gradients it accumulates into .grad would carry no tangents. Take gradients with "
            "autograd.grad(..., create_graph=True) or func.grad inside jvp / dual_level "
            "instead.")


class outer_levels_only:
    """Context manager: for the block, the levels from ``mode``'s inward stop
    watching (other observers, such as anomaly detection, stay)."""

    __slots__ = ("level", "previous")

    def __init__(self, mode: ForwardMode):
        self.level, self.previous = mode.level, ()

    def __enter__(self) -> None:
        self.previous = MODES.observers
        MODES.observers = tuple(o for o in self.previous
                                if not (isinstance(o, ForwardMode) and o.level >= self.level))

    def __exit__(self, *exc) -> bool:
        MODES.observers = self.previous
        return False


def active_levels() -> list[ForwardMode]:
    """The forward-mode levels of this thread, outermost first."""
    return [o for o in MODES.observers if isinstance(o, ForwardMode)]


def is_constant_zero(tangent: Tensor) -> bool:
    """Whether ``tangent`` is zero and nothing differentiates it (no history, no
    tangent at an active level): a rule may then drop its term, as a term
    ``0 * log(a)`` would be nan for a < 0."""
    return (not tangent.requires_grad and not tangent.data.any()
            and all(m.tangent_of(tangent) is None for m in active_levels()))


def _primals_and_tangents(inputs: tuple, known: list) -> tuple[tuple, tuple]:
    """The op's inputs as tensors and their tangents: the recorded one, zeros for
    a floating input without one, None for an integer input or a missing one."""
    primals, tangents = [], []
    for x, k in zip(inputs, known, strict=True):
        if x is None:  # an optional input left out (a missing bias)
            primals.append(None)
            tangents.append(None)
            continue
        p = x if isinstance(x, Tensor) else Tensor(np.asarray(x))
        primals.append(p)
        if k is not None:
            tangents.append(k)
        elif dtypes.is_floating(p.data.dtype):
            tangents.append(Tensor(np.zeros(p.data.shape, dtype=p.data.dtype)))
        else:
            tangents.append(None)
    return tuple(primals), tuple(tangents)


def _fit_tangent(tangent: Tensor, result: Tensor) -> Tensor:
    """A rule's tangent in the dtype and shape of the op's result."""
    if tangent.data.dtype != result.data.dtype and dtypes.is_floating(result.data.dtype):
        tangent = tangent.to(result.data.dtype)
    if tangent.data.shape != result.data.shape:
        tangent = tangent.expand(result.data.shape)
    return tangent


# ---------------------------------------------- torch.autograd.forward_ad's names


class dual_level:
    """``torch.autograd.forward_ad.dual_level``: opens a forward-mode level for
    the block; ``with dual_level() as level`` gives its number. Tangents made
    with :func:`make_dual` in it live until the block ends."""

    def __init__(self):
        self._observing = None

    def __enter__(self) -> int:
        mode = ForwardMode(len(active_levels()))
        self._observing = observing(mode)
        self._observing.__enter__()
        return mode.level

    def __exit__(self, *exc) -> bool:
        self._observing.__exit__(*exc)
        self._observing = None
        return False


def _level(level: int | None, what: str) -> ForwardMode:
    levels = active_levels()
    if not levels:
        raise RuntimeError(f"{what} needs an active forward-mode level: call it inside "
                           "`with forward_ad.dual_level():` (or inside jvp).")
    if level is None:
        return levels[-1]
    for mode in levels:
        if mode.level == level:
            return mode
    raise RuntimeError(f"{what}: level {level} is not active (active levels: "
                       f"{[m.level for m in levels]}).")


def _alias(x: Tensor) -> Tensor:
    """A new tensor object for x's values, with x's history (an identity view)."""
    return apply("reshape", (x,), {"shape": x.data.shape})


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """``forward_ad.make_dual``: a view of ``tensor`` (same history, same
    tangents at the other levels) whose tangent at ``level`` (default: the
    innermost) is ``tangent``. The tangent is kept as it is, so an outer level
    or autograd can differentiate through it."""
    mode = _level(level, "make_dual")
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError(f"make_dual: tangent of shape {list(tangent.shape)} does not match "
                           f"its primal of shape {list(tensor.shape)}")
    if not dtypes.is_floating(tensor.data.dtype):
        raise ValueError(f"make_dual: expected a floating point primal, got "
                         f"{tensor.data.dtype}; convert it first, e.g. x.double().")
    dual = _alias(tensor)
    mode.set_tangent(dual, tangent if tangent.dtype == tensor.dtype else tangent.to(tensor.dtype))
    return dual


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """``forward_ad.unpack_dual``: ``(primal, tangent)`` at ``level``; the
    tangent is None where the tensor has none."""
    mode = _level(level, "unpack_dual")
    tangent = mode.tangent_of(tensor)
    with outer_levels_only(mode):
        primal = _alias(tensor)
    return UnpackedDualTensor(primal, tangent)


def jvp(f, primals, tangents):
    """``torch.func.jvp``: ``(f(*primals), J_f(primals) @ tangents)``, in a new level."""
    primals = tuple(p if isinstance(p, Tensor) else Tensor(p) for p in primals)
    tangents = tuple(t if isinstance(t, Tensor) else Tensor(t) for t in tangents)
    if len(primals) != len(tangents):
        raise RuntimeError(f"jvp: got {len(primals)} primals but {len(tangents)} tangents")
    for p, t in zip(primals, tangents, strict=True):
        if p.data.shape != t.data.shape:
            raise RuntimeError(f"jvp: tangent of shape {list(t.shape)} does not match its primal "
                               f"of shape {list(p.shape)}")
    with dual_level():
        out = f(*(make_dual(p, t) for p, t in zip(primals, tangents, strict=True)))
        outs = out if isinstance(out, tuple) else (out,)
        tangent_outs = []
        for o in outs:
            t = unpack_dual(o).tangent
            tangent_outs.append(t if t is not None
                                else Tensor(np.zeros(o.data.shape, dtype=o.data.dtype)))
    if isinstance(out, tuple):
        return out, tuple(tangent_outs)
    return out, tangent_outs[0]
