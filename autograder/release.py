"""Building the student version of a lab: ``build/release/<lab_id>/``.

* ``<lab_id>.ipynb`` — the source notebook with every solution region replaced by
  ``raise NotImplementedError("<exercise_id>: write your solution here")``, cells
  tagged ``instructor`` dropped, all outputs and execution counts cleared.
* ``public_cases.json`` — each exercise's *public* cases with their expected
  values (the :mod:`autograder.codec` encoding) and its hint tiers, so ``check()``
  works where the spec is not installed. Hidden cases and the reference code are
  not in it.

After writing, :func:`leaks` re-reads both files and the release fails if any
solution line (one that appears only inside solution regions of the source) or
any hidden case's name or input is found in them.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import nbformat

from . import codec
from .notebook import (
    exercise_meta,
    read_notebook,
    solution_regions,
    strip_solutions,
)
from .spec import PUBLIC_CASES, LabSpec

INSTRUCTOR_TAG = "instructor"
DEFAULT_ROOT = Path("build") / "release"


class ReleaseError(RuntimeError):
    pass


def release_notebook(lab: LabSpec):
    """The student notebook (an nbformat node), built in memory."""
    nb = read_notebook(lab.source)
    cells = []
    for cell in nb.cells:
        if INSTRUCTOR_TAG in (cell.get("metadata", {}).get("tags") or []):
            continue
        if cell.cell_type == "code":
            meta = exercise_meta(cell)
            cell.source = strip_solutions(cell.source, meta["id"] if meta else "this cell")
            cell.outputs = []
            cell.execution_count = None
        cell.get("metadata", {}).pop("execution", None)
        cells.append(cell)
    nb.cells = cells
    nb.metadata["autograder"] = {"lab": lab.id}
    return nb


def public_cases(lab: LabSpec) -> dict:
    """Public cases with expected values, JSON-ready."""
    exercises = []
    for ex in lab.exercises:
        cases = []
        for case in ex.public_cases:
            expected = ex.reference(*case.args, **case.kwargs)
            cases.append({"name": case.name, "points": case.points,
                          "args": codec.encode(tuple(case.args)),
                          "kwargs": codec.encode(dict(case.kwargs)),
                          "expected": codec.encode(expected)})
        exercises.append({"id": ex.id, "function": ex.function,
                          "compare": ex.compare if isinstance(ex.compare, str) else "custom",
                          "rtol": ex.rtol, "atol": ex.atol, "hints": list(ex.hints),
                          "hint": ex.hint,   # tier 1 alone, as older check() versions read it
                          "hidden_cases": len(ex.hidden_cases), "cases": cases})
    return {"lab": lab.id, "title": lab.title, "exercises": exercises}


def solution_lines(lab: LabSpec) -> list[str]:
    """Non-trivial lines found inside solution regions of the source notebook and
    nowhere else in it (a line shared with given code is no secret)."""
    inside, outside = [], set()
    for cell in read_notebook(lab.source).cells:
        lines = cell.source.splitlines()
        regions = solution_regions(cell.source) if cell.cell_type == "code" else []
        in_region = set()
        for begin, end, _ in regions:
            in_region.update(range(begin, end + 1))
            inside += [s.strip() for s in lines[begin + 1:end]]
        outside.update(s.strip() for n, s in enumerate(lines) if n not in in_region)
    trivial = {"", "pass", "return", "else:", "try:", "finally:", "continue", "break"}
    return [s for s in dict.fromkeys(inside)
            if s not in trivial and s not in outside and len(s) > 3 and not s.startswith("#")]


def leaks(lab: LabSpec, notebook, public_json: str) -> list[str]:
    """What of the solutions or hidden cases survives in a release (empty: nothing)."""
    found = []
    released = set()
    for cell in notebook.cells:
        released.update(line.strip() for line in cell.source.splitlines())
    for line in solution_lines(lab):
        if line in released or json.dumps(line)[1:-1] in public_json:
            found.append(f"solution line {line!r}")
    for ex in lab.exercises:
        for case in ex.hidden_cases:
            if json.dumps(case.name) in public_json:
                found.append(f"hidden case name {ex.id}/{case.name}")
            encoded = json.dumps(codec.encode((tuple(case.args), dict(case.kwargs))))
            if len(encoded) > 24 and (encoded in public_json
                                      or encoded in nbformat.writes(notebook)):
                found.append(f"hidden case input {ex.id}/{case.name}")
    return found


def release(lab: LabSpec, root: Path | str = DEFAULT_ROOT) -> Path:
    """Write the release into ``root/<lab_id>/``; return that directory."""
    out = Path(root) / lab.id
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    nb = release_notebook(lab)
    notebook_path = out / f"{lab.id}.ipynb"
    nbformat.write(nb, notebook_path)
    (out / PUBLIC_CASES).write_text(json.dumps(public_cases(lab), indent=1) + "\n")
    problems = leaks(lab, nbformat.read(notebook_path, as_version=4),
                     (out / PUBLIC_CASES).read_text())
    if problems:
        shutil.rmtree(out)
        raise ReleaseError(f"release of {lab.id} would leak: " + "; ".join(problems[:10]))
    return out
