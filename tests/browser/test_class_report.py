"""The instructor's class report (``python -m autograder report``) opens in headless
Chromium with every network request refused: it needs none, every plotly figure
is drawn, and the console stays clean."""

from __future__ import annotations

import pytest

from autograder.gradebook import Gradebook
from autograder.report import class_summary, write_report
from tests.autograder import class_gradebook
from tests.autograder.helpers import toy_lab

from .conftest import offline_context


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    folder = tmp_path_factory.mktemp("class_report")
    with Gradebook(class_gradebook.build(folder / "gradebook.sqlite3")) as book:
        summary = class_summary(book, toy_lab())
    return write_report(summary, folder / "report.html")


def refuse_dialog(dialog, problems: list) -> None:
    """A dialog means student text ran as script: note it and close it."""
    problems.append(f"{dialog.type} dialog: {dialog.message}")
    dialog.dismiss()


@pytest.mark.browser
def test_report_draws_offline(report, chromium, tmp_path):
    context, refused = offline_context(chromium, lambda url: url == report.as_uri(),
                                       viewport=(1300, 900))
    problems = []
    page = context.new_page()
    page.on("console", lambda msg: msg.type == "error" and problems.append(msg.text))
    page.on("pageerror", lambda err: problems.append(str(err)))
    page.on("dialog", lambda dialog: refuse_dialog(dialog, problems))
    page.goto(report.as_uri())
    figures = page.locator("figure.chart").count()
    assert figures == 3
    page.wait_for_function(
        f"() => document.querySelectorAll('.js-plotly-plot .main-svg .trace').length >= "
        f"{figures}", timeout=30_000)
    assert page.locator("figure.chart .js-plotly-plot").count() == figures
    assert page.locator("figure.chart .main-svg").count() >= figures
    for i in range(figures):   # each text summary is beside its figure, not under it
        plot = page.locator("figure.chart .main-svg").nth(i).bounding_box()
        text = page.locator("figure.chart figcaption").nth(i).bounding_box()
        assert plot["x"] + plot["width"] <= text["x"]
    assert page.locator("text=alert(1)").count() >= 1     # shown as text, never run
    page.screenshot(path=str(tmp_path / "class_report.png"), full_page=True)
    context.close()
    assert refused == []
    assert problems == []
