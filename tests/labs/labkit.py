"""Test helpers: run a lab's source solutions in-process and compare like the grader."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from autograder.notebook import exercise_cells, read_notebook, solution_only, support_sources
from autograder.spec import Exercise, load_lab

LABS_DIR = Path(__file__).resolve().parents[2] / "labs"
LAB_IDS = sorted(p.parent.name for p in LABS_DIR.glob("lab*/spec.py"))


def solution_namespace(lab_id: str) -> dict:
    """Support cells, then every exercise cell with its solution, executed in one dict."""
    nb = read_notebook(load_lab(lab_id).source)
    namespace: dict = {"__name__": f"{lab_id}_solutions"}
    for source in support_sources(nb):
        exec(compile(source, f"<{lab_id} support>", "exec"), namespace)
    for cell in exercise_cells(nb):
        exec(compile(solution_only(cell.source), f"<{lab_id} {cell.exercise_id}>", "exec"),
             namespace)
    return namespace


def plain(value):
    """Tuples as lists and numpy values as Python ones, the way they travel as JSON."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, np.generic):
        return value.item()
    return value


def _close(expected, got, rtol, atol, where="value"):
    if isinstance(expected, dict):
        if not isinstance(got, dict) or set(got) != set(expected):
            return False, f"{where}: keys {sorted(got) if isinstance(got, dict) else got!r}"
        for k in expected:
            ok, msg = _close(expected[k], got[k], rtol, atol, f"{where}[{k!r}]")
            if not ok:
                return ok, msg
        return True, "ok"
    if isinstance(expected, str | bool | type(None)):
        return expected == got, f"{where}: {got!r} != {expected!r}"
    if isinstance(expected, list) and not all(isinstance(e, int | float) for e in expected):
        if not isinstance(got, list) or len(got) != len(expected):
            return False, f"{where}: expected a list of {len(expected)} items, got {got!r}"
        for k, (e, g) in enumerate(zip(expected, got, strict=True)):
            ok, msg = _close(e, g, rtol, atol, f"{where}[{k}]")
            if not ok:
                return ok, msg
        return True, "ok"
    e = np.asarray(expected, dtype=np.float64)
    try:
        g = np.asarray(got, dtype=np.float64)
    except (TypeError, ValueError):
        return False, f"{where}: {got!r} is not numeric"
    if e.shape != g.shape:
        return False, f"{where}: shape {g.shape} != {e.shape}"
    ok = bool(np.allclose(g, e, rtol=rtol, atol=atol, equal_nan=True))
    return ok, f"{where}: {g} != {e}"


def compare(ex: Exercise, expected, got) -> tuple[bool, str]:
    if callable(ex.compare):
        return ex.compare(expected, got)
    if ex.compare == "equal":
        e, g = plain(expected), plain(got)
        return _close(e, g, 0.0, 0.0) if _has_arrays(e) else (e == g, f"{g!r} != {e!r}")
    if ex.compare == "set":
        e, g = plain(expected), plain(got)
        return (len(e) == len(g) and all(x in g for x in e)), f"{g!r} != {e!r} as sets"
    return _close(plain(expected), plain(got), ex.rtol, ex.atol)


def _has_arrays(value) -> bool:
    if isinstance(value, np.ndarray):
        return True
    if isinstance(value, dict):
        return any(_has_arrays(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_arrays(v) for v in value)
    return False


def isclose(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
