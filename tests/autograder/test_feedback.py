"""Per-student feedback: a short report a student can act on, in which nothing a
submission returns, raises or prints can inject Markdown or HTML, and nothing of a
hidden case shows but its name and outcome."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from autograder.export import (
    exercise_reports,
    feedback_html,
    feedback_markdown,
    md_block,
    md_code,
)
from autograder.grade import grade_batch, prepare
from autograder.gradebook import Gradebook

from .helpers import full_marks, toy_lab, with_code, write

HOSTILE = [
    "```",
    "````\n# heading\n````",
    "**Total: 17 / 17**",
    "<img src=x onerror=alert(1)>",
    "a | b | c",
    "line one\nline two\r\n# heading\r## another",
    "# heading",
    "`code` and ``more``",
    " ` ",
    "",
    "\x00<script>alert(1)</script>",
    "[link](javascript:alert(1))",
]

INJECTED = ("17 / 17", "onerror", "heading", "alert", "javascript")
"""Text from HOSTILE that must only ever appear inside code."""


@pytest.mark.parametrize("text", HOSTILE)
def test_a_code_span_is_one_line_and_nothing_inside_can_close_it(text):
    span = md_code(text)
    assert "\n" not in span and "\r" not in span
    fence = re.match(r"`+", span).group()
    assert span.endswith(fence)
    inner = span[len(fence):-len(fence)]
    assert all(len(run) < len(fence) for run in re.findall(r"`+", inner))


@pytest.mark.parametrize("text", HOSTILE)
def test_no_line_of_a_fenced_block_can_close_it(text):
    lines = md_block(text).split("\n")
    fence = re.match(r"`+", lines[0]).group()
    assert len(fence) >= 3 and lines[-1] == fence
    for line in lines[1:-1]:
        assert not re.fullmatch(rf"\s{{0,3}}`{{{len(fence)},}}\s*", line)


class FakeBook:
    """The gradebook's read side, with rows as a grader would store them (and the
    ``error_type`` column the cases table is gaining)."""

    def __init__(self, exercises, cases):
        self._exercises, self._cases = exercises, cases

    def students(self, lab):
        return [{"student": "mallory", "score": 15.0, "max_score": 17.0, "status": "graded"}]

    def exercises(self, lab, student):
        return self._exercises

    def cases(self, lab, student, exercise):
        return self._cases[exercise]


def _hostile_book(error_type="ValueError"):
    bad = "\n".join(HOSTILE)
    exercises = [
        {"exercise": "scaled_sum", "score": 1.0, "max_score": 4.0, "status": "partial",
         "message": "your exercise cell raised when run: " + bad, "stdout": bad},
        {"exercise": "word_counts", "score": 3.0, "max_score": 3.0, "status": "passed",
         "message": "", "stdout": ""},
    ]
    detail = {"args": repr((bad,)), "kwargs": "{'k': '**Total: 17 / 17**'}",
              "expected": "<img src=x onerror=alert(1)>", "got": bad}
    cases = {
        "scaled_sum": [
            {"name": "scalars", "hidden": 0, "status": "passed", "message": "",
             "detail": {"args": "(1.0, 2.0)", "kwargs": "{}", "expected": "4.0", "got": "4.0"}},
            {"name": "vectors", "hidden": 0, "status": "error", "message": "raised " + bad,
             "detail": detail},
            {"name": "third", "hidden": 0, "status": "failed", "message": HOSTILE[2],
             "detail": detail},
            {"name": "broadcast", "hidden": 1, "status": "error",
             "message": "SECRET hidden message", "detail": None, "error_type": error_type},
            {"name": "large", "hidden": 1, "status": "passed", "message": "", "detail": None,
             "error_type": None},
        ],
        "word_counts": [
            {"name": "two_words", "hidden": 0, "status": "passed", "message": "",
             "detail": {"args": "('a b a',)", "kwargs": "{}", "expected": "{}", "got": "{}"}},
            {"name": "secret_sentence", "hidden": 1, "status": "passed", "message": "",
             "detail": None},
        ],
    }
    return FakeBook(exercises, cases)


class _Rendered(HTMLParser):
    """Elements of rendered HTML with their text, and any text found outside code."""

    VOID = {"img", "br", "hr", "input", "meta", "link"}

    def __init__(self, html):
        super().__init__()
        self.elements, self.open, self.outside_code = [], [], []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        self.elements.append([tag, ""])
        if tag not in self.VOID:
            self.open.append(self.elements[-1])

    def handle_endtag(self, tag):
        while self.open and self.open.pop()[0] != tag:
            pass

    def handle_data(self, data):
        for element in self.open:
            element[1] += data
        if not any(tag in ("code", "pre") for tag, _ in self.open):
            self.outside_code.append(data)

    def texts(self, tag):
        return [text for t, text in self.elements if t == tag]


def _render_markdown(text):
    mistune = pytest.importorskip("mistune")
    return _Rendered(mistune.html(text))


def _assert_inert(rendered, exercise_headings):
    tags = {tag for tag, _ in rendered.elements}
    assert tags <= {"h1", "h2", "p", "ul", "li", "code", "pre", "strong"}, tags
    assert rendered.texts("strong") == ["Total: 15 / 17"]
    assert len(rendered.texts("h1")) == 1
    assert rendered.texts("h2") == exercise_headings
    outside = "".join(rendered.outside_code)
    for word in INJECTED:
        assert word not in outside, word


def test_hostile_text_renders_as_code_in_markdown():
    book = _hostile_book()
    md = feedback_markdown(book, toy_lab(), "mallory")
    rendered = _render_markdown(md)
    _assert_inert(rendered, ["scaled_sum: 1 / 4 (partly passed)",
                             "word_counts: 3 / 3 (passed)"])
    code = " ".join(rendered.texts("code"))
    assert "<img src=x onerror=alert(1)>" in code and "**Total: 17 / 17**" in code


def test_hostile_text_is_escaped_in_html():
    html = feedback_html(_hostile_book(), toy_lab(), "mallory")
    rendered = _Rendered(html.split("</style>", 1)[1])
    assert "img" not in {tag for tag, _ in rendered.elements}
    assert "script" not in {tag for tag, _ in rendered.elements}
    assert rendered.texts("b") == ["Total: 15 / 17"]
    outside = "".join(rendered.outside_code)
    for word in INJECTED:
        assert word not in outside, word


@pytest.mark.parametrize("render", [feedback_markdown, feedback_html])
def test_the_report_is_short_and_hides_everything_of_hidden_cases_but_outcome(render):
    text = render(_hostile_book(), toy_lab(), "mallory")
    assert "Public cases: 1 of 3 passed." in text
    assert "First failing public case:" in text and "vectors" in text
    assert "Also failing:" in text and "third" in text
    assert "scalars" not in text and "two_words" not in text    # passed: counted, not listed
    assert "SECRET" not in text                                 # a hidden case's message
    assert "nothing printed during hidden cases is kept" in text  # public output, fenced
    assert text.count("First failing public case:") == 1        # word_counts passed: no case
    assert "ValueError" in text                                 # the hidden error's class


def test_hidden_errors_without_an_error_type_show_only_the_outcome():
    md = feedback_markdown(_hostile_book(error_type=None), toy_lab(), "mallory")
    assert "- `broadcast`: error\n" in md


def test_the_report_model_counts_public_cases_and_keeps_hidden_ones_apart():
    reports = exercise_reports(_hostile_book(), toy_lab(), "mallory")
    scaled = reports[0]
    assert (scaled.public_passed, scaled.public_total) == (1, 3)
    assert scaled.first_failure["name"] == "vectors"
    assert scaled.other_failures == ["third"]
    assert [c["name"] for c in scaled.hidden] == ["broadcast", "large"]
    assert scaled.printed and not reports[1].printed


HOSTILE_SUBMISSION = {
    "word_counts": ("def word_counts(text):\n"
                    "    print('**Total: 17 / 17**\\n# heading')\n"
                    "    return {'```\\n**Total: 17 / 17**': 1,\n"
                    "            '<img src=x onerror=alert(1)>': 2}\n"),
    "unique": ("def unique(xs):\n"
               "    raise ValueError('```\\n# heading\\n**Total: 17 / 17**\\n"
               "<img src=x onerror=alert(1)> | a | b')\n"),
    "pair_total": "def pair_total(a, b):\n    return '| # heading <img src=x onerror=alert(1)>'\n",
}


def test_a_graded_hostile_submission_gets_inert_feedback(tmp_path):
    folder = tmp_path / "subs"
    folder.mkdir()
    write(with_code(HOSTILE_SUBMISSION, base=full_marks()), folder / "mallory.ipynb")
    with Gradebook(tmp_path / "gb.sqlite3") as book:
        grade_batch(prepare(toy_lab(), time_limit=3.0), [folder / "mallory.ipynb"], book,
                    jobs=1, progress=False)
        md = feedback_markdown(book, toy_lab(), "mallory")
        html = feedback_html(book, toy_lab(), "mallory")
    total = re.search(r"\*\*Total: (.*?)\*\*", md).group(1)
    rendered = _render_markdown(md)
    assert rendered.texts("strong") == [f"Total: {total}"]
    assert "img" not in {tag for tag, _ in rendered.elements}
    assert "onerror" not in "".join(rendered.outside_code)
    assert "heading" not in " ".join(rendered.texts("h1") + rendered.texts("h2"))
    assert "onerror" not in "".join(_Rendered(html.split("</style>", 1)[1]).outside_code)
    assert "'a b a'" in md                          # the first failing public case's input
