"""The start-here notebook's course map links every chapter notebook that exists
and names the release command of every lab (a learner works on the released
notebook, never on the source with its solutions), and every link it holds
points at a real file."""

import re

import nbformat

from tests.notebooks.harness import ROOT

START = ROOT / "chapters" / "00_start_here.ipynb"
LINK = re.compile(r"\]\(([^)#\s]+)")


def links():
    nb = nbformat.read(START, as_version=4)
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    return [target for target in LINK.findall(text) if "://" not in target]


def test_every_link_resolves():
    broken = [t for t in links() if not (START.parent / t).exists()]
    assert broken == []


def test_every_chapter_is_linked_and_every_lab_released_by_name():
    linked = {(START.parent / t).resolve() for t in links()}
    expected = [p for p in sorted((ROOT / "chapters").glob("*.ipynb")) if p != START]
    missing = [str(p.relative_to(ROOT)) for p in expected if p.resolve() not in linked]
    assert missing == []
    text = "\n".join(c.source for c in nbformat.read(START, as_version=4).cells)
    labs = [p.parent.name for p in sorted((ROOT / "labs").glob("lab*/source.ipynb"))]
    assert [lab for lab in labs if f"python -m autograder release {lab}" not in text] == []
    assert not re.search(r"labs/\w+/source(\.zh)?\.ipynb", text)
