"""The derivative tables (导数规则表): op name -> rule.

``VJP[op](ctx, g)`` returns one gradient per positional input of ``op``
(``None`` where none is needed), given ``g``, the gradient of the loss with
respect to the op's output. ``ctx`` is the op's history node: ``ctx.saved``
are the tensors the op asked to keep (``SAVES[op]``: input indices and/or
``"out"``), ``ctx.attrs`` its attributes, ``ctx.needs_input_grad`` which
inputs want a gradient. Rules are written with Tensor ops, so running them
with grad mode on (``create_graph=True``) records *their* history and gives
higher-order gradients with no extra code. Gradients may come back
broadcast or in the op's compute dtype: the engine sums and casts each one
back to its input's shape and dtype in one place (:func:`engine.sum_to`).

``JVP[op](primals, tangents, out, **attrs)`` is forward mode: the tangent
of the output given the tangents of the inputs (``None`` for a zero tangent).

The rules themselves live next to the ops they differentiate
(:mod:`.derivatives`, :mod:`.nn_derivatives`); this module is only the tables.
"""

from __future__ import annotations

from collections.abc import Callable

VJP: dict[str, Callable] = {}
SAVES: dict[str, tuple] = {}
JVP: dict[str, Callable] = {}


def vjp_rule(op: str, saves: tuple = ()):
    """Register the reverse-mode rule of ``op``; ``saves`` names what forward keeps."""

    def decorate(fn):
        if op in VJP:
            raise ValueError(f"op {op!r} already has a VJP rule")
        VJP[op] = fn
        SAVES[op] = tuple(saves)
        return fn

    return decorate


def jvp_rule(op: str):
    """Register the forward-mode rule of ``op``."""

    def decorate(fn):
        if op in JVP:
            raise ValueError(f"op {op!r} already has a JVP rule")
        JVP[op] = fn
        return fn

    return decorate
