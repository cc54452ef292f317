"""The Gradescope zip and the results it writes, validated against a JSON Schema
of Gradescope's documented results format."""

import copy
import dataclasses
import json
import stat
import zipfile

import jsonschema
import pytest

from autograder import gradescope
from autograder.cli import parser
from autograder.grade import grade_notebook, prepare
from autograder.gradescope import build_zip, run
from autograder.gradescope_schema import RESULTS_SCHEMA
from autograder.spec import load_lab

from ..labs.labkit import LAB_IDS
from .helpers import TOY, full_marks, toy_lab, untouched, with_code, write

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
                {"score": 1, "output_format": "rtf"},
                {"score": 1, "tests": [{"score": 1, "colour": "red"}]}):
        assert list(VALIDATOR.iter_errors(bad)), bad


def test_zip_has_the_two_entry_points_the_course_and_a_lean_requirements_file(tmp_path):
    path = build_zip("lab1_graph", tmp_path / "ag.zip")
    with zipfile.ZipFile(path) as zf:
        names = set(zf.namelist())
        for entry in ("setup.sh", "run_autograder"):
            mode = zf.getinfo(entry).external_attr >> 16
            assert mode & stat.S_IXUSR, entry
        run_script = zf.read("run_autograder").decode()
        setup = zf.read("setup.sh").decode()
        requirements = zf.read("requirements.txt").decode().split()
    assert "gradescope-run lab1_graph" in run_script
    assert "--hidden-visibility after_published" in run_script
    assert 'ROOT="${COURSE_AUTOGRADER_ROOT:-/autograder}"' in run_script
    assert '--results "$ROOT/results/results.json"' in run_script
    # lab 1's references are numpy only (cffi for the fused C kernels of chapter 1's
    # compiler, which fall back to numpy where Gradescope's image has no compiler):
    # no torch, no Jupyter, no plotting
    assert sorted(requirements) == ["cffi>=1.16", "nbformat>=5.9", "numpy>=1.26", "tqdm>=4.66"]
    assert 'pip" install --quiet -r "$ROOT/source/requirements.txt"' in setup
    assert "torch" not in setup and "install --quiet -e" not in setup
    assert 'PYTHON="${COURSE_AUTOGRADER_PYTHON:-python3}"' in setup
    assert "sys.version_info < (3, 10)" in setup
    assert {"course/pyproject.toml", "course/autograder/sandbox_child.py",
            "course/labs/lab1_graph/spec.py"} <= names
    assert not any("__pycache__" in n for n in names)


def test_the_hidden_visibility_is_carried_into_run_autograder(tmp_path, monkeypatch):
    monkeypatch.setattr(gradescope, "grading_requirements", lambda lab_id, root: [])
    path = build_zip("lab1_graph", tmp_path / "ag.zip", hidden_visibility="hidden")
    with zipfile.ZipFile(path) as zf:
        assert "--hidden-visibility hidden " in zf.read("run_autograder").decode()
    with pytest.raises(ValueError, match="after_published"):
        build_zip("lab1_graph", tmp_path / "bad.zip", hidden_visibility="later")
    with pytest.raises(LookupError, match="the course's own labs"):
        build_zip(str(TOY), tmp_path / "toy.zip")
    args = parser().parse_args(["gradescope", "lab1_graph"])
    assert args.hidden_visibility == "after_published"
    args = parser().parse_args(["gradescope-run", "lab1_graph", "--hidden-visibility",
                                "after_due_date"])
    assert args.hidden_visibility == "after_due_date"


def test_torch_comes_from_the_cpu_index_before_the_other_requirements():
    setup = gradescope.setup_script(["numpy>=1.26", "torch>=2.3"])
    torch_at = setup.index("install --quiet 'torch>=2.3' \\\n    --index-url "
                           "https://download.pytorch.org/whl/cpu")
    assert torch_at < setup.index("-r \"$ROOT/source/requirements.txt\"")


@pytest.mark.slow
def test_a_lab_whose_references_use_torch_requires_it():
    assert "torch>=2.3" in gradescope.grading_requirements("lab2_autodiff")


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
    assert sum(t["max_score"] for t in results["tests"]) == 10.0
    assert sum(t["score"] for t in results["tests"]) == score
    assert results["output_format"] == results["test_output_format"] == "text"
    assert results["test_name_format"] == "text"
    for test in results["tests"]:
        hidden = test["name"].endswith(" (hidden)")
        assert test["visibility"] == ("after_published" if hidden else "visible"), test


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


HIDDEN_ERROR = """def word_counts(text):
    print("the input is", text)
    if "cat" in text:
        raise KeyError(text)
    counts = {}
    for word in text.split():
        counts[word] = counts.get(word, 0) + 1
    return counts
"""


@pytest.fixture(scope="module")
def toy_grades(tmp_path_factory):
    """The toy lab graded for full marks, and for a submission that passes every public
    case of word_counts but prints its input and raises it on the hidden case."""
    folder = tmp_path_factory.mktemp("toy")
    plan = prepare(toy_lab())
    return {name: grade_notebook(plan, write(nb, folder / f"{name}.ipynb"))
            for name, nb in (("full", full_marks()),
                             ("hidden_error", with_code({"word_counts": HIDDEN_ERROR})))}


def _hidden_case(grade):
    ex = next(e for e in grade.exercises if e.exercise == "word_counts")
    return next(c for c in ex.cases if c.name == "secret_sentence")


@pytest.mark.parametrize("error_type, shown", [
    ("", "hidden case: error"),
    (None, "hidden case: error (KeyError)"),     # as the grader recorded it
    ("the_cat_saw_the_other_cat", "hidden case: error (an exception class of its own)"),
])
def test_a_hidden_error_shows_its_class_but_nothing_printed_or_raised(toy_grades, error_type,
                                                                      shown):
    grade = copy.deepcopy(toy_grades["hidden_error"])
    if error_type is not None:  # the grade's error class, where the grader records it
        _hidden_case(grade).error_type = error_type
    results = gradescope.results_for(grade, 1.0)
    _validate(results)
    hidden = next(t for t in results["tests"] if t["name"].startswith("word_counts: secret"))
    assert hidden["output"] == shown and hidden["status"] == "failed"
    assert "the input is" not in json.dumps(results)
    assert results["score"] == 9.0


def test_the_summary_shown_at_once_hides_what_the_hidden_cases_did(toy_grades):
    full = gradescope.results_for(toy_grades["full"], 1.0)
    buggy = gradescope.results_for(toy_grades["hidden_error"], 1.0)
    assert full["output"] == buggy["output"]
    assert "word_counts: 2 of 2 public cases passed; 1 hidden case(s): their results are " \
           "shown when grades are published" in full["output"]
    full = gradescope.results_for(toy_grades["full"], 1.0, hidden_visibility="visible")
    buggy = gradescope.results_for(toy_grades["hidden_error"], 1.0, hidden_visibility="visible")
    assert "word_counts: 3 / 3 (passed)" in full["output"]
    assert "word_counts: 2 / 3 (partly passed)" in buggy["output"]
    assert {t["visibility"] for t in buggy["tests"]} == {"visible"}


def test_apportion_splits_exactly_and_deterministically():
    assert gradescope.apportion(10, [1, 1, 1]) == [4, 3, 3]
    assert gradescope.apportion(7, [2, 1, 1]) == [3, 2, 2]  # 3.5, 1.75, 1.75
    assert gradescope.apportion(5, [0, 0]) == [0, 0]
    assert gradescope.apportion(0, []) == []


@pytest.mark.parametrize("lab_id", LAB_IDS)
def test_maxima_and_scores_add_up_exactly_for_every_real_lab(tmp_path, lab_id):
    """Every lab's points split over its cases (thirds, tenths, ...) add up to the total
    exactly, in any order, for full marks and for a partial score."""
    plan = prepare(load_lab(lab_id))
    total = sum(plan.points.values())
    broken = tmp_path / "broken.ipynb"
    broken.write_text("not a notebook")
    grade = grade_notebook(plan, broken)  # every case, scored 0
    tests = gradescope.results_for(grade, 0.0)["tests"]
    maxima = [t["max_score"] for t in tests]
    assert sum(maxima) == sum(reversed(maxima)) == total
    assert all(abs(t["max_score"] - c.max_score) < 1e-5
               for t, c in zip(tests, (c for e in grade.exercises for c in e.cases), strict=True))
    for every in (3, 1):  # one case in three passed, then full marks
        graded = copy.deepcopy(grade)
        for ex in graded.exercises:
            ex.cases = [dataclasses.replace(c, status="passed", score=c.max_score)
                        if i % every == 0 else c for i, c in enumerate(ex.cases)]
        results = gradescope.results_for(graded, 0.0)
        scores = [t["score"] for t in results["tests"]]
        assert sum(scores) == sum(reversed(scores)) == results["score"]
    assert results["score"] == total


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
