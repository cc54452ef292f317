"""Every quotation of the source chapter is verbatim: a Chinese “…” that a page
attributes to the source (原文 earlier in the same sentence, or the claim column of
a table of the source's claims) must appear in the source text, as must any
Chinese quotation in the English edition. Whitespace and Markdown code marks are
not part of a quotation."""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from .harness import ROOT

SOURCE = ROOT.parent / "shared" / "source" / "000_ddeba340f24720ca.txt"
ZH_PAGES = sorted((ROOT / "chapters" / "zh").glob("*.ipynb"))
EN_PAGES = sorted((ROOT / "chapters").glob("*.ipynb"))
CJK = re.compile(r"[\u4e00-\u9fff]")
SENTENCE_END = re.compile(r"[。！？\n]")


def _markdown(path: Path) -> list[str]:
    return [c.source for c in nbformat.read(path, as_version=4).cells
            if c.cell_type == "markdown"]


def _normal(text: str) -> str:
    return re.sub(r"\s+", "", text.replace("`", ""))


def attributed_quotes(text: str) -> list[str]:
    """The “…” quotations that ``text`` (Chinese markdown) attributes to the source."""
    quotes = []
    for m in re.finditer(r"“([^”]+)”", text):
        before = text[:m.start()]
        sentence = SENTENCE_END.split(before)[-1]
        if "原文" in sentence:
            quotes.append(m[1])
    claims_table = False
    for line in text.splitlines():
        if line.startswith("|"):
            first = line.strip("|").split("|")[0]
            if "原文" in first or "节中的说法" in first:
                claims_table = True
            elif claims_table:
                quotes += re.findall(r"“([^”]+)”", first)
        else:
            claims_table = False
    return [q for q in quotes if CJK.search(q)]


def english_quotes(text: str) -> list[str]:
    """Chinese text in quotation marks in an English page: the source, quoted."""
    return [q for q in re.findall(r"[\"“]([^\"”\n]+)[\"”]", text) if CJK.search(q)]


@pytest.fixture(scope="module")
def source() -> str:
    if not SOURCE.is_file():
        pytest.skip(f"the source chapter is not here ({SOURCE}): it lies beside the project")
    return _normal(SOURCE.read_text())


@pytest.mark.parametrize("path", ZH_PAGES + EN_PAGES,
                         ids=[str(p.relative_to(ROOT)) for p in ZH_PAGES + EN_PAGES])
def test_every_quotation_of_the_source_is_verbatim(path, source):
    find = attributed_quotes if path.parent.name == "zh" else english_quotes
    quotes = [q for text in _markdown(path) for q in find(text)]
    wrong = [q for q in quotes if _normal(q) not in source]
    assert not wrong, f"{path.relative_to(ROOT)} quotes the source inexactly:\n  " + "\n  ".join(
        f"“{q}”" for q in wrong)


def test_attribution_is_read_from_the_sentence_and_the_claims_table():
    text = ("原文说动态图“每一行都建图”。别处“不是引文”。\n\n| 第 3.1 节中的说法 | 结论 |\n"
            "| --- | --- |\n| 动态图“又一句” | 对 |\n")
    assert attributed_quotes(text) == ["每一行都建图", "又一句"]
    assert english_quotes('The source says "动态图很慢" and "fast"') == ["动态图很慢"]
