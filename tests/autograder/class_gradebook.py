"""A hand-built gradebook of six toy-lab submissions for the class report's tests.

Every exercise is worth 2 points, shared equally by its cases. The students:

* ``ada``: full marks.
* ``bob``: partial; passes every public case of ``scaled_sum`` and ``unique`` but
  fails a hidden case of each; ``pair_total`` not attempted.
* ``HOSTILE_ID``: errors whose messages hold HTML (``HOSTILE``), a wrong result,
  a ``KeyError``; slowest.
* ``dee``: not attempted at all; ``eve``: unreadable notebook; ``fay``: one cell
  deleted, the rest not attempted.
"""

from __future__ import annotations

from pathlib import Path

from autograder.grade import CaseGrade, ExerciseGrade, SubmissionGrade
from autograder.gradebook import Gradebook

from .helpers import toy_lab

POINTS = 2.0
HOSTILE = "</td><script>alert(1)</script>"
HOSTILE_ID = "cy<img src=x onerror=alert(2)>"
TRACEBACK = ('File "<cell 3>", line 2, in scaled_sum\n    raise ValueError(...)\n'
             f"ValueError: {HOSTILE}")
KEY_ERROR = "File \"<cell 7>\", line 1, in pair_total\nKeyError: 'x'"

P, F, E, N = "passed", "failed", "error", "not_attempted"

# student -> exercise -> one (status, message) per case, in the spec's order
OUTCOMES = {
    "ada": {"scaled_sum": [(P, "")] * 4, "word_counts": [(P, "")] * 3,
            "unique": [(P, "")] * 2, "pair_total": [(P, "")] * 2},
    "bob": {"scaled_sum": [(P, ""), (P, ""), (F, "wrong result: expected 3 got 4"), (P, "")],
            "word_counts": [(P, "")] * 3,
            "unique": [(P, ""), (E, "IndexError: list index out of range")],
            "pair_total": [(N, "not attempted")] * 2},
    HOSTILE_ID: {"scaled_sum": [(E, TRACEBACK)] * 2 + [(E, f"ValueError: {HOSTILE}")] * 2,
                 "word_counts": [(F, "wrong result: expected 5 got 6"), (P, ""), (P, "")],
                 "unique": [(P, "")] * 2,
                 "pair_total": [(E, KEY_ERROR), (E, "KeyError: 'x'")]},
    "dee": {"scaled_sum": [(N, "")] * 4, "word_counts": [(N, "")] * 3,
            "unique": [(N, "")] * 2, "pair_total": [(N, "")] * 2},
    "eve": {ex: [("invalid_submission", "not a notebook")] * n
            for ex, n in (("scaled_sum", 4), ("word_counts", 3), ("unique", 2),
                          ("pair_total", 2))},
    "fay": {"scaled_sum": [(N, "")] * 4, "word_counts": [("missing", "no cell")] * 3,
            "unique": [(N, "")] * 2, "pair_total": [(N, "")] * 2},
}
SECONDS = {"ada": 0.1, "bob": 0.5, HOSTILE_ID: 0.2, "dee": 0.0, "eve": 0.0, "fay": 0.0}
SCALED_SUM_SECONDS = {HOSTILE_ID: 3.0}   # overrides SECONDS for that exercise


def _exercise_status(cases: list[CaseGrade], score: float) -> str:
    statuses = {c.status for c in cases}
    if len(statuses) == 1 and statuses <= {"passed", "not_attempted", "missing",
                                           "invalid_submission"}:
        return statuses.pop()
    return "partial" if score > 0 else "failed"


def _exercise(ex, student: str) -> ExerciseGrade:
    outcomes = OUTCOMES[student][ex.id]
    each = POINTS / len(ex.cases)
    cases = [CaseGrade(case.name, case.hidden, status, each if status == "passed" else 0.0,
                       each, message, 0.01)
             for case, (status, message) in zip(ex.cases, outcomes, strict=True)]
    score = sum(c.score for c in cases)
    seconds = SECONDS[student]
    if ex.id == "scaled_sum":
        seconds = SCALED_SUM_SECONDS.get(student, seconds)
    return ExerciseGrade(ex.id, score, POINTS, _exercise_status(cases, score), "", cases,
                         seconds=seconds)


def build(path: Path) -> Path:
    """Record every student of ``OUTCOMES`` in a new gradebook at ``path`` (closed)."""
    lab = toy_lab()
    with Gradebook(path) as book:
        for student in OUTCOMES:
            grade = SubmissionGrade(student, f"{student}.ipynb", "hash", "fingerprint",
                                    [_exercise(ex, student) for ex in lab.exercises])
            if student == "eve":
                grade.status = "invalid_submission"
            book.record(lab.id, grade)
    return path
