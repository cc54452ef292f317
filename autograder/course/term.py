"""The term gradebook: one SQLite file for a whole course, every attempt kept.

Tables (``lab, student, attempt`` name one attempt; ``attempt`` is the file's path
inside the lab's folder, see :mod:`autograder.course.layout`):

* ``attempts``: the file, its SHA-256, the lab fingerprint it was graded against,
  its time and where the time came from, the grader's score and maximum, status,
  notes and language. The late penalty is *not* stored: it is worked out from
  the time whenever the gradebook is read (:mod:`autograder.course.standing`),
  so an extension or a changed policy needs no regrade.
* ``attempt_exercises`` and ``attempt_cases``: the same rows as a lab's
  gradebook (:mod:`autograder.gradebook`) with the attempt added; a hidden case
  keeps only its name, outcome and a safe error class.
* ``overrides``: the instructor's scores, one per ``lab, student, exercise``,
  with the reason. Grading never writes this table, so an override survives
  any regrade.

Each attempt is written in one transaction, so a grader killed mid-term leaves
every attempt complete or absent, and the next run grades exactly the rest.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

from ..gradebook import _rows

SCHEMA = """
CREATE TABLE IF NOT EXISTS attempts (
    lab TEXT NOT NULL, student TEXT NOT NULL, attempt TEXT NOT NULL, path TEXT,
    file_hash TEXT, lab_fingerprint TEXT, submitted_at TEXT, time_source TEXT,
    graded_at TEXT, score REAL, max_score REAL, status TEXT, notes TEXT, language TEXT,
    PRIMARY KEY (lab, student, attempt));
CREATE TABLE IF NOT EXISTS attempt_exercises (
    lab TEXT NOT NULL, student TEXT NOT NULL, attempt TEXT NOT NULL, exercise TEXT NOT NULL,
    position INTEGER, score REAL, max_score REAL, status TEXT, message TEXT, code_hash TEXT,
    stdout TEXT, stderr TEXT, seconds REAL, PRIMARY KEY (lab, student, attempt, exercise));
CREATE TABLE IF NOT EXISTS attempt_cases (
    lab TEXT NOT NULL, student TEXT NOT NULL, attempt TEXT NOT NULL, exercise TEXT NOT NULL,
    name TEXT NOT NULL, position INTEGER, hidden INTEGER, score REAL, max_score REAL,
    status TEXT, message TEXT, seconds REAL, code_hash TEXT, detail TEXT, error_type TEXT,
    PRIMARY KEY (lab, student, attempt, exercise, name));
CREATE TABLE IF NOT EXISTS overrides (
    lab TEXT NOT NULL, student TEXT NOT NULL, exercise TEXT NOT NULL, points REAL NOT NULL,
    reason TEXT NOT NULL, set_at TEXT, PRIMARY KEY (lab, student, exercise));
"""
EXERCISE_COLUMNS = ("exercise, position, score, max_score, status, message, code_hash, stdout, "
                    "stderr, seconds")
CASE_COLUMNS = ("exercise, name, position, hidden, score, max_score, status, message, seconds, "
                "code_hash, detail, error_type")


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class TermGradebook:
    """A term gradebook file. Use as a context manager or call :meth:`close`."""

    def __init__(self, path: Path | str):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.executescript(SCHEMA)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        self.db.close()

    def _transaction(self):
        return _Transaction(self.db)

    # ------------------------------------------------------------------ writing

    def is_current(self, attempt, file_hash: str, fingerprint: str) -> bool:
        row = self.db.execute(
            "SELECT file_hash, lab_fingerprint, submitted_at FROM attempts WHERE lab=? AND "
            "student=? AND attempt=?", (attempt.lab, attempt.student, attempt.attempt)).fetchone()
        return row == (file_hash, fingerprint, attempt.submitted_at)

    def graded_copy(self, lab: str, file_hash: str, fingerprint: str) -> tuple | None:
        """An attempt already graded from the same bytes against the same lab, if any."""
        return self.db.execute(
            "SELECT student, attempt FROM attempts WHERE lab=? AND file_hash=? AND "
            "lab_fingerprint=? AND status != 'grader_error' ORDER BY student, attempt LIMIT 1",
            (lab, file_hash, fingerprint)).fetchone()

    def _attempt_row(self, db, attempt, file_hash, fingerprint, score, max_score, status, notes,
                     language):
        key = (attempt.lab, attempt.student, attempt.attempt)
        for table in ("attempt_cases", "attempt_exercises", "attempts"):
            db.execute(f"DELETE FROM {table} WHERE lab=? AND student=? AND attempt=?", key)
        db.execute("INSERT INTO attempts VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                   (*key, str(attempt.path), file_hash, fingerprint, attempt.submitted_at,
                    attempt.time_source, _now(), score, max_score, status, notes, language))
        return key

    def record(self, attempt, grade) -> None:
        """Replace everything stored for ``attempt`` with ``grade`` (a
        :class:`autograder.grade.SubmissionGrade`) in one transaction."""
        with self._transaction() as db:
            key = self._attempt_row(db, attempt, grade.file_hash, grade.fingerprint, grade.score,
                                    grade.max_score, grade.status, "\n".join(grade.notes),
                                    grade.language)
            for pos, ex in enumerate(grade.exercises):
                db.execute("INSERT INTO attempt_exercises VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                           (*key, ex.exercise, pos, ex.score, ex.max_score, ex.status,
                            ex.message, ex.code_hash, ex.stdout, ex.stderr, ex.seconds))
                for cpos, case in enumerate(ex.cases):
                    db.execute("INSERT INTO attempt_cases VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                               (*key, ex.exercise, case.name, cpos, int(case.hidden), case.score,
                                case.max_score, case.status, case.message, case.seconds,
                                ex.code_hash, None if case.hidden else json.dumps(case.detail),
                                case.error_type or None))

    def record_copy(self, attempt, source: tuple[str, str], file_hash: str,
                    fingerprint: str) -> None:
        """Record ``attempt`` with the grade of ``source`` (``student, attempt`` of the same
        lab), graded from identical bytes: the sandbox need not run again."""
        lab = attempt.lab
        with self._transaction() as db:
            row = db.execute("SELECT score, max_score, status, notes, language FROM attempts "
                             "WHERE lab=? AND student=? AND attempt=?", (lab, *source)).fetchone()
            key = self._attempt_row(db, attempt, file_hash, fingerprint, *row)
            for table, columns in (("attempt_exercises", EXERCISE_COLUMNS),
                                   ("attempt_cases", CASE_COLUMNS)):
                db.execute(f"INSERT INTO {table} (lab, student, attempt, {columns}) "
                           f"SELECT ?, ?, ?, {columns} FROM {table} "
                           "WHERE lab=? AND student=? AND attempt=?", (*key, lab, *source))

    def set_override(self, lab: str, student: str, exercise: str, points: float,
                     reason: str) -> None:
        with self._transaction() as db:
            db.execute("INSERT OR REPLACE INTO overrides VALUES (?,?,?,?,?,?)",
                       (lab, student, exercise, points, reason, _now()))

    # ------------------------------------------------------------------ reading

    def attempts(self, lab: str | None = None) -> list[dict]:
        where, args = ("WHERE lab=?", (lab,)) if lab else ("", ())
        return _rows(self.db.execute(f"SELECT * FROM attempts {where} ORDER BY lab, student, "
                                     "attempt", args))

    def exercises(self, lab: str, student: str, attempt: str) -> list[dict]:
        return _rows(self.db.execute("SELECT * FROM attempt_exercises WHERE lab=? AND student=? "
                                     "AND attempt=? ORDER BY position", (lab, student, attempt)))

    def cases(self, lab: str, student: str, attempt: str, exercise: str | None = None) -> list:
        extra, args = ("AND exercise=?", (exercise,)) if exercise else ("", ())
        rows = _rows(self.db.execute(
            f"SELECT * FROM attempt_cases WHERE lab=? AND student=? AND attempt=? {extra} "
            "ORDER BY exercise, position", (lab, student, attempt, *args)))
        for row in rows:
            row["detail"] = json.loads(row["detail"]) if row["detail"] else None
        return rows

    def overrides(self, lab: str | None = None) -> list[dict]:
        where, args = ("WHERE lab=?", (lab,)) if lab else ("", ())
        return _rows(self.db.execute(f"SELECT * FROM overrides {where} ORDER BY lab, student, "
                                     "exercise", args))


class _Transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``, rolled back on any exception (a kill included)."""

    def __init__(self, db):
        self.db = db

    def __enter__(self):
        self.db.execute("BEGIN IMMEDIATE")
        return self.db

    def __exit__(self, kind, *rest):
        self.db.execute("ROLLBACK" if kind else "COMMIT")
