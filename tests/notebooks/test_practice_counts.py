"""Every chapter asks the learner to predict before it shows: at least three
"predict, then run" prompts per chapter, each answered by a code cell that
asserts the answer and explained in a collapsed ``<details>`` block.

Reads the stored notebooks only; executing them is test_notebooks.py's job.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from .harness import ROOT

MARK = "**Predict, then run.**"
PROMPTS_PER_CHAPTER = 3
WINDOW = 3  # the answer and the explanation follow within this many cells
CHAPTERS = sorted(p for p in (ROOT / "chapters").glob("0[1-5]_*.ipynb"))


def problems_with_prompts(cells) -> tuple[int, list[str]]:
    """(number of prompts, what is wrong with them) for a notebook's cells."""
    count, problems = 0, []
    for index, cell in enumerate(cells):
        if cell.cell_type != "markdown" or not cell.source.lstrip().startswith(MARK):
            continue
        count += 1
        following = cells[index + 1:index + 1 + WINDOW]
        answers = [c for c in following if c.cell_type == "code"]
        if not answers:
            problems.append(f"cell {index}: no code cell answers the prompt")
        elif not any("assert" in c.source for c in answers):
            problems.append(f"cell {index}: the answering code cell asserts nothing")
        if not any(c.cell_type == "markdown" and "<details>" in c.source
                   and "<summary>" in c.source and "</details>" in c.source for c in following):
            problems.append(f"cell {index}: no collapsed <details> explanation follows")
    return count, problems


def test_there_are_five_chapters():
    assert len(CHAPTERS) == 5, CHAPTERS


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_chapter_has_predict_then_run_prompts(path: Path):
    count, problems = problems_with_prompts(nbformat.read(path, as_version=4).cells)
    assert not problems, f"{path.name}:\n" + "\n".join(problems)
    assert count >= PROMPTS_PER_CHAPTER, (
        f"{path.name} has {count} predict-then-run prompt(s); a chapter needs at least "
        f"{PROMPTS_PER_CHAPTER} (a markdown cell starting with {MARK!r})")


def _cells(*kinds_and_sources):
    return [nbformat.v4.new_markdown_cell(s) if k == "md" else nbformat.v4.new_code_cell(s)
            for k, s in kinds_and_sources]


def test_checker_rejects_a_prompt_without_answer_or_explanation():
    good = _cells(("md", MARK + " q"), ("code", "assert 1"),
                  ("md", "<details><summary>Why?</summary> a </details>"))
    assert problems_with_prompts(good) == (1, [])
    no_assert = _cells(("md", MARK + " q"), ("code", "print(1)"),
                       ("md", "<details><summary>Why?</summary> a </details>"))
    assert problems_with_prompts(no_assert)[1]
    no_details = _cells(("md", MARK + " q"), ("code", "assert 1"), ("md", "because"))
    assert problems_with_prompts(no_details)[1]
    too_far = _cells(("md", MARK + " q"), ("md", "a"), ("md", "b"), ("md", "c"),
                     ("code", "assert 1"))
    assert problems_with_prompts(too_far)[1]
    assert problems_with_prompts(_cells(("md", "no prompt here")))[0] == 0
