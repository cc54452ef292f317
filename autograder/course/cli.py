"""``python -m autograder course ...``: the term's commands.

::

    course grade COURSE.toml [-j N] [--force]         grade what is new into the term gradebook
    course export COURSE.toml --format canvas|moodle|csv [--out DIR]
    course report COURSE.toml [--lang en|zh] [--out FILE.html]
    course override COURSE.toml LAB STUDENT EXERCISE POINTS --reason TEXT
    course similarity COURSE.toml LAB [--lang en|zh] [--out FILE.html]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .words import LANGUAGES

# The commands import what they use when they run: `python -m autograder` also runs
# inside Gradescope on Python 3.10, without tomllib (3.11) or plotly, and must start
# there whatever the course commands need.


def cmd_grade(args) -> int:
    from .config import load_course
    from .grading import grade_course
    from .term import TermGradebook

    course = load_course(args.course)
    with TermGradebook(course.gradebook) as book:
        summary = grade_course(course, book, jobs=args.jobs, force=args.force,
                               progress=not args.no_progress, time_limit=args.time_limit,
                               memory_mb=args.memory_mb, isolate=not args.no_isolation)
    log = course.gradebook.with_name("term.log")
    with open(log, "a", encoding="utf-8") as fh:
        fh.write(summary.line() + "\n" + "".join(f"  {line}\n" for line in summary.log))
    for line in summary.log:
        print(line, file=sys.stderr)
    print(summary.line())
    print(f"term gradebook: {course.gradebook}  (log: {log})")
    return 1 if summary.grader_errors else 0


def _existing_book(course):
    from .term import TermGradebook

    if not course.gradebook.is_file():
        raise LookupError(f"no term gradebook at {course.gradebook}; run `python -m autograder "
                          f"course grade {course.path}` first")
    return TermGradebook(course.gradebook)


def cmd_export(args) -> int:
    from .config import load_course
    from .lms import export_course

    course = load_course(args.course)
    out = Path(args.out) if args.out else course.gradebook.parent / "export"
    with _existing_book(course) as book:
        path = export_course(course, book, args.format, out)
    print(f"wrote {path} and {out / 'feedback'}/")
    return 0


def cmd_report(args) -> int:
    from .config import load_course
    from .report import course_summary, write_course_report

    course = load_course(args.course)
    out = Path(args.out) if args.out else course.gradebook.parent / "course_report.html"
    with _existing_book(course) as book:
        summary = course_summary(course, book, language=args.lang)
    print(f"wrote {write_course_report(summary, out)}")
    return 0


def cmd_override(args) -> int:
    from ..notebook import exercise_points, read_notebook
    from .config import load_course
    from .term import TermGradebook

    course = load_course(args.course)
    lab = course.lab(args.lab)
    course.student(args.student)
    points = exercise_points(read_notebook(lab.spec.source))
    if args.exercise not in points:
        raise LookupError(f"lab {lab.id} has no exercise {args.exercise!r}; its exercises are "
                          f"{', '.join(points)}")
    most = points[args.exercise]
    if not 0 <= args.points <= most:
        raise ValueError(f"{args.points:g} points is outside 0..{most:g}, the range of "
                         f"{lab.id}/{args.exercise}")
    if not args.reason.strip():
        raise ValueError("--reason is empty; say why the score changes (the student reads it)")
    with TermGradebook(course.gradebook) as book:
        book.set_override(lab.id, args.student, args.exercise, args.points, args.reason.strip())
    print(f"{lab.id}/{args.student}/{args.exercise}: {args.points:g} points ({args.reason})")
    return 0


def cmd_similarity(args) -> int:
    """Compare each student's latest attempt of one lab (the similarity page of
    ``python -m autograder similarity``, over the term's submission layout)."""
    from ..similarity import similarity_report, write_page
    from .config import load_course
    from .layout import latest_attempts

    course = load_course(args.course)
    lab = course.lab(args.lab)
    latest = latest_attempts(course, lab.id)
    if len(latest) < 2:
        print(f"error: {lab.id} has attempts from {len(latest)} student(s) under "
              f"{course.submissions / lab.id}; comparing needs at least two", file=sys.stderr)
        return 1
    names = {path: student for student, path in latest.items()}
    report = similarity_report(lab.spec, list(latest.values()), args.lang, names=names)
    out = Path(args.out) if args.out else course.gradebook.parent / f"similarity_{lab.id}.html"
    print(f"compared the latest attempts of {len(report.submissions)} students in "
          f"{report.seconds:.1f} s; wrote {write_page(report, out)}")
    return 0


def add_parser(sub) -> None:
    """Add ``course`` and its subcommands to the top-level subparsers ``sub``."""
    c = sub.add_parser("course",
                       help="a whole term: grade, export to an LMS, report, override, similarity",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    cs = c.add_subparsers(dest="course_command", required=True)

    g = cs.add_parser("grade", help="grade every new attempt of every lab")
    g.add_argument("course", help="the course file (TOML)")
    g.add_argument("-j", "--jobs", type=int, default=1, help="sandboxes at a time")
    g.add_argument("--force", action="store_true", help="regrade every attempt")
    g.add_argument("--time-limit", type=float, help="seconds per exercise (overrides the spec)")
    g.add_argument("--memory-mb", type=int, default=1024, help="address-space limit per sandbox")
    g.add_argument("--no-isolation", action="store_true", help="skip namespaces (see GUIDE.md)")
    g.add_argument("--no-progress", action="store_true")
    g.set_defaults(run=cmd_grade)

    e = cs.add_parser("export", help="write an LMS's gradebook import file and the feedback")
    e.add_argument("course")
    e.add_argument("--format", required=True, help="canvas, moodle or csv")
    e.add_argument("--out", help="folder (default: export/ beside the term gradebook)")
    e.set_defaults(run=cmd_export)

    r = cs.add_parser("report", help="write the class report across labs (one offline page)")
    r.add_argument("course")
    r.add_argument("--lang", choices=LANGUAGES, default="en")
    r.add_argument("--out", help="HTML file (default: course_report.html beside the gradebook)")
    r.set_defaults(run=cmd_report)

    o = cs.add_parser("override", help="set one exercise's score for one student, with a reason")
    o.add_argument("course")
    o.add_argument("lab")
    o.add_argument("student")
    o.add_argument("exercise")
    o.add_argument("points", type=float)
    o.add_argument("--reason", required=True, help="why; shown in the student's feedback")
    o.set_defaults(run=cmd_override)

    s = cs.add_parser("similarity", help="rank pairs of students' latest attempts that share "
                                         "code (evidence for a person to judge, not a verdict)")
    s.add_argument("course")
    s.add_argument("lab")
    s.add_argument("--lang", choices=LANGUAGES, default="en")
    s.add_argument("--out", help="HTML file (default: similarity_LAB.html beside the gradebook)")
    s.set_defaults(run=cmd_similarity)
