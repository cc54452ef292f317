"""The similarity page (``python -m autograder similarity``) in headless Chromium, every
network request refused: the ranking table lists the planted copies first, each shown
pair has its two sides next to each other with the matching regions marked, and no
submission text runs."""

from __future__ import annotations

import pytest

from autograder.similarity import similarity_report, write_page
from autograder.spec import load_lab
from tests.autograder import similar_submissions

from .conftest import offline_context
from .test_class_report import refuse_dialog


@pytest.fixture(scope="module")
def page_and_planted(tmp_path_factory):
    folder = tmp_path_factory.mktemp("similar")
    planted = similar_submissions.build(folder)["planted"]
    report = similarity_report(load_lab(similar_submissions.LAB_DIR),
                               sorted(folder.glob("*.ipynb")))
    return write_page(report, folder / "similarity.html"), planted


@pytest.mark.browser
def test_similarity_page_ranks_and_shows_sides(page_and_planted, chromium, tmp_path):
    path, planted = page_and_planted
    context, refused = offline_context(chromium, lambda url: url == path.as_uri(),
                                       viewport=(1300, 900))
    problems = []
    page = context.new_page()
    page.on("console", lambda msg: msg.type == "error" and problems.append(msg.text))
    page.on("pageerror", lambda err: problems.append(str(err)))
    page.on("dialog", lambda dialog: refuse_dialog(dialog, problems))
    page.goto(path.as_uri())
    assert "never a verdict" in page.locator("p.caution").inner_text()
    rows = page.locator("table.ranking tbody tr")
    assert rows.count() > 100
    top = {frozenset(rows.nth(i).locator("td").nth(k).inner_text() for k in (1, 2))
           for i in range(len(planted))}
    assert top == {frozenset(pair) for pair in planted}
    assert page.locator("section.pair").count() == 20
    for i in range(3):
        left, right = page.locator("section.pair").nth(i).locator(".side pre").all()
        a, b = left.bounding_box(), right.bounding_box()
        assert a["x"] + a["width"] <= b["x"] and abs(a["y"] - b["y"]) < 2   # side by side
        assert left.locator("mark").count() >= 1 and right.locator("mark").count() >= 1
        assert left.locator("mark").first.is_visible()
    page.locator("table.ranking a[href='#pair-1']").click()
    assert page.evaluate("location.hash") == "#pair-1"
    page.screenshot(path=str(tmp_path / "similarity.png"), full_page=False)
    context.close()
    assert refused == []
    assert problems == []
