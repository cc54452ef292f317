"""The one door every public op goes through, and the autocast hook on it.

Chapter 4 (mixed precision, 混合精度) needs to see each op a user calls
*before* it runs, to cast its inputs (matmul to float16, softmax to
float32, ...). :func:`public` wraps every Tensor method, operator and
``functional`` function: when a hook is set, ``hook(op_name, args)`` receives
PyTorch's name for the op and its positional arguments and returns them
(possibly cast). It runs once per public call: composite ops such as
``F.linear`` run their internals with the hook suppressed, and so does
backward (as in torch, backward ops run in the dtypes forward chose).
"""

from __future__ import annotations

import functools
from collections.abc import Callable


class _DispatchState:
    __slots__ = ("hook", "inside")

    def __init__(self):
        self.hook: Callable | None = None
        self.inside = False


STATE = _DispatchState()


def set_autocast_hook(hook: Callable | None) -> None:
    """Install ``hook(op_name, args) -> args`` (``None`` removes it)."""
    STATE.hook = hook


def get_autocast_hook() -> Callable | None:
    return STATE.hook


class suppress_hook:
    """Run a block without the hook (composite internals, backward)."""

    __slots__ = ("prev",)

    def __enter__(self):
        self.prev = STATE.inside
        STATE.inside = True

    def __exit__(self, *exc):
        STATE.inside = self.prev
        return False


def public(name: str):
    """Decorator: mark ``fn`` as the public op ``name`` for the autocast hook."""

    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            hook = STATE.hook
            if hook is None or STATE.inside:
                return fn(*args, **kwargs)
            STATE.inside = True  # the hook's own casts are not public calls
            try:
                args = tuple(hook(name, args))
                return fn(*args, **kwargs)
            finally:
                STATE.inside = False

        wrapper.op_name = name
        return wrapper

    return decorate
