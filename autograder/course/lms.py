"""``course export``: the term's grades in an LMS's own gradebook import format.

Every format has one row per student of the roster and one column per lab, the
lab's points after overrides and the late penalty (:mod:`autograder.course.standing`).
A lab a student never submitted is 0 once its (extended) due date has passed and
empty before, so an import does not zero a lab still open.

* ``canvas``: the Gradebook CSV that Canvas exports and imports back. The first
  columns are ``Student``, ``ID``, ``SIS User ID``, ``SIS Login ID``, ``Section``
  (Canvas matches a row on ``ID``, else ``SIS User ID``, else ``SIS Login ID``),
  then one column per assignment, named as the assignment; the second row holds
  ``Points Possible`` in the ``Student`` column and each assignment's points.
  Sources: Ohio State's guide "Import a CSV file to Carmen Grades"
  (https://teaching.resources.osu.edu/toolsets/carmencanvas/guides/calculating-final-grades/import-csv-file-carmen-grades),
  which lists those required columns, and VCU's "Gradebook Action Menu"
  (https://ts.vcu.edu/askit/teaching-and-learning/canvas/faculty/grading-faculty/gradebook-action-menu-faculty/)
  on the exported file that an import reads back. A new assignment column creates
  the assignment in Canvas.
* ``moodle``: the CSV of Moodle's grade import (Grades > Import > CSV file),
  documented at https://docs.moodle.org/311/en/Grade_import: any columns, one of
  which identifies the user, mapped in the import form from ``Email address`` to
  ``useremail`` or from ``ID number`` to ``useridnumber``, and one column per grade
  item, mapped to that item. Columns here: ``Email address``, ``ID number``,
  ``Full name``, then one per lab named as the lab. (Moodle compares e-mail
  addresses case-sensitively, so they are written as the roster spells them.)
* ``csv``: a plain table for scripts: ``student``, ``name``, ``email``, per lab its
  points, late days and the attempt that counted, then ``total``, ``max`` and the
  overrides with their reasons.

Next to the grades, ``feedback/<lab>/<student>.md|.html`` is each student's
feedback on their counted attempt (:mod:`autograder.export`'s, headed by the
course's own lines: when it was submitted, how late, the penalty, the final
points, and every override with its reason).
"""

from __future__ import annotations

import csv
import datetime as dt
import html
from pathlib import Path

from ..export import feedback_html, feedback_markdown, md_escape
from .config import Course
from .standing import CountedLab, Standing, standings
from .term import TermGradebook
from .words import WORDS, say

FORMATS = ("canvas", "moodle", "csv")
CANVAS_FIXED = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
CANVAS_POINTS_ROW = "Points Possible"
MOODLE_FIXED = ("Email address", "ID number", "Full name")


def _points(x: float) -> str:
    return f"{round(x, 2):g}"


def cell(s: Standing, now: dt.datetime) -> str:
    """A lab's cell: its final points; 0 when missing past the due date; empty before."""
    if s.submitted:
        return _points(s.final)
    return "0" if now > s.due else ""


def write_canvas(course: Course, results: dict, path: Path, now: dt.datetime) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow([*CANVAS_FIXED, *(lab.name for lab in course.labs)])
        w.writerow([CANVAS_POINTS_ROW, *[""] * (len(CANVAS_FIXED) - 1),
                    *(_points(lab.points) for lab in course.labs)])
        for s in course.students:
            w.writerow([s.name, s.canvas_id, s.sis_id, s.login, s.section,
                        *(cell(results[lab.id, s.id], now) for lab in course.labs)])
    return path


def write_moodle(course: Course, results: dict, path: Path, now: dt.datetime) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow([*MOODLE_FIXED, *(lab.name for lab in course.labs)])
        for s in course.students:
            w.writerow([s.email, s.sis_id, s.name,
                        *(cell(results[lab.id, s.id], now) for lab in course.labs)])
    return path


def write_plain(course: Course, results: dict, path: Path, now: dt.datetime) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        head = ["student", "name", "email"]
        for lab in course.labs:
            head += [lab.id, f"{lab.id} late days", f"{lab.id} attempt"]
        w.writerow([*head, "total", "max", "overrides"])
        for s in course.students:
            row, total, notes = [s.id, s.name, s.email], 0.0, []
            for lab in course.labs:
                r = results[lab.id, s.id]
                total += r.final
                row += [cell(r, now), str(r.late_days) if r.submitted else "",
                        r.attempt["attempt"] if r.submitted else ""]
                notes += [f"{lab.id}/{o['exercise']}={o['points']:g} ({o['reason']})"
                          for o in r.overrides]
            w.writerow([*row, _points(total), _points(sum(lab.points for lab in course.labs)),
                        "; ".join(notes)])
    return path


WRITERS = {"canvas": (write_canvas, "canvas.csv"), "moodle": (write_moodle, "moodle.csv"),
           "csv": (write_plain, "grades.csv")}


def course_lines(s: Standing) -> list[str]:
    """The course's part of a student's feedback, one sentence a line, in the language
    the counted attempt was graded in."""
    row = s.attempt
    lang = row["language"] if row["language"] in WORDS else "en"
    lines = [say(lang, "fb_attempt", attempt=row["attempt"], at=row["submitted_at"],
                 due=s.due.isoformat(), source=say(lang, f"fb_source_{row['time_source']}"))]
    if s.late_days:
        lines.append(say(lang, "fb_late", days=s.late_days, pct=f"{100 * s.penalty:g}"))
    lines.append(say(lang, "fb_points", score=_points(s.score), max=_points(s.max_score),
                     final=_points(s.final), points=_points(s.points)))
    lines += [say(lang, "fb_override", exercise=o["exercise"], points=f"{o['points']:g}",
                  reason=o["reason"]) for o in s.overrides]
    return lines


def _with_course_lines(text: str, lines: list[str], markdown: bool) -> str:
    """``text`` (a feedback page) with ``lines`` after its title."""
    if markdown:
        head, _, rest = text.partition("\n")
        return "\n".join([head, "", *(f"- {md_escape(line)}" for line in lines), rest])
    block = "<ul class='course'>" + "".join(f"<li>{html.escape(line)}</li>"
                                            for line in lines) + "</ul>"
    head, sep, rest = text.partition("</h1>")
    return head + sep + block + rest


def write_feedback(course: Course, book: TermGradebook, results: dict, out: Path) -> None:
    for lab in course.labs:
        view = CountedLab(book, lab, results)
        folder = out / "feedback" / lab.id
        folder.mkdir(parents=True, exist_ok=True)
        for student, s in view.counted.items():
            lines = course_lines(s)
            (folder / f"{student}.md").write_text(
                _with_course_lines(feedback_markdown(view, lab.spec, student), lines, True),
                encoding="utf-8")
            (folder / f"{student}.html").write_text(
                _with_course_lines(feedback_html(view, lab.spec, student), lines, False),
                encoding="utf-8")


def export_course(course: Course, book: TermGradebook, fmt: str, out: Path,
                  now: dt.datetime | None = None) -> Path:
    """Write the ``fmt`` gradebook file and the feedback under ``out``; returns the file."""
    if fmt not in WRITERS:
        raise ValueError(f"no export format {fmt!r}; use one of {', '.join(FORMATS)}")
    now = now or dt.datetime.now(dt.UTC)
    results = standings(course, book)
    out.mkdir(parents=True, exist_ok=True)
    writer, name = WRITERS[fmt]
    path = writer(course, results, out / name, now)
    write_feedback(course, book, results, out)
    return path
