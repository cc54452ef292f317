"""Forward mode (前向模式): ``jvp(f, primals, tangents)``.

Forward mode carries, next to each value x, its tangent dx = dx/dt along one
input direction t. Each op turns input tangents into the output tangent with
its JVP rule (``rules.JVP``), *while* the forward pass runs: no graph is kept.
One pass gives J t, a column-space view of the Jacobian; the full gradient
of a scalar loss with n parameters takes n passes, where reverse mode takes
one. :func:`chapters.autodiff.cost.jvp_vs_vjp_cost` measures that.
"""

from __future__ import annotations

import numpy as np

from . import dtypes
from .grad_mode import no_grad
from .modes import OpObserver, not_observed, observing
from .rules import JVP
from .tensor import Tensor


class ForwardMode(OpObserver):
    """Watches the dispatch core during one ``jvp``: ``tangents`` maps
    ``id(tensor) -> (tensor, tangent)`` for every tensor of the run that has one
    (the tensor is kept so its id cannot be reused)."""

    def __init__(self, tangents: dict):
        self.tangents = tangents

    def op_ran(self, op: str, inputs: tuple, attrs: dict, result: Tensor) -> None:
        """Record the tangent of ``result``: the op's JVP rule applied to the
        tangents of its inputs (zero for an input without one)."""
        known = [self.tangents.get(id(x)) if isinstance(x, Tensor) else None for x in inputs]
        if all(k is None for k in known) or not dtypes.is_floating(result.data.dtype):
            return
        rule = JVP.get(op)
        if rule is None:
            raise NotImplementedError(
                f"jvp: op {op!r} has no forward-mode (JVP) rule; register one with "
                "chapters.autodiff.rules.jvp_rule.")
        primals, tangents = _primals_and_tangents(inputs, known)
        with not_observed(self), no_grad():  # the rule's own ops carry no tangents
            tangent = rule(primals, tangents, Tensor(result.data), **attrs)
            tangent = _fit_tangent(tangent, result)
        self.tangents[id(result)] = (result, tangent)


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
            tangents.append(k[1])
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


def jvp(f, primals, tangents):
    """``torch.func.jvp``: ``(f(*primals), J_f(primals) @ tangents)``."""
    primals = tuple(p if isinstance(p, Tensor) else Tensor(p) for p in primals)
    tangents = tuple(t if isinstance(t, Tensor) else Tensor(t) for t in tangents)
    if len(primals) != len(tangents):
        raise RuntimeError(f"jvp: got {len(primals)} primals but {len(tangents)} tangents")
    for p, t in zip(primals, tangents, strict=True):
        if p.data.shape != t.data.shape:
            raise RuntimeError(f"jvp: tangent of shape {list(t.shape)} does not match its primal "
                             f"of shape {list(p.shape)}")
    inputs = tuple(Tensor(p.data) for p in primals)
    mode = ForwardMode({id(x): (x, Tensor(t.data.astype(x.data.dtype, copy=False)))
                        for x, t in zip(inputs, tangents, strict=True)})
    with observing(mode, replacing=ForwardMode):  # an inner jvp takes over from an outer one
        out = f(*inputs)
    outs = out if isinstance(out, tuple) else (out,)
    tangent_outs = []
    for o in outs:
        entry = mode.tangents.get(id(o))
        tangent_outs.append(entry[1] if entry is not None
                            else Tensor(np.zeros(o.data.shape, dtype=o.data.dtype)))
    if isinstance(out, tuple):
        return out, tuple(tangent_outs)
    return out, tangent_outs[0]
