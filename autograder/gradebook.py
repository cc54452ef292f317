"""The gradebook: one SQLite file per lab, written one submission per transaction.

Tables:

* ``submissions`` — one row per student: file, its SHA-256, the lab fingerprint it
  was graded against, total score, status, notes (sandbox isolation included) and
  the language the grader wrote its messages in (the submitted notebook's, ``en``
  or ``zh``), which the feedback, Gradescope and the class report then speak.
* ``exercises`` — one row per student x exercise: score, status, message, the
  submitted code's hash, captured (truncated) stdout/stderr, time.
* ``cases`` — one row per student x exercise x case: score, status, message,
  seconds, code hash, the exception class of an error (``error_type``), and for
  *public* cases a JSON ``detail`` (input, expected, got) for feedback. A hidden
  case stores its name, outcome, score, time and a message the grader wrote (for
  an error, only the class when it is a built-in one): never the submission's
  messages, output or values, nor the expected value.

Re-grading a submission replaces its rows inside one transaction, so a grader
killed mid-batch leaves every earlier submission complete and the interrupted
one absent; the next ``grade`` skips submissions already graded from the same
file against the same lab fingerprint and carries on.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS submissions (
    lab TEXT NOT NULL, student TEXT NOT NULL, path TEXT, file_hash TEXT,
    lab_fingerprint TEXT, graded_at TEXT, score REAL, max_score REAL, status TEXT,
    notes TEXT, language TEXT, PRIMARY KEY (lab, student));
CREATE TABLE IF NOT EXISTS exercises (
    lab TEXT NOT NULL, student TEXT NOT NULL, exercise TEXT NOT NULL, position INTEGER,
    score REAL, max_score REAL, status TEXT, message TEXT, code_hash TEXT,
    stdout TEXT, stderr TEXT, seconds REAL, PRIMARY KEY (lab, student, exercise));
CREATE TABLE IF NOT EXISTS cases (
    lab TEXT NOT NULL, student TEXT NOT NULL, exercise TEXT NOT NULL, name TEXT NOT NULL,
    position INTEGER, hidden INTEGER, score REAL, max_score REAL, status TEXT,
    message TEXT, seconds REAL, code_hash TEXT, detail TEXT, error_type TEXT,
    PRIMARY KEY (lab, student, exercise, name));
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT, lab TEXT, started_at TEXT, finished_at TEXT,
    graded INTEGER, skipped INTEGER, failed_to_run INTEGER, timed_out INTEGER,
    grader_errors INTEGER, log TEXT);
"""


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class Gradebook:
    """A gradebook file. Use as a context manager or call :meth:`close`."""

    def __init__(self, path: Path | str):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(self.path, timeout=30, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.executescript(SCHEMA)
        self._add_column("cases", "error_type")   # gradebooks written before these columns
        self._add_column("submissions", "language")

    def _add_column(self, table: str, column: str) -> None:
        """Add a TEXT ``column`` to ``table`` if the file predates it."""
        columns = {row[1] for row in self.db.execute(f"PRAGMA table_info({table})")}
        if column not in columns:
            self.db.execute(f"ALTER TABLE {table} ADD COLUMN {column} TEXT")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        self.db.close()

    def is_current(self, lab: str, student: str, file_hash: str, fingerprint: str) -> bool:
        row = self.db.execute(
            "SELECT file_hash, lab_fingerprint FROM submissions WHERE lab=? AND student=?",
            (lab, student)).fetchone()
        return row == (file_hash, fingerprint)

    def record(self, lab: str, grade) -> None:
        """Replace everything stored for ``grade.student`` in one transaction."""
        key = (lab, grade.student)
        db = self.db
        db.execute("BEGIN IMMEDIATE")
        try:
            for table in ("cases", "exercises", "submissions"):
                db.execute(f"DELETE FROM {table} WHERE lab=? AND student=?", key)
            for pos, ex in enumerate(grade.exercises):
                db.execute("INSERT INTO exercises VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                           (*key, ex.exercise, pos, ex.score, ex.max_score, ex.status,
                            ex.message, ex.code_hash, ex.stdout, ex.stderr, ex.seconds))
                for cpos, case in enumerate(ex.cases):
                    db.execute("INSERT INTO cases VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                               (*key, ex.exercise, case.name, cpos, int(case.hidden), case.score,
                                case.max_score, case.status, case.message, case.seconds,
                                ex.code_hash,
                                None if case.hidden else json.dumps(case.detail),
                                case.error_type or None))
            db.execute("INSERT INTO submissions (lab, student, path, file_hash, lab_fingerprint,"
                       " graded_at, score, max_score, status, notes, language)"
                       " VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                       (*key, grade.path, grade.file_hash, grade.fingerprint, _now(),
                        grade.score, grade.max_score, grade.status, "\n".join(grade.notes),
                        grade.language))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def log_run(self, lab: str, started_at: str, counts: dict, log: str) -> None:
        with self.db:
            self.db.execute(
                "INSERT INTO runs (lab, started_at, finished_at, graded, skipped, failed_to_run,"
                " timed_out, grader_errors, log) VALUES (?,?,?,?,?,?,?,?,?)",
                (lab, started_at, _now(), counts.get("graded", 0), counts.get("skipped", 0),
                 counts.get("failed_to_run", 0), counts.get("timed_out", 0),
                 counts.get("grader_errors", 0), log))

    def students(self, lab: str) -> list[dict]:
        cur = self.db.execute("SELECT * FROM submissions WHERE lab=? ORDER BY student", (lab,))
        return _rows(cur)

    def exercises(self, lab: str, student: str) -> list[dict]:
        cur = self.db.execute("SELECT * FROM exercises WHERE lab=? AND student=? "
                              "ORDER BY position", (lab, student))
        return _rows(cur)

    def cases(self, lab: str, student: str, exercise: str) -> list[dict]:
        cur = self.db.execute("SELECT * FROM cases WHERE lab=? AND student=? AND exercise=? "
                              "ORDER BY position", (lab, student, exercise))
        rows = _rows(cur)
        for row in rows:
            row["detail"] = json.loads(row["detail"]) if row["detail"] else None
        return rows

    def lab_exercises(self, lab: str) -> list[dict]:
        """Every exercise row of ``lab``, all students at once (for class-wide summaries)."""
        cur = self.db.execute("SELECT * FROM exercises WHERE lab=? ORDER BY student, position",
                              (lab,))
        return _rows(cur)

    def lab_cases(self, lab: str) -> list[dict]:
        """Every case row of ``lab``, all students at once; ``detail`` is left out."""
        cur = self.db.execute("SELECT * FROM cases WHERE lab=? ORDER BY student, exercise, "
                              "position", (lab,))
        rows = _rows(cur)
        for row in rows:
            del row["detail"]
        return rows


def _rows(cursor) -> list[dict]:
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
