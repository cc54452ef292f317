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

import os
import sys

import numpy as np

from .tensor import ANOMALY

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def creation_site() -> str:
    """``file:line in function: source`` of the innermost frame outside this engine."""
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(
            _PACKAGE_DIR):
        frame = frame.f_back
    if frame is None:
        return "<unknown>"
    import linecache

    code = linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip()
    return f"{frame.f_code.co_filename}:{frame.f_lineno} in {frame.f_code.co_name}: {code}"


def _bad(array: np.ndarray) -> str | None:
    if array.dtype.kind not in "fV" or array.dtype.kind == "V" and array.dtype.itemsize != 2:
        return None
    values = array.astype(np.float32) if array.dtype.itemsize == 2 else array
    if np.isnan(values).any():
        return "nan"
    if np.isinf(values).any():
        return "inf"
    return None


def check_forward(op: str, result) -> None:
    if not ANOMALY.check_forward:
        return
    bad = _bad(result.data)
    if bad:
        raise RuntimeError(
            f"anomaly detected: op {op!r} produced {bad} values in its forward output "
            f"(shape {list(result.shape)}), created at {creation_site()}.")


def check_backward(node, input_grads) -> None:
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
    """Context manager: record creation sites and stop at the first NaN/inf."""

    def __init__(self, check_forward: bool = True):
        self.check_forward = check_forward

    def __enter__(self):
        self.prev = (ANOMALY.enabled, ANOMALY.check_forward)
        ANOMALY.enabled, ANOMALY.check_forward = True, self.check_forward
        return self

    def __exit__(self, *exc):
        ANOMALY.enabled, ANOMALY.check_forward = self.prev
        return False
