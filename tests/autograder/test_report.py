"""The class report: numbers computed from a hand-built gradebook (see
class_gradebook.py for who did what), escaping of student text, and the CLI."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from autograder.cli import main
from autograder.grade import CaseGrade, ExerciseGrade, SubmissionGrade
from autograder.gradebook import Gradebook
from autograder.report import (
    class_summary,
    exception_class,
    headline,
    message_key,
    report_html,
    score_bins,
)

from . import class_gradebook
from .class_gradebook import HOSTILE, HOSTILE_ID
from .helpers import TOY, toy_lab


@pytest.fixture(scope="module")
def book_path(tmp_path_factory):
    return class_gradebook.build(tmp_path_factory.mktemp("report") / "gradebook.sqlite3")


@pytest.fixture(scope="module")
def summary(book_path):
    with Gradebook(book_path) as book:
        return class_summary(book, toy_lab())


@pytest.fixture(scope="module")
def page(summary):
    return report_html(summary)


def test_totals_and_score_statistics(summary):
    assert summary.totals == pytest.approx({"ada": 8.0, "bob": 4.5, HOSTILE_ID: 10 / 3,
                                            "dee": 0.0, "eve": 0.0, "fay": 0.0})
    assert summary.max_score == 8.0
    # ten bins of 0.8 points: 0 -> first, 10/3 -> [3.2, 4), 4.5 -> [4, 4.8), 8 -> last
    counts = [n for *_, n in summary.bins]
    assert counts == [3, 0, 0, 0, 1, 1, 0, 0, 0, 1]
    assert summary.bins[-1][1] == pytest.approx(8.0)


def test_score_bins_put_full_marks_in_the_last_bin():
    assert [n for *_, n in score_bins([0, 2.5, 9.99, 10], 10)] == [1, 0, 1, 0, 0, 0, 0, 0, 0, 2]


def test_exercise_pass_rates_and_not_attempted(summary):
    by_id = {e.exercise: e for e in summary.exercises}
    assert [e.exercise for e in summary.exercises] == ["scaled_sum", "word_counts", "unique",
                                                       "pair_total"]
    assert {k: (e.students, e.passed) for k, e in by_id.items()} == {
        "scaled_sum": (6, 1), "word_counts": (6, 2), "unique": (6, 2), "pair_total": (6, 1)}
    assert by_id["unique"].pass_rate == pytest.approx(2 / 6)
    # scaled_sum: ada 2 + bob 1.5 = 3.5 points over six students
    assert by_id["scaled_sum"].mean_score == pytest.approx(3.5 / 6)
    assert {k: e.not_attempted for k, e in by_id.items()} == {
        "scaled_sum": 3, "word_counts": 3, "unique": 3, "pair_total": 4}


def test_case_pass_rates(summary):
    got = {(c.exercise, c.case): (c.hidden, c.passed, c.students) for c in summary.cases}
    assert got == {
        ("scaled_sum", "scalars"): (False, 2, 6), ("scaled_sum", "vectors"): (False, 2, 6),
        ("scaled_sum", "broadcast"): (True, 1, 6), ("scaled_sum", "large"): (True, 2, 6),
        ("word_counts", "two_words"): (False, 2, 6), ("word_counts", "empty"): (False, 3, 6),
        ("word_counts", "secret_sentence"): (True, 3, 6),
        ("unique", "small"): (False, 3, 6), ("unique", "hidden_big"): (True, 2, 6),
        ("pair_total", "ints"): (False, 1, 6), ("pair_total", "floats"): (True, 1, 6)}
    assert [c.case for c in summary.cases][:4] == ["scalars", "vectors", "broadcast", "large"]


def test_public_passed_but_hidden_failed(summary):
    assert {e.exercise: e.hidden_only_failed for e in summary.exercises} == {
        "scaled_sum": ["bob"], "word_counts": [], "unique": ["bob"], "pair_total": []}


def test_failure_messages_group_variants_that_differ_in_numbers(summary):
    got = [(t.text, len(t.students), t.cases, t.exercises, len(t.variants))
           for t in summary.messages]
    assert got == [
        ("wrong result: expected 3 got 4", 2, 2, ["scaled_sum", "word_counts"], 2),
        (f"ValueError: {HOSTILE}", 1, 4, ["scaled_sum"], 1),
        ("KeyError: 'x'", 1, 2, ["pair_total"], 1),
        ("IndexError: list index out of range", 1, 1, ["unique"], 1)]


def test_exception_classes(summary):
    got = [(t.text, len(t.students), t.cases) for t in summary.exceptions]
    assert got == [("ValueError", 1, 4), ("KeyError", 1, 2), ("IndexError", 1, 1)]


def test_exception_class_prefers_the_gradebook_column():
    row = {"status": "error", "message": "Traceback...\nValueError: x", "error_type": "MyError"}
    assert exception_class(row) == "MyError"
    assert exception_class({**row, "error_type": None}) == "ValueError"
    assert exception_class({"status": "error", "message": "numpy.linalg.LinAlgError"}) \
        == "numpy.linalg.LinAlgError"
    assert exception_class({"status": "error", "message": "could not send it back"}) is None
    assert exception_class({"status": "failed", "message": "ValueError: x"}) is None


def test_headline_and_message_key():
    assert headline("error", "line 1\n  in f\nTypeError: bad\n") == "TypeError: bad"
    assert headline("failed", "wrong result: x\nmore") == "wrong result: x"
    assert message_key("at [0, 1]: expected 1.5e-06 got -2 (0x7fa3)") \
        == "at [#, #]: expected # got -# (#)"
    assert message_key("expected float64 got int32") == "expected float64 got int32"


def test_slowest_and_not_attempted(summary):
    assert summary.seconds[:3] == [(HOSTILE_ID, pytest.approx(3.6)), ("bob", 2.0),
                                   ("ada", pytest.approx(0.4))]
    assert summary.not_attempted == ["dee", "eve", "fay"]


class _Cells(HTMLParser):
    """Collects the text of every table cell and the tags opened in a page."""

    def __init__(self):
        super().__init__()
        self.cells, self.tags, self._cell = [], [], None

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "td":
            self._cell = ""

    def handle_endtag(self, tag):
        if tag == "td":
            self.cells.append(self._cell)
            self._cell = None

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data


def test_html_escapes_student_text(page):
    assert HOSTILE not in page and "<img src=x" not in page
    parser = _Cells()
    parser.feed(page)
    # the hostile texts come back whole, as the text of single cells
    assert f"ValueError: {HOSTILE}" in parser.cells
    assert HOSTILE_ID in parser.cells
    assert "img" not in parser.tags
    assert parser.tags.count("table") == 7


def test_page_is_offline_with_plotly_inlined_once(page):
    from plotly.offline import get_plotlyjs

    assert page.count(get_plotlyjs()) == 1
    ours = page.replace(get_plotlyjs(), "")   # the library names URLs it never fetches here
    assert ours.count("Plotly.newPlot(") == 3
    assert not re.search(r"<script[^>]*\bsrc=|<link|@import|https?://|//cdn", ours)
    assert "Content-Security-Policy" in ours


def test_figures_have_text_summaries(page):
    assert page.count("<figcaption>") == 3
    assert ("6 submissions. Mean 2.64 of 8 (33%), median 1.67, lowest 0, highest 8. "
            "1 scored full marks and 3 scored 0. The most common range is 0–0.8 points "
            "(3 students).") in page
    # scaled_sum and pair_total tie at 1 of 6; pair_total has the lower mean score
    assert ("Hardest exercise: pair_total, where 1 of 6 students (17%) passed every case; "
            "mean score 17%. Easiest: word_counts, 2 of 6 (33%); mean score 44%.") in page
    # mean pass rate of public cases (2+2+2+3+3+1)/36, of hidden ones (1+2+3+2+1)/30
    assert ("0 of 11 cases were passed by every student. Lowest pass rate, 17%: "
            "scaled_sum / broadcast (hidden), pair_total / ints, pair_total / floats (hidden). "
            "Mean pass rate of public cases: 36%. Mean pass rate of hidden cases: 30%.") in page


def test_cli_writes_the_report(book_path, tmp_path, capsys):
    out = tmp_path / "r" / "class.html"
    assert main(["report", str(TOY), "--gradebook", str(book_path), "--out", str(out)]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    assert out.read_text().startswith("<!doctype html>")


def test_cli_default_output_path(book_path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["report", str(TOY), "--gradebook", str(book_path)]) == 0
    assert (tmp_path / "build" / "reports" / "toy_lab" / "report.html").is_file()


@pytest.mark.parametrize("create", [True, False], ids=["empty", "absent"])
def test_cli_without_submissions_says_what_to_run(tmp_path, capsys, create):
    path = tmp_path / "gradebook.sqlite3"
    if create:
        Gradebook(path).close()
    out = tmp_path / "report.html"
    assert main(["report", str(TOY), "--gradebook", str(path), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert f"no graded submissions for lab toy_lab in {path}" in err
    assert "python -m autograder grade toy_lab" in err
    assert not out.exists() and path.exists() == create


def test_exercises_the_spec_no_longer_has_come_last(tmp_path):
    lab = toy_lab()
    old = ExerciseGrade("retired", 1.0, 1.0, "passed", "",
                        [CaseGrade("only", False, "passed", 1.0, 1.0)])
    unique = ExerciseGrade("unique", 0.0, 1.0, "failed", "",
                           [CaseGrade("small", False, "failed", 0.0, 1.0, "wrong result: 1")])
    with Gradebook(tmp_path / "g.sqlite3") as book:
        book.record(lab.id, SubmissionGrade("ann", "ann.ipynb", "h", "f", [old, unique]))
        summary = class_summary(book, lab)
    assert [e.exercise for e in summary.exercises] == ["scaled_sum", "word_counts", "unique",
                                                       "pair_total", "retired"]
    assert [(c.exercise, c.case, c.passed) for c in summary.cases] == [
        ("unique", "small", 0), ("retired", "only", 1)]
    assert "retired" in report_html(summary)
