"""``course report``: the class across the term's labs, one offline HTML page.

:func:`course_summary` turns the standings (:mod:`autograder.course.standing`)
into numbers, with no UI; :func:`course_report_html` renders them as one page
in the style of the per-lab report (:mod:`autograder.report`: plotly.js inlined
once, a Content-Security-Policy that allows no request, every figure with a
text summary beside it, everything from the gradebook escaped). The page is in
English or Chinese (``--lang``), with the words of :mod:`autograder.course.words`.

What it shows, counting only the labs due at the report's time:

* the trend: per lab the mean and median final score (after penalties, a lab
  not submitted as 0) and the shares of students who were late or never
  submitted;
* who is falling behind: under ``BEHIND_PCT`` % of a lab's points on at least
  ``BEHIND_LABS`` labs, or on the most recent one (the rule is printed on the
  page), with a heat map of every student's final score per lab;
* per-exercise difficulty: the mean score of each exercise over the counted
  attempts, and how many passed every case.
"""

from __future__ import annotations

import datetime as dt
import html
import statistics
from dataclasses import dataclass
from pathlib import Path

import plotly.graph_objects as go

from ..report import CSP, STYLE, _chart, _figures, _layout
from .config import Course
from .standing import CountedLab, standings
from .term import TermGradebook
from .words import say

HTML_LANG = {"en": "en", "zh": "zh-CN"}
BEHIND_PCT = 50
BEHIND_LABS = 2


@dataclass
class LabTrend:
    lab: str
    name: str
    due: str
    points: float
    mean: float          # fractions of the lab's points
    median: float
    submitted: int
    late: int
    missing: int


@dataclass
class ExerciseDifficulty:
    lab: str
    exercise: str
    mean: float          # fraction of the exercise's points
    passed: int
    students: int


@dataclass
class CourseSummary:
    title: str
    gradebook: str
    counts: str
    when: str
    students: list[tuple[str, str]]                 # (id, name), roster order
    due_labs: list[LabTrend]                        # labs due at `when`, in due order
    labs: list[LabTrend]                            # every lab
    scores: dict[str, dict[str, float | None]]      # student -> lab -> fraction (None: missing)
    behind: list[tuple[str, str]]                   # (student, why)
    exercises: list[ExerciseDifficulty]
    language: str = "en"

    def say(self, key: str, **fields) -> str:
        return say(self.language, key, **fields)


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def behind_reason(fractions: list[tuple[str, float]], language: str) -> str:
    """Why a student with these ``(lab, fraction)`` of the due labs (in due order) is
    falling behind, or "" when they are not."""
    low = [lab for lab, f in fractions if f < BEHIND_PCT / 100]
    reasons = []
    if fractions and fractions[-1][1] < BEHIND_PCT / 100:
        reasons.append(say(language, "why_recent", pct=BEHIND_PCT, lab=fractions[-1][0]))
    if len(low) >= BEHIND_LABS:
        reasons.append(say(language, "why_count", pct=BEHIND_PCT, count=len(low),
                           labs=say(language, "list").join(low)))
    return say(language, "why_join").join(reasons)


def _difficulty(course: Course, book: TermGradebook, results) -> list[ExerciseDifficulty]:
    out = []
    for lab in course.labs:
        rows = CountedLab(book, lab, results).lab_exercises(lab.id)
        for ex in lab.spec.exercises:
            mine = [r for r in rows if r["exercise"] == ex.id]
            if mine:
                out.append(ExerciseDifficulty(
                    lab.id, ex.id,
                    statistics.fmean((r["score"] or 0) / r["max_score"] if r["max_score"] else 0
                                     for r in mine),
                    sum(r["status"] == "passed" for r in mine), len(mine)))
    return out


def course_summary(course: Course, book: TermGradebook, language: str = "en",
                   now: dt.datetime | None = None) -> CourseSummary:
    """Everything the course report shows, as of ``now`` (default: the current time)."""
    now = now or dt.datetime.now(dt.UTC)
    results = standings(course, book)
    labs = sorted(course.labs, key=lambda lab: lab.due)
    trends = []
    for lab in labs:
        mine = [results[lab.id, s.id] for s in course.students]
        fractions = [r.fraction for r in mine]
        trends.append(LabTrend(lab.id, lab.name, lab.due.isoformat(), lab.points,
                               statistics.fmean(fractions), statistics.median(fractions),
                               sum(r.submitted for r in mine),
                               sum(r.submitted and r.late_days > 0 for r in mine),
                               sum(not r.submitted for r in mine)))
    due = [t for t, lab in zip(trends, labs, strict=True) if lab.due <= now]
    scores = {s.id: {lab.id: results[lab.id, s.id].fraction if results[lab.id, s.id].submitted
                     else None for lab in labs} for s in course.students}
    behind = []
    for s in course.students:
        why = behind_reason([(t.lab, scores[s.id][t.lab] or 0.0) for t in due], language)
        if why:
            behind.append((s.id, why))
    return CourseSummary(course.title, str(book.path), course.counts,
                         now.strftime("%Y-%m-%d %H:%M %Z"),
                         [(s.id, s.name) for s in course.students], due, trends, scores, behind,
                         _difficulty(course, book, results), language)


# ---------------------------------------------------------------------------- figures


def trend_figure(s: CourseSummary):
    x = [t.lab for t in s.due_labs]
    fig = go.Figure([
        go.Bar(name=s.say("late_share"), x=x, marker_color="#f0b429",
               y=[100 * t.late / len(s.students) for t in s.due_labs]),
        go.Bar(name=s.say("missing_share"), x=x, marker_color="#cf222e",
               y=[100 * t.missing / len(s.students) for t in s.due_labs]),
        go.Scatter(name=s.say("mean"), x=x, y=[100 * t.mean for t in s.due_labs],
                   mode="lines+markers", line={"color": "#3e7cb1"}),
        go.Scatter(name=s.say("median"), x=x, y=[100 * t.median for t in s.due_labs],
                   mode="lines+markers", line={"color": "#9fb3c8", "dash": "dash"})])
    fig.update_yaxes(title=s.say("axis_percent"), range=[0, 100])
    return _layout(fig, s.say("fig_trend"))


def trend_text(s: CourseSummary) -> str:
    if not s.due_labs:
        return s.say("trend_none")
    first, last = s.due_labs[0], s.due_labs[-1]
    low = min(s.due_labs, key=lambda t: t.mean)
    return s.say("trend_text", labs=len(s.due_labs), first=_pct(first.mean), first_lab=first.lab,
                 last=_pct(last.mean), last_lab=last.lab, low=_pct(low.mean), low_lab=low.lab,
                 expected=len(s.due_labs) * len(s.students),
                 late=sum(t.late for t in s.due_labs), missing=sum(t.missing for t in s.due_labs))


def behind_figure(s: CourseSummary):
    labs = [t.lab for t in s.labs]
    students = [sid for sid, _ in s.students]
    z = [[None if s.scores[sid][lab] is None else round(100 * s.scores[sid][lab])
          for lab in labs] for sid in students]
    fig = go.Figure(go.Heatmap(z=z, x=labs, y=students, zmin=0, zmax=100, colorscale="RdYlGn",
                               hovertemplate="%{y} / %{x}: %{z}%<extra></extra>"))
    fig.update_yaxes(autorange="reversed", automargin=True, type="category")
    return _layout(fig, s.say("fig_behind"), height=160 + 16 * len(students))


def behind_text(s: CourseSummary) -> str:
    who = s.say("list").join(sid for sid, _ in s.behind) if s.behind else s.say("nobody")
    return s.say("behind_text", count=len(s.behind), students=len(s.students), who=who)


def difficulty_figure(s: CourseSummary):
    labels = [f"{e.lab} / {e.exercise}" for e in s.exercises]
    fig = go.Figure(go.Bar(y=labels, x=[100 * e.mean for e in s.exercises], orientation="h",
                           marker_color="#3e7cb1", hovertemplate="%{y}: %{x:.0f}%<extra></extra>"))
    fig.update_yaxes(autorange="reversed", automargin=True)
    fig.update_xaxes(title=s.say("axis_percent"), range=[0, 100])
    return _layout(fig, s.say("fig_difficulty"), height=140 + 24 * len(labels))


def _item(s: CourseSummary, e: ExerciseDifficulty) -> str:
    return s.say("exercise_item", lab=e.lab, exercise=e.exercise, pct=f"{100 * e.mean:.0f}",
                 passed=e.passed, students=e.students)


def difficulty_text(s: CourseSummary) -> str:
    ranked = sorted(s.exercises, key=lambda e: (e.mean, e.lab, e.exercise))
    return s.say("difficulty_text", hardest=s.say("list").join(_item(s, e) for e in ranked[:3]),
                 easiest=s.say("list").join(_item(s, e) for e in ranked[-1:]))


# ---------------------------------------------------------------------------- page


def _table(headers: list[str], rows: list[list]) -> str:
    head = "".join(f"<th scope='col'>{html.escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>"
                   for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def course_report_html(s: CourseSummary) -> str:
    e = html.escape
    figures = [behind_figure(s), difficulty_figure(s)]
    if s.due_labs:
        figures.insert(0, trend_figure(s))
    fragments = _figures(figures)
    trend = _chart(fragments.pop(0), trend_text(s)) if s.due_labs else f"<p>{e(trend_text(s))}</p>"
    behind, difficulty = fragments
    names = dict(s.students)
    title = s.say("title", title=s.title)
    meta = s.say("meta", labs=len(s.labs), students=len(s.students),
                 counts=s.say(f"counts_{s.counts}"), when=s.when, gradebook=s.gradebook)
    labs_table = _table(
        [s.say(k) for k in ("col_lab", "col_due", "col_points", "col_submitted", "col_late",
                            "col_missing", "col_mean_pct")],
        [[f"{t.lab} ({t.name})", t.due, f"{t.points:g}", t.submitted, t.late, t.missing,
          _pct(t.mean)] for t in s.labs])
    behind_table = _table([s.say("col_student"), s.say("col_name"), s.say("col_why")],
                          [[sid, names[sid], why] for sid, why in s.behind])
    difficulty_table = _table(
        [s.say(k) for k in ("col_lab", "col_exercise", "col_mean", "col_passed", "col_students")],
        [[d.lab, d.exercise, _pct(d.mean), d.passed, d.students] for d in s.exercises])
    return "\n".join([
        "<!doctype html>", f"<html lang='{HTML_LANG[s.language]}'><head><meta charset='utf-8'>",
        f"<meta http-equiv='Content-Security-Policy' content=\"{CSP}\">",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>{e(title)}</title><style>{STYLE}</style></head><body>",
        f"<h1>{e(title)}</h1>", f"<p class='meta'>{e(meta)}</p>",
        f"<h2>{e(s.say('h_trend'))}</h2>", trend, labs_table,
        f"<h2>{e(s.say('h_behind'))}</h2>",
        f"<p class='rule'>{e(s.say('behind_rule', pct=BEHIND_PCT, count=BEHIND_LABS))}</p>",
        _chart(behind, behind_text(s)), behind_table,
        f"<h2>{e(s.say('h_difficulty'))}</h2>", _chart(difficulty, difficulty_text(s)),
        difficulty_table, "</body></html>"])


def write_course_report(summary: CourseSummary, out: Path | str) -> Path:
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(course_report_html(summary), encoding="utf-8")
    return out
