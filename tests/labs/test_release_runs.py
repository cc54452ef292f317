"""The released (student) notebook of each lab runs top to bottom: every stub's
NotImplementedError is caught and reported as "not attempted", never a crash."""

import contextlib
import io
import os

import pytest

from autograder.check import run_check_all
from autograder.release import release_notebook
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
