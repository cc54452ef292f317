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

Each student's feedback is in the language their submission was graded in (the
released notebook's, kept in the gradebook: see :mod:`autograder.grade`), with
the words of :mod:`autograder.messages`; ``grades.csv`` keeps its English column
names, which spreadsheets and scripts read.
"""

from __future__ import annotations

import csv
import html
import re
from dataclasses import dataclass, field
from pathlib import Path

from .gradebook import Gradebook
from .messages import ENGLISH, message
from .spec import LabSpec
from .summarize import clip

LABELED = frozenset(key.removeprefix("label_") for key in ENGLISH if key.startswith("label_"))
"""Statuses with a word of their own (``label_<status>`` in autograder.messages)."""

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


def label(status: str, language: str = "en") -> str:
    """A case's, exercise's or submission's status in words, in ``language``."""
    return message(language, f"label_{status}") if status in LABELED else status


def submission_language(row: dict) -> str:
    """The language of a gradebook's submission row (English for rows graded before the
    gradebook kept it)."""
    return row.get("language") or "en"


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
    language: str = "en"

    def say(self, key: str, **fields) -> str:
        """The message ``key`` in the report's language."""
        return message(self.language, key, **fields)

    def label(self, status: str) -> str:
        """``status`` in words, in the report's language."""
        return label(status, self.language)

    def all_passed(self) -> str:
        """"All N cases passed (...)." when they did, else ""."""
        if self.every_case != "passed":
            return ""
        return self.say("fb_all_passed", cases=self.cases, public=self.public_total,
                        hidden=len(self.hidden))


def exercise_reports(book: Gradebook, lab: LabSpec, student: str,
                     language: str = "en") -> list[ExerciseReport]:
    """The report of every exercise ``student`` was graded on, in the lab's order, each to be
    written in ``language``."""
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
            cases=len(cases), printed=ex["stdout"] or "", language=language))
    return reports


def _inputs(detail: dict) -> str:
    kwargs = detail.get("kwargs")
    return str(detail.get("args", "")) + ("" if kwargs in (None, "", "{}") else f" {kwargs}")


def _hidden_outcome(case: dict, language: str) -> tuple[str, str]:
    """A hidden case's outcome and, when it raised, the exception's class (or "")."""
    error_type = case.get("error_type") if case["status"] != "passed" else None
    return label(case["status"], language), str(error_type or "")


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


def md_block(text, max_lines: int = BLOCK_LINES, language: str = "en") -> str:
    """``text`` as a fenced code block whose fence is longer than any backtick run inside,
    so no line of it can close the block."""
    lines = _LINE_BREAK.split(str(text).replace("\x00", "\ufffd"))
    if len(lines) > max_lines:
        lines = lines[:max_lines] + [message(language, "fb_more_lines",
                                             count=len(lines) - max_lines)]
    body = "\n".join(clip(line, MESSAGE_CHARS) for line in lines)
    longest = max((len(run) for run in _BACKTICKS.findall(body)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{body}\n{fence}"


def md_escape(text: str) -> str:
    """Plain text with every Markdown-significant ASCII character backslash-escaped."""
    return _MD_PUNCTUATION.sub(r"\\\1", _single_line(text))


def _md_message(report: ExerciseReport, text: str) -> tuple[list[str], list[str]]:
    """A case message as a list item when it is one line, else as a block after the list."""
    if not text:
        return [], []
    if _LINE_BREAK.search(text):
        return [], ["", md_block(text, language=report.language)]
    return [_md_item(report, "fb_message", md_code(text, MESSAGE_CHARS))], []


def _md_item(report: ExerciseReport, key: str, code: str) -> str:
    """A list item ``- label: `value```, the label being the message ``key``."""
    return "- " + report.say("fb_item", label=report.say(key), value=code)


def _md_exercise(report: ExerciseReport) -> list[str]:
    out = ["## " + report.say("fb_exercise", id=report.id, score=_fmt(report.score),
                              max=_fmt(report.max_score), label=report.label(report.status)),
           ""]
    if report.message:
        out += [md_block(report.message, language=report.language), ""]
    if report.all_passed():
        return out + [report.all_passed(), ""]
    if report.every_case in SAME_FOR_EVERY_CASE:
        return out + [report.say("fb_all_cases", cases=report.cases,
                                 label=report.label(report.every_case)), ""]
    out.append(report.say("fb_public", passed=report.public_passed, total=report.public_total))
    case = report.first_failure
    if case is not None:
        detail = case["detail"] or {}
        items = [_md_item(report, "fb_input", md_code(_inputs(detail)))] \
            if detail.get("args") else []
        items += [_md_item(report, f"fb_{key}", md_code(detail[key]))
                  for key in ("expected", "got") if key in detail]
        item, block = _md_message(report, case["message"] or "")
        out += ["", report.say("fb_first_failure", name=md_code(case["name"]),
                               label=report.label(case["status"])), "", *items, *item, *block]
        if report.other_failures:
            out += ["", report.say("fb_also_failing",
                                   names=", ".join(md_code(n) for n in report.other_failures))]
    if report.hidden:
        out += ["", report.say("fb_hidden_head"), ""]
        for hidden in report.hidden:
            outcome, error_type = _hidden_outcome(hidden, report.language)
            out.append("- " + report.say("fb_item", label=md_code(hidden["name"]), value=outcome)
                       + (f" ({md_code(error_type, 80)})" if error_type else ""))
    if report.printed:
        out += ["", report.say("fb_printed"), "",
                md_block(clip(report.printed, PRINTED_CHARS), language=report.language)]
    return out + [""]


def _submission(book: Gradebook, lab: LabSpec, student: str) -> dict:
    return next(s for s in book.students(lab.id) if s["student"] == student)


def feedback_markdown(book: Gradebook, lab: LabSpec, student: str) -> str:
    """One student's feedback as Markdown (see the module docstring), in the language the
    submission was graded in."""
    sub = _submission(book, lab, student)
    language = submission_language(sub)
    title = lab.title_in(language)
    out = ["# " + message(language, "fb_title", title=title, student=md_escape(student)),
           "", "**" + message(language, "fb_total", score=_fmt(sub["score"]),
                              max=_fmt(sub["max_score"])) + "**", ""]
    if sub["status"] != "graded":
        out += [message(language, "fb_status", label=label(sub["status"], language)), ""]
    for report in exercise_reports(book, lab, student, language):
        out += _md_exercise(report)
    return "\n".join(out)


# ------------------------------------------------------------------ HTML


def _code(text, limit: int = VALUE_CHARS) -> str:
    return f"<code>{html.escape(clip(str(text), limit))}</code>"


def _pre(text, language: str = "en") -> str:
    lines = str(text).splitlines()
    if len(lines) > BLOCK_LINES:
        lines = lines[:BLOCK_LINES] + [message(language, "fb_more_lines",
                                               count=len(lines) - BLOCK_LINES)]
    return "<pre>" + html.escape("\n".join(clip(line, MESSAGE_CHARS) for line in lines)) + \
        "</pre>"


def _html_item(report: ExerciseReport, key: str, code: str) -> str:
    """A list item ``label: <code>value</code>``, the label being the message ``key``."""
    return f"<li>{report.say('fb_item', label=html.escape(report.say(key)), value=code)}</li>"


def _html_failure(report: ExerciseReport, case: dict) -> list[str]:
    detail = case["detail"] or {}
    items = [_html_item(report, "fb_input", _code(_inputs(detail)))] if detail.get("args") \
        else []
    items += [_html_item(report, f"fb_{key}", _code(detail[key]))
              for key in ("expected", "got") if key in detail]
    text = case["message"] or ""
    multi_line = bool(_LINE_BREAK.search(text))
    if text and not multi_line:
        items.append(_html_item(report, "fb_message", _code(text, MESSAGE_CHARS)))
    status = f"<span class='bad'>{html.escape(report.label(case['status']))}</span>"
    return [f"<p>{report.say('fb_first_failure', name=_code(case['name']), label=status)}</p>",
            f"<ul>{''.join(items)}</ul>",
            *([_pre(text, report.language)] if multi_line else [])]


def _html_exercise(report: ExerciseReport) -> list[str]:
    e = html.escape
    parts = ["<h2>" + e(report.say("fb_exercise", id=report.id, score=_fmt(report.score),
                                   max=_fmt(report.max_score),
                                   label=report.label(report.status))) + "</h2>"]
    if report.message:
        parts.append(_pre(report.message, report.language))
    if report.all_passed():
        return parts + [f"<p>{e(report.all_passed())}</p>"]
    if report.every_case in SAME_FOR_EVERY_CASE:
        every = report.say("fb_all_cases", cases=report.cases,
                           label=report.label(report.every_case))
        return parts + [f"<p>{e(every)}</p>"]
    public = report.say("fb_public", passed=report.public_passed, total=report.public_total)
    parts.append(f"<p>{e(public)}</p>")
    if report.first_failure is not None:
        parts += _html_failure(report, report.first_failure)
        if report.other_failures:
            names = ", ".join(_code(n) for n in report.other_failures)
            parts.append(f"<p>{report.say('fb_also_failing', names=names)}</p>")
    if report.hidden:
        rows = []
        for hidden in report.hidden:
            outcome, error_type = _hidden_outcome(hidden, report.language)
            cls = "passed" if hidden["status"] == "passed" else "bad"
            value = f"<span class='{cls}'>{e(outcome)}</span>"
            rows.append("<li>" + report.say("fb_item", label=_code(hidden["name"]), value=value)
                        + (f" ({_code(error_type, 80)})" if error_type else "") + "</li>")
        parts.append(f"<p>{e(report.say('fb_hidden_head'))}</p><ul>{''.join(rows)}</ul>")
    if report.printed:
        parts.append(f"<p>{e(report.say('fb_printed'))}</p>"
                     f"{_pre(clip(report.printed, PRINTED_CHARS), report.language)}")
    return parts


HTML_LANG = {"en": "en", "zh": "zh-CN"}
"""A language's tag in a page's ``<html lang>`` (fonts and line breaking follow it)."""


def feedback_html(book: Gradebook, lab: LabSpec, student: str) -> str:
    """One student's feedback as a standalone HTML page (everything escaped), in the
    language the submission was graded in."""
    sub = _submission(book, lab, student)
    language = submission_language(sub)
    e = html.escape
    lab_title = lab.title_in(language)
    title = message(language, "fb_title", title=lab_title, student=student)
    total = message(language, "fb_total", score=_fmt(sub["score"]), max=_fmt(sub["max_score"]))
    parts = [f"<!doctype html><html lang='{HTML_LANG[language]}'><meta charset='utf-8'>"
             f"<title>{e(lab_title)}: {e(student)}</title>",
             "<style>body{font-family:sans-serif;max-width:70em;margin:auto}"
             ".passed{color:#1a7f37}.bad{color:#cf222e}"
             "code,pre{white-space:pre-wrap}</style>",
             f"<h1>{e(title)}</h1>",
             f"<p><b>{e(total)}</b></p>"]
    if sub["status"] != "graded":
        status = message(language, "fb_status", label=label(sub["status"], language))
        parts.append(f"<p>{e(status)}</p>")
    for report in exercise_reports(book, lab, student, language):
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
