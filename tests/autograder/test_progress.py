"""``progress``: a learner's real notebooks (a chapter and a released lab) with exercises
solved, wrong and untouched, read and checked as ``check()`` does."""

from __future__ import annotations

import shutil

import nbformat
import pytest

from autograder import cli, progress
from autograder.notebook import exercise_meta, solution_only
from autograder.progress import is_stub, learner_progress
from autograder.progress_view import WORDS, anchor
from autograder.release import release_notebook
from autograder.spec import load_lab

CHAPTER = progress.COURSE_ROOT / "chapters" / "01_computational_graphs.ipynb"

NODE_DEPTHS = '''import numpy as np


def node_depths(graph):
    """Written by the learner."""
    depth = {}
    for n in graph["nodes"]:
        below = [depth[i] for i in n["inputs"]]
        depth[n["name"]] = 0 if n["op"] in ("placeholder", "constant") else 1 + max(below)
    print("this printed text goes nowhere")
    return {k: int(np.int64(v)) for k, v in depth.items()}
'''
WRONG_IDENTITIES = '''def remove_identities(graph):
    return graph   # forgets to remove anything
'''


def _replace_definition(nb, function: str, source: str) -> None:
    cell = next(c for c in nb.cells if c.cell_type == "code" and f"def {function}(" in c.source)
    cell.source = source


@pytest.fixture(scope="module")
def learner(tmp_path_factory):
    """A folder as a learner keeps it: chapter 1 with one practice solved, one wrong, one
    untouched; lab 1's release with one exercise solved, one wrong, the rest untouched."""
    folder = tmp_path_factory.mktemp("learner")
    chapter = nbformat.read(CHAPTER, as_version=4)
    _replace_definition(chapter, "node_depths", NODE_DEPTHS)
    _replace_definition(chapter, "remove_identities", WRONG_IDENTITIES)
    nbformat.write(chapter, folder / CHAPTER.name)
    lab = load_lab("lab1_graph")
    source = {exercise_meta(c)["id"]: c.source for c in nbformat.read(lab.source, 4).cells
              if exercise_meta(c)}
    released = release_notebook(lab)
    for cell in released.cells:
        eid = (exercise_meta(cell) or {}).get("id")
        if eid == "topological_sort":
            cell.source = solution_only(source[eid])
        elif eid == "eliminate_dead_code":
            cell.source = cell.source.replace(
                'raise NotImplementedError("eliminate_dead_code: write your solution here")',
                "return graph   # keeps the dead code")
    (folder / "my_labs").mkdir()
    nbformat.write(released, folder / "my_labs" / "lab1_graph.ipynb")
    return folder


@pytest.fixture(scope="module")
def report(learner):
    return learner_progress([learner], lang="en")


def _by_id(report):
    return {ex.id: ex for ex in report.exercises}


def test_solved_wrong_and_untouched_exercises(report, learner):
    ex = _by_id(report)
    assert (ex["ch1_node_depths"].status, ex["ch1_node_depths"].passed,
            ex["ch1_node_depths"].total) == ("passed", 4, 4)
    assert ex["ch1_remove_identities"].status == "failed"
    assert ex["ch1_remove_identities"].passed < ex["ch1_remove_identities"].total
    assert ex["ch1_peak_live_bytes"].status == "not_attempted"
    assert ex["topological_sort"].status == "passed"
    assert ex["eliminate_dead_code"].status == "failed"
    assert ex["fold_constants"].status == "not_attempted"
    assert ex["fold_constants"].notebook == learner / "my_labs" / "lab1_graph.ipynb"
    assert ex["ch2_jvp_mul"].notebook is None     # chapter 2 is not in this folder
    counts = report.counts()
    assert counts == {"passed": 2, "failed": 2, "not_attempted": len(report.exercises) - 4}


def test_links_point_at_the_sections(report, learner):
    rows = {r["exercise"]: r for r in report.rows(base=learner)}
    assert rows["ch1_node_depths"]["link"].startswith("01_computational_graphs.ipynb#")
    assert rows["topological_sort"]["link"].startswith("my_labs/lab1_graph.ipynb#")
    page = report._repr_html_()
    assert "<a href=" in page and "progress-failed" in page
    assert anchor("5. Graph `passes`, *before*") == "5.-Graph-passes,-before"


def test_the_figure_counts_per_group(report):
    fig = report.figure()
    passed = next(t for t in fig.data if t.name == WORDS["en"]["passed"])
    assert dict(zip(passed.y, passed.x, strict=True))["lab1_graph"] == 1


def test_stubs_are_read_not_run():
    assert is_stub('def f(x):\n    """doc"""\n    raise NotImplementedError  # your code here\n')
    assert not is_stub("def f(x):\n    return x\n")
    assert not is_stub("def f(x) :\n  retur x")   # a syntax error is shown by running it


def test_a_hanging_cell_costs_only_its_notebook(tmp_path, monkeypatch):
    chapter = nbformat.read(CHAPTER, as_version=4)
    _replace_definition(chapter, "node_depths", "def node_depths(graph):\n    while True:\n"
                                                "        pass\n")
    nbformat.write(chapter, tmp_path / CHAPTER.name)
    monkeypatch.setattr(progress, "NOTEBOOK_SECONDS", 3.0)
    ex = _by_id(learner_progress([tmp_path], lang="en"))
    assert ex["ch1_node_depths"].status == "timeout"
    assert ex["ch1_remove_identities"].status == "not_attempted"


def test_nothing_attempted_is_said_honestly(tmp_path):
    for path in (progress.COURSE_ROOT / "chapters").glob("0*.ipynb"):
        shutil.copy(path, tmp_path)
    report = learner_progress([tmp_path], lang="zh")
    assert not report.attempted
    assert report.summary().startswith("还没有作答")
    assert all(ex.notebook is not None for ex in report.exercises if ex.kind == "practice")


def test_cli_prints_the_table(learner, capsys):
    assert cli.main(["progress", str(learner), "--lang", "en"]) == 0
    out = capsys.readouterr().out
    assert "2 of 40 exercises pass" in out or "exercises pass their public cases" in out
    assert "ch1_remove_identities" in out


def test_both_languages_have_the_same_words():
    assert WORDS["en"].keys() == WORDS["zh"].keys()


def test_default_search_leaves_out_instructor_sources_and_samples():
    found = [p.resolve() for p in progress.notebooks()]
    assert progress.COURSE_ROOT / "chapters" / "00_start_here.ipynb" in found
    for folder in ("labs", "tests"):
        assert not any(p.is_relative_to(progress.COURSE_ROOT / folder) for p in found)
    assert not any(part.startswith(".") for p in found
                   for part in p.relative_to(progress.COURSE_ROOT).parts[:-1])


def test_the_stubs_it_looks_for_are_the_release_stubs_in_each_language():
    from autograder.notebook import stub_line

    assert ([stub.format(id="fold_constants") for stub in progress.STUBS]
            == [stub_line("fold_constants", language) for language in ("en", "zh")])
    assert "在这里写下你的解答" in stub_line("fold_constants", "zh")
