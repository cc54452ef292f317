"""A course, not just a lab: the course file, the late policy, one simulated term
graded, overridden, regraded, exported to Canvas, Moodle and CSV and reported,
and an interrupted ``course grade`` that resumes exactly."""

from __future__ import annotations

import csv
import datetime as dt
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from autograder.cli import main
from autograder.course.config import CourseFileError, LatePolicy, load_course
from autograder.course.layout import find_attempts
from autograder.course.lms import CANVAS_FIXED, MOODLE_FIXED
from autograder.course.policy import lateness
from autograder.course.report import BEHIND_LABS, BEHIND_PCT, course_summary
from autograder.course.term import TermGradebook
from autograder.course.words import CHINESE, ENGLISH
from autograder.export import md_escape

from . import course_term as term
from .helpers import TOY

ROOT = TOY.parents[2]
LATER = dt.datetime(2026, 12, 1, tzinfo=dt.UTC)    # every lab is due by then


# ------------------------------------------------------------------ the course file


@pytest.mark.parametrize(("edit", "key", "advice"), [
    (lambda t: t.replace("due = 2026-09-21T23:59:00+00:00", "due = 2026-09-21T23:59:00"),
     "labs[1].due", "add one, like due = 2026-10-05T23:59:00+08:00"),
    (lambda t: t.replace('counts = "best"', 'counts = "highest"'),
     "course.counts", 'write one of "best", "latest"'),
    (lambda t: t.replace("per_day = 0.1", "per_day = 10"), "late.per_day", "between 0 and 1"),
    (lambda t: t.replace('student = "s03"', 'student = "s99"'), "extensions[0].student",
     "is not in [[students]]"),
    (lambda t: t.replace('email = "s07@uni.example"', 'email = "s07"'), "students[7].email",
     'write email = "ada@example.edu"'),
    (lambda t: t.replace("grace_hours", "grace"), "late.grace", "the keys here are"),
    (lambda t: t.replace('id = "week2"', 'id = "week9"'), "labs[1].id",
     'write id = "week2"'),
])
def test_course_file_errors_name_the_file_the_key_and_the_fix(tmp_path, edit, key, advice):
    path = term.build(tmp_path)
    path.write_text(edit(path.read_text()))
    with pytest.raises(CourseFileError) as err:
        load_course(path)
    assert str(err.value).startswith(f"{path}: {key}: ")
    assert advice in str(err.value)


def test_a_manifest_decides_what_is_graded_and_mtime_is_the_alternative(tmp_path):
    course = load_course(term.build(tmp_path))
    manifest = course.submissions / "week1" / "timestamps.csv"
    lines = manifest.read_text().splitlines()
    manifest.write_text("\n".join(line for line in lines if not line.startswith("s10.ipynb")))
    (course.submissions / "week1" / "stranger.ipynb").write_bytes(b"{}")
    attempts, log = find_attempts(course)
    assert ("week1", "s10") not in {(a.lab, a.student) for a in attempts}
    assert any("s10.ipynb: not listed in" in line for line in log)
    assert any("'stranger' is not on the roster" in line for line in log)
    first = next(a for a in attempts if (a.lab, a.student) == ("week1", "s00"))
    assert dt.datetime.fromisoformat(first.submitted_at) == term.DUE["week1"] - \
        dt.timedelta(hours=5)
    stamp = dt.datetime(2026, 9, 15, 3, 0, tzinfo=dt.UTC)
    os.utime(first.path, (stamp.timestamp(), stamp.timestamp()))
    mtime_course = load_course(_rewrite(course.path, 'times = "manifest"', 'times = "mtime"'))
    attempts, _ = find_attempts(mtime_course)
    again = next(a for a in attempts if (a.lab, a.student) == ("week1", "s00"))
    assert again.time_source == "mtime"
    assert dt.datetime.fromisoformat(again.submitted_at) == stamp


def _rewrite(path, old, new, name=None):
    target = path.with_name(name) if name else path
    target.write_text(path.read_text().replace(old, new))
    return target


def test_lateness_counts_started_days_after_the_grace_hours_up_to_the_cap():
    due = dt.datetime(2026, 1, 1, 12, tzinfo=dt.UTC)
    policy = LatePolicy(per_day=0.15, grace_hours=1.0, cap=0.4)
    at = [due - dt.timedelta(hours=3), due + dt.timedelta(minutes=59),
          due + dt.timedelta(hours=1, minutes=1), due + dt.timedelta(hours=24),
          due + dt.timedelta(hours=24, seconds=1), due + dt.timedelta(days=10)]
    assert [(x.days, x.penalty) for x in (lateness(t, due, policy) for t in at)] == [
        (0, 0.0), (0, 0.0), (1, 0.15), (1, 0.15), (2, 0.3), (10, 0.4)]
    other_zone = due.astimezone(dt.timezone(dt.timedelta(hours=8))) + dt.timedelta(hours=2)
    assert lateness(other_zone, due, policy).days == 1      # the moment counts, not the zone


# ------------------------------------------------------------------ one simulated term


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("term")
    course = term.build(root)
    assert main(["course", "grade", str(course), "-j", "2", "--no-progress"]) == 0
    return root, course


def _table_rows(path, table):
    """Every row of ``table`` but what differs between two gradings of the same files: when
    it was graded, how long each run took and where the tree lies."""
    db = sqlite3.connect(path)
    columns = [r[1] for r in db.execute(f"PRAGMA table_info({table})")
               if r[1] not in ("graded_at", "path", "seconds")]
    rows = db.execute(f"SELECT {', '.join(columns)} FROM {table} ORDER BY 1, 2, 3").fetchall()
    db.close()
    return rows


def _expected(lab, student, counts="best"):
    value = term.expected_final(lab, student, counts)
    return 0.0 if value is None else round(value, 2)


def test_every_attempt_is_kept_and_each_distinct_file_ran_once(graded):
    root, course_path = graded
    course = load_course(course_path)
    with TermGradebook(course.gradebook) as book:
        rows = book.attempts()
    planned = {(lab, s, rel) for (lab, s), attempts in term.plan().items()
               for rel, *_ in attempts}
    assert {(r["lab"], r["student"], r["attempt"]) for r in rows} == planned
    assert {r["score"] for r in rows} == set(term.RAW.values())
    # four variants per lab ran in a sandbox; every other attempt copied an identical file's
    runs = {(r["lab"], r["file_hash"]) for r in rows}
    assert len(runs) == len({(lab, variant) for (lab, _), attempts in term.plan().items()
                             for _, variant, _ in attempts})


def _override(course_path):
    student, lab, exercise, points, reason = term.OVERRIDE
    return main(["course", "override", str(course_path), lab, student, exercise, str(points),
                 "--reason", reason])


@pytest.fixture(scope="module")
def overridden(graded):
    root, course_path = graded
    assert _override(course_path) == 0
    return root, course_path


def _read_csv(path):
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.reader(fh))


def _export(course_path, fmt, out):
    assert main(["course", "export", str(course_path), "--format", fmt, "--out", str(out)]) == 0


def test_canvas_export_has_canvas_columns_points_row_and_the_policy_applied(overridden,
                                                                           tmp_path):
    _, course_path = overridden
    _export(course_path, "canvas", tmp_path)
    rows = _read_csv(tmp_path / "canvas.csv")
    assert tuple(rows[0][:5]) == ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
    assert CANVAS_FIXED == tuple(rows[0][:5])
    assert rows[0][5:] == ["Week 1", "Week 2", "Week 3"]
    assert rows[1][0] == "Points Possible" and rows[1][1:5] == ["", "", "", ""]
    assert [float(x) for x in rows[1][5:]] == [term.POINTS] * 3
    body = {row[3]: row for row in rows[2:]}                  # keyed by SIS Login ID
    assert sorted(body) == term.STUDENTS
    for student, row in body.items():
        n = int(student[1:])
        assert row[:5] == [f"Student {student[1:]}", str(1000 + n), f"2026{student[1:]}",
                           student, "AB"[n % 2]]
        for lab, value in zip(term.LABS, row[5:], strict=True):
            assert float(value) == pytest.approx(_expected(lab, student)), (student, lab)
    assert float(body["s03"][6]) == term.POINTS          # two days late, three days' extension
    assert float(body["s05"][5]) == pytest.approx(term.POINTS * term.OVERRIDE[3] / 10)
    assert body["s39"][6:] == ["0", "0"]                 # never submitted, past due


def test_moodle_export_is_keyed_by_email_and_id_number(overridden, tmp_path):
    _, course_path = overridden
    _export(course_path, "moodle", tmp_path)
    rows = _read_csv(tmp_path / "moodle.csv")
    assert tuple(rows[0][:3]) == MOODLE_FIXED == ("Email address", "ID number", "Full name")
    assert rows[0][3:] == ["Week 1", "Week 2", "Week 3"]
    assert len(rows) == 1 + len(term.STUDENTS)               # no points row in Moodle's CSV
    for row in rows[1:]:
        student = row[0].removesuffix("@uni.example")
        assert row[1] == f"2026{student[1:]}"
        assert [float(x) for x in row[3:]] == pytest.approx(
            [_expected(lab, student) for lab in term.LABS])


def test_plain_csv_and_feedback_show_the_override_with_its_reason(overridden, tmp_path):
    _, course_path = overridden
    _export(course_path, "csv", tmp_path)
    rows = {r["student"]: r for r in csv.DictReader(open(tmp_path / "grades.csv"))}
    for student, row in rows.items():
        assert float(row["total"]) == pytest.approx(
            sum(_expected(lab, student) for lab in term.LABS), abs=0.02)
    assert term.OVERRIDE[4] in rows["s05"]["overrides"]
    assert rows["s02"]["week1 late days"] == "3"
    assert rows["s04"]["week1 attempt"] == "s04/a.ipynb"
    md = (tmp_path / "feedback" / "week1" / "s05.md").read_text()
    page = (tmp_path / "feedback" / "week1" / "s05.html").read_text()
    note = f"Instructor override: 1 point(s) (the grader gave 0). Reason: {term.OVERRIDE[4]}"
    assert note in md and md_escape(term.OVERRIDE[4]) in md.split("## ")[0]
    assert term.OVERRIDE[4] in page and "**Total: 1 / 10**" in md
    chinese = (tmp_path / "feedback" / "week1" / "s10.md").read_text()
    assert md_escape("得分 10 / 10；本实验计 20 / 20 分。") in chinese
    late = (tmp_path / "feedback" / "week1" / "s06.md").read_text()
    assert md_escape("Late by 2 day(s): 20% is taken off.") in late


def test_latest_instead_of_best_is_a_course_file_setting(overridden, tmp_path):
    _, course_path = overridden
    latest = _rewrite(course_path, 'counts = "best"', 'counts = "latest"', "latest.toml")
    _export(latest, "csv", tmp_path)
    rows = {r["student"]: r for r in csv.DictReader(open(tmp_path / "grades.csv"))}
    assert float(rows["s04"]["week1"]) == pytest.approx(_expected("week1", "s04", "latest"))
    assert _expected("week1", "s04", "latest") < _expected("week1", "s04")


def test_a_regrade_changes_nothing_and_keeps_the_override(overridden, tmp_path):
    root, course_path = overridden
    book = load_course(course_path).gradebook
    before = {t: _table_rows(book, t) for t in ("attempts", "attempt_exercises", "attempt_cases",
                                                 "overrides")}
    assert main(["course", "grade", str(course_path), "--force", "-j", "2",
                 "--no-progress"]) == 0
    after = {t: _table_rows(book, t) for t in before}
    assert after == before
    _export(course_path, "canvas", tmp_path)
    s05 = next(r for r in _read_csv(tmp_path / "canvas.csv") if r[3] == "s05")
    assert float(s05[5]) == pytest.approx(term.POINTS * term.OVERRIDE[3] / 10)


def test_the_course_report_agrees_with_the_exports(overridden, tmp_path):
    _, course_path = overridden
    course = load_course(course_path)
    with TermGradebook(course.gradebook) as book:
        summary = course_summary(course, book, now=LATER)
        chinese = course_summary(course, book, language="zh", now=LATER)
    for trend in summary.due_labs:
        finals = [_expected(trend.lab, s) / term.POINTS for s in term.STUDENTS]
        assert trend.mean == pytest.approx(sum(finals) / len(finals), abs=1e-3)
        assert trend.missing == sum(term.expected_final(trend.lab, s) is None
                                    for s in term.STUDENTS)
    behind = set()
    for student in term.STUDENTS:
        fractions = [_expected(lab, student) / term.POINTS for lab in term.LABS]
        low = [f < BEHIND_PCT / 100 for f in fractions]
        if low[-1] or sum(low) >= BEHIND_LABS:
            behind.add(student)
    assert {sid for sid, _ in summary.behind} == behind
    assert {"s38", "s39"} <= behind
    assert main(["course", "report", str(course_path), "--out", str(tmp_path / "en.html")]) == 0
    assert main(["course", "report", str(course_path), "--lang", "zh",
                 "--out", str(tmp_path / "zh.html")]) == 0
    page = (tmp_path / "en.html").read_text()
    assert page.count("<figure class='chart'>") == 3 and page.count("<figcaption>") == 3
    assert "Rule: a student is falling behind" in page
    assert page.count("<script type=\"text/javascript\">/**") <= 1   # plotly.js inlined once
    assert "https://cdn" not in page.split("<body>")[1].split("<script")[0]
    zh = (tmp_path / "zh.html").read_text()
    assert "<html lang='zh-CN'>" in zh and "规则：" in zh and "谁落后了" in zh
    assert {sid for sid, _ in chinese.behind} == behind


def test_both_languages_have_the_same_words():
    assert set(ENGLISH) == set(CHINESE)


# ------------------------------------------------------------------ interrupted, resumed


def test_an_interrupted_course_grade_resumes_to_the_same_gradebook(graded, tmp_path):
    _, reference_course = graded
    course = term.build(tmp_path)
    book = load_course(course).gradebook
    cmd = [sys.executable, "-m", "autograder", "course", "grade", str(course), "--no-progress"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline, done = time.monotonic() + 120, 0
    while time.monotonic() < deadline and done < 1:
        time.sleep(0.05)
        try:
            done = sqlite3.connect(book).execute("SELECT COUNT(*) FROM attempts").fetchone()[0]
        except sqlite3.OperationalError:
            pass
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    kept = sqlite3.connect(book).execute("SELECT COUNT(*) FROM attempts").fetchone()[0]
    total = sum(len(a) for a in term.plan().values())
    assert 1 <= kept < total
    result = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert f"already up to date {kept}," in result.stdout
    assert (book.with_name("term.log")).read_text().count("already up to date") == 1
    reference = load_course(reference_course).gradebook
    for table in ("attempts", "attempt_exercises", "attempt_cases"):
        assert _table_rows(book, table) == _table_rows(reference, table), table


def test_the_command_line_starts_without_what_only_the_course_commands_need():
    """`python -m autograder gradescope-run` runs on Gradescope's Python 3.10, which has
    no tomllib, and without plotly: building the parser must import neither."""
    probe = ("import sys, autograder.cli as c; c.parser(); "
             "print(sorted(m for m in ('tomllib', 'plotly') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(("args", "says"), [
    (["week1", "s05", "pair_total", "1.5"], "1.5 points is outside 0..1"),
    (["week1", "s05", "no_such", "1"], "lab week1 has no exercise 'no_such'"),
    (["week7", "s05", "pair_total", "1"], "no lab 'week7'"),
    (["week1", "s99", "pair_total", "1"], "no student 's99'"),
])
def test_an_override_outside_the_lab_is_refused_with_the_reason(tmp_path, capsys, args, says):
    course = term.build(tmp_path)
    assert main(["course", "override", str(course), *args, "--reason", "x"]) == 1
    assert says in capsys.readouterr().err
    assert not load_course(course).gradebook.exists()


def test_course_similarity_compares_each_students_latest_attempt_under_their_name(graded):
    from autograder.course.layout import latest_attempts
    from autograder.similarity import similarity_report

    root, course_path = graded
    course = load_course(course_path)
    latest = latest_attempts(course, "week1")
    # s01 and s04 submitted twice: the later file counts, shown under the student's id
    assert latest["s01"].name == "2.ipynb" and latest["s04"].name == "b.ipynb"
    assert set(latest) == {s for (lab, s) in term.plan() if lab == "week1"}
    report = similarity_report(course.lab("week1").spec, list(latest.values()),
                               names={p: s for s, p in latest.items()})
    # the Chinese release's full marks carry the same code as the English one
    variant = {s: term.plan()["week1", s][-1][1].removesuffix("_zh") for s in latest}
    assert {p.a for p in report.pairs} | {p.b for p in report.pairs} <= set(latest)
    scores = {}
    for p in report.pairs:
        scores.setdefault(frozenset((variant[p.a], variant[p.b])), []).append(p.score)
    assert min(scores[frozenset(["full"])]) == pytest.approx(1.0)
    assert max(scores[frozenset(["full", "partial"])]) < min(scores[frozenset(["partial"])])
    out = root / "similarity_week1.html"
    assert main(["course", "similarity", str(course_path), "week1", "--out", str(out)]) == 0
    assert "s01" in out.read_text(encoding="utf-8")
