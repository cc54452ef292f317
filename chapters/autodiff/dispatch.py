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

from .modes import MODES


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


def public(name: str):
    """Decorator: mark ``fn`` as the public op ``name`` for the autocast hook."""

    def decorate(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
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
