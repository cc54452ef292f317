"""A simulated term for the course tests: three labs (the toy lab under three ids),
40 students, submission times from a manifest, late and on-time attempts.

Each student's notebook is one of four variants whose toy-lab scores are known
from the spec alone (see ``RAW``), so the tests compute every expected number
with their own arithmetic. Identical variants are identical bytes, so the grader
runs one sandbox per variant and lab and copies that grade to the other students.
"""

from __future__ import annotations

import csv
import datetime as dt
import shutil
from pathlib import Path

from .helpers import TOY, full_marks, untouched, with_code, write

LABS = ("week1", "week2", "week3")
DUE = {"week1": dt.datetime(2026, 9, 14, 23, 59, tzinfo=dt.timezone(dt.timedelta(hours=8))),
       "week2": dt.datetime(2026, 9, 21, 23, 59, tzinfo=dt.UTC),
       "week3": dt.datetime(2026, 9, 28, 23, 59, tzinfo=dt.timezone(dt.timedelta(hours=-5)))}
POINTS = 20.0          # each lab's points in the LMS; the toy lab itself is worth 10
PER_DAY, GRACE_HOURS, CAP = 0.1, 2.0, 0.5
STUDENTS = [f"s{i:02d}" for i in range(40)]
ONLY_1D = ("import numpy as np\ndef scaled_sum(a, b):\n"
           "    if np.ndim(a) > 1:\n        return np.zeros(np.shape(a))\n"
           "    return 2.0 * np.asarray(a, dtype=np.float64) + b\n")
WRONG_COUNTS = "def word_counts(text):\n    return {}\n"
# toy lab points: scaled_sum 4 (cases 1, 1, 2, 1), word_counts 3, unique 2, pair_total 1
# (WRONG_COUNTS still passes word_counts' "empty" case: one of its three cases)
RAW = {"full": 10.0, "untouched": 0.0, "partial": 4.0 * 3 / 5 + 3 + 2 + 0,
       "no_counts": 4.0 + 3 / 3 + 2 + 1, "full_zh": 10.0}
EXTENSION = ("s03", "week2", 3)      # (student, lab, days)
OVERRIDE = ("s05", "week1", "pair_total", 1.0, "the cell was lost in an upload; checked by hand")


def variants() -> dict:
    chinese = full_marks()
    chinese.metadata["autograder"] = {"language": "zh"}    # as `release --lang zh` writes
    return {"full": full_marks(), "untouched": untouched(),
            "partial": with_code({"scaled_sum": ONLY_1D}, drop=("pair_total",)),
            "no_counts": with_code({"word_counts": WRONG_COUNTS}), "full_zh": chinese}


def plan() -> dict[tuple[str, str], list[tuple[str, str, float]]]:
    """``(lab, student) -> [(attempt file, variant, hours after the due date)]``.

    Mostly on time; every seventh student is a day and a half late with full marks;
    s01 and s02 submit twice (an early untouched notebook, then a full one, within the
    grace hours for s01 and three days late for s02); s04 submits full marks, then a
    worse notebook (best and latest differ);
    s03 is two days late on week2, within a three-day extension; s39 submits
    nothing for week2 and week3 and s38 only untouched notebooks (both fall behind);
    s10's week1 notebook is a Chinese release's (its feedback is in Chinese).
    """
    names = ["full", "untouched", "partial", "no_counts"]
    out = {}
    for lab_index, lab in enumerate(LABS):
        for i, student in enumerate(STUDENTS):
            variant = names[(i + lab_index) % 4]
            hours = -5.0 - i % 3
            if i % 7 == 6:
                variant, hours = "full", 36.0
            if student == "s04":
                out[lab, student] = [("s04/a.ipynb", "full", -10.0),
                                     ("s04/b.ipynb", "partial", -1.0)]
                continue
            if student in ("s01", "s02"):
                out[lab, student] = [(f"{student}/1.ipynb", "untouched", -30.0),
                                     (f"{student}/2.ipynb", "full", 1.0 + 50 * (student == "s02"))]
                continue
            if student == "s03" and lab == "week2":
                variant, hours = "full", 48.0
            if student == "s10" and lab == "week1":
                variant = "full_zh"
            if student == "s38":
                variant = "untouched"
            if student == "s39" and lab != "week1":
                continue
            out[lab, student] = [(f"{student}.ipynb", variant, hours)]
    return out


def expected_final(lab: str, student: str, counts: str = "best") -> float | None:
    """The LMS points of ``student`` on ``lab``, worked out here from ``plan()``."""
    attempts = plan().get((lab, student))
    if not attempts:
        return None
    extension = EXTENSION[2] * 24 if (student, lab) == EXTENSION[:2] else 0
    finals = []
    for _, variant, hours in attempts:
        raw = RAW[variant]
        if (student, lab) == OVERRIDE[:2]:
            raw = raw - (1.0 if variant in ("full", "no_counts") else 0.0) + OVERRIDE[3]
        late = hours - extension
        days = 0 if late <= GRACE_HOURS else -(-late // 24)
        finals.append(POINTS * raw / 10.0 * (1 - min(CAP, PER_DAY * days)))
    return finals[-1] if counts == "latest" else max(finals)


SPEC = """import dataclasses
from autograder.spec import load_lab
LAB = dataclasses.replace(load_lab({toy!r}), id={lab!r}, title={title!r})
"""


def course_text(root: Path, counts: str = "best") -> str:
    labs = "".join(f'[[labs]]\nid = "{lab}"\nspec = "specs/{lab}"\nname = "Week {i + 1}"\n'
                   f"due = {DUE[lab].isoformat()}\npoints = {POINTS:g}\n\n"
                   for i, lab in enumerate(LABS))
    students = "".join(f'[[students]]\nid = "{s}"\nname = "Student {s[1:]}"\n'
                       f'email = "{s}@uni.example"\nlogin = "{s}"\nsis_id = "2026{s[1:]}"\n'
                       f'canvas_id = "{1000 + int(s[1:])}"\nsection = "{"AB"[int(s[1:]) % 2]}"\n\n'
                       for s in STUDENTS)
    student, lab, days = EXTENSION
    return (f'[course]\ntitle = "Simulated term"\ncounts = "{counts}"\ntimes = "manifest"\n'
            f'gradebook = "term.sqlite3"\n\n'
            f"[late]\nper_day = {PER_DAY}\ngrace_hours = {GRACE_HOURS}\ncap = {CAP}\n\n"
            f"{labs}{students}"
            f'[[extensions]]\nstudent = "{student}"\nlab = "{lab}"\ndays = {days}\n')


def build(root: Path, counts: str = "best") -> Path:
    """Write the lab specs, the submissions with their manifests and the course file
    under ``root``; returns the course file."""
    notebooks = {}
    for name, nb in variants().items():
        notebooks[name] = write(nb, root / f"{name}.ipynb")
    for i, lab in enumerate(LABS):
        (root / "specs" / lab).mkdir(parents=True)
        (root / "specs" / lab / "spec.py").write_text(
            SPEC.format(toy=str(TOY), lab=lab, title=f"Week {i + 1}"))
    rows = {lab: [] for lab in LABS}
    for (lab, _), attempts in plan().items():
        for rel, variant, hours in attempts:
            target = root / "submissions" / lab / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(notebooks[variant], target)
            rows[lab].append((rel, (DUE[lab] + dt.timedelta(hours=hours)).isoformat()))
    for lab, lines in rows.items():
        with open(root / "submissions" / lab / "timestamps.csv", "w", newline="") as fh:
            csv.writer(fh).writerows([("file", "submitted_at"), *lines])
    path = root / "course.toml"
    path.write_text(course_text(root, counts))
    return path
