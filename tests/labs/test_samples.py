"""The bundled sample submissions get exactly the scores they should.

Expected scores come from the source notebook's points, the sample plans
(which exercises are left unsolved, which mistake is planted) and the specs'
cases; never from the grader's own output.
"""

import json
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from autograder.grade import grade_notebook, prepare
from autograder.notebook import exercise_points, read_notebook, solution_regions
from autograder.release import leaks, public_cases, release_notebook
from autograder.spec import load_lab

from .labkit import LAB_IDS, LABS_DIR
from .samples_plan import BUGGY, UNSOLVED, build


def _grows_past_float32(case, expected) -> bool:
    scale, tracker, found_inf = case.args
    growth = case.kwargs.get("growth_factor", 2.0)
    interval = case.kwargs.get("growth_interval", 2000)
    with np.errstate(over="ignore"):
        grown = np.float32(scale) * np.float32(growth)
    return not found_inf and tracker + 1 == interval and not np.isfinite(grown)


def _has_an_exactly_full_bucket(case, expected) -> bool:
    """Closing on size > cap behaves like closing on size >= cap + 1 byte."""
    from labs.lab3_distributed.spec import ref_assign_buckets

    numels, cap, first, *dtypes = case.args
    return ref_assign_buckets(numels, cap + 1, first + 1, *dtypes) != expected


# which cases the planted mistake of BUGGY[lab] fails, decided from the case alone
FAILS = {
    "lab1_graph": lambda case, expected: "cycle" in expected,
    "lab2_autodiff": lambda case, expected: len(case.args[2]) % case.args[3] != 0
    and case.args[3] < len(case.args[2]),
    "lab3_distributed": _has_an_exactly_full_bucket,
    "lab4_amp": _grows_past_float32,
}


@pytest.fixture(scope="module", params=LAB_IDS)
def graded(request):
    lab = load_lab(request.param)
    plan = prepare(lab)
    folder = LABS_DIR / lab.id / "samples"
    paths = sorted(folder.glob("*.ipynb"))
    with ThreadPoolExecutor(len(paths)) as pool:   # each grade waits on its own sandboxes
        grades = dict(zip([p.stem for p in paths], pool.map(lambda p: grade_notebook(plan, p),
                                                             paths), strict=True))
    return lab, exercise_points(read_notebook(lab.source)), grades


def _scores(grade):
    return {ex.exercise: ex.score for ex in grade.exercises}


def test_committed_samples_are_up_to_date():
    for lab_id in LAB_IDS:
        for name, nb in build(lab_id).items():
            committed = read_notebook(LABS_DIR / lab_id / "samples" / name)
            assert [c.source for c in committed.cells] == [c.source for c in nb.cells], (
                f"labs/{lab_id}/samples/{name} is stale: run python -m tests.labs.samples_plan")


def test_full_marks(graded):
    lab, points, grades = graded
    scores = _scores(grades["full_marks"])
    assert scores == pytest.approx(points)
    assert all(ex.status == "passed" for ex in grades["full_marks"].exercises)


def test_untouched_release_scores_zero_and_is_not_attempted(graded):
    lab, points, grades = graded
    grade = grades["untouched"]
    assert grade.status == "graded"
    assert sum(_scores(grade).values()) == 0
    for ex in grade.exercises:
        assert ex.status == "not_attempted", (ex.exercise, ex.status, ex.message)
        assert {c.status for c in ex.cases} == {"not_attempted"}


def test_partial_unsolved(graded):
    lab, points, grades = graded
    unsolved = UNSOLVED[lab.id]
    want = {eid: 0.0 if eid in unsolved else p for eid, p in points.items()}
    assert _scores(grades["partial_unsolved"]) == pytest.approx(want)
    statuses = {ex.exercise: ex.status for ex in grades["partial_unsolved"].exercises}
    assert all(statuses[eid] == "not_attempted" for eid in unsolved)
    assert sum(want.values()) == pytest.approx(sum(_scores(grades["partial_unsolved"]).values()))


def test_partial_buggy(graded):
    lab, points, grades = graded
    if lab.id not in BUGGY:
        pytest.skip(f"{lab.id} has no planted-mistake sample")
    buggy_id, _ = BUGGY[lab.id]
    ex = lab.exercise(buggy_id)
    failing = [c.name for c in ex.cases if FAILS[lab.id](c, ex.reference(*c.args, **c.kwargs))]
    assert 0 < len(failing) < len(ex.cases), "the planted mistake should fail some cases only"
    lost = points[buggy_id] * sum(c.points for c in ex.cases if c.name in failing) / \
        ex.case_points
    want = {eid: p - (lost if eid == buggy_id else 0.0) for eid, p in points.items()}
    grade = grades["partial_buggy"]
    assert _scores(grade) == pytest.approx(want)
    by_case = {c.name: c.status for e in grade.exercises if e.exercise == buggy_id
               for c in e.cases}
    assert sorted(n for n, s in by_case.items() if s != "passed") == sorted(failing)


@pytest.mark.parametrize("lab_id", LAB_IDS)
def test_release_holds_no_solution_or_hidden_case(lab_id):
    lab = load_lab(lab_id)
    source = read_notebook(lab.source)
    released = release_notebook(lab)
    assert leaks(lab, released, json.dumps(public_cases(lab))) == []
    text = "\n".join(c.source for c in released.cells)
    assert "### BEGIN SOLUTION" not in text
    inside, outside = set(), set()
    for cell in source.cells:
        lines = cell.source.splitlines()
        regions = solution_regions(cell.source) if cell.cell_type == "code" else []
        in_region = {n for begin, end, _ in regions for n in range(begin, end + 1)}
        inside |= {lines[n].strip() for n in in_region}
        outside |= {line.strip() for n, line in enumerate(lines) if n not in in_region}
    secret = {line for line in inside - outside if len(line) > 30}
    assert secret, "every lab has solution lines of some length"
    released_lines = {line.strip() for line in text.splitlines()}
    assert not secret & released_lines
    for ex in lab.exercises:
        for case in ex.hidden_cases:
            assert case.name not in text
    assert exercise_points(released) == exercise_points(source)
