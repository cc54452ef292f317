"""The Chinese edition (中文版) of the course, generated from the English notebooks.

    python tools/i18n.py status   # list what each catalog lacks and write stubs for it
    python tools/i18n.py build    # regenerate every Chinese notebook from its catalog
    python tools/i18n.py check    # exit 1 when a catalog or a generated notebook is out of date

Layout. English is the source of truth. For every notebook listed in
``EDITIONS`` there is

* a catalog, ``chapters/zh/catalog/<stem>.json`` (for a lab's
  ``labs/<lab>/source.ipynb``: ``labs/<lab>/source.zh.json``), keyed by the
  notebook's stable cell ids. Each entry translates one markdown cell and
  records the English text it translates, with its hash, so a change to the
  English cell makes the entry *stale* until a translator looks at it again;
* the generated notebook, ``chapters/zh/<name>.ipynb`` (for a lab:
  ``labs/<lab>/source.zh.ipynb``): the English notebook with each markdown cell
  replaced by its translation. Code and raw cells are copied unchanged, ids
  and metadata included, so both editions run the very same code.

Links in a translation are written exactly as in the English cell (relative to
the English notebook); ``build`` rebases them onto the Chinese notebook's
folder and sends a link to a notebook that has a Chinese edition to that
edition, so a chapter's links switch over as soon as its target is translated.

A translator's loop: ``status`` adds a stub for each new cell
(``"zh": null``) and, for each changed cell, the new English next to the old
(``"en_before"``), both marked ``"todo"``; write ``zh``, delete ``todo`` (and
``en_before``), then ``build``. ``check`` (and tests/notebooks/test_i18n.py)
refuses anything left undone.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[1]
LANGUAGE = "zh-CN"
# The English notebooks that have a Chinese edition: the one place that says so.
EDITIONS = ("chapters/00_start_here.ipynb", "chapters/01_computational_graphs.ipynb",
            "chapters/02_automatic_differentiation.ipynb", "chapters/03_distributed_training.ipynb",
            "chapters/04_mixed_precision.ipynb", "chapters/05_training_loop.ipynb",
            "labs/lab1_graph/source.ipynb", "labs/lab2_autodiff/source.ipynb",
            "labs/lab3_distributed/source.ipynb", "labs/lab4_amp/source.ipynb")
GLOSSARY = ROOT / "chapters" / "zh" / "glossary.json"
# ](target) in markdown: a link or an image; the target ends at whitespace or ")"
LINK_TARGET = re.compile(r"(\]\()([^)\s]+)")
# what a glossary check skips: fenced and inline code, $math$, link targets
NOT_PROSE = re.compile(r"```.*?```|`[^`]*`|\$[^$]*\$|\]\([^)]*\)", re.DOTALL)


class CatalogIncomplete(Exception):
    """A declared notebook, its catalog or its translations are not ready to build."""


def english_path(relative: str) -> Path:
    """The English notebook ``relative`` names; it must exist when it is declared."""
    path = ROOT / relative
    if not path.exists():
        raise CatalogIncomplete(f"EDITIONS in tools/i18n.py lists {relative}, which does not "
                                "exist: fix the path, or remove it if the notebook was removed")
    return path


def name_of(path: Path) -> str:
    """``path`` relative to the repository, as messages and catalogs write it."""
    return path.relative_to(ROOT).as_posix()


def chinese_path(english: Path) -> Path:
    """chapters/NN_x.ipynb -> chapters/zh/NN_x.ipynb;
    labs/L/source.ipynb -> labs/L/source.zh.ipynb."""
    if english.parent == ROOT / "chapters":
        return english.parent / "zh" / english.name
    return english.with_suffix(".zh.ipynb")


def catalog_path(english: Path) -> Path:
    """chapters/zh/catalog/NN_x.json beside the chapters; labs/L/source.zh.json beside a lab."""
    if english.parent == ROOT / "chapters":
        return english.parent / "zh" / "catalog" / f"{english.stem}.json"
    return english.with_suffix(".zh.json")


def text_hash(text: str) -> str:
    """First 16 hex digits of the SHA-256 of ``text`` (UTF-8): enough to notice any edit."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def lines(text: str) -> list[str]:
    """A cell's text as a list of lines, the way a catalog stores it (readable in a diff)."""
    return text.split("\n")


def joined(stored: list[str]) -> str:
    return "\n".join(stored)


def read_notebook(path: Path):
    return nbformat.read(path, as_version=4)


def load_catalog(english: Path) -> dict:
    """The catalog of ``english``; an empty one when none has been written yet."""
    path = catalog_path(english)
    if not path.exists():
        return {"source": name_of(english), "language": LANGUAGE, "cells": {}}
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise CatalogIncomplete(f"{name_of(path)} is not valid JSON ({error}): fix it, or "
                                f"restore it with `git checkout {name_of(path)}`") from None


def save_catalog(english: Path, catalog: dict) -> None:
    path = catalog_path(english)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(catalog, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


@dataclass
class Problem:
    """One thing a translator has to do in one catalog."""
    notebook: str
    cell_id: str
    kind: str          # missing | stale | todo | orphan
    english: str       # the English cell's current text ("" for an orphan)

    def __str__(self) -> str:
        first = self.english.split("\n", 1)[0]
        what = {"missing": "has no translation",
                "stale": "changed since it was translated",
                "todo": "is marked todo in the catalog (write zh, then delete todo/en_before)",
                "orphan": "is in the catalog but no longer in the English notebook"}[self.kind]
        return f"{self.notebook}: cell {self.cell_id} {what}" + (f": {first!r}" if first else "")


def markdown_cells(nb) -> list:
    return [cell for cell in nb.cells if cell.cell_type == "markdown"]


def catalog_problems(nb, catalog: dict, name: str) -> list[Problem]:
    """Every markdown cell of the English notebook ``nb`` (called ``name`` in
    messages) without an up-to-date, finished translation in ``catalog``, and
    every catalog entry whose cell is gone."""
    entries = catalog["cells"]
    problems = []
    cells = markdown_cells(nb)
    for cell in cells:
        entry = entries.get(cell.id)
        if entry is None or entry.get("zh") is None:
            problems.append(Problem(name, cell.id, "missing", cell.source))
        elif entry["en_hash"] != text_hash(cell.source):
            problems.append(Problem(name, cell.id, "stale", cell.source))
        elif "todo" in entry:
            problems.append(Problem(name, cell.id, "todo", cell.source))
    present = {cell.id for cell in cells}
    problems += [Problem(name, cell_id, "orphan", "")
                 for cell_id in entries if cell_id not in present]
    return problems


def with_stubs(nb, catalog: dict) -> dict:
    """``catalog`` with a stub for each new markdown cell of ``nb``, the new English
    beside each stale translation, orphans dropped, entries in the notebook's order."""
    old = catalog["cells"]
    cells = {}
    for cell in markdown_cells(nb):
        entry = dict(old.get(cell.id) or {"zh": None})
        if entry["zh"] is None:
            entry.update(todo="translate en into zh")
        elif entry["en_hash"] != text_hash(cell.source):
            entry.setdefault("en_before", entry["en"])
            entry.update(todo="en changed (compare en_before): update zh")
        cells[cell.id] = {"en_hash": text_hash(cell.source), "en": lines(cell.source),
                          **{k: v for k, v in entry.items() if k not in ("en_hash", "en")}}
    return {**catalog, "cells": cells}


def load_glossary() -> dict:
    return json.loads(GLOSSARY.read_text(encoding="utf-8"))


def prose(markdown: str) -> str:
    """The words of a markdown text, lower case: code, math and link targets
    removed, hyphens read as spaces ("reverse-mode" is "reverse mode")."""
    return NOT_PROSE.sub(" ", markdown).replace("-", " ").lower()


def glossary_misses(english: str, chinese: str, terms: dict[str, str]) -> list[str]:
    """The glossary terms that ``english`` uses (plurals included) while ``chinese``
    lacks their Chinese term. Longer terms are matched first and hide the words
    inside them, so "gradient compression" asks for 梯度压缩, not also 梯度."""
    text = prose(english)
    misses = []
    for term in sorted(terms, key=len, reverse=True):
        pattern = re.compile(rf"\b{re.escape(term)}(?:s|es)?\b")
        if pattern.search(text):
            if terms[term] not in chinese:
                misses.append(term)
            text = pattern.sub(" ", text)
    return misses


def glossary_problems(nb, catalog: dict, name: str, glossary: dict) -> list[str]:
    """One line per translated cell that renders a glossary term differently,
    except where the glossary's ``exceptions`` allow it for that cell."""
    allowed = glossary["exceptions"].get(name, {})
    problems = []
    for cell in markdown_cells(nb):
        entry = catalog["cells"].get(cell.id) or {}
        if entry.get("zh") is None:
            continue
        for term in glossary_misses(cell.source, joined(entry["zh"]), glossary["terms"]):
            if term not in allowed.get(cell.id, []):
                problems.append(f"{name}: cell {cell.id} uses {term!r} but its translation lacks "
                                f"{glossary['terms'][term]!r} ({GLOSSARY.relative_to(ROOT)}); "
                                "use the term, or list it under exceptions with a reason")
    return problems


def edition_of(target: Path) -> Path | None:
    """The Chinese edition of the notebook ``target``, when one is declared."""
    declared = {english_path(p).resolve() for p in EDITIONS}
    return chinese_path(target) if target.resolve() in declared else None


def rebased_links(text: str, english: Path) -> str:
    """Rewrite each relative link of ``text`` (written relative to ``english``) so it
    works from the Chinese notebook, pointing at Chinese editions where they exist."""
    here = chinese_path(english).parent

    def rebase(match: re.Match) -> str:
        target = match.group(2)
        if "://" in target or target.startswith(("#", "/", "mailto:")):
            return match.group(0)
        path, hash_, fragment = target.partition("#")
        resolved = english.parent / path
        resolved = edition_of(resolved) or resolved
        rebased = Path(os.path.relpath(resolved, here)).as_posix()
        if path.endswith("/"):
            rebased += "/"
        return match.group(1) + rebased + hash_ + fragment

    return LINK_TARGET.sub(rebase, text)


def translated_notebook(english: Path):
    """The Chinese notebook: ``english`` with each markdown cell's text replaced by
    its catalog entry (links rebased), every other cell unchanged, outputs cleared."""
    catalog = load_catalog(english)
    nb = read_notebook(english)
    problems = catalog_problems(nb, catalog, name_of(english))
    if problems:
        raise CatalogIncomplete(
            f"{catalog_path(english).relative_to(ROOT)} is not ready for a build:\n  "
            + "\n  ".join(map(str, problems))
            + "\nRun `python tools/i18n.py status` to write stubs, translate them, then build.")
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = rebased_links(joined(catalog["cells"][cell.id]["zh"]), english)
        elif cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    nb.metadata["course_edition"] = {
        "language": LANGUAGE, "generated_from": name_of(english),
        "note": "generated by `python tools/i18n.py build`; edit the catalog, not this file"}
    return nb


def notebook_text(nb) -> str:
    return nbformat.writes(nb) + "\n"


def build() -> list[Path]:
    """Write every declared Chinese notebook; return the ones whose text changed."""
    changed = []
    for relative in EDITIONS:
        english = english_path(relative)
        text = notebook_text(translated_notebook(english))
        target = chinese_path(english)
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
            changed.append(target)
    return changed


def status() -> list[str]:
    """Each catalog's problems (stubs are written for them) and glossary misses."""
    problems = []
    for relative in EDITIONS:
        english = english_path(relative)
        catalog, nb = load_catalog(english), read_notebook(english)
        found = catalog_problems(nb, catalog, name_of(english))
        if found or not catalog_path(english).exists():
            save_catalog(english, with_stubs(nb, catalog))
        problems += map(str, found)
        problems += glossary_problems(nb, catalog, name_of(english), load_glossary())
    return problems


def out_of_date() -> list[str]:
    """What ``check`` refuses: catalog problems, glossary misses, and generated
    notebooks that differ from a build."""
    reasons = []
    for relative in EDITIONS:
        english = english_path(relative)
        nb, catalog = read_notebook(english), load_catalog(english)
        problems = catalog_problems(nb, catalog, name_of(english))
        reasons += map(str, problems)
        reasons += glossary_problems(nb, catalog, name_of(english), load_glossary())
        target = chinese_path(english)
        if not problems and (not target.exists() or target.read_text(encoding="utf-8")
                             != notebook_text(translated_notebook(english))):
            reasons.append(f"{target.relative_to(ROOT)} differs from what "
                           "`python tools/i18n.py build` generates: run it and commit the result")
    return reasons


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["status", "build", "check"])
    command = parser.parse_args(argv).command
    try:
        return run(command)
    except CatalogIncomplete as error:
        print(error, file=sys.stderr)
        return 1


def run(command: str) -> int:
    """Run one command, print its report; 1 when ``check`` finds something to do."""
    if command == "status":
        problems = status()
        for problem in problems:
            print(problem)
        print(f"{len(problems)} thing(s) to translate or review in {len(EDITIONS)} notebook(s)"
              + ("; stubs written to the catalogs" if problems else ""))
        return 0
    if command == "build":
        changed = build()
        for path in changed:
            print(f"wrote {path.relative_to(ROOT)}")
        print(f"{len(changed)} of {len(EDITIONS)} Chinese notebook(s) changed")
        return 0
    reasons = out_of_date()
    for reason in reasons:
        print(reason)
    return 1 if reasons else 0


if __name__ == "__main__":
    sys.exit(main())
