"""Every ``show_source(...)`` in a chapter or lab notebook names engine code
that exists and has source, with a valid range: renaming an engine function
fails here, without executing the notebook.

A call's target is evaluated in a namespace built only from the notebook's
import statements; ``lines=`` and ``highlight=`` must be literals.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
from IPython.core.inputtransformer2 import TransformerManager

from vizkit.source_view import source_listing

from .harness import ROOT, course_notebooks

CHAPTERS = [f"{n:02d}" for n in range(1, 6)]
SHOWS_PER_CHAPTER = 4


@dataclass
class ShowSourceCall:
    notebook: str
    cell_id: str
    call: ast.Call
    text: str

    def __str__(self) -> str:
        return f"{self.notebook} cell {self.cell_id}: {self.text}"


def python_cells(path: Path) -> list[tuple[str, ast.Module]]:
    """(cell id, parsed module) of every code cell, IPython magics turned into Python."""
    transformer = TransformerManager()
    nb = nbformat.read(path, as_version=4)
    return [(cell.get("id", "?"), ast.parse(transformer.transform_cell(cell.source)))
            for cell in nb.cells if cell.cell_type == "code"]


def is_show_source(node: ast.AST) -> bool:
    """``show_source(...)`` or ``vizkit.show_source(...)``."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
    return name == "show_source"


def import_namespace(cells: list[tuple[str, ast.Module]]) -> dict:
    """The names the notebook's top-level import statements bind, and nothing else."""
    imports = [stmt for _, module in cells for stmt in module.body
               if isinstance(stmt, ast.Import | ast.ImportFrom)]
    namespace: dict = {}
    exec(compile(ast.Module(imports, type_ignores=[]), "<imports>", "exec"), namespace)
    return namespace


def show_source_calls(path: Path, cells) -> list[ShowSourceCall]:
    """Every show_source call in the notebook's code cells."""
    name = str(path.relative_to(ROOT))
    return [ShowSourceCall(name, cell_id, node, ast.unparse(node))
            for cell_id, module in cells for node in ast.walk(module) if is_show_source(node)]


def resolve(call: ShowSourceCall, namespace: dict):
    """Check ``call`` the way running it would: target, range and highlights."""
    if not call.call.args:
        pytest.fail(f"{call}: show_source needs the object to show as its first argument")
    try:
        target = eval(compile(ast.Expression(call.call.args[0]), "<target>", "eval"),
                      dict(namespace))
    except (NameError, AttributeError) as error:
        pytest.fail(f"{call}: the target does not resolve from the notebook's imports "
                    f"({error}); was an engine name renamed or moved?")
    options = {}
    for keyword in call.call.keywords:
        try:
            options[keyword.arg] = ast.literal_eval(keyword.value)
        except ValueError:
            pytest.fail(f"{call}: write {keyword.arg}= as a literal so this test can check it")
    try:
        source_listing(target, **options)
    except (TypeError, ValueError) as error:
        pytest.fail(f"{call}: {error}")


NOTEBOOKS = course_notebooks()


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[str(p.relative_to(ROOT)) for p in NOTEBOOKS])
def test_every_show_source_target_exists_and_has_source(path):
    cells = python_cells(path)
    calls = show_source_calls(path, cells)
    if not calls:
        return
    namespace = import_namespace(cells)
    for call in calls:
        resolve(call, namespace)


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_chapter_shows_the_engine_source(chapter):
    (path,) = (ROOT / "chapters").glob(f"{chapter}_*.ipynb")
    calls = show_source_calls(path, python_cells(path))
    assert len(calls) >= SHOWS_PER_CHAPTER, (
        f"{path.name} shows engine source {len(calls)} time(s); each chapter shows the real "
        f"engine at least {SHOWS_PER_CHAPTER} times, with show_source after the idea is built")


def test_a_renamed_target_is_caught():
    source = "from chapters.graph import trace\nfrom vizkit import show_source\n" \
             "show_source(trace.no_such_thing)\n"
    module = ast.parse(source)
    call = ShowSourceCall("example", "x", module.body[-1].value, "show_source(...)")
    with pytest.raises(pytest.fail.Exception, match="does not resolve"):
        resolve(call, import_namespace([("x", module)]))
