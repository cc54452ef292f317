"""The chapters' self-checked practice: at least three ``check("...")`` cells per
chapter, each naming an exercise of ``chapters/practice/*/spec.py`` (never a
graded lab's), with every practice spec consistent and all of its cases public.

Reads the stored notebooks only; executing them (where the stubs report
"not attempted") is test_notebooks.py's job.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from autograder.check import _lab_specs, run_check
from autograder.spec import load_lab

from .harness import ROOT

CHECKS_PER_CHAPTER = 3
CHECK_CALL = re.compile(r"""^\s*check\(\s*["']([A-Za-z0-9_]+)["']""", re.MULTILINE)
CHAPTERS = sorted((ROOT / "chapters").glob("0[1-5]_*.ipynb"))
PRACTICE = sorted((ROOT / "chapters" / "practice").glob("*/spec.py"))


def practice_specs():
    return [load_lab(p.parent) for p in PRACTICE]


def practice_ids() -> set[str]:
    return {ex.id for spec in practice_specs() for ex in spec.exercises}


def lab_ids() -> set[str]:
    return {ex.id for spec in _lab_specs() for ex in spec.exercises}


def checked_ids(path: Path) -> list[str]:
    cells = nbformat.read(path, as_version=4).cells
    return [m for c in cells if c.cell_type == "code" for m in CHECK_CALL.findall(c.source)]


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_chapter_has_self_checked_practice(path: Path):
    ids = checked_ids(path)
    unknown = [i for i in ids if i not in practice_ids()]
    assert not unknown, (f"{path.name} checks {unknown}, which no chapters/practice/*/spec.py "
                         "defines")
    assert len(set(ids)) >= CHECKS_PER_CHAPTER, (
        f"{path.name} self-checks {len(set(ids))} practice exercise(s) {ids}; a chapter needs "
        f"at least {CHECKS_PER_CHAPTER}")


@pytest.mark.parametrize("spec_file", PRACTICE, ids=lambda p: p.parent.name)
def test_practice_spec_is_consistent_and_all_public(spec_file: Path):
    spec = load_lab(spec_file.parent)
    spec.validate()
    hidden = [(ex.id, c.name) for ex in spec.exercises for c in ex.hidden_cases]
    assert not hidden, f"practice is ungraded, its cases are all public; hidden: {hidden}"


def test_practice_ids_are_unique_and_not_lab_ids():
    ids = [ex.id for spec in practice_specs() for ex in spec.exercises]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
    assert not set(ids) & lab_ids(), set(ids) & lab_ids()


@pytest.mark.parametrize("spec_file", PRACTICE, ids=lambda p: p.parent.name)
def test_practice_references_pass_and_stubs_are_not_attempted(spec_file: Path):
    """The reference passes its own cases through ``check`` (so the expected values
    survive the codec), and a stub that raises NotImplementedError is "not attempted"."""
    spec = load_lab(spec_file.parent)
    for ex in spec.exercises:
        assert run_check(ex.id, namespace={ex.function: ex.reference}).status == "passed", ex.id

        def stub(*args, **kwargs):
            raise NotImplementedError
        assert run_check(ex.id, namespace={ex.function: stub}).status == "not_attempted", ex.id
