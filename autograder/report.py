"""The instructor's class report: one offline HTML page per lab, read from the gradebook.

:func:`class_summary` turns the gradebook's rows into numbers and tallies, with no
UI; :func:`report_html` renders a summary as one self-contained page (plotly.js
inlined once, no request to any network, every figure with a text summary
beside it); :func:`write_report` writes it.

What the page shows: the distribution of total scores; per exercise and per case
pass rates; the most common failure messages (numbers blanked, so variants of
one message count together) and exception classes; per exercise, who passed
every public case but failed a hidden one; the slowest submissions; and who did
not attempt the lab. Everything taken from the gradebook is HTML-escaped: case
messages carry whatever a student's code raised.

The page speaks the class's language: the one most submissions were graded in
(a lab released with ``--lang zh`` is graded in Chinese: see
:mod:`autograder.grade`), English on a tie; the words are
:mod:`autograder.messages`'s.
"""

from __future__ import annotations

import html
import math
import re
import statistics
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import plotly.graph_objects as go
import plotly.io as pio

from .export import HTML_LANG, submission_language
from .gradebook import Gradebook
from .messages import message
from .spec import LabSpec

TOP = 10
BINS = 10
SHOWN_CHARS = 300
NOT_ATTEMPTED = frozenset({"not_attempted", "missing", "invalid_submission"})
FAILURES = frozenset({"failed", "error", "timeout", "crashed", "forbidden_import"})
EXCEPTION_LINE = re.compile(r"^([A-Za-z_][A-Za-z0-9_.]*)(?::|$)")
NUMBER = re.compile(r"(?<![\w.])(?:0x[0-9a-fA-F]+|\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)")


class NoSubmissions(LookupError):
    """The gradebook holds no graded submission for the lab."""

    def __init__(self, lab_id: str, path: Path | str):
        super().__init__(f"no graded submissions for lab {lab_id} in {path}: run "
                         f"`python -m autograder grade {lab_id} SUBMISSIONS_DIR` first")


@dataclass
class ExerciseStats:
    """One exercise across the class."""

    exercise: str
    students: int
    max_score: float
    mean_score: float
    passed: int                      # students who passed every case
    not_attempted: int               # not attempted, cell missing or unreadable notebook
    hidden_only_failed: list[str]    # passed every public case, failed a hidden one

    @property
    def pass_rate(self) -> float:
        """The share of students who passed every case."""
        return self.passed / self.students if self.students else 0.0

    @property
    def mean_fraction(self) -> float:
        """The mean score as a fraction of the exercise's points."""
        return self.mean_score / self.max_score if self.max_score else 0.0


@dataclass
class CaseStats:
    """One case across the class."""

    exercise: str
    case: str
    hidden: bool
    students: int
    passed: int

    @property
    def pass_rate(self) -> float:
        """The share of students who passed this case."""
        return self.passed / self.students if self.students else 0.0


@dataclass
class Tally:
    """A failure message (or exception class) and how often it occurred."""

    text: str                        # the first variant seen
    cases: int = 0
    students: set[str] = field(default_factory=set)
    exercises: list[str] = field(default_factory=list)
    variants: set[str] = field(default_factory=set)


@dataclass
class ClassSummary:
    """Everything the report shows, computed from the gradebook alone."""

    lab: str
    title: str
    gradebook: str
    totals: dict[str, float]                   # student -> total score
    max_score: float
    bins: list[tuple[float, float, int]]       # (from, to, students); the last bin holds `to`
    exercises: list[ExerciseStats]
    cases: list[CaseStats]
    messages: list[Tally]                      # most students first
    exceptions: list[Tally]                    # most students first
    seconds: list[tuple[str, float]]           # slowest first
    not_attempted: list[str]
    language: str = "en"                       # the page's: see class_language

    @property
    def scores(self) -> list[float]:
        """Every submission's total score."""
        return list(self.totals.values())

    def say(self, key: str, **fields) -> str:
        """The message ``key`` in the report's language."""
        return message(self.language, key, **fields)


def class_language(submissions: list[dict]) -> str:
    """The language most submissions were graded in; English on a tie (or with none)."""
    counts = Counter(submission_language(s) for s in submissions)
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0] != "en"))
    return ranked[0][0] if ranked else "en"


def headline(status: str, message: str | None) -> str:
    """The line of a case message that says what went wrong: the exception line
    (the last one) of an error's traceback, otherwise the first line."""
    lines = [line.strip() for line in (message or "").splitlines() if line.strip()]
    if not lines:
        return ""
    return lines[-1] if status == "error" else lines[0]


def message_key(text: str) -> str:
    """``text`` with every number blanked to ``#``, so that "expected 3 got 4" and
    "expected 5 got 6" group together (names such as ``float64`` are kept)."""
    return " ".join(NUMBER.sub("#", text).split())


def exception_class(row: dict) -> str | None:
    """The exception class of an ``error`` case: the gradebook's ``error_type`` when it
    has one, otherwise read from the message's last line (``ValueError: ...``)."""
    if row["status"] != "error":
        return None
    if row.get("error_type"):
        return row["error_type"]
    match = EXCEPTION_LINE.match(headline("error", row["message"]))
    return match.group(1) if match else None


def _exercise_order(lab: LabSpec, rows: list[dict]) -> list[str]:
    """The spec's exercise order, then any exercise only the gradebook knows."""
    order = [ex.id for ex in lab.exercises]
    extra = sorted({r["exercise"] for r in rows} - set(order),
                   key=lambda eid: min(r["position"] for r in rows if r["exercise"] == eid))
    return order + extra


def score_bins(totals: list[float], max_score: float) -> list[tuple[float, float, int]]:
    """Counts of totals in ``BINS`` equal ranges from 0 to ``max_score`` (the last
    range includes full marks)."""
    width = max_score / BINS if max_score > 0 else 1.0
    counts = [0] * BINS
    for score in totals:
        counts[min(max(int(round(score / width, 9)), 0), BINS - 1)] += 1
    return [(i * width, (i + 1) * width, n) for i, n in enumerate(counts)]


def _exercise_stats(order: list[str], exercises: list[dict],
                    cases: list[dict]) -> list[ExerciseStats]:
    """Per exercise: pass rate, mean score, not attempted, public-passed-hidden-failed."""
    rows = defaultdict(list)
    for row in exercises:
        rows[row["exercise"]].append(row)
    groups = defaultdict(list)
    for case in cases:
        groups[case["exercise"], case["student"]].append(case)
    hidden_failed = defaultdict(list)
    for (eid, student), group in sorted(groups.items()):
        if _public_passed_hidden_failed(group):
            hidden_failed[eid].append(student)
    stats = []
    for eid in order:
        mine = rows.get(eid, [])
        stats.append(ExerciseStats(
            exercise=eid, students=len(mine),
            max_score=max((r["max_score"] or 0.0 for r in mine), default=0.0),
            mean_score=statistics.fmean(r["score"] or 0.0 for r in mine) if mine else 0.0,
            passed=sum(r["status"] == "passed" for r in mine),
            not_attempted=sum(r["status"] in NOT_ATTEMPTED for r in mine),
            hidden_only_failed=hidden_failed[eid]))
    return stats


def _public_passed_hidden_failed(cases: list[dict]) -> bool:
    """One student's cases of one exercise: every public case passed, a hidden one did not."""
    public = [c["status"] == "passed" for c in cases if not c["hidden"]]
    hidden = [c["status"] == "passed" for c in cases if c["hidden"]]
    return bool(public) and all(public) and bool(hidden) and not all(hidden)


def _case_stats(order: list[str], cases: list[dict]) -> list[CaseStats]:
    """Per case: how many students have it graded and how many passed it."""
    stats: dict[tuple[str, str], CaseStats] = {}
    position: dict[tuple[str, str], int] = {}
    for row in cases:
        key = (row["exercise"], row["name"])
        if key not in stats:
            stats[key] = CaseStats(row["exercise"], row["name"], bool(row["hidden"]), 0, 0)
            position[key] = row["position"]
        stats[key].students += 1
        stats[key].passed += row["status"] == "passed"
    rank = {eid: i for i, eid in enumerate(order)}
    return [stats[k] for k in sorted(stats, key=lambda k: (rank[k[0]], position[k]))]


def _tally(rows: list[dict], label) -> list[Tally]:
    """Group ``rows`` by ``label(row)`` (rows labelled ``None`` are skipped) after
    blanking numbers; most students first, then most cases."""
    groups: dict[str, Tally] = {}
    for row in rows:
        text = label(row)
        if not text:
            continue
        tally = groups.setdefault(message_key(text), Tally(text))
        tally.cases += 1
        tally.students.add(row["student"])
        tally.variants.add(text)
        if row["exercise"] not in tally.exercises:
            tally.exercises.append(row["exercise"])
    return sorted(groups.values(), key=lambda t: (-len(t.students), -t.cases, t.text))


def _not_attempted(submissions: list[dict], exercises: list[dict]) -> list[str]:
    """Students whose notebook was unreadable or who attempted no exercise at all."""
    statuses = defaultdict(set)
    for row in exercises:
        statuses[row["student"]].add(row["status"])
    return [s["student"] for s in submissions
            if s["status"] == "invalid_submission"
            or statuses[s["student"]] <= {"not_attempted", "missing"}]


def _seconds(submissions: list[dict], exercises: list[dict]) -> list[tuple[str, float]]:
    """Each submission's running time (the sum of its exercises' seconds), slowest first."""
    total = {s["student"]: 0.0 for s in submissions}
    for row in exercises:
        total[row["student"]] += row["seconds"] or 0.0
    return sorted(total.items(), key=lambda item: (-item[1], item[0]))


def class_summary(book: Gradebook, lab: LabSpec) -> ClassSummary:
    """Summarise every graded submission of ``lab`` in ``book``.

    Raises :class:`NoSubmissions` when the gradebook has none for this lab.
    """
    submissions = book.students(lab.id)
    if not submissions:
        raise NoSubmissions(lab.id, book.path)
    exercises = book.lab_exercises(lab.id)
    cases = book.lab_cases(lab.id)
    order = _exercise_order(lab, exercises)
    totals = {s["student"]: s["score"] or 0.0 for s in submissions}
    max_score = max(s["max_score"] or 0.0 for s in submissions)
    failing = [c for c in cases if c["status"] in FAILURES]
    language = class_language(submissions)
    return ClassSummary(
        lab=lab.id, title=lab.title_in(language), gradebook=str(book.path), totals=totals,
        max_score=max_score, bins=score_bins(list(totals.values()), max_score),
        exercises=_exercise_stats(order, exercises, cases), cases=_case_stats(order, cases),
        messages=_tally(failing, lambda c: headline(c["status"], c["message"])),
        exceptions=_tally(failing, exception_class),
        seconds=_seconds(submissions, exercises),
        not_attempted=_not_attempted(submissions, exercises),
        language=language)


# ---------------------------------------------------------------------------- rendering

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto;
       max-width: 1200px; padding: 0 1rem; color: #1f2933; line-height: 1.45; }
h1 { font-size: 1.6rem; margin-bottom: .2rem; } h2 { margin-top: 2.2rem; font-size: 1.25rem; }
.meta { color: #52606d; margin-top: 0; }
figure.chart { display: flex; flex-wrap: wrap; gap: 1rem; align-items: center; margin: 1rem 0; }
figure.chart > div { flex: 1 1 640px; min-width: 0; }
figure.chart > figcaption { order: 2; flex: 0 1 300px; background: #f5f7fa;
                            border-left: 4px solid #3e7cb1; padding: .6rem .9rem; }
table { border-collapse: collapse; margin: .6rem 0 1.2rem; font-size: .92rem; }
th, td { border: 1px solid #d9e2ec; padding: .25rem .6rem; text-align: left;
         vertical-align: top; }
th { background: #f0f4f8; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
table.messages td:first-child { font-family: ui-monospace, monospace; white-space: pre-wrap;
                                word-break: break-word; max-width: 40rem; }
"""

# The page may run inline scripts and styles and nothing else: no request leaves it.
CSP = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
       "img-src data:; font-src data:")


def _num(x: float) -> str:
    """A score or time with at most two decimals."""
    return f"{round(x, 2):g}"


def _pct(x: float) -> str:
    """A fraction as a whole percentage."""
    return f"{100 * x:.0f}%"


def _shorten(text: str) -> str:
    """``text`` cut to ``SHOWN_CHARS`` characters."""
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 1] + "…"


def _table(headers: list[str], rows: list[list], cls: str = "") -> str:
    """An HTML table; every cell is escaped, numbers are right-aligned."""
    head = "".join(f"<th scope='col'>{html.escape(h)}</th>" for h in headers)
    body = "".join(
        "<tr>" + "".join(f"<td class='num'>{_num(c)}</td>" if isinstance(c, int | float)
                         else f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>"
        for row in rows)
    return f"<table class='{cls}'><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _para(text: str) -> str:
    """An escaped paragraph."""
    return f"<p>{html.escape(text)}</p>"


def _figures(figures: list) -> list[str]:
    """Each plotly figure as an HTML fragment; plotly.js is inlined in the first only."""
    config = {"displaylogo": False, "responsive": True}
    return [pio.to_html(fig, include_plotlyjs=(i == 0), full_html=False, config=config)
            for i, fig in enumerate(figures)]


def _layout(fig, title: str, height: int = 380):
    """The report's common figure layout."""
    fig.update_layout(title=title, template="plotly_white", height=height,
                      margin={"l": 60, "r": 20, "t": 50, "b": 60},
                      legend={"orientation": "h", "x": 1, "xanchor": "right", "y": 1.02,
                              "yanchor": "bottom"})
    return fig


def score_figure(s: ClassSummary):
    """Histogram of total scores (bars over ``s.bins``)."""
    labels = [s.say("rp_bin", lo=_num(lo), hi=_num(hi)) for lo, hi, _ in s.bins]
    hover = s.say("rp_hover_scores", x="%{x}", y="%{y}") + "<extra></extra>"
    fig = go.Figure(go.Bar(x=labels, y=[n for *_, n in s.bins], marker_color="#3e7cb1",
                           hovertemplate=hover))
    fig.update_xaxes(title=s.say("rp_axis_total", max=_num(s.max_score)))
    fig.update_yaxes(title=s.say("rp_axis_students"),  # ticks at whole students
                     dtick=max(1, math.ceil(max(n for *_, n in s.bins) / 8)))
    return _layout(fig, s.say("rp_fig_scores"))


def score_text(s: ClassSummary) -> str:
    """The score histogram in words: mean, median, extremes, the most common range."""
    scores = s.scores
    mean, top = statistics.fmean(scores), s.max_score or 1.0
    lo, hi, n = max(s.bins, key=lambda b: b[2])
    return s.say("rp_scores_text", count=len(scores), mean=_num(mean), max=_num(s.max_score),
                 pct=_pct(mean / top), median=_num(statistics.median(scores)),
                 low=_num(min(scores)), high=_num(max(scores)),
                 full=sum(x >= s.max_score for x in scores),
                 zero=sum(x == 0 for x in scores), lo=_num(lo), hi=_num(hi), n=n)


def exercise_figure(s: ClassSummary):
    """Per exercise: share passing every case and mean score, as percentages."""
    ids = [e.exercise for e in s.exercises]
    fig = go.Figure([
        go.Bar(name=s.say("rp_passed_every"), x=ids,
               y=[100 * e.pass_rate for e in s.exercises],
               marker_color="#3e7cb1", hovertemplate="%{x}: %{y:.0f}%<extra></extra>"),
        go.Bar(name=s.say("rp_mean_score"), x=ids,
               y=[100 * e.mean_fraction for e in s.exercises],
               marker_color="#9fb3c8", hovertemplate="%{x}: %{y:.0f}%<extra></extra>")])
    fig.update_yaxes(title=s.say("rp_axis_percent"), range=[0, 100])
    return _layout(fig, s.say("rp_fig_exercises"))


def exercise_text(s: ClassSummary) -> str:
    """The exercise chart in words: the hardest and the easiest exercise (ranked by pass
    rate, then by mean score)."""
    ranked = sorted(s.exercises, key=lambda e: (e.pass_rate, e.mean_fraction))
    hard, easy = ranked[0], ranked[-1]
    text = s.say("rp_hardest", id=hard.exercise, passed=hard.passed, students=hard.students,
                 pct=_pct(hard.pass_rate), mean=_pct(hard.mean_fraction))
    if easy is not hard:
        text += s.say("rp_easiest", id=easy.exercise, passed=easy.passed,
                      students=easy.students, pct=_pct(easy.pass_rate),
                      mean=_pct(easy.mean_fraction))
    return text


def case_figure(s: ClassSummary):
    """Per case pass rate as horizontal bars in the lab's order (one row per case, so
    long case names stay readable), public and hidden cases in two colours."""
    labels = [f"{c.exercise} / {c.case}" for c in s.cases]
    traces = []
    for hidden, name, colour in ((False, s.say("rp_public_case"), "#3e7cb1"),
                                 (True, s.say("rp_hidden_case"), "#d9822b")):
        mine = [(label, c) for label, c in zip(labels, s.cases, strict=True)
                if c.hidden == hidden]
        traces.append(go.Bar(name=name, y=[label for label, _ in mine],
                             x=[100 * c.pass_rate for _, c in mine], marker_color=colour,
                             orientation="h", hovertemplate="%{y}: %{x:.0f}%<extra></extra>"))
    fig = go.Figure(traces)
    fig.update_yaxes(categoryorder="array", categoryarray=labels, autorange="reversed",
                     automargin=True)
    fig.update_xaxes(title=s.say("rp_axis_passing"), range=[0, 100])
    fig.update_layout(barmode="overlay")   # one bar per row, centred on it
    return _layout(fig, s.say("rp_fig_cases"), height=140 + 22 * len(labels))


def case_text(s: ClassSummary) -> str:
    """The case chart in words: cases everyone passed, the worst cases, public vs hidden."""
    lowest = min(c.pass_rate for c in s.cases)
    worst = [f"{c.exercise} / {c.case}{s.say('rp_hidden_mark') if c.hidden else ''}"
             for c in s.cases if c.pass_rate == lowest]
    everyone = sum(c.passed == c.students for c in s.cases)
    text = s.say("rp_cases_text", everyone=everyone, total=len(s.cases), pct=_pct(lowest),
                 worst=s.say("rp_list").join(worst[:3]))
    text += s.say("rp_and_more", more=len(worst) - 3) if len(worst) > 3 else s.say("rp_end")
    for hidden, kind in ((False, "kind_public"), (True, "kind_hidden")):
        rates = [c.pass_rate for c in s.cases if c.hidden == hidden]
        if rates:
            text += s.say("rp_kind_mean", kind=s.say(kind), pct=_pct(statistics.fmean(rates)))
    return text


def _chart(fragment: str, summary: str) -> str:
    """A figure with its text summary beside it. The summary comes first in the page, so
    that it is read first and takes its place before plotly measures the figure's width;
    CSS shows it on the right."""
    return (f"<figure class='chart'><figcaption>{html.escape(summary)}</figcaption>"
            f"{fragment}</figure>")


def _tally_section(s: ClassSummary, tallies: list[Tally], what: str, column: str) -> str:
    """The ``TOP`` most common tallies as a table, or a line saying there are none
    (``what`` and ``column`` are message keys)."""
    if not tallies:
        return _para(s.say("rp_none_of", what=s.say(what)))
    rows = [[_shorten(t.text), len(t.students), t.cases, s.say("rp_list").join(t.exercises),
             len(t.variants)] for t in tallies[:TOP]]
    return (_para(s.say("rp_tally_text", count=len(tallies), what=s.say(what),
                        top=min(TOP, len(tallies))))
            + _table(_columns(s, column, "students", "cases", "exercises", "variants"), rows,
                     "messages"))


def _columns(s: ClassSummary, *keys: str) -> list[str]:
    """Column headings: each ``key`` is a message key, ``col_`` left off."""
    return [s.say(f"col_{key}") for key in keys]


def _hidden_section(s: ClassSummary) -> str:
    """Per exercise, who passed every public case but failed a hidden one."""
    rows = [[e.exercise, len(e.hidden_only_failed), s.say("rp_list").join(e.hidden_only_failed)]
            for e in s.exercises]
    total = sum(len(e.hidden_only_failed) for e in s.exercises)
    return (_para(s.say("rp_hidden_text", total=total))
            + _table(_columns(s, "exercise", "students", "who"), rows))


def _slowest_section(s: ClassSummary) -> str:
    """The ``TOP`` slowest submissions."""
    rows = [[student, seconds] for student, seconds in s.seconds[:TOP]]
    return (_para(s.say("rp_slowest_text", shown=len(rows), total=len(s.seconds)))
            + _table(_columns(s, "student", "seconds"), rows))


def _not_attempted_section(s: ClassSummary) -> str:
    """Students who attempted nothing, and per exercise how many did not attempt it."""
    who = s.say("rp_list").join(s.not_attempted) if s.not_attempted else s.say("rp_nobody")
    rows = [[e.exercise, e.not_attempted, e.students] for e in s.exercises]
    return (_para(s.say("rp_not_attempted_text", count=len(s.not_attempted),
                        total=len(s.totals), who=who))
            + _table(_columns(s, "exercise", "not_attempted", "of_students"), rows))


def _exercise_table(s: ClassSummary) -> str:
    """Per exercise pass rate and mean score."""
    rows = [[e.exercise, e.students, e.passed, _pct(e.pass_rate), e.mean_score, e.max_score]
            for e in s.exercises]
    return _table(_columns(s, "exercise", "students", "passed_every", "pass_rate",
                           "mean_score", "points"), rows)


def _case_table(s: ClassSummary) -> str:
    """Per case pass rate."""
    rows = [[c.exercise, c.case, s.say("kind_hidden" if c.hidden else "kind_public"), c.students,
             c.passed, _pct(c.pass_rate)] for c in s.cases]
    return _table(_columns(s, "exercise", "case", "kind", "students", "passed", "pass_rate"),
                  rows)


def report_html(s: ClassSummary) -> str:
    """The whole report as one self-contained HTML page, in ``s.language``."""
    scores, exercises, cases = _figures([score_figure(s), exercise_figure(s), case_figure(s)])
    title = s.say("rp_title", title=s.title)
    meta = s.say("rp_meta", lab=s.lab, count=len(s.totals), gradebook=s.gradebook,
                 when=time.strftime("%Y-%m-%d %H:%M"))
    return "\n".join([
        "<!doctype html>", f"<html lang='{HTML_LANG[s.language]}'><head><meta charset='utf-8'>",
        f"<meta http-equiv='Content-Security-Policy' content=\"{CSP}\">",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        f"<title>{html.escape(title)}</title><style>{STYLE}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        f"<p class='meta'>{html.escape(meta)}</p>",
        f"<h2>{s.say('rp_h_scores')}</h2>", _chart(scores, score_text(s)),
        f"<h2>{s.say('rp_h_pass')}</h2>", _chart(exercises, exercise_text(s)),
        _exercise_table(s), _chart(cases, case_text(s)), _case_table(s),
        f"<h2>{s.say('rp_h_messages')}</h2>",
        _tally_section(s, s.messages, "rp_failure_messages", "message"),
        f"<h2>{s.say('rp_h_exceptions')}</h2>",
        _tally_section(s, s.exceptions, "rp_exception_classes", "exception"),
        f"<h2>{s.say('rp_h_hidden')}</h2>", _hidden_section(s),
        f"<h2>{s.say('rp_h_slowest')}</h2>", _slowest_section(s),
        f"<h2>{s.say('rp_h_not_attempted')}</h2>", _not_attempted_section(s),
        "</body></html>"])


def write_report(summary: ClassSummary, out: Path | str) -> Path:
    """Write :func:`report_html` of ``summary`` to ``out`` (folders are created)."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(report_html(summary), encoding="utf-8")
    return out
