"""Test helpers: run a lab's source solutions in-process, compare as the grader does."""

from __future__ import annotations

from pathlib import Path

from autograder import codec
from autograder.compare import compare
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


def run_case(ex: Exercise, case, function) -> tuple[bool, str]:
    """Call ``function`` on the case's inputs and compare with the reference, both values
    sent through the grader's codec first (as they travel when grading)."""
    def trip(value):
        return codec.loads(codec.dumps(value))

    args, kwargs = trip((tuple(case.args), dict(case.kwargs)))
    expected = trip(ex.reference(*args, **kwargs))
    args, kwargs = trip((tuple(case.args), dict(case.kwargs)))
    got = trip(function(*args, **kwargs))
    result = compare(expected, got, ex.compare, ex.rtol, ex.atol)
    return result.ok, result.message
