"""Mode state (模式状态), one record per thread: what the dispatch core consults.

Four modes change what an op does besides computing its value:

* **grad mode** — whether ops record history (``no_grad``, ``enable_grad``);
* **the autocast hook** — chapter 4's cast decision, seen before each public op;
* **anomaly detection** and **forward mode** — features that *observe* the
  core: each op's result, each recorded history node, each derivative rule
  that ran in backward is shown to the active observers (and an in-place
  write or a ``backward()`` call, which forward mode may refuse). Forward
  mode's levels are observers stacked in order, outermost first.

All of it lives in :data:`MODES`, a ``threading.local``: each thread starts with
recording on, no hook and no observers. So a simulated rank (a thread,
:mod:`chapters.distributed.sim`) that enters ``autocast`` or ``no_grad``
changes nothing for the rank running beside it. Grad mode and autocast are
per thread in torch too. Torch's anomaly mode and forward-AD level are
process-wide; here they are per thread as well, deliberately: one rank
debugging a NaN should neither slow down nor stop the other ranks.

This module imports nothing from the engine: the core reads it, the features
write it, and no import cycle can pass through it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


class OpObserver:
    """What a feature implements to watch the dispatch core; each method is
    called only while the observer is active in the calling thread."""

    def op_ran(self, op: str, inputs: tuple, attrs: dict, result) -> None:
        """After a forward op computed ``result`` from ``inputs``."""

    def node_recorded(self, node) -> None:
        """After the core attached history node ``node`` to an op's result."""

    def rule_ran(self, node, input_grads: tuple) -> None:
        """After backward applied ``node``'s VJP rule and got ``input_grads``."""

    def inplace_checked(self, op: str, x, other) -> None:
        """Before in-place op ``op`` writes into ``x`` (from ``other``); may refuse."""

    def backward_called(self) -> None:
        """Before ``backward()`` accumulates gradients into ``.grad``; may refuse."""


class _Modes(threading.local):
    """The calling thread's modes; a new thread gets these defaults."""

    def __init__(self):
        self.grad_enabled = True
        self.autocast_hook: Callable | None = None
        self.inside_public_op = False   # a public op runs: its internals skip the hook
        self.in_backward = False        # the engine is applying derivative rules
        self.observers: tuple[OpObserver, ...] = ()


MODES = _Modes()


class observing:
    """Context manager: ``observer`` watches the core in this thread for the block.

    ``replacing`` (a class): active observers of that class are set aside for
    the block, so an inner ``detect_anomaly`` takes over from an outer one and
    hands back on exit (forward-mode levels do not replace: they nest)."""

    __slots__ = ("observer", "replacing", "previous")

    def __init__(self, observer: OpObserver, replacing: type | None = None):
        self.observer, self.replacing, self.previous = observer, replacing, ()

    def __enter__(self) -> OpObserver:
        self.previous = MODES.observers
        kept = tuple(o for o in self.previous
                     if self.replacing is None or not isinstance(o, self.replacing))
        MODES.observers = kept + (self.observer,)
        return self.observer

    def __exit__(self, *exc) -> bool:
        MODES.observers = self.previous
        return False


class not_observed:
    """Context manager: ``observer`` is set aside for the block (its own work,
    e.g. a JVP rule's ops, must not be observed by itself)."""

    __slots__ = ("observer", "previous")

    def __init__(self, observer: OpObserver):
        self.observer, self.previous = observer, ()

    def __enter__(self) -> None:
        self.previous = MODES.observers
        MODES.observers = tuple(o for o in self.previous if o is not self.observer)

    def __exit__(self, *exc) -> bool:
        MODES.observers = self.previous
        return False
