"""``similarity``: planted copies among 40 submissions rank above every independent pair,
starter code never counts, and the page escapes whatever a submission holds."""

from __future__ import annotations

import copy

import nbformat
import pytest

from autograder import cli
from autograder.notebook import exercise_meta
from autograder.release import release_notebook
from autograder.similarity import marked, page_html, similarity_report
from autograder.similarity_words import WORDS
from autograder.spec import load_lab
from tests.autograder import similar_submissions


@pytest.fixture(scope="module")
def lab():
    return load_lab(similar_submissions.LAB_DIR)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("similar")
    return folder, similar_submissions.build(folder)


@pytest.fixture(scope="module")
def report(lab, folder):
    return similarity_report(lab, sorted(folder[0].glob("*.ipynb")))


def test_planted_copies_rank_above_every_independent_pair(report, folder):
    planted = {frozenset(pair) for pair in folder[1]["planted"]}
    assert len(report.submissions) == 40
    ranked = [frozenset((p.a, p.b)) for p in report.pairs]
    top = ranked[:len(planted)]
    assert set(top) == planted, [(p.a, p.b, round(p.score, 2)) for p in report.pairs[:8]]
    best_independent = max(p.score for p in report.pairs
                           if frozenset((p.a, p.b)) not in planted)
    worst_planted = min(p.score for p in report.pairs if frozenset((p.a, p.b)) in planted)
    assert worst_planted > best_independent + 0.15   # a clear gap, not a tie broken by luck
    assert report.seconds < 60   # a guard against a blow-up; the page states the time


def test_independent_students_sharing_one_idiom_share_part_of_their_code(report):
    """Two independent students with the same topo_order style share that function only."""
    scores = {frozenset((p.a, p.b)): p.score for p in report.pairs}
    # (0, 2, 2) and (1, 1, 2): the same topo_order style, different other two
    shared = scores[frozenset(("student02", "student07"))]
    assert 0.1 < shared < 0.8


def test_starter_code_is_boilerplate(lab, tmp_path):
    release = release_notebook(lab)
    for name in ("untouched_a", "untouched_b"):
        nbformat.write(release, tmp_path / f"{name}.ipynb")
    report = similarity_report(lab, sorted(tmp_path.glob("*.ipynb")))
    assert report.pairs == []
    assert {s.student for s in report.skipped} == {"untouched_a", "untouched_b"}


def test_hostile_submission_text_is_escaped(lab, tmp_path):
    nb = release_notebook(lab)
    evil = ("    x = '</pre><script>alert(1)</script><img src=x onerror=alert(2)>'\n"
            "    return [w for w in text.split() if w not in ('<b>', '&amp;')] + [x] * 3\n")
    for cell in nb.cells:
        if (exercise_meta(cell) or {}).get("id") == "word_counts":
            cell.source = cell.source.replace(
                'raise NotImplementedError("word_counts: write your solution here")',
                evil.strip())
    nbformat.write(nb, tmp_path / "a<script>.ipynb")
    nbformat.write(copy.deepcopy(nb), tmp_path / "b.ipynb")
    (tmp_path / "broken.ipynb").write_text("{not json")
    page = page_html(similarity_report(lab, sorted(tmp_path.glob("*.ipynb"))))
    assert "<script" not in page and "<img" not in page
    assert "&lt;/pre&gt;&lt;script&gt;alert(1)" in page
    assert "a&lt;script&gt;" in page
    assert "broken" in page                  # named among those not compared


def test_marked_regions_are_escaped_and_in_order():
    import numpy as np

    assert marked("a<b>c&d", np.array([[1], [4]])) == "a<mark>&lt;b&gt;</mark>c&amp;d"
    assert marked("abcdef", np.array([[4, 0], [6, 2]])) == "<mark>ab</mark>cd<mark>ef</mark>"


def test_chinese_page_and_the_cli(lab, folder, tmp_path):
    out = tmp_path / "similarity.html"
    rc = cli.main(["similarity", str(similar_submissions.LAB_DIR), str(folder[0]),
                   "--out", str(out), "--lang", "zh"])
    assert rc == 0
    page = out.read_text(encoding="utf-8")
    assert "lang='zh-CN'" in page and "绝不是结论" in page
    assert rc == 0 and page.count("class='pair'") == 20


def test_both_languages_have_the_same_words():
    assert WORDS["en"].keys() == WORDS["zh"].keys()
