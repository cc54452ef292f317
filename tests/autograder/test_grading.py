"""Scores, the gradebook (idempotent, transactional, resumable), export and the CLI."""

from __future__ import annotations

import csv
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from autograder.cli import main
from autograder.export import export
from autograder.grade import grade_batch, prepare
from autograder.gradebook import Gradebook

from .helpers import TOY, full_marks, toy_lab, untouched, with_code, write

ROOT = TOY.parents[2]
POINTS = {"scaled_sum": 4.0, "word_counts": 3.0, "unique": 2.0, "pair_total": 1.0}
# scaled_sum's cases are worth 1, 1, 2 (the hidden "broadcast"), 1 points
ONLY_1D = ("import numpy as np\ndef scaled_sum(a, b):\n"
           "    if np.ndim(a) > 1:\n        return np.zeros(np.shape(a))\n"
           "    return 2.0 * np.asarray(a, dtype=np.float64) + b\n")


@pytest.fixture(scope="module")
def plan():
    return prepare(toy_lab(), time_limit=3.0)


@pytest.fixture
def subs(tmp_path):
    folder = tmp_path / "subs"
    folder.mkdir()
    write(full_marks(), folder / "ada.ipynb")
    write(untouched(), folder / "bo.ipynb")
    write(with_code({"scaled_sum": ONLY_1D}, drop=("pair_total",)), folder / "cy.ipynb")
    return folder


def _grade(plan, subs, book_path, **kw):
    with Gradebook(book_path) as book:
        return grade_batch(plan, sorted(subs.glob("*.ipynb")), book, jobs=2, progress=False, **kw)


def test_exact_scores_full_untouched_partial(plan, subs, tmp_path):
    summary = _grade(plan, subs, tmp_path / "gb.sqlite3")
    scores = {g.student: {e.exercise: e.score for e in g.exercises} for g in summary.grades}
    assert scores["ada"] == POINTS
    assert scores["bo"] == dict.fromkeys(POINTS, 0.0)
    assert scores["cy"] == {**POINTS, "scaled_sum": pytest.approx(4.0 * 3 / 5), "pair_total": 0.0}
    bo = next(g for g in summary.grades if g.student == "bo")
    assert {e.status for e in bo.exercises} == {"not_attempted"}
    cy = {e.exercise: e for e in next(g for g in summary.grades if g.student == "cy").exercises}
    assert [c.status for c in cy["scaled_sum"].cases] == ["passed", "passed", "failed", "passed"]
    assert cy["pair_total"].status == "missing"


def test_gradebook_has_one_row_per_case_and_regrading_is_idempotent(plan, subs, tmp_path):
    path = tmp_path / "gb.sqlite3"
    _grade(plan, subs, path)
    db = sqlite3.connect(path)
    n_cases = sum(len(ex.cases) for ex in toy_lab().exercises)
    rows = db.execute("SELECT student, COUNT(*) FROM cases GROUP BY student").fetchall()
    assert dict(rows) == {"ada": n_cases, "bo": n_cases, "cy": n_cases}
    first = db.execute("SELECT student, exercise, name, score, status, code_hash FROM cases "
                       "ORDER BY 1, 2, 3").fetchall()
    assert all(len(r[5]) == 16 for r in first)
    again = _grade(plan, subs, path)
    assert again.graded == 0 and again.skipped == 3          # unchanged files: nothing to do
    forced = _grade(plan, subs, path, force=True)
    assert forced.graded == 3
    assert db.execute("SELECT student, exercise, name, score, status, code_hash FROM cases "
                      "ORDER BY 1, 2, 3").fetchall() == first
    write(full_marks(), subs / "bo.ipynb")                   # a changed file is re-graded
    changed = _grade(plan, subs, path)
    assert changed.graded == 1 and changed.skipped == 2
    assert db.execute("SELECT score FROM submissions WHERE student='bo'").fetchone() == (10.0,)


def test_a_killed_batch_keeps_finished_grades_and_resumes(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    slow = "import time\ndef unique(xs):\n    time.sleep(0.5)\n    return sorted(set(xs))\n"
    for i in range(4):
        write(with_code({"unique": slow}), subs / f"s{i}.ipynb")
    book = tmp_path / "gb.sqlite3"
    cmd = [sys.executable, "-m", "autograder", "grade", str(TOY), str(subs), "-j", "1",
           "--gradebook", str(book), "--no-progress"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    done = 0
    while time.monotonic() < deadline and done < 1:
        time.sleep(0.1)
        if book.exists():
            try:
                done = sqlite3.connect(book).execute(
                    "SELECT COUNT(*) FROM submissions").fetchone()[0]
            except sqlite3.OperationalError:
                pass
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    db = sqlite3.connect(book)
    graded = [r[0] for r in db.execute("SELECT student FROM submissions")]
    assert 1 <= len(graded) < 4
    n_cases = sum(len(ex.cases) for ex in toy_lab().exercises)
    counts = dict(db.execute("SELECT student, COUNT(*) FROM cases GROUP BY student").fetchall())
    assert counts == dict.fromkeys(graded, n_cases)          # complete or absent, never partial
    kept = dict(db.execute("SELECT student, graded_at FROM submissions").fetchall())
    result = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stderr
    assert f"already up to date {len(graded)}" in result.stdout
    final = dict(db.execute("SELECT student, score FROM submissions").fetchall())
    assert final == {f"s{i}": 10.0 for i in range(4)}
    assert {s: t for s, t in db.execute("SELECT student, graded_at FROM submissions")
            if s in kept} == kept


def test_export_writes_csv_and_feedback_that_hides_hidden_cases(plan, subs, tmp_path):
    path = tmp_path / "gb.sqlite3"
    _grade(plan, subs, path)
    with Gradebook(path) as book:
        out = export(book, toy_lab(), tmp_path / "out")
    with open(out / "grades.csv") as fh:
        rows = list(csv.DictReader(fh))
    assert [r["student"] for r in rows] == ["ada", "bo", "cy"]
    cy = rows[2]
    assert (cy["scaled_sum"], cy["pair_total"], cy["total"], cy["max"]) == ("2.4", "0", "7.4", "10")
    md = (out / "feedback" / "cy.md").read_text()
    html = (out / "feedback" / "cy.html").read_text()
    for text in (md, html):
        assert "Public cases: 2 of 2 passed." in text      # passed public cases: a count
        assert "vectors" not in text                        # ... not a list
        assert "All 2 cases: missing." in text              # pair_total's cell was dropped
        assert "linspace" not in text and "7.25" not in text  # a hidden input never appears
        assert "the cat saw" not in text
    assert "- `broadcast`: failed\n- `large`: passed" in md
    assert "<code>broadcast</code>: <span class='bad'>failed</span>" in html


def test_cli_exit_status_is_zero_for_bad_submissions_and_one_for_a_broken_grader(subs, tmp_path,
                                                                                   capsys):
    assert main(["grade", str(TOY), str(subs), "--gradebook", str(tmp_path / "a.sqlite3"),
                 "--no-progress", "--table"]) == 0
    out = capsys.readouterr().out
    assert "graded 3" in out and "ada" in out and "10/10" in out
    assert main(["grade", "no_such_lab", str(subs), "--no-progress"]) == 1
    broken = tmp_path / "broken_lab"
    broken.mkdir()
    (broken / "source.ipynb").write_bytes((TOY / "source.ipynb").read_bytes())
    spec = (TOY / "spec.py").read_text().replace(
        "def _unique(xs):\n    return",
        "def _unique(xs):\n    raise RuntimeError('bug')\n    return")
    (broken / "spec.py").write_text(spec)
    assert main(["grade", str(broken), str(subs), "--gradebook", str(tmp_path / "b.sqlite3"),
                 "--no-progress"]) == 1
    assert "the reference failed" in capsys.readouterr().err
    assert main(["export", str(TOY), "--gradebook", str(tmp_path / "a.sqlite3"),
                 "--out", str(tmp_path / "exp")]) == 0
    assert (tmp_path / "exp" / "grades.csv").is_file()


@pytest.mark.skipif(os.geteuid() != 0, reason="checks the root sandbox")
def test_grade_log_says_how_the_sandbox_was_isolated(subs, tmp_path):
    book = tmp_path / "gb.sqlite3"
    assert main(["grade", str(TOY), str(subs), "--gradebook", str(book), "--no-progress"]) == 0
    log = (tmp_path / "grade.log").read_text()
    assert "uid of its own" in log and "forbidden packages absent" in log


@pytest.mark.skipif(os.geteuid() != 0, reason="checks the root sandbox without namespaces")
def test_without_namespaces_grading_still_works_and_the_log_says_what_is_missing(subs, tmp_path):
    book = tmp_path / "gb.sqlite3"
    assert main(["grade", str(TOY), str(subs), "--gradebook", str(book), "--no-progress",
                 "--no-isolation"]) == 0
    log = (tmp_path / "grade.log").read_text()
    assert "no namespaces" in log and "stay visible" in log
    with Gradebook(book) as gb:
        assert {s["student"]: s["score"] for s in gb.students("toy_lab")} == {
            "ada": 10.0, "bo": 0.0, "cy": pytest.approx(7.4)}


def test_the_table_shows_partial_credit_with_two_decimals():
    from autograder.cli import _points

    assert _points({"score": 6 / 7 * 2, "max_score": 2.0}) == "1.71/2"
    assert _points({"score": 17.0, "max_score": 17.0}) == "17/17"
    assert _points({"score": 0.0, "max_score": 3.0}) == "0/3"
