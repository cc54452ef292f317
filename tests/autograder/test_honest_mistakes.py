"""Honest mistakes in real lab 2 notebooks cost only the exercise whose cell holds
them and the exercises that call it, and the callers' feedback names that cell.

In lab 2, vjp_mul, vjp_div and vjp_matmul call unbroadcast; vjp_softmax, backward
and accumulate_gradients call nothing of another exercise. Each mistake is put
into unbroadcast's cell of the full-marks sample, graded in the real sandbox."""

from __future__ import annotations

import copy
from pathlib import Path

import nbformat
import pytest

from autograder.grade import grade_batch, prepare
from autograder.gradebook import Gradebook
from autograder.notebook import exercise_meta
from autograder.spec import load_lab

LAB = Path(__file__).resolve().parents[2] / "labs" / "lab2_autodiff"
FULL = nbformat.read(LAB / "samples" / "full_marks.ipynb", as_version=4)
BROKEN = "unbroadcast"
CALLERS = {"vjp_mul", "vjp_div", "vjp_matmul"}

MISTAKES = {
    "import torch at the top": ("import torch  # to compare with my version\n{cell}",
                                ("'torch'",)),
    "sys.exit() at the top": ("import sys\nsys.exit()\n{cell}", ("SystemExit",)),
    # the supervisor sees the pipes close or the process end first, whichever comes first
    "os._exit at the end": ("{cell}\nimport os\nos._exit(0)\n",
                            ("ended the process", "closed the grader's channel")),
    "a leftover loop at the end": ("{cell}\nwhile True:\n    pass\n",
                                   ("did not finish in time",)),
    "a crash in a helper": ("def _my_test():\n    return [][1]\n\n_my_test()\n{cell}",
                            ("IndexError",)),
}


def _with_mistake(template: str, path: Path) -> Path:
    nb = copy.deepcopy(FULL)
    for cell in nb.cells:
        meta = exercise_meta(cell)
        if meta and meta["id"] == BROKEN:
            cell.source = template.format(cell=cell.source)
    nbformat.write(nb, path)
    return path


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> dict[str, dict]:
    """Every mistake's notebook and the unchanged one, graded in one batch of 2 workers:
    ``{name: {exercise: ExerciseGrade}}``."""
    folder = tmp_path_factory.mktemp("mistakes")
    names = {f"s{k}": name for k, name in enumerate(["unchanged", *MISTAKES])}
    for stem, name in names.items():
        _with_mistake(MISTAKES[name][0] if name in MISTAKES else "{cell}", folder / f"{stem}.ipynb")
    with Gradebook(folder / "book.sqlite3") as book:
        summary = grade_batch(prepare(load_lab(LAB)), sorted(folder.glob("*.ipynb")), book,
                              jobs=2, progress=False)
    return {names[g.student]: {e.exercise: e for e in g.exercises} for g in summary.grades}


def test_the_unchanged_sample_scores_full_marks(graded):
    assert all(e.score == pytest.approx(e.max_score) for e in graded["unchanged"].values())


@pytest.mark.slow
@pytest.mark.parametrize("mistake", MISTAKES)
def test_a_mistake_costs_its_exercise_and_its_callers_only(mistake, graded):
    why = MISTAKES[mistake][1]
    grades, full = graded[mistake], graded["unchanged"]
    assert grades[BROKEN].score == 0, grades[BROKEN]
    for name, grade in grades.items():
        if name in CALLERS:
            assert grade.score == 0, (name, grade.message)
            assert f"the cell of exercise '{BROKEN}'" in grade.message, grade.message
            assert any(w in grade.message for w in why), grade.message
            assert "this exercise calls its unbroadcast" in grade.message
        elif name != BROKEN:
            assert grade.score == pytest.approx(full[name].max_score), (name, grade.message)
            assert "forbids" not in grade.message and BROKEN not in grade.message
