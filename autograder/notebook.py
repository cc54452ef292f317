"""Reading lab notebooks: exercise and support cells, solution regions.

Conventions (shared with ``labs/``):

* An *exercise cell* is a code cell whose metadata is
  ``{"tags": ["exercise"], "exercise": {"id": "<exercise_id>", "points": N}}``.
* A *support cell* is a code cell tagged ``"support"``: given code that exercise
  code may use. When grading, support code comes from the trusted source notebook.
* Inside an exercise cell, solution code sits between a line ``### BEGIN SOLUTION``
  and a line ``### END SOLUTION``. The release replaces each region by a stub
  ``raise NotImplementedError("<exercise_id>: write your solution here")``
  indented like the region's ``### BEGIN SOLUTION`` line.

Submissions are untrusted files: :func:`read_submission` never raises on bad
bytes or bad JSON; it reports what went wrong so the grader can score 0 with a
clear message.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import nbformat

from .messages import MESSAGES

EXERCISE_TAG = "exercise"
SUPPORT_TAG = "support"
BEGIN_SOLUTION = "### BEGIN SOLUTION"
END_SOLUTION = "### END SOLUTION"
MAX_SUBMISSION_BYTES = 20 * 1024 * 1024


class NotebookError(ValueError):
    """A notebook cannot be read, or breaks the lab conventions."""


@dataclass(frozen=True)
class ExerciseCell:
    index: int          # position among the notebook's cells
    exercise_id: str
    points: float
    source: str


def stub_line(exercise_id: str, language: str = "en") -> str:
    """What a release writes in place of a solution, in the release's language."""
    message = MESSAGES[language]["stub"].format(id=exercise_id)
    return f'raise NotImplementedError("{message}")'


def read_notebook(path: Path | str):
    """Read a trusted notebook (a lab's source) as nbformat v4; errors propagate."""
    return nbformat.read(str(path), as_version=4)


def read_submission(path: Path | str):
    """Read an untrusted submission. Returns ``(notebook or None, notes)``.

    Bytes that are not UTF-8 are replaced (and noted) so the rest still grades;
    a file that is not a notebook at all gives ``None`` and a note saying why.
    """
    notes: list[str] = []
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_SUBMISSION_BYTES:
            return None, [f"{path.name} is {size} bytes; submissions over "
                          f"{MAX_SUBMISSION_BYTES} bytes are not graded"]
        raw = path.read_bytes()
    except OSError as err:
        return None, [f"cannot read {path.name}: {err.strerror or err}"]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        text = raw.decode("utf-8", errors="replace")
        notes.append(f"{path.name} is not valid UTF-8 (first bad byte at offset {err.start}); "
                     "undecodable bytes were replaced by U+FFFD")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        return None, notes + [f"{path.name} is not a valid notebook (JSON error at line "
                              f"{err.lineno}, column {err.colno}: {err.msg}); the file may be "
                              "truncated or edited outside Jupyter"]
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        return None, notes + [f"{path.name} is JSON but not a notebook (no list of cells)"]
    try:
        nb = nbformat.from_dict(data)
        if nb.get("nbformat", 4) != 4:
            nb = nbformat.convert(nb, 4)
    except Exception as err:  # any malformed structure is the submission's fault
        return None, notes + [f"{path.name} has an unreadable notebook structure: {err}"]
    return nb, notes


def _source_text(cell) -> str:
    source = cell.get("source", "")
    if isinstance(source, list):
        source = "".join(str(s) for s in source)
    return source if isinstance(source, str) else ""


def _tags(cell) -> list:
    metadata = cell.get("metadata") or {}
    tags = metadata.get("tags") if isinstance(metadata, dict) else None
    return tags if isinstance(tags, list) else []


def exercise_meta(cell) -> dict | None:
    """The ``{"id", "points"}`` dict of an exercise cell, else ``None``."""
    if cell.get("cell_type") != "code" or EXERCISE_TAG not in _tags(cell):
        return None
    meta = (cell.get("metadata") or {}).get("exercise")
    if not isinstance(meta, dict) or not isinstance(meta.get("id"), str):
        return None
    return meta


def exercise_cells(nb) -> list[ExerciseCell]:
    """Every exercise cell, in notebook order (an id may appear more than once)."""
    found = []
    for i, cell in enumerate(nb.get("cells", [])):
        meta = exercise_meta(cell)
        if meta is None:
            continue
        try:
            points = float(meta.get("points", 0))
        except (TypeError, ValueError):
            points = 0.0
        found.append(ExerciseCell(i, meta["id"], points, _source_text(cell)))
    return found


def support_sources(nb) -> list[str]:
    """The sources of the support cells, in notebook order."""
    return [_source_text(c) for c in nb.get("cells", [])
            if c.get("cell_type") == "code" and SUPPORT_TAG in _tags(c)]


def exercise_points(nb) -> dict[str, float]:
    """Points per exercise id, read from a (trusted) source notebook.

    Raises :class:`NotebookError` if an id appears in more than one cell.
    """
    points: dict[str, float] = {}
    for cell in exercise_cells(nb):
        if cell.exercise_id in points:
            raise NotebookError(f"exercise {cell.exercise_id!r} appears in more than one "
                                "cell of the source notebook; give each exercise one cell")
        points[cell.exercise_id] = cell.points
    return points


def solution_regions(source: str) -> list[tuple[int, int, str]]:
    """``(begin_line, end_line, indent)`` of each solution region (0-based lines).

    Raises :class:`NotebookError` on unbalanced or nested markers.
    """
    regions = []
    begin = None
    indent = ""
    for n, line in enumerate(source.splitlines()):
        stripped = line.strip()
        if stripped == BEGIN_SOLUTION:
            if begin is not None:
                raise NotebookError(f"line {n + 1}: {BEGIN_SOLUTION} inside another solution "
                                    f"region (opened on line {begin + 1})")
            begin, indent = n, line[: len(line) - len(line.lstrip())]
        elif stripped == END_SOLUTION:
            if begin is None:
                raise NotebookError(f"line {n + 1}: {END_SOLUTION} without {BEGIN_SOLUTION}")
            regions.append((begin, n, indent))
            begin = None
    if begin is not None:
        raise NotebookError(f"line {begin + 1}: {BEGIN_SOLUTION} is never closed by "
                            f"{END_SOLUTION}")
    return regions


def strip_solutions(source: str, exercise_id: str, language: str = "en") -> str:
    """Replace every solution region (markers included) by the stub line."""
    regions = solution_regions(source)
    if not regions:
        return source
    lines = source.splitlines()
    out: list[str] = []
    last = 0
    for begin, end, indent in regions:
        out.extend(lines[last:begin])
        out.append(indent + stub_line(exercise_id, language))
        last = end + 1
    out.extend(lines[last:])
    return "\n".join(out)


def solution_only(source: str) -> str:
    """Keep a cell's source but drop the marker lines (what a full-marks learner writes)."""
    markers = (BEGIN_SOLUTION, END_SOLUTION)
    solution_regions(source)  # validates the markers
    return "\n".join(line for line in source.splitlines() if line.strip() not in markers)
