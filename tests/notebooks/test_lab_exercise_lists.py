"""Each chapter with a lab ends by listing that lab's graded exercises, and the list
is the lab spec's, in its order: a renamed, added or dropped exercise fails here."""

from __future__ import annotations

import re

import nbformat
import pytest

from autograder.spec import load_lab
from tests.notebooks.harness import ROOT

CHAPTER_LABS = {"01_computational_graphs": "lab1_graph",
                "02_automatic_differentiation": "lab2_autodiff",
                "03_distributed_training": "lab3_distributed",
                "04_mixed_precision": "lab4_amp"}
HEADING = "### Graded in lab"


def listed_exercises(source: str) -> list[str]:
    """The exercise ids of a "Graded in lab" cell: the first code span of each bullet."""
    return re.findall(r"^- `([^`]+)`", source, flags=re.MULTILINE)


def test_listed_exercises_reads_bullets_only():
    cell = f"{HEADING} 1\n\nrun `check`:\n\n- `a`: write `f`\n- `b`: write `g`\n"
    assert listed_exercises(cell) == ["a", "b"]


@pytest.mark.parametrize("chapter", sorted(CHAPTER_LABS))
def test_chapter_lists_its_labs_real_exercises(chapter):
    nb = nbformat.read(ROOT / "chapters" / f"{chapter}.ipynb", as_version=4)
    cells = [c for c in nb.cells if c.cell_type == "markdown" and c.source.startswith(HEADING)]
    assert len(cells) == 1, f"{chapter}: expected one '{HEADING} ...' cell, found {len(cells)}"
    at_end = nb.cells.index(cells[0]) >= len(nb.cells) - 3
    assert at_end, f"{chapter}: the lab list is not among the last cells"
    lab = load_lab(CHAPTER_LABS[chapter])
    assert listed_exercises(cells[0].source) == [ex.id for ex in lab.exercises]
