"""One idea per cell: no chapter code cell is longer than 25 lines of code (plotting
and layout live in vizkit, experiments in the engines). A prediction's explanation,
the prose of ``with prediction(why=...)``, is not code and does not count."""

from __future__ import annotations

import ast
from pathlib import Path

import nbformat
import pytest

from .harness import ROOT

MAX_LINES = 25
CHAPTERS = sorted((ROOT / "chapters").glob("0[1-6]_*.ipynb"))


def code_lines(source: str) -> int:
    """Lines of ``source``, less the lines of a prediction's ``why=`` explanation."""
    lines = len(source.splitlines())
    if not source.startswith("with prediction("):
        return lines
    call = ast.parse(source).body[0].items[0].context_expr
    why = next(k.value for k in call.keywords if k.arg == "why")
    return lines - len(set(range(why.lineno, why.end_lineno + 1)) - {1})


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_no_code_cell_is_longer_than_the_limit(path: Path):
    cells = nbformat.read(path, as_version=4).cells
    long = [(i, code_lines(c.source)) for i, c in enumerate(cells)
            if c.cell_type == "code" and code_lines(c.source) > MAX_LINES]
    assert not long, (f"{path.name}: code cells longer than {MAX_LINES} lines "
                      f"(cell index, lines): {long}; move plotting into vizkit or split the cell")


def test_a_prediction_counts_its_code_not_its_explanation():
    source = 'with prediction(why=(\n    "a "\n    "b")) as answer:\n    x = 1\n    assert x'
    assert code_lines(source) == 3
    assert code_lines("x = 1\ny = 2") == 2
