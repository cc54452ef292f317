"""What a stuck learner gets from every lab: hints in tiers, from a nudge that shows
no code to nearly the method, and a first public case small enough to work by hand."""

from __future__ import annotations

import ast
import math
import re
import textwrap

import numpy as np
import pytest

from autograder.notebook import exercise_cells, read_notebook, solution_regions
from autograder.spec import load_lab

from .labkit import LAB_IDS

CALL = re.compile(r"[A-Za-z_][\w.]*\(")
DOTTED = re.compile(r"\b[A-Za-z_]\w*\.[A-Za-z_]\w*")
OPERATOR = re.compile(r"\*\*|//|[\[\]{}=%@]")
DTYPES = {"float16", "bfloat16", "float32", "float64", "int32", "int64"}
"""dtype names are the course's vocabulary, code or not."""


def _solution_source(lab_id: str, exercise_id: str) -> str:
    """The code between the solution markers of the exercise's cell, dedented."""
    cell = next(c for c in exercise_cells(read_notebook(load_lab(lab_id).source))
                if c.exercise_id == exercise_id)
    lines = cell.source.splitlines()
    return "\n".join(textwrap.dedent("\n".join(lines[begin + 1:end]))
                     for begin, end, _ in solution_regions(cell.source))


def solution_names(source: str) -> set[str]:
    """Identifiers of a solution that read as code (snake_case, CAPITALS, digits): names,
    attributes and keyword arguments."""
    tree = ast.parse(source)
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    names |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    names |= {k.arg for k in ast.walk(tree) if isinstance(k, ast.keyword) and k.arg}
    return {n for n in names - DTYPES
            if "_" in n.strip("_") or (n.isupper() and len(n) > 2) or re.search(r"\d", n)}


def code_like(text: str, names: set[str]) -> list[str]:
    """What in ``text`` looks like code: a call, a dotted name, an operator or bracket,
    or one of the solution's code-like identifiers."""
    found = CALL.findall(text) + DOTTED.findall(text) + OPERATOR.findall(text)
    return found + sorted(n for n in names if re.search(rf"\b{re.escape(n)}\b", text))


def _exercises():
    for lab_id in LAB_IDS:
        for ex in load_lab(lab_id).exercises:
            yield pytest.param(lab_id, ex, id=f"{lab_id}-{ex.id}")


@pytest.mark.parametrize(("lab_id", "ex"), list(_exercises()))
def test_hints_come_in_tiers_from_a_nudge_to_nearly_the_method(lab_id, ex):
    assert 2 <= len(ex.hints) <= 3, ex.hints
    first, last = ex.hints[0], ex.hints[-1]
    assert len(first) < len(last), "tier 1 is a nudge, the last tier the fullest"
    assert code_like(first, solution_names(_solution_source(lab_id, ex.id))) == []


@pytest.mark.parametrize(("lab_id", "exercise_id", "hint"), [
    ("lab2_autodiff", "vjp_matmul", "Promote vectors to matrices, use np.swapaxes(x, -1, -2)."),
    ("lab3_distributed", "one_f_one_b", "warm-up = min(p - 1 - stage, m) forwards."),
    ("lab3_distributed", "ring_all_reduce", "Cut the buffers with chunk_bounds first."),
    ("lab1_graph", "topological_sort", "Colour nodes grey in a state dict: state[name]."),
    ("lab4_amp", "update_scale", "Remember that scale ** 2 overflows."),
])
def test_the_tier_one_check_catches_code(lab_id, exercise_id, hint):
    assert code_like(hint, solution_names(_solution_source(lab_id, exercise_id)))


SMALL = 4
"""Elements at most in any array, list or tuple of a first public case."""

SMALL_GRAPH = 6
"""Nodes at most in a lab-1 graph, ops in a lab-2 program, entries in a dict. A graph
is a value of its own kind: "small" there means one you can draw on paper and sort,
fold or trace by hand (the 5-node diamond), while each node's own lists (its inputs)
stay within SMALL."""

GRAPH_LISTS = ("nodes", "ops")


def _simple_number(x) -> bool:
    """An integer, or a float with at most three significant digits (0.5, 1e-09), inf or
    NaN, in its own dtype (float32 0.1 counts as 0.1)."""
    if isinstance(x, bool | np.bool_ | int | np.integer):
        return True
    value = float(x)
    if not math.isfinite(value) or value == int(value):
        return True
    dtype = x.dtype if isinstance(x, np.generic) else np.float64
    return np.asarray(float(f"{value:.3g}"), dtype=dtype) == x


def too_big(value, path="") -> list[str]:
    """Where ``value`` is not small enough to work by hand (empty: it is)."""
    if isinstance(value, np.ndarray):
        if value.size > SMALL:
            return [f"{path}: an array of {value.size} elements"]
        return [f"{path}: {x}" for x in value.ravel() if not _simple_number(x)]
    if isinstance(value, list | tuple):
        limit = SMALL_GRAPH if path.endswith(tuple(f"[{k!r}]" for k in GRAPH_LISTS)) else SMALL
        found = [f"{path}: {len(value)} items"] if len(value) > limit else []
        return found + [p for i, v in enumerate(value) for p in too_big(v, f"{path}[{i}]")]
    if isinstance(value, dict):
        found = [f"{path}: {len(value)} entries"] if len(value) > SMALL_GRAPH else []
        return found + [p for k, v in value.items() for p in too_big(v, f"{path}[{k!r}]")]
    if isinstance(value, float | np.floating):
        return [] if _simple_number(value) else [f"{path}: {value!r}"]
    return []


@pytest.mark.parametrize(("lab_id", "ex"), list(_exercises()))
def test_the_first_public_case_is_small_enough_to_work_by_hand(lab_id, ex):
    case = ex.public_cases[0]
    assert too_big((tuple(case.args), dict(case.kwargs))) == [], case.name


def test_the_smallness_check_catches_big_or_messy_inputs():
    assert too_big((np.arange(5.0),)) == ["[0]: an array of 5 elements"]
    assert too_big(([0.1234, 2.0],)) == ["[0][0]: 0.1234"]
    assert too_big(({"nodes": [{}] * 7},)) == ["[0]['nodes']: 7 items"]
    assert too_big(({"nodes": [{"inputs": list("abcde")}]},)) == \
        ["[0]['nodes'][0]['inputs']: 5 items"]
    assert too_big((np.float32([0.1, 0.5, 1e-9, 70000]), 65536.0, float("inf"))) == []
