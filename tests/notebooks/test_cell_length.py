"""One idea per cell: no chapter code cell is longer than 25 lines (plotting and
layout live in vizkit, experiments in the engines)."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from .harness import ROOT

MAX_LINES = 25
CHAPTERS = sorted((ROOT / "chapters").glob("0[1-5]_*.ipynb"))


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_no_code_cell_is_longer_than_the_limit(path: Path):
    cells = nbformat.read(path, as_version=4).cells
    long = [(i, len(c.source.splitlines())) for i, c in enumerate(cells)
            if c.cell_type == "code" and len(c.source.splitlines()) > MAX_LINES]
    assert not long, (f"{path.name}: code cells longer than {MAX_LINES} lines "
                      f"(cell index, lines): {long}; move plotting into vizkit or split the cell")
