"""Where each student stands: the term gradebook read through the course's policy.

For every student and lab, :func:`standings` applies the instructor's overrides
to every attempt, then the late policy (:mod:`autograder.course.policy`) from the
attempt's time and the student's due date, and picks the attempt that counts.
Exports, feedback and the course report all read these numbers, so they agree.

:class:`CountedLab` shows one lab's counted attempts through the interface of a
lab gradebook (``students``, ``exercises``, ``cases``, ``lab_exercises``,
``lab_cases``), so the per-lab feedback (:mod:`autograder.export`) renders them
unchanged; an overridden exercise carries its new score and the override's
reason in its message.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from .config import Course, CourseLab
from .policy import counted, final_points, lateness
from .term import TermGradebook
from .words import WORDS, say


@dataclass(frozen=True)
class Standing:
    """One student's result on one lab."""

    lab: str
    student: str
    attempt: dict | None         # the counted attempt's row (None: nothing submitted)
    attempts: int                # how many attempts there are
    score: float                 # the grader's score with overrides, of max_score
    max_score: float
    late_days: int
    penalty: float
    final: float                 # in the LMS's points: the lab's `points`
    points: float
    overrides: tuple[dict, ...]  # this student's overrides on this lab
    due: dt.datetime

    @property
    def submitted(self) -> bool:
        return self.attempt is not None

    @property
    def fraction(self) -> float:
        return self.final / self.points if self.points else 0.0


def _overridden(book: TermGradebook, row: dict, overrides: dict[str, dict]) -> float:
    """The attempt's score with each overridden exercise's score replaced."""
    if not overrides:
        return row["score"] or 0.0
    scores = {e["exercise"]: e["score"] for e in
              book.exercises(row["lab"], row["student"], row["attempt"])}
    scores.update({eid: o["points"] for eid, o in overrides.items()})
    return sum(scores.values())


def standing(course: Course, book: TermGradebook, lab: CourseLab, student: str,
             rows: list[dict], overrides: dict[str, dict]) -> Standing:
    due = course.due_for(lab, student)
    scored = []
    for row in rows:
        late = lateness(dt.datetime.fromisoformat(row["submitted_at"]), due, course.late)
        score = _overridden(book, row, overrides)
        scored.append({**row, "score": score, "late": late,
                       "final": final_points(score, row["max_score"] or 0.0, lab.points,
                                             late.penalty)})
    best = counted(scored, course.counts)
    if best is None:
        return Standing(lab.id, student, None, 0, 0.0, 0.0, 0, 0.0, 0.0, lab.points,
                        tuple(overrides.values()), due)
    late = best.pop("late")
    return Standing(lab.id, student, best, len(rows), best["score"], best["max_score"] or 0.0,
                    late.days, late.penalty, best["final"], lab.points,
                    tuple(overrides.values()), due)


def standings(course: Course, book: TermGradebook) -> dict[tuple[str, str], Standing]:
    """``(lab, student) -> Standing`` for every lab and every student of the roster."""
    rows, overrides = {}, {}
    for row in book.attempts():
        rows.setdefault((row["lab"], row["student"]), []).append(row)
    for row in book.overrides():
        overrides.setdefault((row["lab"], row["student"]), {})[row["exercise"]] = row
    return {(lab.id, s.id): standing(course, book, lab, s.id, rows.get((lab.id, s.id), []),
                                     overrides.get((lab.id, s.id), {}))
            for lab in course.labs for s in course.students}


def override_note(row: dict, graded: float, language: str) -> str:
    """The words an overridden exercise carries into the student's feedback."""
    return say(language if language in WORDS else "en", "fb_override_note",
               points=f"{row['points']:g}", graded=f"{graded:g}", reason=row["reason"])


class CountedLab:
    """One lab's counted attempts, read like a lab gradebook (see the module docstring)."""

    def __init__(self, book: TermGradebook, lab: CourseLab,
                 results: dict[tuple[str, str], Standing]):
        self.book, self.lab = book, lab
        self.path = book.path
        self.counted = {student: s for (lab_id, student), s in results.items()
                        if lab_id == lab.id and s.submitted}

    def _key(self, student: str) -> tuple[str, str, str]:
        row = self.counted[student].attempt
        return row["lab"], row["student"], row["attempt"]

    def students(self, lab: str) -> list[dict]:
        return [{**s.attempt, "score": s.score} for _, s in sorted(self.counted.items())]

    def exercises(self, lab: str, student: str) -> list[dict]:
        standing = self.counted[student]
        overrides = {o["exercise"]: o for o in standing.overrides}
        rows = self.book.exercises(*self._key(student))
        for row in rows:
            o = overrides.get(row["exercise"])
            if o is not None:
                note = override_note(o, row["score"] or 0.0, standing.attempt["language"])
                row["message"] = note + ("\n" + row["message"] if row["message"] else "")
                row["score"] = o["points"]
        return rows

    def cases(self, lab: str, student: str, exercise: str) -> list[dict]:
        return self.book.cases(*self._key(student), exercise)

    def lab_exercises(self, lab: str) -> list[dict]:
        return [row for student in sorted(self.counted) for row in self.exercises(lab, student)]

    def lab_cases(self, lab: str) -> list[dict]:
        rows = [row for student in sorted(self.counted)
                for row in self.book.cases(*self._key(student))]
        for row in rows:
            del row["detail"]
        return rows
