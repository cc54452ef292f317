"""Exporting a gradebook: ``grades.csv`` and per-student feedback (Markdown and HTML).

``grades.csv`` has one row per student: ``student``, one column per exercise
(its score), ``total`` and ``max``.

Feedback is a short report per exercise: the score; how many public cases
passed; the first failing public case (input, expected, got, message); the
other failing public cases by name; the hidden cases by name and outcome only,
with the exception's class when one raised; what the code printed while its
public cases ran (the first part). A hidden case's message, values and printed
output are never shown: the grader runs hidden cases in a process of their own
and keeps nothing they print.

Everything a submission controls (values, messages, exception names) is
rendered inertly. In HTML it is escaped. In Markdown it goes into a code span
whose backtick fence is longer than any backtick run inside, on one line
(line breaks shown as ``⏎``), or, when it spans lines, into a fenced block whose
fence no line inside can close. The report uses no tables, so ``|`` needs no
escaping.
"""

from __future__ import annotations

import csv
import html
import re
from dataclasses import dataclass, field
from pathlib import Path

from .gradebook import Gradebook
from .spec import LabSpec
from .summarize import clip

LABELS = {"passed": "passed", "failed": "failed", "error": "error",
          "not_attempted": "not attempted", "timeout": "timed out", "crashed": "crashed",
          "forbidden_import": "forbidden import", "missing": "missing",
          "invalid_submission": "invalid submission", "partial": "partly passed"}

SAME_FOR_EVERY_CASE = {"not_attempted", "missing", "forbidden_import", "invalid_submission"}
"""Case statuses that say nothing about one case in particular: reported once per exercise."""

VALUE_CHARS = 160
"""Characters an input, expected or returned value may take in feedback."""
MESSAGE_CHARS = 400
"""Characters a one-line message may take in feedback."""
BLOCK_LINES = 15
"""Lines a multi-line message (a traceback) may take in feedback."""

_LINE_BREAK = re.compile(r"\r\n|[\r\n\x0b\x0c\x1c-\x1e\x85\u2028\u2029]")
_BACKTICKS = re.compile(r"`+")
_MD_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")


def _fmt(x: float) -> str:
    return f"{x:.2f}".rstrip("0").rstrip(".") if x is not None else ""


def write_csv(book: Gradebook, lab: LabSpec, path: Path) -> Path:
    ids = [ex.id for ex in lab.exercises]
    with open(path, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["student", *ids, "total", "max"])
        for sub in book.students(lab.id):
            scores = {e["exercise"]: e["score"] for e in book.exercises(lab.id, sub["student"])}
            writer.writerow([sub["student"], *(_fmt(scores.get(i, 0.0)) for i in ids),
                             _fmt(sub["score"]), _fmt(sub["max_score"])])
    return path


# ------------------------------------------------------------------ what the report says


@dataclass
class ExerciseReport:
    """One exercise of one student's feedback, read from the gradebook."""

    id: str
    score: float
    max_score: float
    status: str
    message: str
    public_passed: int = 0
    public_total: int = 0
    first_failure: dict | None = None
    other_failures: list[str] = field(default_factory=list)
    hidden: list[dict] = field(default_factory=list)
    every_case: str = ""   # the status all cases share, if they share one
    cases: int = 0
    printed: str = ""      # what the public cases' run printed (hidden runs keep nothing)

    def all_passed(self) -> str:
        """"All N cases passed (...)." when they did, else ""."""
        if self.every_case != "passed":
            return ""
        return (f"All {self.cases} cases passed ({self.public_total} public, "
                f"{len(self.hidden)} hidden).")


def exercise_reports(book: Gradebook, lab: LabSpec, student: str) -> list[ExerciseReport]:
    """The report of every exercise ``student`` was graded on, in the lab's order."""
    reports = []
    for ex in book.exercises(lab.id, student):
        cases = book.cases(lab.id, student, ex["exercise"])
        public = [c for c in cases if not c["hidden"]]
        failing = [c for c in public if c["status"] != "passed"]
        statuses = {c["status"] for c in cases}
        reports.append(ExerciseReport(
            ex["exercise"], ex["score"], ex["max_score"], ex["status"], ex["message"] or "",
            public_passed=len(public) - len(failing), public_total=len(public),
            first_failure=failing[0] if failing else None,
            other_failures=[c["name"] for c in failing[1:]],
            hidden=[c for c in cases if c["hidden"]],
            every_case=statuses.pop() if len(statuses) == 1 else "",
            cases=len(cases), printed=ex["stdout"] or ""))
    return reports


def _label(status: str) -> str:
    return LABELS.get(status, status)


def _inputs(detail: dict) -> str:
    kwargs = detail.get("kwargs")
    return str(detail.get("args", "")) + ("" if kwargs in (None, "", "{}") else f" {kwargs}")


def _hidden_outcome(case: dict) -> tuple[str, str]:
    """A hidden case's outcome and, when it raised, the exception's class (or "")."""
    error_type = case.get("error_type") if case["status"] != "passed" else None
    return _label(case["status"]), str(error_type or "")


PRINTED_NOTE = ("Your code printed, while the public cases ran (first part; nothing printed "
                "during hidden cases is kept):")
PRINTED_CHARS = 2000


# ------------------------------------------------------------------ Markdown


def _single_line(text: str) -> str:
    return _LINE_BREAK.sub(" ⏎ ", text.replace("\x00", "\ufffd"))


def md_code(text, limit: int = VALUE_CHARS) -> str:
    """``text`` as one inline code span that nothing inside can end or break out of."""
    text = clip(_single_line(str(text)), limit)
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if not text or text[0] in "` " or text[-1] in "` " else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def md_block(text, max_lines: int = BLOCK_LINES) -> str:
    """``text`` as a fenced code block whose fence is longer than any backtick run inside,
    so no line of it can close the block."""
    lines = _LINE_BREAK.split(str(text).replace("\x00", "\ufffd"))
    if len(lines) > max_lines:
        lines = lines[:max_lines] + [f"... ({len(lines) - max_lines} more lines)"]
    body = "\n".join(clip(line, MESSAGE_CHARS) for line in lines)
    longest = max((len(run) for run in _BACKTICKS.findall(body)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{body}\n{fence}"


def md_escape(text: str) -> str:
    """Plain text with every Markdown-significant ASCII character backslash-escaped."""
    return _MD_PUNCTUATION.sub(r"\\\1", _single_line(text))


def _md_message(message: str) -> tuple[list[str], list[str]]:
    """A case message as a list item when it is one line, else as a block after the list."""
    if not message:
        return [], []
    if _LINE_BREAK.search(message):
        return [], ["", md_block(message)]
    return [f"- message: {md_code(message, MESSAGE_CHARS)}"], []


def _md_exercise(report: ExerciseReport) -> list[str]:
    out = [f"## {report.id}: {_fmt(report.score)} / {_fmt(report.max_score)} "
           f"({_label(report.status)})", ""]
    if report.message:
        out += [md_block(report.message), ""]
    if report.all_passed():
        return out + [report.all_passed(), ""]
    if report.every_case in SAME_FOR_EVERY_CASE:
        return out + [f"All {report.cases} cases: {_label(report.every_case)}.", ""]
    out.append(f"Public cases: {report.public_passed} of {report.public_total} passed.")
    case = report.first_failure
    if case is not None:
        detail = case["detail"] or {}
        items = [f"- input: {md_code(_inputs(detail))}"] if detail.get("args") else []
        items += [f"- {key}: {md_code(detail[key])}" for key in ("expected", "got")
                  if key in detail]
        item, block = _md_message(case["message"] or "")
        out += ["", f"First failing public case: {md_code(case['name'])} "
                    f"({_label(case['status'])})", "", *items, *item, *block]
        if report.other_failures:
            out += ["", "Also failing: " + ", ".join(md_code(n) for n in report.other_failures)
                    + "."]
    if report.hidden:
        out += ["", "Hidden cases (name and result only):", ""]
        for hidden in report.hidden:
            label, error_type = _hidden_outcome(hidden)
            out.append(f"- {md_code(hidden['name'])}: {label}"
                       + (f" ({md_code(error_type, 80)})" if error_type else ""))
    if report.printed:
        out += ["", PRINTED_NOTE, "", md_block(clip(report.printed, PRINTED_CHARS))]
    return out + [""]


def feedback_markdown(book: Gradebook, lab: LabSpec, student: str) -> str:
    """One student's feedback as Markdown (see the module docstring)."""
    sub = next(s for s in book.students(lab.id) if s["student"] == student)
    out = [f"# {lab.title}: feedback for {md_escape(student)}", "",
           f"**Total: {_fmt(sub['score'])} / {_fmt(sub['max_score'])}**", ""]
    if sub["status"] != "graded":
        out += [f"Submission status: {_label(sub['status'])}.", ""]
    for report in exercise_reports(book, lab, student):
        out += _md_exercise(report)
    return "\n".join(out)


# ------------------------------------------------------------------ HTML


def _code(text, limit: int = VALUE_CHARS) -> str:
    return f"<code>{html.escape(clip(str(text), limit))}</code>"


def _pre(text) -> str:
    lines = str(text).splitlines()
    if len(lines) > BLOCK_LINES:
        lines = lines[:BLOCK_LINES] + [f"... ({len(lines) - BLOCK_LINES} more lines)"]
    return "<pre>" + html.escape("\n".join(clip(line, MESSAGE_CHARS) for line in lines)) + \
        "</pre>"


def _html_failure(case: dict) -> list[str]:
    detail = case["detail"] or {}
    items = [f"<li>input: {_code(_inputs(detail))}</li>"] if detail.get("args") else []
    items += [f"<li>{key}: {_code(detail[key])}</li>" for key in ("expected", "got")
              if key in detail]
    message = case["message"] or ""
    multi_line = bool(_LINE_BREAK.search(message))
    if message and not multi_line:
        items.append(f"<li>message: {_code(message, MESSAGE_CHARS)}</li>")
    return [f"<p>First failing public case: {_code(case['name'])} "
            f"(<span class='bad'>{html.escape(_label(case['status']))}</span>)</p>",
            f"<ul>{''.join(items)}</ul>",
            *([_pre(message)] if multi_line else [])]


def _html_exercise(report: ExerciseReport) -> list[str]:
    e = html.escape
    parts = [f"<h2>{e(report.id)}: {_fmt(report.score)} / {_fmt(report.max_score)}"
             f" ({e(_label(report.status))})</h2>"]
    if report.message:
        parts.append(_pre(report.message))
    if report.all_passed():
        return parts + [f"<p>{e(report.all_passed())}</p>"]
    if report.every_case in SAME_FOR_EVERY_CASE:
        return parts + [f"<p>All {report.cases} cases: {e(_label(report.every_case))}.</p>"]
    parts.append(f"<p>Public cases: {report.public_passed} of {report.public_total} passed.</p>")
    if report.first_failure is not None:
        parts += _html_failure(report.first_failure)
        if report.other_failures:
            parts.append("<p>Also failing: " + ", ".join(_code(n) for n in report.other_failures)
                         + ".</p>")
    if report.hidden:
        rows = []
        for hidden in report.hidden:
            label, error_type = _hidden_outcome(hidden)
            cls = "passed" if hidden["status"] == "passed" else "bad"
            rows.append(f"<li>{_code(hidden['name'])}: <span class='{cls}'>{e(label)}</span>"
                        + (f" ({_code(error_type, 80)})" if error_type else "") + "</li>")
        parts.append(f"<p>Hidden cases (name and result only):</p><ul>{''.join(rows)}</ul>")
    if report.printed:
        parts.append(f"<p>{e(PRINTED_NOTE)}</p>{_pre(clip(report.printed, PRINTED_CHARS))}")
    return parts


def feedback_html(book: Gradebook, lab: LabSpec, student: str) -> str:
    """One student's feedback as a standalone HTML page (everything escaped)."""
    sub = next(s for s in book.students(lab.id) if s["student"] == student)
    e = html.escape
    parts = [f"<!doctype html><meta charset='utf-8'><title>{e(lab.title)}: {e(student)}</title>",
             "<style>body{font-family:sans-serif;max-width:70em;margin:auto}"
             ".passed{color:#1a7f37}.bad{color:#cf222e}"
             "code,pre{white-space:pre-wrap}</style>",
             f"<h1>{e(lab.title)}: feedback for {e(student)}</h1>",
             f"<p><b>Total: {_fmt(sub['score'])} / {_fmt(sub['max_score'])}</b></p>"]
    if sub["status"] != "graded":
        parts.append(f"<p>Submission status: {e(_label(sub['status']))}.</p>")
    for report in exercise_reports(book, lab, student):
        parts += _html_exercise(report)
    return "\n".join(parts) + "\n"


def export(book: Gradebook, lab: LabSpec, out_dir: Path | str) -> Path:
    """Write ``grades.csv`` and ``feedback/<student>.md|.html`` under ``out_dir``."""
    out = Path(out_dir)
    feedback = out / "feedback"
    feedback.mkdir(parents=True, exist_ok=True)
    write_csv(book, lab, out / "grades.csv")
    for sub in book.students(lab.id):
        student = sub["student"]
        (feedback / f"{student}.md").write_text(feedback_markdown(book, lab, student),
                                                encoding="utf-8")
        (feedback / f"{student}.html").write_text(feedback_html(book, lab, student),
                                                  encoding="utf-8")
    return out
