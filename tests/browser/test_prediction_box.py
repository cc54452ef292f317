"""The prediction box (vizkit.prediction) in Chromium, offline, as the static
site serves it: the answer stays hidden until a guess is checked, an empty
guess is refused, and the verdict compares a number or a choice with the
measured answer."""

from __future__ import annotations

import pytest

from vizkit.prediction import Answer, guess_box

from .conftest import offline_context

pytestmark = pytest.mark.browser


def _page(chromium, tmp_path, answer: Answer):
    html = guess_box(answer, "<pre>measured: 6 nodes</pre>", "Six, **not** three.")
    path = tmp_path / "box.html"
    path.write_text(f"<!doctype html><html><body>{html}</body></html>", encoding="utf-8")
    context, refused = offline_context(chromium, lambda url: url.startswith("file:"))
    page = context.new_page()
    page.goto(path.as_uri())
    return context, page, refused


def _verdict(page) -> str:
    return page.locator(".vizkit-prediction-verdict").inner_text()


def test_a_number_is_judged_and_the_answer_shows_only_after(chromium, tmp_path):
    answer = Answer()
    answer.number(6)
    context, page, refused = _page(chromium, tmp_path, answer)
    hidden = page.locator(".vizkit-prediction-answer")
    assert not hidden.is_visible()
    page.locator(".vizkit-prediction-check").click()
    assert _verdict(page) == "Make a guess first." and not hidden.is_visible()
    page.locator("input[type=number]").fill("3")
    page.locator("input[type=number]").press("Enter")
    assert _verdict(page) == "Not quite: the answer is 6."
    assert hidden.is_visible() and "measured: 6 nodes" in hidden.inner_text()
    assert page.locator(".vizkit-prediction-answer strong").inner_text() == "not"
    assert page.locator(".vizkit-prediction-check").is_disabled()
    assert refused == []
    context.close()


def test_a_choice_is_judged(chromium, tmp_path):
    answer = Answer()
    answer.choice(["4 times", "8 times"], correct=0)
    context, page, _ = _page(chromium, tmp_path, answer)
    page.locator("input[type=radio]").first.check()
    page.locator(".vizkit-prediction-check").click()
    assert _verdict(page) == "Right."
    assert page.locator(".vizkit-prediction-answer").is_visible()
    context.close()


def test_an_open_guess_is_echoed_beside_the_answer(chromium, tmp_path):
    context, page, _ = _page(chromium, tmp_path, Answer())
    page.locator("input[type=text]").fill("it stays the same")
    page.locator(".vizkit-prediction-check").click()
    assert _verdict(page) == "Your guess: it stays the same."
    context.close()
