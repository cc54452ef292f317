"""The Gradescope zip and the results it writes, validated against a JSON Schema
of Gradescope's documented results format."""

import json
import stat
import zipfile

import jsonschema
import pytest

from autograder.gradescope import build_zip, run
from autograder.gradescope_schema import RESULTS_SCHEMA

from .helpers import TOY, full_marks, untouched, with_code, write

VALIDATOR = jsonschema.Draft202012Validator(RESULTS_SCHEMA)


def _validate(results):
    errors = sorted(VALIDATOR.iter_errors(results), key=str)
    assert not errors, "\n".join(e.message for e in errors)


def test_the_schema_itself_rejects_what_gradescope_would():
    jsonschema.Draft202012Validator.check_schema(RESULTS_SCHEMA)
    good = {"score": 1.0, "tests": [{"name": "a", "score": 1, "max_score": 1,
                                     "status": "passed", "visibility": "visible"}]}
    _validate(good)
    for bad in ({"tests": [{"name": "a"}]},                       # no score anywhere
                {"score": "10"},                                  # score not a number
                {"score": 1, "tests": [{"score": 1, "status": "ok"}]},
                {"score": 1, "visibility": "sometimes"},
                {"score": 1, "tests": [{"score": 1, "colour": "red"}]}):
        assert list(VALIDATOR.iter_errors(bad)), bad


def test_zip_has_the_two_entry_points_and_the_course(tmp_path):
    path = build_zip("lab1_graph", tmp_path / "ag.zip")
    with zipfile.ZipFile(path) as zf:
        names = set(zf.namelist())
        for entry in ("setup.sh", "run_autograder"):
            mode = zf.getinfo(entry).external_attr >> 16
            assert mode & stat.S_IXUSR, entry
        run_script = zf.read("run_autograder").decode()
        setup = zf.read("setup.sh").decode()
    assert "gradescope-run lab1_graph" in run_script
    assert "/autograder/results/results.json" in run_script
    assert "pip install --quiet -e /autograder/source/course" in setup
    assert {"course/pyproject.toml", "course/autograder/sandbox_child.py",
            "course/labs/lab1_graph/spec.py"} <= names
    assert not any("__pycache__" in n for n in names)


@pytest.mark.parametrize("make, score", [(full_marks, 10.0), (untouched, 0.0)])
def test_results_json_is_valid_and_scored(tmp_path, make, score):
    sub = tmp_path / "submission"
    sub.mkdir()
    write(make(), sub / "lab.ipynb")
    results_path = tmp_path / "results" / "results.json"
    assert run(str(TOY), sub, results_path) == 0
    results = json.loads(results_path.read_text())
    _validate(results)
    assert results["score"] == score
    assert len(results["tests"]) == 11
    assert sum(t["max_score"] for t in results["tests"]) == pytest.approx(10.0)
    assert sum(t["score"] for t in results["tests"]) == pytest.approx(score)


def test_hidden_cases_show_only_name_and_outcome(tmp_path):
    sub = tmp_path / "submission"
    sub.mkdir()
    write(with_code({"word_counts": "def word_counts(text):\n    return {'x': 1}\n"}),
          sub / "lab.ipynb")
    run(str(TOY), sub, tmp_path / "results.json")
    results = json.loads((tmp_path / "results.json").read_text())
    _validate(results)
    by_name = {t["name"]: t for t in results["tests"]}
    hidden = by_name["word_counts: secret_sentence (hidden)"]
    assert hidden["output"] == "hidden case: failed" and hidden["score"] == 0
    public = by_name["word_counts: two_words"]
    assert "expected: {'a': 2, 'b': 1}" in public["output"] and "got: {'x': 1}" in public["output"]


@pytest.mark.parametrize("case", ["grader_fails", "no_notebook"])
def test_a_failure_still_writes_a_valid_result(tmp_path, case):
    sub = tmp_path / "submission"
    sub.mkdir()
    if case == "grader_fails":
        write(full_marks(), sub / "lab.ipynb")
        code = run("no_such_lab", sub, tmp_path / "results.json")
        assert code == 1
    else:
        (sub / "notes.txt").write_text("forgot the notebook")
        assert run(str(TOY), sub, tmp_path / "results.json") == 0
    results = json.loads((tmp_path / "results.json").read_text())
    _validate(results)
    assert results["score"] == 0 and results["tests"] == []
    assert ("no_such_lab" in results["output"]) if case == "grader_fails" else \
        ("No .ipynb" in results["output"])
