"""The released (student) notebook of each lab runs top to bottom: every stub's
NotImplementedError is caught and reported as "not attempted", never a crash."""

import contextlib
import io
import os

import pytest

from autograder.check import run_check_all
from autograder.release import INSTRUCTOR_TAG, read_source, release_notebook
from autograder.spec import load_lab

from .labkit import LAB_IDS


@pytest.mark.parametrize("lab_id", LAB_IDS)
def test_release_runs_top_to_bottom(lab_id, monkeypatch):
    lab = load_lab(lab_id)
    monkeypatch.chdir(lab.source.parent)
    namespace = {"__name__": "__main__"}
    with contextlib.redirect_stdout(io.StringIO()):
        for k, cell in enumerate(release_notebook(lab).cells):
            if cell.cell_type == "code":
                exec(compile(cell.source, f"<{lab_id} cell {k}>", "exec"), namespace)
        reports = run_check_all(lab=lab_id, namespace=namespace)
    assert os.getcwd() == str(lab.source.parent)
    assert [r.exercise.id for r in reports] == [ex.id for ex in lab.exercises]
    assert all(r.status == "not_attempted" for r in reports), [(r.exercise.id, r.status)
                                                                for r in reports]


@pytest.mark.parametrize("language", ["en", "zh"])
@pytest.mark.parametrize("lab_id", LAB_IDS)
def test_the_source_says_it_holds_the_solutions_and_the_release_drops_that(lab_id, language):
    """A learner who opens a lab's source notebook reads first that it is the
    instructor's, with the solutions, and how to get the learner's edition."""
    lab = load_lab(lab_id)
    source = read_source(lab, language)
    first = source.cells[0]
    assert INSTRUCTOR_TAG in first.metadata.get("tags", [])
    command = f"python -m autograder release {lab_id}" + (" --lang zh" if language == "zh" else "")
    assert command in first.source
    released = release_notebook(lab, language)
    assert all(INSTRUCTOR_TAG not in c.metadata.get("tags", []) for c in released.cells)
    assert released.cells[0].source == source.cells[1].source
