"""Every chapter asks the learner to predict before it shows: at least three
"predict, then run" prompts per chapter, each answered by a protected
prediction (:class:`vizkit.prediction.prediction`): the first code cell after
the prompt runs the experiment inside ``with prediction(why=...)``, with its
source collapsed, so neither its assertions nor its output nor the explanation
show before the learner's guess.

Reads the stored notebooks only; executing them is test_notebooks.py's job.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from .harness import ROOT

MARK = "**Predict, then run.**"
PROMPTS_PER_CHAPTER = 3
PREDICTION = "with prediction(why="
CHAPTERS = sorted(p for p in (ROOT / "chapters").glob("0[1-6]_*.ipynb"))


def problems_with_prompts(cells) -> tuple[int, list[str]]:
    """(number of prompts, what is wrong with them) for a notebook's cells."""
    count, problems = 0, []
    for index, cell in enumerate(cells):
        if cell.cell_type != "markdown" or MARK not in cell.source:
            continue
        count += 1
        answer = next((c for c in cells[index + 1:] if c.cell_type == "code"), None)
        if answer is None or not answer.source.startswith(PREDICTION):
            problems.append(f"cell {index}: the first code cell after the prompt is not a "
                            f"protected prediction (it must start with {PREDICTION!r})")
            continue
        if "assert" not in answer.source and "claim(" not in answer.source:
            problems.append(f"cell {index}: the prediction checks nothing (no assert or claim)")
        if not answer.metadata.get("jupyter", {}).get("source_hidden"):
            problems.append(f"cell {index}: the prediction's source is not collapsed "
                            "(metadata jupyter.source_hidden)")
        if "hide-input" not in answer.metadata.get("tags", []):
            problems.append(f"cell {index}: the prediction lacks the hide-input tag the site "
                            "uses to leave its source out")
        between = cells[index + 1:cells.index(answer)]
        if any("<details>" in c.source for c in between):
            problems.append(f"cell {index}: an explanation sits before the guess")
    return count, problems


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.name)
def test_chapter_has_protected_predictions(path: Path):
    count, problems = problems_with_prompts(nbformat.read(path, as_version=4).cells)
    assert not problems, f"{path.name}:\n" + "\n".join(problems)
    assert count >= PROMPTS_PER_CHAPTER, (
        f"{path.name} has {count} predict-then-run prompt(s); a chapter needs at least "
        f"{PROMPTS_PER_CHAPTER} (a markdown cell with {MARK!r})")


def _cells(*kinds_and_sources, hidden=True):
    cells = [nbformat.v4.new_markdown_cell(s) if k == "md" else nbformat.v4.new_code_cell(s)
             for k, s in kinds_and_sources]
    for cell in cells:
        if cell.cell_type == "code" and hidden:
            cell.metadata.update(jupyter={"source_hidden": True}, tags=["hide-input"])
    return cells


def test_checker_rejects_an_unprotected_prompt():
    good = _cells(("md", MARK + " q"), ("code", PREDICTION + '"x") as answer:\n    assert 1'))
    assert problems_with_prompts(good) == (1, [])
    plain = _cells(("md", MARK + " q"), ("code", "assert 1"))
    assert problems_with_prompts(plain)[1]
    shown = _cells(("md", MARK + " q"), ("code", PREDICTION + '"x") as a:\n    assert 1'),
                   hidden=False)
    assert len(problems_with_prompts(shown)[1]) == 2
    unchecked = _cells(("md", MARK + " q"), ("code", PREDICTION + '"x") as a:\n    print(1)'))
    assert problems_with_prompts(unchecked)[1]
    early = _cells(("md", MARK + " q"), ("md", "<details><summary>Why</summary>a</details>"),
                   ("code", PREDICTION + '"x") as a:\n    assert 1'))
    assert problems_with_prompts(early)[1]
    assert problems_with_prompts(_cells(("md", "no prompt here")))[0] == 0
