"""The one door every public op goes through, and the autocast hook on it.

Chapter 4 (mixed precision, 混合精度) needs to see each op a user calls
*before* it runs, to cast its inputs (matmul to float16, softmax to
float32, ...). :func:`public` wraps every Tensor method, operator and
``functional`` function: when a hook is set, ``hook(op_name, args)`` receives
PyTorch's name for the op and its positional arguments and returns them
(possibly cast). It runs once per public call: composite ops such as
``F.linear`` run their internals with the hook suppressed, and so does
backward (as in torch, backward ops run in the dtypes forward chose).

Like torch, every public op accepts numpy's ``axis=`` as an alias of ``dim=``.

A public op's *autocast category* per device is a fact of its registration:
``public("matmul", autocast={"cpu": LOWER_PRECISION, "cuda": LOWER_PRECISION})``
(torch's "Autocast Op Reference", checked against what ``torch.autocast``
does). :data:`AUTOCAST` collects them and :data:`PUBLIC_OPS` names every
public op and the module defining it; chapter 4's policy tables
(:mod:`chapters.amp.policies`) add torch's rows for the ops this engine does
not define. An op with no category runs unchanged.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from .modes import MODES

#: autocast categories: cast floating inputs to the low-precision dtype, to
#: float32, or to the widest floating dtype among them
LOWER_PRECISION, FLOAT32, PROMOTE = "lower_precision", "float32", "promote"
#: public op name -> {device type: autocast category}, from the registrations
AUTOCAST: dict[str, dict[str, str]] = {}
#: public op name -> the module that defines it (the engine's, or a learner's)
PUBLIC_OPS: dict[str, str] = {}


def set_autocast_hook(hook: Callable | None) -> None:
    """Install ``hook(op_name, args) -> args`` in this thread (``None`` removes it).

    The hook is per thread, as torch's autocast state: a thread that enters
    ``autocast`` leaves every other thread's ops in their own dtypes."""
    MODES.autocast_hook = hook


def get_autocast_hook() -> Callable | None:
    return MODES.autocast_hook


class suppress_hook:
    """Run a block without the hook (composite internals, backward)."""

    __slots__ = ("prev",)

    def __enter__(self):
        self.prev = MODES.inside_public_op
        MODES.inside_public_op = True

    def __exit__(self, *exc):
        MODES.inside_public_op = self.prev
        return False


def public(name: str, autocast: dict[str, str] | None = None):
    """Decorator: mark ``fn`` as the public op ``name`` for the autocast hook;
    ``autocast`` gives its category per device type (given once per name)."""
    if autocast:
        _declare_autocast(name, autocast)

    def decorate(fn):
        PUBLIC_OPS.setdefault(name, fn.__module__)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if kwargs and "axis" in kwargs:  # torch's alias for dim, wherever an op takes dim
                kwargs["dim"] = kwargs.pop("axis")
            modes = MODES
            hook = modes.autocast_hook
            if hook is None or modes.inside_public_op:
                return fn(*args, **kwargs)
            modes.inside_public_op = True  # the hook's own casts are not public calls
            try:
                args = tuple(hook(name, args))
                return fn(*args, **kwargs)
            finally:
                modes.inside_public_op = False

        wrapper.op_name = name
        return wrapper

    return decorate


def _declare_autocast(name: str, categories: dict[str, str]) -> None:
    unknown = set(categories.values()) - {LOWER_PRECISION, FLOAT32, PROMOTE}
    if unknown:
        raise ValueError(f"public({name!r}): unknown autocast categories {sorted(unknown)}; "
                         f"use {LOWER_PRECISION!r}, {FLOAT32!r} or {PROMOTE!r}")
    if name in AUTOCAST and AUTOCAST[name] != categories:
        raise ValueError(f"public({name!r}): autocast categories {AUTOCAST[name]} were already "
                         f"declared; declare them once, where the op is defined")
    AUTOCAST[name] = dict(categories)
