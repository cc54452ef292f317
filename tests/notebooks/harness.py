"""Execute a notebook in a fresh kernel and collect every error it shows.

A cell can fail in two ways: it raises (the kernel reports an error and the
cell stops), or something *inside* a display raises (a formatter that needs a
missing `dot`, say) — the cell then "succeeds" but its output is an error
traceback. Both count as failures here, so we execute with ``allow_errors``
and then read every output of the executed notebook.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from chapters.language import language_of_path

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class CellError:
    index: int
    source: str
    ename: str
    evalue: str

    def __str__(self) -> str:
        first_lines = "\n".join(self.source.splitlines()[:6])
        return f"cell {self.index}: {self.ename}: {self.evalue}\n--- source ---\n{first_lines}"


def course_notebooks() -> list[Path]:
    """Every notebook under chapters/ (the Chinese edition in chapters/zh/ too)
    and labs/ (lab sample *submissions* are graded by the autograder's tests,
    not executed here; some are hostile)."""
    found = (sorted((ROOT / "chapters").glob("*.ipynb"))
             + sorted((ROOT / "chapters" / "zh").glob("*.ipynb"))
             + sorted((ROOT / "labs").rglob("*.ipynb")))
    return [p for p in found if "samples" not in p.relative_to(ROOT).parts
            and ".ipynb_checkpoints" not in p.parts]


class _OutputsInPlaceClient(NotebookClient):
    """An nbclient that does not imitate a front end's ``Output`` widgets.

    By default nbclient routes whatever a cell shows inside ``with output:``
    into the widget's state and sends that state back to the kernel over the
    shell channel. That has two costs here: an error raised inside an Output
    widget disappears from the cell's outputs (so we could not see it), and
    the send races with nbclient's own wait for ``execute_reply``, which then
    stalls until the cell timeout (jupyter/nbclient#312). Leaving Output
    widgets un-mimicked keeps every output, errors included, on the cell.
    """

    def on_comm_open_jupyter_widget(self, msg):
        return None


def cells_with_outputs(nb) -> list[int]:
    return [i for i, c in enumerate(nb.cells)
            if c.cell_type == "code" and (c.get("outputs") or c.get("execution_count"))]


def execute(path: Path, timeout: int = 300, save_to: Path | None = None):
    """Run ``path`` top to bottom; return (executed notebook, list of CellError).

    Outputs shown inside ``ipywidgets.Output`` land on the cell itself, so an
    error raised while a widget draws its first state is caught too. The kernel's
    ``COURSE_LANG`` is the notebook's language ('zh' for chapters/zh/*.ipynb and
    labs/*/source.zh.ipynb, else 'en'), so its figures speak it."""
    nb = nbformat.read(path, as_version=4)
    client = _OutputsInPlaceClient(nb, timeout=timeout, kernel_name="python3", allow_errors=True,
                            resources={"metadata": {"path": str(path.parent)}})
    client.execute(env={**os.environ, "COURSE_LANG": language_of_path(str(path)) or "en"})
    if save_to is not None:
        nbformat.write(nb, save_to)
    errors = []
    for i, cell in enumerate(nb.cells):
        for out in cell.get("outputs", []):
            if out.get("output_type") == "error":
                errors.append(CellError(i, cell.source, out.get("ename", "?"),
                                        out.get("evalue", "")))
    return nb, errors
