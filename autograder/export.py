"""Exporting a gradebook: ``grades.csv`` and per-student feedback (Markdown and HTML).

``grades.csv`` has one row per student: ``student``, one column per exercise
(its score), ``total`` and ``max``. Feedback shows every public case in full
(input, expected, got, message) and hidden cases only as name and outcome.
"""

from __future__ import annotations

import csv
import html
from pathlib import Path

from .gradebook import Gradebook
from .spec import LabSpec

LABELS = {"passed": "passed", "failed": "failed", "error": "error",
          "not_attempted": "not attempted", "timeout": "timed out", "crashed": "crashed",
          "forbidden_import": "forbidden import", "missing": "missing",
          "invalid_submission": "invalid submission", "partial": "partly passed"}


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


def feedback_markdown(book: Gradebook, lab: LabSpec, student: str) -> str:
    sub = next(s for s in book.students(lab.id) if s["student"] == student)
    out = [f"# {lab.title}: feedback for {student}", "",
           f"**Total: {_fmt(sub['score'])} / {_fmt(sub['max_score'])}**", ""]
    if sub["status"] != "graded":
        out += [f"Submission status: {LABELS.get(sub['status'], sub['status'])}.", ""]
    for ex in book.exercises(lab.id, student):
        out += [f"## {ex['exercise']}: {_fmt(ex['score'])} / {_fmt(ex['max_score'])} "
                f"({LABELS.get(ex['status'], ex['status'])})", ""]
        if ex["message"]:
            out += ["> " + line for line in ex["message"].splitlines()] + [""]
        out += ["| case | result | input | expected | got | message |",
                "|---|---|---|---|---|---|"]
        for case in book.cases(lab.id, student, ex["exercise"]):
            label = LABELS.get(case["status"], case["status"])
            if case["hidden"]:
                out.append(f"| {case['name']} (hidden) | {label} | | | | |")
                continue
            d = case["detail"] or {}
            inputs = d.get("args", "") + ("" if d.get("kwargs") in (None, "{}") else
                                          f" {d.get('kwargs')}")
            cells = [case["name"], label, inputs, d.get("expected", ""), d.get("got", ""),
                     case["message"] or ""]
            out.append("| " + " | ".join(_md_cell(c) for c in cells) + " |")
        if ex["stdout"]:
            out += ["", "Your code printed (first part):", "", "```", ex["stdout"][:2000], "```"]
        out.append("")
    return "\n".join(out)


def _md_cell(text: str) -> str:
    text = str(text).replace("|", "\\|").replace("\n", "<br>")
    return f"`{text}`" if text and "`" not in text and len(text) < 300 else text


def feedback_html(book: Gradebook, lab: LabSpec, student: str) -> str:
    sub = next(s for s in book.students(lab.id) if s["student"] == student)
    e = html.escape
    parts = [f"<!doctype html><meta charset='utf-8'><title>{e(lab.title)}: {e(student)}</title>",
             "<style>body{font-family:sans-serif;max-width:70em;margin:auto}"
             "td,th{border:1px solid #ccc;padding:2px 6px;vertical-align:top}"
             "table{border-collapse:collapse}.passed{color:#1a7f37}.bad{color:#cf222e}"
             "code{white-space:pre-wrap}</style>",
             f"<h1>{e(lab.title)}: feedback for {e(student)}</h1>",
             f"<p><b>Total: {_fmt(sub['score'])} / {_fmt(sub['max_score'])}</b></p>"]
    for ex in book.exercises(lab.id, student):
        parts.append(f"<h2>{e(ex['exercise'])}: {_fmt(ex['score'])} / {_fmt(ex['max_score'])}"
                     f" ({e(LABELS.get(ex['status'], ex['status']))})</h2>")
        if ex["message"]:
            parts.append(f"<pre>{e(ex['message'])}</pre>")
        parts.append("<table><tr><th>case</th><th>result</th><th>input</th><th>expected</th>"
                     "<th>got</th><th>message</th></tr>")
        for case in book.cases(lab.id, student, ex["exercise"]):
            label = LABELS.get(case["status"], case["status"])
            cls = "passed" if case["status"] == "passed" else "bad"
            if case["hidden"]:
                parts.append(f"<tr><td>{e(case['name'])} (hidden)</td>"
                             f"<td class='{cls}'>{e(label)}</td><td colspan=4></td></tr>")
                continue
            d = case["detail"] or {}
            parts.append(
                f"<tr><td>{e(case['name'])}</td><td class='{cls}'>{e(label)}</td>"
                + "".join(f"<td><code>{e(str(d.get(k, '')))}</code></td>"
                          for k in ("args", "expected", "got"))
                + f"<td><code>{e(case['message'] or '')}</code></td></tr>")
        parts.append("</table>")
        if ex["stdout"]:
            parts.append(f"<p>Your code printed (first part):</p><pre>{e(ex['stdout'][:2000])}"
                         "</pre>")
    return "\n".join(parts) + "\n"


def export(book: Gradebook, lab: LabSpec, out_dir: Path | str) -> Path:
    """Write ``grades.csv`` and ``feedback/<student>.md|.html`` under ``out_dir``."""
    out = Path(out_dir)
    feedback = out / "feedback"
    feedback.mkdir(parents=True, exist_ok=True)
    write_csv(book, lab, out / "grades.csv")
    for sub in book.students(lab.id):
        student = sub["student"]
        (feedback / f"{student}.md").write_text(feedback_markdown(book, lab, student))
        (feedback / f"{student}.html").write_text(feedback_html(book, lab, student))
    return out
