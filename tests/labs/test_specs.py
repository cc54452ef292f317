"""Every lab's spec is consistent with its source notebook, and the source's
solutions pass every case (public and hidden) against the trusted reference."""

import re

import pytest

from autograder.notebook import exercise_points, read_notebook
from autograder.spec import load_lab

from .labkit import LAB_IDS, run_case, solution_namespace


def test_all_four_labs_exist():
    assert LAB_IDS == ["lab1_graph", "lab2_autodiff", "lab3_distributed", "lab4_amp"]


@pytest.mark.parametrize("lab_id", LAB_IDS)
def test_spec_matches_source_notebook(lab_id):
    lab = load_lab(lab_id)
    lab.validate()
    assert lab.id == lab_id
    points = exercise_points(read_notebook(lab.source))
    assert [ex.id for ex in lab.exercises] == list(points), "same exercises, same order"
    assert len(lab.exercises) >= 5
    assert all(p > 0 for p in points.values())
    for ex in lab.exercises:
        assert ex.hidden_cases, f"{ex.id} has no hidden case"


def _cases():
    for lab_id in LAB_IDS:
        for ex in load_lab(lab_id).exercises:
            for case in ex.cases:
                yield pytest.param(lab_id, ex.id, case.name, id=f"{lab_id}-{ex.id}-{case.name}")


_namespaces: dict = {}


@pytest.mark.parametrize(("lab_id", "exercise_id", "case_name"), list(_cases()))
def test_source_solution_passes_case(lab_id, exercise_id, case_name):
    if lab_id not in _namespaces:
        _namespaces[lab_id] = solution_namespace(lab_id)
    ex = load_lab(lab_id).exercise(exercise_id)
    case = next(c for c in ex.cases if c.name == case_name)
    ok, message = run_case(ex, case, _namespaces[lab_id][ex.function])
    assert ok, message


@pytest.mark.parametrize("lab_id", LAB_IDS)
def test_readme_lists_every_exercise_with_its_points(lab_id):
    lab = load_lab(lab_id)
    readme = (lab.source.parent / "README.md").read_text()
    points = exercise_points(read_notebook(lab.source))
    for ex in lab.exercises:
        row = next(line for line in readme.splitlines() if line.startswith(f"| `{ex.id}` |"))
        cells = [c.strip() for c in row.split("|")]
        assert cells[2] == f"`{ex.function}`" and float(cells[3]) == points[ex.id]
        assert cells[4] == f"{len(ex.public_cases)} / {len(ex.hidden_cases)}"


@pytest.mark.parametrize("lab_id", LAB_IDS)
def test_each_lab_has_a_chinese_title_for_chinese_feedback_and_reports(lab_id):
    lab = load_lab(lab_id)
    assert re.fullmatch(r"实验 \d · \S.*", lab.title_in("zh")), lab.title_in("zh")
    assert lab.title_in("en") == lab.title
