"""Chapter 3 shows engine source, but never the engine code that is, nearly line
for line, the answer to one of lab 3's graded exercises.

Reads the stored notebook only: each ``show_source`` target is resolved from
the notebook's imports, as tests/notebooks/test_show_source_targets.py does.
"""

from __future__ import annotations

import ast

import nbformat

from chapters.distributed.ddp import build_buckets
from chapters.distributed.pipeline import one_f_one_b_schedule
from tests.notebooks.harness import ROOT
from tests.notebooks.test_show_source_targets import (
    import_namespace,
    python_cells,
    show_source_calls,
)

CHAPTER = ROOT / "chapters" / "03_distributed_training.ipynb"
LAB_SOURCE = ROOT / "labs" / "lab3_distributed" / "source.ipynb"

# engine function -> the lab 3 exercise whose solution it writes out
GRADED_ANSWERS = {one_f_one_b_schedule: "one_f_one_b", build_buckets: "assign_buckets"}


def shown_targets():
    """The objects the chapter's show_source calls display."""
    cells = python_cells(CHAPTER)
    namespace = import_namespace(cells)
    return [eval(compile(ast.Expression(call.call.args[0]), "<target>", "eval"), dict(namespace))
            for call in show_source_calls(CHAPTER, cells)]


def test_the_listed_answers_are_still_graded_in_lab_3():
    lab = "\n".join(cell.source for cell in nbformat.read(LAB_SOURCE, as_version=4).cells)
    for exercise in GRADED_ANSWERS.values():
        assert f'check("{exercise}")' in lab, f"lab 3 no longer grades {exercise}"


def test_chapter_shows_no_graded_answer():
    shown = shown_targets()
    assert len(shown) >= 4
    given_away = [f"{target.__qualname__} (lab 3 exercise {GRADED_ANSWERS[target]})"
                  for target in shown if target in GRADED_ANSWERS]
    assert not given_away, ("chapter 3 shows the source of " + ", ".join(given_away)
                            + "; show the code that uses it instead")
