"""``check()`` warns, in a real kernel and before submission, about what grading will
charge an exercise cell for: a forbidden import anywhere in the cell, a top-level
loop, a top-level exit. It says so in the grader's words, and the grader says the
same words when the cell is graded."""

from __future__ import annotations

import copy
import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from autograder.cell_lint import cell_warnings, top_level_hazards
from autograder.grade import grade_notebook, prepare
from autograder.notebook import exercise_meta
from autograder.spec import load_lab

ROOT = Path(__file__).resolve().parents[2]
LAB = ROOT / "labs" / "lab2_autodiff"
SAMPLE = nbformat.read(LAB / "samples" / "full_marks.ipynb", as_version=4)
FORBID = ("torch",)
PREFIX = ("import torch  # to compare with my version\n"
          "n = 0\nwhile n < 3:\n    n += 1\n"
          "if n > 5:\n    import sys\n    sys.exit()\n\n")


def _with_prefix() -> nbformat.NotebookNode:
    nb = copy.deepcopy(SAMPLE)
    for cell in nb.cells:
        meta = exercise_meta(cell)
        if meta and meta["id"] == "unbroadcast":
            cell.source = PREFIX + cell.source
    return nb


def test_the_hazards_are_found_where_they_run_and_not_inside_functions():
    found = top_level_hazards(PREFIX + "def f():\n    while True:\n        exit()\n")
    assert found == [("loop", 3, "while"), ("exit", 7, "sys.exit")]


@pytest.mark.slow
def test_check_in_a_kernel_warns_in_the_graders_words(tmp_path):
    nb = _with_prefix()
    exercise = next(c for c in nb.cells if (exercise_meta(c) or {}).get("id") == "unbroadcast")
    expected = cell_warnings(exercise.source, FORBID, "en")
    assert len(expected) == 3 and "imports torch, which this exercise forbids" in expected[0]
    keep = nb.cells[:nb.cells.index(exercise) + 1]
    nb.cells = [c for c in keep if c.cell_type == "code"] + [nbformat.v4.new_code_cell(
        "from autograder.check import run_check\n"
        "print(run_check('unbroadcast', lab='lab2_autodiff', lang='en').to_text())")]
    NotebookClient(nb, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute(
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    shown = "".join(o.get("text", "") for o in nb.cells[-1].outputs)
    for warning in expected:
        assert f"! {warning}" in shown, shown


@pytest.mark.slow
def test_the_grader_says_the_same_words(tmp_path):
    path = tmp_path / "student.ipynb"
    nbformat.write(_with_prefix(), path)
    graded = {e.exercise: e for e in grade_notebook(prepare(load_lab(LAB)), path).exercises}
    exercise = next(c for c in _with_prefix().cells
                    if (exercise_meta(c) or {}).get("id") == "unbroadcast")
    forbidden_words = cell_warnings(exercise.source, FORBID, "en")[0]
    assert graded["unbroadcast"].score == 0
    assert forbidden_words in graded["unbroadcast"].message
