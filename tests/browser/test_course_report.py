"""The course report (``python -m autograder course report``) opens in headless
Chromium with every network request refused: it needs none, each of its three
plotly figures is drawn with its text summary beside it, the falling-behind rule
is on the page, and the console stays clean; in English and in Chinese."""

from __future__ import annotations

import datetime as dt

import pytest

from autograder.course.config import load_course
from autograder.course.grading import grade_course
from autograder.course.report import course_summary, write_course_report
from autograder.course.term import TermGradebook
from tests.autograder import course_term

from .conftest import offline_context


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    root = tmp_path_factory.mktemp("course_report")
    course = load_course(course_term.build(root))
    later = dt.datetime(2026, 12, 1, tzinfo=dt.UTC)
    with TermGradebook(course.gradebook) as book:
        grade_course(course, book, jobs=2, progress=False)
        return {lang: write_course_report(course_summary(course, book, lang, now=later),
                                          root / f"course_{lang}.html")
                for lang in ("en", "zh")}


@pytest.mark.browser
@pytest.mark.parametrize(("lang", "rule"), [("en", "Rule: a student is falling behind"),
                                            ("zh", "规则：")])
def test_course_report_draws_offline(reports, chromium, tmp_path, lang, rule):
    report = reports[lang]
    context, refused = offline_context(chromium, lambda url: url == report.as_uri(),
                                       viewport=(1300, 900))
    problems = []
    page = context.new_page()
    page.on("console", lambda msg: msg.type == "error" and problems.append(msg.text))
    page.on("pageerror", lambda err: problems.append(str(err)))
    page.goto(report.as_uri())
    figures = page.locator("figure.chart").count()
    assert figures == 3
    page.wait_for_function(
        f"() => document.querySelectorAll('.js-plotly-plot .main-svg .trace').length >= "
        f"{figures}", timeout=30_000)
    assert page.locator("figure.chart .js-plotly-plot").count() == figures
    for i in range(figures):   # each text summary is beside its figure, not under it
        plot = page.locator("figure.chart .main-svg").nth(i).bounding_box()
        text = page.locator("figure.chart figcaption").nth(i).bounding_box()
        assert plot["x"] + plot["width"] <= text["x"]
    assert rule in page.locator("p.rule").inner_text()
    assert page.locator("figure.chart").nth(1).locator(".heatmaplayer, .hm").count() >= 1
    page.screenshot(path=str(tmp_path / f"course_report_{lang}.png"), full_page=True)
    context.close()
    assert refused == []
    assert problems == []
