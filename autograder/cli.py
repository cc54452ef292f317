"""``python -m autograder`` (also ``course-autograder``): the instructor's commands.

::

    release LAB [--out build/release] [--lang en|zh]   student notebook + public cases
    grade LAB SUBMISSIONS [-j N] [--force]     sandboxed grading into the gradebook
    export LAB [--out DIR]                     grades.csv + feedback/<student>.md|.html
    table LAB                                  print the gradebook as a table
    report LAB [--out FILE.html]               class report: one offline HTML page
    similarity LAB SUBMISSIONS [--out FILE.html] [--lang en|zh]   pairs that share code
    progress [PATH ...] [--lang en|zh]         a learner's practice and lab exercises
    gradescope LAB [--out FILE.zip] [--hidden-visibility V]   Gradescope autograder zip
    gradescope-run LAB --submission DIR --results FILE   (inside Gradescope)
    course grade|export|report|override COURSE.toml ...  a whole term (autograder.course.cli)

Feedback, Gradescope results and the class report speak the language of the
submitted notebooks (a lab released with ``--lang zh`` is graded, exported and
reported in Chinese); no option chooses it, so one lab can be released in both
languages and each student reads their own.

``LAB`` is a lab id (``lab1_graph``) or a directory containing ``spec.py``. The
gradebook defaults to ``build/grades/<lab_id>/gradebook.sqlite3``. Exit status:
0 when the grader worked (whatever the scores), 1 when the grader itself failed
(a broken spec or reference, an unreadable gradebook, an internal error), 2 for
bad arguments.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .course.cli import add_parser as add_course_parser
from .release import LANGUAGES
from .spec import load_lab

DEFAULT_GRADES = Path("build") / "grades"
DEFAULT_REPORTS = Path("build") / "reports"


def _gradebook_path(args, lab) -> Path:
    return Path(args.gradebook) if args.gradebook else DEFAULT_GRADES / lab.id / "gradebook.sqlite3"


def _points(row) -> str:
    """``score/max`` with at most two decimals (partial credit is often a fraction)."""
    return f"{round(row['score'], 2):g}/{row['max_score']:g}"


def format_table(book, lab) -> str:
    ids = [ex.id for ex in lab.exercises]
    rows = [["student", *ids, "total"]]
    for sub in book.students(lab.id):
        scores = {e["exercise"]: e for e in book.exercises(lab.id, sub["student"])}
        rows.append([sub["student"]]
                    + [_points(scores[i]) if i in scores else "-" for i in ids]
                    + [_points(sub)])
    widths = [max(len(r[c]) for r in rows) for c in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
             for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def cmd_release(args) -> int:
    from .release import release

    out = release(load_lab(args.lab), args.out, language=args.lang)
    print(f"released {out}")
    return 0


def cmd_grade(args) -> int:
    from .grade import grade_batch, prepare, submissions_in
    from .gradebook import Gradebook

    lab = load_lab(args.lab)
    plan = prepare(lab, time_limit=args.time_limit, memory_mb=args.memory_mb,
                   isolate=not args.no_isolation)
    path = _gradebook_path(args, lab)
    with Gradebook(path) as book:
        summary = grade_batch(plan, submissions_in(Path(args.submissions)), book, jobs=args.jobs,
                              force=args.force, progress=not args.no_progress,
                              id_from=args.student_id)
        log = path.with_name("grade.log")
        with open(log, "a") as fh:
            fh.write(summary.line() + "\n" + "".join(f"  {line}\n" for line in summary.log))
        for line in summary.log:
            print(line, file=sys.stderr)
        if args.table:
            print(format_table(book, lab))
    print(summary.line())
    print(f"gradebook: {path}  (log: {log})")
    return 1 if summary.grader_errors else 0


def cmd_export(args) -> int:
    from .export import export
    from .gradebook import Gradebook

    lab = load_lab(args.lab)
    path = _gradebook_path(args, lab)
    if not path.is_file():
        print(f"no gradebook at {path}; run `grade` first", file=sys.stderr)
        return 1
    out = Path(args.out) if args.out else path.parent
    with Gradebook(path) as book:
        export(book, lab, out)
    print(f"wrote {out / 'grades.csv'} and {out / 'feedback'}/")
    return 0


def cmd_table(args) -> int:
    from .gradebook import Gradebook

    lab = load_lab(args.lab)
    with Gradebook(_gradebook_path(args, lab)) as book:
        print(format_table(book, lab))
    return 0


def cmd_report(args) -> int:
    from .gradebook import Gradebook
    from .report import NoSubmissions, class_summary, write_report

    lab = load_lab(args.lab)
    path = _gradebook_path(args, lab)
    out = Path(args.out) if args.out else DEFAULT_REPORTS / lab.id / "report.html"
    try:
        if not path.is_file():
            raise NoSubmissions(lab.id, path)
        with Gradebook(path) as book:
            summary = class_summary(book, lab)
    except NoSubmissions as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    print(f"wrote {write_report(summary, out)}")
    return 0


def cmd_similarity(args) -> int:
    from .grade import submissions_in
    from .similarity import similarity_report, write_page

    lab = load_lab(args.lab)
    out = Path(args.out) if args.out else DEFAULT_REPORTS / lab.id / "similarity.html"
    paths = submissions_in(Path(args.submissions))
    if len(paths) < 2:
        print(f"error: {args.submissions} holds {len(paths)} .ipynb file(s); comparing needs "
              "at least two submissions", file=sys.stderr)
        return 1
    report = similarity_report(lab, paths, args.lang)
    print(f"compared {len(report.submissions)} submissions in {report.seconds:.1f} s; "
          f"wrote {write_page(report, out)}")
    return 0


def cmd_progress(args) -> int:
    from .progress import learner_progress

    print(learner_progress(args.paths or None, lang=args.lang).to_text())
    return 0


def cmd_gradescope(args) -> int:
    from .gradescope import build_zip

    lab = load_lab(args.lab)
    out = Path(args.out) if args.out else Path("build") / "gradescope" / f"{lab.id}.zip"
    print(f"wrote {build_zip(lab.id, out, hidden_visibility=args.hidden_visibility)}")
    return 0


def cmd_gradescope_run(args) -> int:
    from .gradescope import run

    return run(args.lab, args.submission, args.results, args.hidden_visibility)


def _hidden_visibility_option(p: argparse.ArgumentParser) -> None:
    from .gradescope import DEFAULT_HIDDEN_VISIBILITY, VISIBILITIES

    p.add_argument("--hidden-visibility", choices=VISIBILITIES, default=DEFAULT_HIDDEN_VISIBILITY,
                   help="when students see the hidden cases' tests on Gradescope (default: "
                        "%(default)s; public cases are always visible)")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m autograder", description=__doc__.split("\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)

    r = sub.add_parser("release", help="build the student notebook into build/release/")
    r.add_argument("lab")
    r.add_argument("--out", default="build/release")
    r.add_argument("--lang", choices=tuple(LANGUAGES), default="en",
                   help="the notebook's language (default: %(default)s); zh releases "
                        "labs/<lab>/source.zh.ipynb into <out>/zh/<lab>/")
    r.set_defaults(run=cmd_release)

    g = sub.add_parser("grade", help="grade every .ipynb in a directory")
    g.add_argument("lab")
    g.add_argument("submissions", help="a directory of .ipynb files (or one file)")
    g.add_argument("-j", "--jobs", type=int, default=1, help="sandboxes at a time")
    g.add_argument("--gradebook", help="SQLite file (default build/grades/<lab>/gradebook.sqlite3)")
    g.add_argument("--force", action="store_true", help="re-grade even unchanged submissions")
    g.add_argument("--time-limit", type=float, help="seconds per exercise (overrides the spec)")
    g.add_argument("--memory-mb", type=int, default=1024, help="address-space limit per sandbox")
    g.add_argument("--student-id", choices=("filename", "metadata"), default="filename",
                   help="take the student id from the file name or notebook metadata "
                        "(metadata.autograder.student_id)")
    g.add_argument("--no-isolation", action="store_true",
                   help="skip namespaces and the fresh root (limits and uid nobody still apply); "
                        "for machines that refuse namespaces, and for comparison")
    g.add_argument("--table", action="store_true", help="print the score table at the end")
    g.add_argument("--no-progress", action="store_true")
    g.set_defaults(run=cmd_grade)

    e = sub.add_parser("export", help="write grades.csv and per-student feedback")
    e.add_argument("lab")
    e.add_argument("--gradebook")
    e.add_argument("--out", help="directory (default: next to the gradebook)")
    e.set_defaults(run=cmd_export)

    t = sub.add_parser("table", help="print the gradebook")
    t.add_argument("lab")
    t.add_argument("--gradebook")
    t.set_defaults(run=cmd_table)

    rp = sub.add_parser("report", help="write the class report (one offline HTML page)")
    rp.add_argument("lab")
    rp.add_argument("--gradebook")
    rp.add_argument("--out", help="HTML file (default build/reports/<lab>/report.html)")
    rp.set_defaults(run=cmd_report)

    sm = sub.add_parser("similarity", help="rank pairs of submissions that share code "
                                           "(one offline HTML page; evidence, not a verdict)")
    sm.add_argument("lab")
    sm.add_argument("submissions", help="a directory of .ipynb files")
    sm.add_argument("--out", help="HTML file (default build/reports/<lab>/similarity.html)")
    sm.add_argument("--lang", choices=tuple(LANGUAGES), default="en",
                    help="the page's language (default: %(default)s)")
    sm.set_defaults(run=cmd_similarity)

    pg = sub.add_parser("progress", help="which practice and lab exercises a learner's own "
                                         "notebooks pass (public cases, run as check() does)")
    pg.add_argument("paths", nargs="*", help="folders or notebooks to search (default: the "
                                             "course's folder and the current one)")
    pg.add_argument("--lang", choices=tuple(LANGUAGES), default=None,
                    help="the table's language (default: the course's language choice)")
    pg.set_defaults(run=cmd_progress)

    s = sub.add_parser("gradescope", help="build a Gradescope autograder zip")
    s.add_argument("lab")
    s.add_argument("--out")
    _hidden_visibility_option(s)
    s.set_defaults(run=cmd_gradescope)

    sr = sub.add_parser("gradescope-run", help="grade one submission inside Gradescope")
    sr.add_argument("lab")
    sr.add_argument("--submission", default="/autograder/submission")
    sr.add_argument("--results", default="/autograder/results/results.json")
    _hidden_visibility_option(sr)
    sr.set_defaults(run=cmd_gradescope_run)

    add_course_parser(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.command == "gradescope-run":
        return args.run(args)  # writes a failure result itself; never a traceback exit
    try:
        return args.run(args)
    except (LookupError, ValueError, TypeError, OSError, RuntimeError) as err:
        print(f"error: {type(err).__name__}: {err}", file=sys.stderr)
        return 1
