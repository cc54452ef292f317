"""Where a term's submissions lie and when each was submitted.

Layout, under the course file's ``submissions`` folder::

    <lab>/<student>.ipynb                 one attempt
    <lab>/<student>/<attempt>.ipynb       several attempts (any names: 1.ipynb, 2.ipynb, ...)
    <lab>/timestamps.csv                  the submission times (with ``times = "manifest"``)

``<student>`` is an id of the roster. An attempt is named by its path inside the
lab folder (``s001.ipynb`` or ``s001/2.ipynb``).

The time of a submission comes from one of two places, chosen by ``times``:

* ``"manifest"`` (the default): ``<lab>/timestamps.csv`` with the columns
  ``file,submitted_at``, ``file`` being the attempt's path inside the lab folder and
  ``submitted_at`` an ISO 8601 time with its UTC offset (``2026-10-05T23:10:00+08:00``
  or ``...Z``). This is what an LMS's submission export records; a student cannot
  change it. A file the manifest does not list is not graded (the log says so).
* ``"mtime"``: the file's modification time on the instructor's disk. Students
  cannot set it, but copying can: collect with ``cp -p``, ``rsync -t`` or ``unzip``
  (which keep it), never with a plain ``cp``.
"""

from __future__ import annotations

import csv
import datetime as dt
from dataclasses import dataclass
from pathlib import Path

from .config import Course

MANIFEST = "timestamps.csv"


@dataclass(frozen=True)
class Attempt:
    lab: str
    student: str
    attempt: str            # the path inside the lab folder, with "/"
    path: Path
    submitted_at: str       # ISO 8601 with offset
    time_source: str        # "manifest" or "mtime"


def _manifest(folder: Path) -> dict[str, str]:
    """``file -> submitted_at`` from ``folder/timestamps.csv``; refuses a bad row with
    what to write."""
    path = folder / MANIFEST
    if not path.is_file():
        return {}
    times = {}
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        if not {"file", "submitted_at"} <= set(reader.fieldnames or ()):
            raise ValueError(f"{path}: the header must be file,submitted_at (found "
                             f"{','.join(reader.fieldnames or ())})")
        for line, row in enumerate(reader, start=2):
            try:
                when = dt.datetime.fromisoformat(row["submitted_at"].strip())
            except (ValueError, AttributeError) as err:
                raise ValueError(f"{path}, line {line}: submitted_at {row['submitted_at']!r} is "
                                 "not an ISO 8601 time; write 2026-10-05T23:10:00+08:00") from err
            if when.tzinfo is None:
                raise ValueError(f"{path}, line {line}: {row['submitted_at']} has no UTC "
                                 "offset; add one, like +08:00 or Z")
            times[row["file"].strip()] = when.isoformat()
    return times


def _mtime(path: Path) -> str:
    return dt.datetime.fromtimestamp(path.stat().st_mtime, dt.UTC).isoformat()


def find_attempts(course: Course) -> tuple[list[Attempt], list[str]]:
    """Every attempt on disk, in a fixed order, and a log line for each file left out."""
    roster = {s.id for s in course.students}
    attempts, log = [], []
    for lab in course.labs:
        folder = course.submissions / lab.id
        if not folder.is_dir():
            log.append(f"{lab.id}: no folder {folder}; nothing submitted yet")
            continue
        manifest = _manifest(folder) if course.times == "manifest" else {}
        found = sorted(folder.glob("*.ipynb")) + sorted(folder.glob("*/*.ipynb"))
        for path in found:
            rel = path.relative_to(folder).as_posix()
            student = rel.split("/")[0].removesuffix(".ipynb")
            if student not in roster:
                log.append(f"{lab.id}/{rel}: {student!r} is not on the roster; not graded")
                continue
            if course.times == "manifest":
                if rel not in manifest:
                    log.append(f"{lab.id}/{rel}: not listed in {folder / MANIFEST}; not "
                               "graded (add a line file,submitted_at)")
                    continue
                when, source = manifest[rel], "manifest"
            else:
                when, source = _mtime(path), "mtime"
            attempts.append(Attempt(lab.id, student, rel, path, when, source))
    return attempts, log


def latest_attempts(course: Course, lab_id: str) -> dict[str, Path]:
    """``student -> path`` of each student's last-submitted attempt of ``lab_id``."""
    attempts, _ = find_attempts(course)
    latest = {}
    for attempt in sorted((a for a in attempts if a.lab == lab_id),
                          key=lambda a: dt.datetime.fromisoformat(a.submitted_at)):
        latest[attempt.student] = attempt.path
    return latest
