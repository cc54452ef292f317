"""What an exercise cell's source does that grading will charge it for, read without
running it: forbidden imports by name, and top-level code that never finishes or
ends the process.

The grader and the in-notebook ``check()`` say these in the same words (the
``grade_forbidden_by_name`` and ``lint_*`` entries of :mod:`autograder.messages`),
so a learner reads before submitting what the gradebook would say after.
"""

from __future__ import annotations

import ast
import threading

from .messages import message

# Submissions are graded on threads (-j N). CPython 3.11's AST constructor keeps
# its recursion depth in interpreter-wide state, so two threads parsing at once
# can fail with "SystemError: AST constructor recursion depth mismatch"
# (python/cpython#106905): parsing is serialised.
_PARSE_LOCK = threading.Lock()

#: calls that end the process, as ``name`` or ``module.name``
EXITS = frozenset({"exit", "quit", "sys.exit", "os._exit", "os.abort", "os.kill"})


def parse(source: str) -> ast.Module | None:
    """The cell's syntax tree, or None where it does not parse (the sandbox reports that)."""
    try:
        with _PARSE_LOCK:
            return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def forbidden_in_source(source: str, forbid: tuple[str, ...]) -> list[str]:
    """Forbidden modules a cell imports by name (``import x``, ``from x import``,
    ``__import__("x")``, ``importlib.import_module("x")``), anywhere in the cell."""
    tree = parse(source) if forbid else None
    if tree is None:
        return []
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.append(node.module)
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            called = _called_name(node.func).rpartition(".")[2]
            if called in ("__import__", "import_module") and isinstance(node.args[0].value, str):
                names.append(node.args[0].value)
    tops = {n.partition(".")[0] for n in names}
    return sorted(t for t in tops if t in forbid)


def _called_name(func: ast.expr) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        inner = _called_name(func.value)
        return f"{inner}.{func.attr}" if inner else func.attr
    return ""


def _top_level(body: list[ast.stmt]):
    """The statements that run when the cell runs: not the bodies of defs and classes."""
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        yield node
        for field in ("body", "orelse", "finalbody"):
            yield from _top_level(getattr(node, field, []) or [])
        for handler in getattr(node, "handlers", []) or []:
            yield from _top_level(handler.body)


def top_level_hazards(source: str) -> list[tuple[str, int, str]]:
    """``(kind, line, what)`` for each top-level ``while`` loop (kind ``loop``) and each
    top-level call that ends the process (kind ``exit``, ``what`` the call)."""
    tree = parse(source)
    if tree is None:
        return []
    found = []
    for node in _top_level(tree.body):
        if isinstance(node, ast.While):
            found.append(("loop", node.lineno, "while"))
        calls = [] if isinstance(node, ast.While | ast.For | ast.If | ast.With | ast.Try) \
            else [n for n in ast.walk(node) if isinstance(n, ast.Call)]
        for call in calls:
            name = _called_name(call.func)
            if name in EXITS:
                found.append(("exit", call.lineno, name))
    return sorted(found, key=lambda f: f[1])


def cell_warnings(source: str, forbid: tuple[str, ...], language: str) -> list[str]:
    """Everything above about one exercise cell, in the grader's words."""
    notes = []
    banned = forbidden_in_source(source, forbid)
    if banned:
        notes.append(message(language, "grade_forbidden_by_name", banned=", ".join(banned),
                             forbidden=", ".join(forbid)))
    for kind, line, what in top_level_hazards(source):
        notes.append(message(language, f"lint_{kind}", line=line, call=what))
    return notes
