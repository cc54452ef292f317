"""No chapter sends a learner to a lab's source notebook, which holds the reference
solutions: the English chapters name the release command (the learner's edition)
instead, as test_zh_pointers.py asks of the Chinese ones."""

from __future__ import annotations

import re

import nbformat
import pytest

from .harness import ROOT

CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))
SOURCE = re.compile(r"labs/\w+/source(\.zh)?\.ipynb|\bsource\.ipynb")


def pointers(text: str) -> list[str]:
    return [m.group(0) for m in SOURCE.finditer(text)]


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_a_chapter_points_learners_to_their_release_not_to_the_solutions(path):
    nb = nbformat.read(path, as_version=4)
    text = "\n".join(c.source for c in nb.cells)
    assert pointers(text) == [], (f"{path.name} points to a lab's source notebook (the "
                                  "solutions): name `python -m autograder release <lab>`")


def test_the_check_sees_each_way_of_naming_a_source_notebook():
    assert pointers("open `labs/lab1_graph/source.ipynb` or source.ipynb") == [
        "labs/lab1_graph/source.ipynb", "source.ipynb"]
    assert pointers("labs/lab2_autodiff/source.zh.ipynb") == ["labs/lab2_autodiff/source.zh.ipynb"]
    assert pointers("python -m autograder release lab1_graph") == []
