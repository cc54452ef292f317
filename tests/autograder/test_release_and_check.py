"""Release (no solution or hidden-case text survives; the student notebook runs
and reports "not attempted") and the in-notebook self-check."""

import dataclasses
import json
import re

import nbformat
import numpy as np
import pytest

from autograder import codec, run_check, run_check_all
from autograder.check import report_html
from autograder.notebook import NotebookError, strip_solutions
from autograder.release import leaks, public_cases, release, release_notebook
from autograder.spec import Case, Exercise
from tests.notebooks.harness import execute

from .helpers import TOY, toy_lab


def test_a_solution_region_becomes_an_indented_stub():
    source = ("def f(x):\n    y = 1\n    ### BEGIN SOLUTION\n    return x + y\n"
              "    ### END SOLUTION\n\nz = 2")
    stub = '    raise NotImplementedError("f: write your solution here")'
    assert strip_solutions(source, "f") == f"def f(x):\n    y = 1\n{stub}\n\nz = 2"


@pytest.mark.parametrize("source", ["### BEGIN SOLUTION\nx = 1", "x = 1\n### END SOLUTION",
                                    "### BEGIN SOLUTION\n### BEGIN SOLUTION\n### END SOLUTION"])
def test_unbalanced_markers_are_an_error(source):
    with pytest.raises(NotebookError):
        strip_solutions(source, "f")


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    return release(toy_lab(), tmp_path_factory.mktemp("release"))


def _solution_text_from_source():
    """Lines between the markers, read straight from the source file's JSON."""
    nb = json.loads((TOY / "source.ipynb").read_text())
    lines = []
    for cell in nb["cells"]:
        text = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        for block in re.findall(r"### BEGIN SOLUTION\n(.*?)### END SOLUTION", text, re.S):
            lines += [ln.strip() for ln in block.splitlines() if ln.strip()]
    return lines


def test_release_has_stubs_no_solutions_no_hidden_cases_no_outputs(released):
    text = (released / "toy_lab.ipynb").read_text()
    public = (released / "public_cases.json").read_text()
    nb = nbformat.reads(text, as_version=4)
    code = "\n".join(c.source for c in nb.cells if c.cell_type == "code")
    for eid in ("scaled_sum", "word_counts", "unique", "pair_total"):
        assert f'raise NotImplementedError("{eid}: write your solution here")' in code
    solution = _solution_text_from_source()
    assert solution
    for line in solution:
        assert line not in code and line not in public, line
    assert "BEGIN SOLUTION" not in text
    lab = toy_lab()
    for ex in lab.exercises:
        for case in ex.hidden_cases:
            assert case.name not in text and case.name not in public
    assert "the cat saw" not in text + public        # a hidden input
    assert "_scaled_sum" not in text + public and "Counter" not in text + public  # references
    assert all(not c.get("outputs") and c.get("execution_count") is None
               for c in nb.cells if c.cell_type == "code")


def test_public_cases_carry_the_references_values(released):
    data = json.loads((released / "public_cases.json").read_text())
    by_id = {ex["id"]: ex for ex in data["exercises"]}
    scalars = by_id["scaled_sum"]["cases"][0]
    assert codec.decode(scalars["args"]) == (1.0, 2.0)
    assert codec.decode(scalars["expected"]) == 2 * 1.0 + 2.0
    assert codec.decode(by_id["word_counts"]["cases"][0]["expected"]) == {"a": 2, "b": 1}
    assert by_id["scaled_sum"]["hidden_cases"] == 2


def test_the_leak_check_catches_a_surviving_solution_line():
    lab = toy_lab()
    nb = release_notebook(lab)
    nb.cells[2].source += "\n    return sorted(set(xs))"
    found = leaks(lab, nb, json.dumps(public_cases(lab)))
    assert any("sorted(set(xs))" in f for f in found)


@pytest.mark.slow
def test_the_student_notebook_runs_and_reports_not_attempted(released, tmp_path):
    nb, errors = execute(released / "toy_lab.ipynb", timeout=120)
    assert errors == []
    shown = "\n".join(o.get("data", {}).get("text/html", "") for c in nb.cells
                      for o in c.get("outputs", []))
    assert "scaled_sum: 0/2 public cases pass (not attempted yet)" in shown
    assert "public cases only" in shown
    assert "0/4 exercises pass all their public cases" in shown


def _namespace(**functions):
    return dict(functions)


def test_check_reports_pass_fail_error_not_attempted_and_missing():
    def scaled_sum(a, b):
        out = 2.0 * np.asarray(a, dtype=np.float64) + b
        if np.ndim(out):
            out[1] += 1.0            # wrong in one element
        return out

    def word_counts(text):
        raise NotImplementedError

    def unique(xs):
        return {}["boom"]

    ns = _namespace(scaled_sum=scaled_sum, word_counts=word_counts, unique=unique)
    reports = {r.exercise.id: r for r in run_check_all(TOY, ns)}
    assert [r.status for r in reports["scaled_sum"].results] == ["passed", "failed"]
    assert reports["scaled_sum"].results[1].mask.tolist() == [False, True, False]
    assert reports["word_counts"].status == "not_attempted"
    assert reports["unique"].results[0].status == "error"
    assert "KeyError" in reports["unique"].results[0].message
    assert reports["pair_total"].results[0].status == "missing"
    html = report_html([reports["scaled_sum"]])
    assert "public cases only" in html and "2 hidden case(s)" in html
    assert "Hint:" in html
    # the one wrong element (4.5 expected, 5.5 got) is highlighted in both columns
    assert html.count("background:#ffd7d5") == 2 and ">5.5</td>" in html


def test_check_uses_support_classes_from_the_namespace_and_passes_a_right_answer():
    class Pair:
        def __init__(self, a, b):
            self.a, self.b = a, b

        def total(self):
            return float(self.a + self.b) * 10

    def pair_total(a, b):
        return Pair(a, b).total()

    report = run_check("pair_total", TOY, {"pair_total": pair_total})
    assert report.status == "passed" and report.passed == 1


def test_check_refuses_values_the_grader_could_not_receive():
    report = run_check("unique", TOY, {"unique": lambda xs: object()})
    assert report.results[0].status == "error"
    assert "could not receive" in report.results[0].message


def test_check_reads_public_cases_json_next_to_a_released_notebook(released, monkeypatch):
    monkeypatch.chdir(released)
    report = run_check("word_counts", namespace={"word_counts": lambda t: {"a": 2, "b": 1}},
                       hint=2)
    assert [r.status for r in report.results] == ["passed", "failed"]
    assert [text for _, text in report.hints()] == list(toy_lab().exercise("word_counts").hints)


def test_public_cases_json_carries_every_hint_tier(released):
    data = json.loads((released / "public_cases.json").read_text())
    by_id = {ex["id"]: ex for ex in data["exercises"]}
    assert by_id["word_counts"]["hints"] == list(toy_lab().exercise("word_counts").hints)
    assert by_id["scaled_sum"]["hints"] == ["Broadcast: 2 * a + b, as float64."]
    assert by_id["unique"]["hints"] == []


def _wrong_counts(text):
    return {}


def test_a_failure_shows_hint_tier_one_and_says_how_to_ask_for_more():
    report = run_check("word_counts", TOY, {"word_counts": _wrong_counts})
    tiers = toy_lab().exercise("word_counts").hints
    assert report.hints() == [("Hint 1 of 2", tiers[0])]
    assert report.more_help() == "check('word_counts', hint=2)"
    text = report.to_text()
    assert tiers[0] in text and tiers[1] not in text
    assert "more help: check('word_counts', hint=2)" in text
    assert "More help: <code>check(&#x27;word_counts&#x27;, hint=2)</code>" in report_html([report])


@pytest.mark.parametrize("level", [2, 7])
def test_asking_for_more_shows_the_tiers_up_to_it(level):
    report = run_check("word_counts", TOY, {"word_counts": _wrong_counts}, hint=level)
    tiers = toy_lab().exercise("word_counts").hints
    assert report.hints() == [("Hint 1 of 2", tiers[0]), ("Hint 2 of 2", tiers[1])]
    assert report.more_help() == "" and "more help" not in report.to_text()


def test_a_pass_shows_no_hint_unless_asked():
    def word_counts(text):
        counts = {}
        for word in text.split():
            counts[word] = counts.get(word, 0) + 1
        return counts

    assert run_check("word_counts", TOY, {"word_counts": word_counts}).hints() == []
    asked = run_check("word_counts", TOY, {"word_counts": word_counts}, hint=1)
    assert [label for label, _ in asked.hints()] == ["Hint 1 of 2"]


def test_a_failed_case_shows_its_input_expected_and_got_briefly_in_text():
    def scaled_sum(a, b):
        return np.full(np.shape(a), 9.0) if np.ndim(a) else 2.0 * a + b

    text = run_check("scaled_sum", TOY, {"scaled_sum": scaled_sum}).to_text()
    assert ("[failed] vectors: 3 of 3 elements differ; at [0]: expected 2.5, got 9.0; "
            "at [1]: expected 4.5, got 9.0; at [2]: expected 6.5, got 9.0") in text
    assert "input:    [1.0, 2.0, 3.0], [0.5, 0.5, 0.5]" in text
    assert "expected: array([2.5, 4.5, 6.5])" in text and "got:      array([9.0, 9.0, 9.0])" in text


def test_a_huge_returned_array_is_summarised_not_dumped():
    def scaled_sum(a, b):
        return np.zeros(100_000) if np.ndim(a) else 2.0 * a + b

    report = run_check("scaled_sum", TOY, {"scaled_sum": scaled_sum})
    assert report.results[1].message == "shape differs: expected (3,), got (100000,)"
    shown = report_html([report]) + report.to_text()
    assert "float64 array of shape (100000,): 0.0, 0.0" in shown
    assert len(shown) < 5000


def test_hint_is_a_one_tier_shorthand_and_may_not_contradict_hints():
    ex = toy_lab().exercise("scaled_sum")
    assert ex.hints == (ex.hint,) == ("Broadcast: 2 * a + b, as float64.",)
    tiered = dataclasses.replace(ex, hint="", hints=["nudge", "more"])
    assert tiered.hints == ("nudge", "more") and tiered.hint == "nudge"
    with pytest.raises(ValueError, match="not both"):
        Exercise("x", "x", (Case("c"),), abs, hint="one", hints=("two", "three"))
