"""Which other exercises an exercise calls, so that a broken cell costs only its callers.

Every run executes all exercise cells in notebook order, because a later exercise may
call an earlier one's function. A cell that does not finish (it raises, exits, hangs,
or imports a forbidden module at its top) leaves the names it would have defined
undefined in every run. An exercise whose own cells use one of those names then fails
with it, and the grader says why: "exercise X's cell did not finish (why), and this
exercise calls X's f". An exercise that uses none of them is not touched.

The names come from reading the source (:func:`.cell_lint.parse`), never from running it.
"""

from __future__ import annotations

import ast
import re

from .cell_lint import parse
from .messages import message
from .sandbox import how_failed

_WORD = re.compile(r"[A-Za-z_]\w*")
_DEF = re.compile(r"^(?:async\s+)?(?:def|class)\s+([A-Za-z_]\w*)", re.M)


def defined_names(source: str) -> set[str]:
    """Names a cell's top level defines: functions, classes and assigned variables.
    A cell that does not parse defines what its ``def`` lines name (it defines
    nothing when run, so those are the names its callers miss)."""
    tree = parse(source)
    if tree is None:
        return set(_DEF.findall(source))
    names = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    return names


def used_names(source: str) -> set[str]:
    """Every name a cell reads (every word, when it does not parse)."""
    tree = parse(source)
    if tree is None:
        return set(_WORD.findall(source))
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and
            isinstance(n.ctx, ast.Load)}


def broken_cells(run, language: str) -> dict[int, str]:
    """Cell index -> why it did not finish, for the cells of *other* exercises in ``run``
    (a :class:`~autograder.sandbox.SandboxRun`): raised, or skipped by the supervisor."""
    why = {e["index"]: (e["error"].strip().splitlines() or ["an error"])[-1][:200]
           for e in run.cell_errors if not e["own"]}
    for index, how in run.skipped_cells.items():
        why.setdefault(index, how_failed(how, language))
    return why


def calls_into_broken(exercise: str, cells: list[dict], run, language: str) -> list[str]:
    """One note per other exercise whose cell did not finish and whose names
    ``exercise``'s own cells use; ``cells`` are the submission's exercise cells."""
    used = set().union(*(used_names(c["source"]) for c in cells if c["exercise"] == exercise))
    notes = []
    for index, why in sorted(broken_cells(run, language).items()):
        cell = next((c for c in cells if c["index"] == index), None)
        if cell is None or cell["exercise"] == exercise:
            continue
        called = sorted(defined_names(cell["source"]) & used)
        if called:
            notes.append(message(language, "grade_calls_broken", other=cell["exercise"],
                                 index=index, why=why, names=", ".join(called)))
    return notes
