"""Every pointer in the Chinese edition leads to Chinese material: release commands
ask for the Chinese notebook (``--lang zh``), no page sends a learner to a lab's
``source.ipynb`` (the English notebook, with its solutions), links name files, not
folders, no link leaves for an English chapter, and the checker's words are quoted
as the Chinese checker prints them."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from autograder.messages import MESSAGES

from .harness import ROOT

PAGES = (sorted((ROOT / "chapters" / "zh").glob("*.ipynb"))
         + sorted((ROOT / "labs").glob("*/source.zh.ipynb")) + [ROOT / "README.zh-CN.md"])
RELEASE = re.compile(r"python -m autograder release (\w+)(?P<rest>[^`\n]*)")
LINK = re.compile(r"\]\(([^)\s]+)\)")
#: what the English checker prints for the statuses a chapter quotes, and the Chinese words
CHECKER_WORDS = {MESSAGES["en"][key]: MESSAGES["zh"][key]
                 for key in ("not_attempted", "word_not_attempted", "passed", "failed")}


def _prose(path: Path) -> str:
    if path.suffix == ".md":
        return path.read_text()
    nb = nbformat.read(path, as_version=4)
    return "\n\n".join(c.source for c in nb.cells if c.cell_type == "markdown")


def problems(path: Path, text: str) -> list[str]:
    found = []
    for m in RELEASE.finditer(text):
        if "--lang zh" not in m["rest"]:
            found.append(f"`{m[0]}` releases the English notebook: add --lang zh")
    found += [f"points to {m[0]!r}, the English lab notebook with its solutions"
              for m in re.finditer(r"(labs/\w+/)?source\.ipynb", text)]
    for target in LINK.findall(text):
        if target.startswith(("http:", "https:", "#", "mailto:")):
            continue
        bare = target.split("#")[0]
        if bare.endswith("/"):
            found.append(f"links to the folder {target!r}: link a file")
        resolved = (path.parent / bare).resolve()
        chapter = re.fullmatch(r"(\d\d|appendix)_\w+\.ipynb", resolved.name)
        if chapter and resolved.parent.name != "zh":
            found.append(f"links to the English chapter {target!r}")
    for english, chinese in CHECKER_WORDS.items():
        for quoted in re.findall(rf"[“\"']{re.escape(english)}[”\"']", text):
            found.append(f"quotes the English checker's {quoted}: the Chinese checker prints "
                         f"“{chinese}”")
    return found


@pytest.mark.parametrize("path", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_a_chinese_page_points_only_to_chinese_material(path):
    found = problems(path, _prose(path))
    assert not found, f"{path.relative_to(ROOT)}:\n  " + "\n  ".join(found)


def test_the_check_finds_each_kind_of_english_pointer():
    page = ROOT / "chapters" / "zh" / "01_x.ipynb"
    text = ("用 `python -m autograder release lab1_graph` 发布；"
            "打开 `labs/lab1_graph/source.ipynb`；见[实验 1](../../labs/lab1_graph/)"
            "和[第 2 章](../02_automatic_differentiation.ipynb)；占位函数报告“not attempted”。")
    assert len(problems(page, text)) == 5
    fixed = ("用 `python -m autograder release lab1_graph --lang zh` 发布；"
             "见[第 2 章](02_automatic_differentiation.ipynb)；占位函数报告“未作答”。")
    assert problems(page, fixed) == []
