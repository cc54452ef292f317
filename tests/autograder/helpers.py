"""Building submissions of the toy lab for the autograder's tests."""

from __future__ import annotations

import copy
import uuid
from pathlib import Path

import nbformat

from autograder.notebook import exercise_meta, solution_only
from autograder.release import release_notebook
from autograder.spec import load_lab

TOY = Path(__file__).parent / "toy_lab"


def toy_lab():
    return load_lab(TOY)


def full_marks():
    """The source notebook with the solution markers dropped (what a perfect learner has)."""
    nb = nbformat.read(TOY / "source.ipynb", as_version=4)
    for cell in nb.cells:
        if exercise_meta(cell):
            cell.source = solution_only(cell.source)
    return nb


def untouched():
    return release_notebook(toy_lab())


def with_code(replace: dict[str, str] | None = None, drop=(), duplicate: dict | None = None,
              base=None):
    """A full-marks notebook with some exercise cells replaced, dropped or duplicated
    (``duplicate={id: source}`` inserts a cell with ``source`` before the original)."""
    nb = copy.deepcopy(base if base is not None else full_marks())
    cells = []
    for cell in nb.cells:
        meta = exercise_meta(cell)
        eid = meta["id"] if meta else None
        if eid in drop:
            continue
        if duplicate and eid in duplicate:
            extra = copy.deepcopy(cell)
            extra.source = duplicate[eid]
            extra["id"] = uuid.uuid4().hex[:8]
            cells.append(extra)
        if replace and eid in replace:
            cell.source = replace[eid]
        cells.append(cell)
    nb.cells = cells
    return nb


def write(nb, path: Path) -> Path:
    nbformat.write(nb, path)
    return path
