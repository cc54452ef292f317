"""A learner's progress: which practice and lab exercises their own notebooks pass.

``python -m autograder progress [PATH ...]`` and the cell in
``chapters/00_start_here.ipynb`` read the learner's saved notebooks and run, for
every exercise found, the same public cases as ``check()``: locally, offline, in
the learner's own Python, through :func:`autograder.check.run_check` with the
function taken from a namespace built from the notebook's saved cells.

Where the notebooks are looked for (each ``*.ipynb`` read once): every PATH given,
else the course's folder (the one holding ``chapters/``: the chapters, their
Chinese edition in ``chapters/zh/``, releases under ``build/release/``, any folder
the learner made there) and the current folder. Folders are searched recursively,
except hidden ones (``.git``, ``.venv``, ``.ipynb_checkpoints``), ``__pycache__``,
``node_modules``, and the course's ``labs/`` and ``tests/`` (instructor sources,
which hold the solutions, and sample submissions, which are not the learner's).

What counts as an exercise:

* a chapter's practice: a code cell ``check("<id>")`` of a practice exercise
  (``chapters/practice/*/spec.py``), whose function is defined by the nearest
  code cell above it; the namespace gets the notebook's imports (every
  ``import`` statement of the code cells above, nothing else), then that cell;
* a lab exercise: in a notebook whose metadata names a lab
  (``autograder.lab``: what ``release`` writes), the cells tagged as that
  exercise; the namespace gets the lab's support cells from the trusted source
  notebook (as grading does), then the learner's exercise cells.

The list of exercises comes from the course itself (the English chapters'
``check("...")`` cells and the labs' source notebooks), read as JSON, so finding
that nothing is attempted imports no spec, no engine and no nbformat.

A practice cell whose functions still only raise ``NotImplementedError``, and a lab
exercise cell that still holds the release's stub line, are "not attempted" without
running anything, so a course with no learner work costs no more than
reading the notebooks. Attempted cells run in one child process per notebook
(``sys.executable``, the learner's Python), with printed output discarded and a
time limit, so a stray infinite loop or ``exit()`` costs only that notebook's
exercises. Where an exercise is found in several notebooks (an English and a
Chinese copy, say), the most recently saved notebook that attempts it counts.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import chapters
import labs
from chapters.language import language_of_path

from .check import report_language
from .messages import MESSAGES
from .progress_view import ProgressReport

STUBS = tuple(f'raise NotImplementedError("{table["stub"]}")' for table in MESSAGES.values())
"""What ``release`` puts in place of a solution, in each language
(:func:`autograder.notebook.stub_line`)."""

COURSE_ROOT = Path(chapters.__file__).resolve().parent.parent
SKIPPED_FOLDERS = ("__pycache__", "node_modules", "site-packages")
NOTEBOOK_SECONDS = 60.0
"""Time limit for one notebook's attempted exercises together."""
MAX_NOTEBOOK_BYTES = 20 * 1024 * 1024
CHECK_CALL = re.compile(r"""^\s*check\(\s*["'](\w+)["']""", re.M)
HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$", re.M)


@dataclass
class Exercise:
    """One exercise of the course and what the learner's notebooks make of it."""

    kind: str                    # "practice" or "lab"
    group: str                   # the chapter notebook's stem or the lab's id
    id: str
    status: str = "not_attempted"   # passed, failed, error, timeout, not_attempted
    passed: int = 0              # public cases passed
    total: int | None = None     # public cases (known once checked)
    notebook: Path | None = None
    section: str = ""            # the heading above the exercise in that notebook
    detail: str = ""


@dataclass
class Found:
    """An exercise's cells in one notebook."""

    kind: str
    id: str
    lab: str | None              # the lab id, for a lab exercise
    notebook: Path
    mtime: float
    sources: list[str]           # run in this order to define the function
    section: str
    attempted: bool
    language: str


def _read(path: Path) -> dict | None:
    """A notebook as plain JSON (bad bytes replaced), or None when it is not one."""
    try:
        if path.stat().st_size > MAX_NOTEBOOK_BYTES:
            return None
        data = json.loads(path.read_bytes().decode("utf-8", errors="replace"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        return None
    return data


def _source(cell) -> str:
    source = cell.get("source", "") if isinstance(cell, dict) else ""
    return "".join(map(str, source)) if isinstance(source, list) else str(source)


def _exercise_id(cell) -> str | None:
    """The exercise id of a lab's exercise cell (see :mod:`autograder.notebook`), else None."""
    meta = cell.get("metadata") if isinstance(cell, dict) else None
    if cell.get("cell_type") != "code" or not isinstance(meta, dict) \
            or "exercise" not in (meta.get("tags") or []):
        return None
    eid = (meta.get("exercise") or {}).get("id") if isinstance(meta.get("exercise"), dict) else None
    return eid if isinstance(eid, str) else None


def course_exercises() -> list[Exercise]:
    """Every practice exercise (the English chapters' ``check("...")`` cells) and every lab
    exercise (the exercise cells of ``labs/*/source.ipynb``), in course order."""
    found = []
    for path in sorted((COURSE_ROOT / "chapters").glob("[0-9][0-9]_*.ipynb")):
        for cell in (_read(path) or {}).get("cells", []):
            if cell.get("cell_type") == "code":
                found += [Exercise("practice", path.stem, eid)
                          for eid in CHECK_CALL.findall(_source(cell))]
    for path in sorted(Path(labs.__file__).parent.glob("*/source.ipynb")):
        for cell in (_read(path) or {}).get("cells", []):
            if _exercise_id(cell):
                found.append(Exercise("lab", path.parent.name, _exercise_id(cell)))
    return list({ex.id: ex for ex in found}.values())


def notebooks(paths: list[Path] | None = None) -> list[Path]:
    """The notebooks to read: see the module's docstring for the search paths."""
    roots = [Path(p) for p in paths] if paths else [COURSE_ROOT, Path.cwd()]
    skipped = {COURSE_ROOT / "labs", COURSE_ROOT / "tests"}
    seen, found = set(), []
    for root in roots:
        if root.is_file():
            candidates = [root]
        else:
            candidates = []
            for folder, subfolders, files in os.walk(root):
                subfolders[:] = sorted(
                    d for d in subfolders if not d.startswith(".") and d not in SKIPPED_FOLDERS
                    and (Path(folder) / d).resolve() not in skipped)
                candidates += [Path(folder) / f for f in sorted(files) if f.endswith(".ipynb")]
        for path in candidates:
            if path.suffix == ".ipynb" and path.resolve() not in seen:
                seen.add(path.resolve())
                found.append(path)
    return found


def is_stub(source: str) -> bool:
    """True when ``source`` defines functions and each one's body (past a docstring) only
    raises ``NotImplementedError``: the cell as handed out, which check() reports as not
    attempted. A cell that does not parse is no stub (running it shows the error)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    functions = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    for node in functions:
        body = node.body[1:] if (node.body and isinstance(node.body[0], ast.Expr) and
                                 isinstance(node.body[0].value, ast.Constant)) else node.body
        if not (len(body) == 1 and isinstance(body[0], ast.Raise)
                and "NotImplementedError" in ast.unparse(body[0])):
            return False
    return bool(functions)


def _imports(sources: list[str]) -> str:
    """Every import statement of ``sources`` (cells that do not parse are left out)."""
    lines = []
    for source in sources:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        lines += [ast.unparse(n) for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    return "\n".join(dict.fromkeys(lines))


def _heading(cells, index: int) -> str:
    """The text of the last markdown heading above cell ``index``."""
    for cell in reversed(cells[:index]):
        if cell.get("cell_type") == "markdown":
            headings = HEADING.findall(_source(cell))
            if headings:
                return headings[-1][1]
    return ""


def _language(meta: dict, path: Path) -> str:
    for holder in (meta.get("autograder"), meta.get("course_edition")):
        if isinstance(holder, dict) and isinstance(holder.get("language"), str):
            return holder["language"][:2].lower()
    return language_of_path(str(path)) or "en"


def found_in(path: Path, known: dict[str, Exercise]) -> list[Found]:
    """The course's exercises in the notebook at ``path`` (read, never run)."""
    nb = _read(path)
    if nb is None:
        return []
    meta = nb.get("metadata") if isinstance(nb.get("metadata"), dict) else {}
    cells = [c for c in nb["cells"] if isinstance(c, dict)]
    mtime, language, found = path.stat().st_mtime, _language(meta, path), []
    lab = (meta.get("autograder") or {}).get("lab") if isinstance(meta.get("autograder"), dict) \
        else None
    if isinstance(lab, str) and any(e.kind == "lab" and e.group == lab for e in known.values()):
        mine: dict[str, list[int]] = {}
        for index, cell in enumerate(cells):
            eid = _exercise_id(cell)
            if eid in known and known[eid].group == lab:
                mine.setdefault(eid, []).append(index)
        for eid, indices in mine.items():
            sources = [_source(cells[i]) for i in indices]
            found.append(Found("lab", eid, lab, path, mtime, sources,
                               _heading(cells, indices[-1]),
                               not all(any(stub.format(id=eid) in s for stub in STUBS)
                                       for s in sources), language))
    for index, cell in enumerate(cells):
        if cell.get("cell_type") != "code" or _exercise_id(cell):
            continue
        for eid in CHECK_CALL.findall(_source(cell)):
            if eid not in known or known[eid].kind != "practice":
                continue
            above = [_source(c) for c in cells[:index] if c.get("cell_type") == "code"]
            defining = next((s for s in reversed(above) if re.search(r"^def ", s, re.M)), None)
            if defining is not None:
                found.append(Found("practice", eid, None, path, mtime,
                                   [_imports(above), defining], _heading(cells, index),
                                   not is_stub(defining), language))
    return found


def _run_child(jobs: list[dict], language: str) -> list[dict]:
    """Run ``jobs`` (one notebook's attempted exercises) in a child process; a record each."""
    with tempfile.TemporaryDirectory(prefix="course-progress-") as tmp:
        out = Path(tmp) / "results.json"
        request = json.dumps({"jobs": jobs, "language": language, "out": str(out)})
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        try:
            subprocess.run([sys.executable, "-m", "autograder.progress_child"], input=request,
                           text=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           timeout=NOTEBOOK_SECONDS, env=env, cwd=tmp, check=False)
            return json.loads(out.read_text())
        except subprocess.TimeoutExpired:
            return [{"status": "timeout", "detail": f"over {NOTEBOOK_SECONDS:g} s"}] * len(jobs)
        except (OSError, ValueError):
            return [{"status": "error", "detail": "the check process stopped before it "
                     "reported (did a cell call exit()?)"}] * len(jobs)


def _rank(found: Found, language: str) -> tuple:
    return (found.attempted, found.language == language, found.mtime)


def learner_progress(paths=None, lang: str | None = None) -> ProgressReport:
    """Find the learner's notebooks, check every attempted exercise, return the report."""
    language = report_language(lang, {})
    every = {ex.id: ex for ex in course_exercises()}
    searched = notebooks(paths)
    chosen: dict[str, Found] = {}
    for found in (f for path in searched for f in found_in(path, every)):
        best = chosen.get(found.id)
        if best is None or _rank(found, language) > _rank(best, language):
            chosen[found.id] = found
    for eid, found in chosen.items():
        every[eid].notebook, every[eid].section = found.notebook, found.section
    by_notebook: dict[Path, list[Found]] = {}
    for found in chosen.values():
        if found.attempted:
            by_notebook.setdefault(found.notebook, []).append(found)
    for group in by_notebook.values():
        jobs = [{"id": f.id, "lab": f.lab, "sources": f.sources} for f in group]
        for f, record in zip(group, _run_child(jobs, language), strict=True):
            ex = every[f.id]
            ex.status, ex.passed = record["status"], record.get("passed", 0)
            ex.total, ex.detail = record.get("total"), record.get("detail", "")
    return ProgressReport(list(every.values()), language, len(searched))
