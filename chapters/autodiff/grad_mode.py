"""Grad modes: whether ops record history (``no_grad``, ``enable_grad``).

Under ``no_grad`` an op computes its value and records nothing: no history
node, no saved tensors. Optimizer updates and evaluation run this way.

Grad mode is per thread, as in torch (it lives in :data:`.modes.MODES`): a
``no_grad`` block in one thread (a rank of the simulated world, DDP's
communication thread) leaves recording on in every other thread. Each new
thread starts enabled.
"""

from __future__ import annotations

import functools

from .modes import MODES


def is_grad_enabled() -> bool:
    return MODES.grad_enabled


class set_grad_enabled:
    """Context manager (and decorator) setting grad mode to ``mode``."""

    def __init__(self, mode: bool):
        self.mode = bool(mode)
        self.prev = MODES.grad_enabled
        MODES.grad_enabled = self.mode

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        MODES.grad_enabled = self.prev
        return False


class _Mode:
    mode = True

    def __enter__(self):
        self.prev = MODES.grad_enabled
        MODES.grad_enabled = self.mode
        return self

    def __exit__(self, *exc):
        MODES.grad_enabled = self.prev
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self._fresh():  # a new block per call: calls may nest or run in threads
                return fn(*args, **kwargs)

        return wrapper

    def _fresh(self) -> _Mode:
        return type(self)()


class no_grad(_Mode):
    """Ops inside record no history (``torch.no_grad``); also a decorator."""

    mode = False


class enable_grad(_Mode):
    """Turn recording back on inside a ``no_grad`` block (``torch.enable_grad``)."""

    mode = True


class inference_mode(_Mode):  # noqa: N801  (torch's name)
    """``torch.inference_mode``: ops inside record no history, as under
    ``no_grad``; a context manager and a decorator (with or without
    parentheses). ``inference_mode(False)`` turns recording on, as torch's
    does (like ``enable_grad``).

    Torch goes further: tensors made inside are *inference tensors*, which it
    refuses to use later in recorded computations or to update in place
    outside the mode (that lets it skip version counters too). This engine
    does not mark them: a tensor made inside behaves like one made under
    ``no_grad``, and no ``is_inference()`` exists to ask."""

    def __new__(cls, mode=True):
        if callable(mode):  # @inference_mode without parentheses
            return cls()(mode)
        return super().__new__(cls)

    def __init__(self, mode: bool = True):
        self.mode = not mode

    def _fresh(self) -> _Mode:
        return inference_mode(not self.mode)

