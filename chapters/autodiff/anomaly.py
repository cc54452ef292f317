"""Anomaly detection (异常检测): name the first op that made a NaN or inf.

Inside ``with detect_anomaly():`` every op records *where in your code* it was
created, and the engine checks each result: a forward op whose output holds
NaN/inf, or a derivative rule returning NaN/inf, raises at once with the op's
name and creation site, instead of letting the NaN spread to the weights. It
costs a stack walk per op, so it is a debugging mode (as in PyTorch, whose
``torch.autograd.detect_anomaly`` checks backward only; here the forward
check can be turned off with ``check_forward=False``). Both raise
``RuntimeError``, as torch does.
"""

from __future__ import annotations

import linecache
import os
import sys

import numpy as np

from .modes import MODES, OpObserver, observing

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def creation_site() -> str:
    """``file:line in function: source`` of the innermost frame outside this engine."""
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(
            _PACKAGE_DIR):
        frame = frame.f_back
    if frame is None:
        return "<unknown>"
    code = linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip()
    return f"{frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_name}: {code}"


def _bad(array: np.ndarray) -> str | None:
    """``"nan"`` or ``"inf"`` if a floating ``array`` holds one, else None."""
    if array.dtype.kind not in "fV" or array.dtype.kind == "V" and array.dtype.itemsize != 2:
        return None
    values = array.astype(np.float32) if array.dtype.itemsize == 2 else array
    if np.isnan(values).any():
        return "nan"
    if np.isinf(values).any():
        return "inf"
    return None


class AnomalyObserver(OpObserver):
    """Watches the dispatch core: records creation sites, checks every result."""

    def __init__(self, check_forward: bool = True):
        self.check_forward = check_forward

    def node_recorded(self, node) -> None:
        node.site = creation_site()

    def op_ran(self, op: str, inputs: tuple, attrs: dict, result) -> None:
        """Forward check; ops that backward itself runs are checked as rules instead."""
        if not self.check_forward or MODES.in_backward:
            return
        bad = _bad(result.data)
        if bad:
            raise RuntimeError(
                f"anomaly detected: op {op!r} produced {bad} values in its forward output "
                f"(shape {list(result.shape)}), created at {creation_site()}.")

    def rule_ran(self, node, input_grads: tuple) -> None:
        for i, g in enumerate(input_grads):
            if g is None:
                continue
            bad = _bad(g.data)
            if bad:
                raise RuntimeError(
                    f"anomaly detected: function '{node.name}' returned {bad} values in its "
                    f"{i}th output (the gradient for input {i}). The op was created at "
                    f"{node.site or '<site not recorded: it was created outside detect_anomaly>'}.")


class detect_anomaly:
    """Context manager: record creation sites and stop at the first NaN/inf.

    It acts in the calling thread only; torch's anomaly mode is process-wide
    (see :mod:`.modes` for why the engine differs)."""

    def __init__(self, check_forward: bool = True):
        self.check_forward = check_forward
        self._observing = None

    def __enter__(self):
        self._observing = observing(AnomalyObserver(self.check_forward),
                                    replacing=AnomalyObserver)
        self._observing.__enter__()
        return self

    def __exit__(self, *exc):
        self._observing.__exit__(*exc)
        self._observing = None
        return False
