"""Showing a learner's progress (:mod:`autograder.progress`): one plotly figure, a table
with links to the sections to revisit, and the same as text, in English or Chinese.

Links are relative to the folder the page is shown from (the notebook's, in
JupyterLab), with an anchor that JupyterLab gives the section's heading (its text,
spaces as ``-``).
"""

from __future__ import annotations

import html
import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import plotly.graph_objects as go

from .messages import language_of

STATUSES = ("passed", "failed", "not_attempted")
COLORS = {"passed": "#1a7f37", "failed": "#cf222e", "not_attempted": "#afb8c1"}

ENGLISH = {
    "passed": "passed", "failed": "not yet passing", "not_attempted": "not attempted",
    "error": "could not be checked", "timeout": "ran out of time",
    "practice": "practice", "lab": "lab",
    "title": "Your progress: public cases of each exercise, as check() runs them",
    "axis": "exercises",
    "nothing": ("Nothing attempted yet: none of the course's {total} exercises is worked on "
                "in your notebooks ({notebooks} searched). Solve a chapter's \"Try it\" cell or "
                "an exercise of a released lab, save the notebook, and run this again."),
    "summary": ("{passed} of {total} exercises pass their public cases, {failed} do not yet, "
                "{untouched} are not attempted ({notebooks} notebooks searched). Graded labs "
                "also run hidden cases."),
    "col_group": "chapter or lab", "col_exercise": "exercise", "col_status": "status",
    "col_cases": "public cases", "col_where": "revisit", "col_detail": "first problem",
    "not_found": "not found in your notebooks",
}

CHINESE = {
    "passed": "通过", "failed": "尚未通过", "not_attempted": "未作答",
    "error": "无法检查", "timeout": "超时",
    "practice": "章节练习", "lab": "实验",
    "title": "你的进度：按 check() 的方式运行每个练习的公开测试用例",
    "axis": "练习数",
    "nothing": ("还没有作答：你的 notebook 里，课程的 {total} 个练习一个都还没有动手（共查找了 "
                "{notebooks} 个 notebook）。做完某一章的“动手试试”单元格或发布版实验中的练习，"
                "保存 notebook，再运行一次这个单元格。"),
    "summary": ("{total} 个练习中有 {passed} 个通过了公开测试用例，{failed} 个尚未通过，"
                "{untouched} 个未作答（共查找了 {notebooks} 个 notebook）。实验评分时还会运行"
                "隐藏测试用例。"),
    "col_group": "章节或实验", "col_exercise": "练习", "col_status": "状态",
    "col_cases": "公开测试用例", "col_where": "回看", "col_detail": "第一个问题",
    "not_found": "你的 notebook 里没有找到",
}

WORDS = {"en": ENGLISH, "zh": CHINESE}


def anchor(heading: str) -> str:
    """JupyterLab's id for a markdown heading: its text without markup, spaces as ``-``."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"[*_`]", "", text).strip()
    return quote(text.replace(" ", "-"), safe="-.~()'!,;:")


@dataclass
class ProgressReport:
    exercises: list            # autograder.progress.Exercise, in course order
    language: str = "en"
    notebooks_searched: int = 0

    def say(self, key: str, **fields) -> str:
        return WORDS[language_of(self.language)][key].format(**fields)

    def bucket(self, ex) -> str:
        """passed, failed (errors and time-outs too) or not_attempted."""
        return ex.status if ex.status in STATUSES else "failed"

    def counts(self, exercises=None) -> dict[str, int]:
        exercises = self.exercises if exercises is None else exercises
        return {s: sum(self.bucket(e) == s for e in exercises) for s in STATUSES}

    def groups(self) -> dict[str, list]:
        found: dict[str, list] = {}
        for ex in self.exercises:
            found.setdefault(ex.group, []).append(ex)
        return found

    @property
    def attempted(self) -> bool:
        return any(self.bucket(e) != "not_attempted" for e in self.exercises)

    def summary(self) -> str:
        c = self.counts()
        if not self.attempted:
            return self.say("nothing", total=len(self.exercises),
                            notebooks=self.notebooks_searched)
        return self.say("summary", passed=c["passed"], failed=c["failed"],
                        untouched=c["not_attempted"], total=len(self.exercises),
                        notebooks=self.notebooks_searched)

    def figure(self):
        """Per chapter and lab, stacked bars: exercises passed, not yet passing, untouched."""
        groups = self.groups()
        names = list(groups)
        traces = []
        for status in STATUSES:
            traces.append(go.Bar(
                name=self.say(status), y=names, orientation="h", marker_color=COLORS[status],
                x=[self.counts(groups[g])[status] for g in names],
                hovertemplate="%{y}: %{x}<extra>" + self.say(status) + "</extra>"))
        fig = go.Figure(traces)
        fig.update_layout(barmode="stack", title=self.say("title"), template="plotly_white",
                          height=120 + 28 * len(names), margin={"l": 110, "r": 20, "t": 50},
                          legend={"orientation": "h", "y": -0.15})
        fig.update_yaxes(autorange="reversed")
        fig.update_xaxes(title=self.say("axis"), dtick=1)
        return fig

    def _where(self, ex, base: Path) -> tuple[str, str]:
        """(text, link) of the section to revisit; the link is relative to ``base``."""
        if ex.notebook is None:
            return self.say("not_found"), ""
        link = Path(os.path.relpath(Path(ex.notebook).resolve(), base.resolve())).as_posix()
        link = quote(link) + ("#" + anchor(ex.section) if ex.section else "")
        return f"{Path(ex.notebook).name} § {ex.section}".rstrip(" §"), link

    def rows(self, base: Path | None = None) -> list[dict]:
        base = Path.cwd() if base is None else base
        rows = []
        for ex in self.exercises:
            text, link = self._where(ex, base)
            rows.append({"group": f"{ex.group} ({self.say(ex.kind)})", "exercise": ex.id,
                         "status": self.say(ex.status), "bucket": self.bucket(ex),
                         "cases": "–" if ex.total is None else f"{ex.passed}/{ex.total}",
                         "where": text, "link": link,
                         "detail": ex.detail})
        return rows

    def to_text(self) -> str:
        lines = [self.summary(), ""]
        for r in self.rows():
            where = r["link"] if r["bucket"] != "passed" and r["link"] else ""
            lines.append(f"  {r['exercise']:<28} {r['status']:<16} {r['cases']:>5}  {where}")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        columns = ("group", "exercise", "status", "cases", "where", "detail")
        head = "".join(f"<th>{html.escape(self.say('col_' + c))}</th>" for c in columns)
        body = []
        for r in self.rows():
            where = html.escape(r["where"])
            if r["link"]:
                where = f"<a href=\"{html.escape(r['link'])}\">{where}</a>"
            body.append(
                f"<tr class='progress-{r['bucket']}'><td>{html.escape(r['group'])}</td>"
                f"<td><code>{html.escape(r['exercise'])}</code></td>"
                f"<td style='color:{COLORS[r['bucket']]};font-weight:bold'>"
                f"{html.escape(r['status'])}</td><td>{r['cases']}</td><td>{where}</td>"
                f"<td>{html.escape(r['detail'][:160])}</td></tr>")
        return (f"<div class='course-progress'><p><b>{html.escape(self.summary())}</b></p>"
                f"<table><tr>{head}</tr>{''.join(body)}</table></div>")
