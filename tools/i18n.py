"""The Chinese edition (中文版) of the course, generated from the English notebooks.

    python tools/i18n.py status [NOTEBOOK ...]  # list what each catalog lacks, write stubs for it
    python tools/i18n.py build [NOTEBOOK ...]   # regenerate Chinese notebooks from their catalogs
    python tools/i18n.py check [NOTEBOOK ...]   # exit 1 when a catalog or notebook is out of date

(NOTEBOOK: an English notebook as ``EDITIONS`` lists it, to work on only some; default: all.)

Layout. English is the source of truth. For every notebook listed in
``EDITIONS`` there is

* a catalog, ``chapters/zh/catalog/<stem>.json`` (for a lab's
  ``labs/<lab>/source.ipynb``: ``labs/<lab>/source.zh.json``), keyed by the
  notebook's stable cell ids. Under ``"cells"``, each entry translates one
  markdown cell and records the English text it translates, with its hash, so a
  change to the English cell makes the entry *stale* until a translator looks
  at it again. Under ``"strings"``, each code cell's id maps to a list of
  ``{"en": ..., "zh": ...}`` entries, one per distinct *display literal* of the
  cell (below; a literal written twice in a cell has one entry): ``en`` is the
  literal's exact source text, quotes and prefix included, and ``zh`` the
  Python literal of the same kind that replaces it;
* the generated notebook, ``chapters/zh/<name>.ipynb`` (for a lab:
  ``labs/<lab>/source.zh.ipynb``): the English notebook with each markdown cell
  replaced by its translation and, in each code cell, each display literal's
  source text replaced by its ``zh`` -- by position, so every other character of
  the cell (code, names, comments, non-display strings) stays byte-identical.
  Raw cells, ids and metadata are copied unchanged, so both editions run the
  very same code and only what it puts on screen reads Chinese.

A *display literal* is a ``str`` literal or f-string that sits where a reader
sees it -- the first positional argument of a call to ``claim``, any positional
argument of ``print``, the text summary of a figure in a call to ``show`` or
``draw`` (their second positional argument, or ``summary=``), the value of a
keyword argument named in ``DISPLAY_KEYWORDS`` (``title=``, ``xlabel=``,
``label=``, ``description=``, ...), or what a plain ``=`` assigns to an
attribute named in ``DISPLAY_ATTRIBUTES`` (a widget's text:
``readout.value = f"..."``, ``slider.description = "..."``) or to a variable
named in ``DISPLAY_NAMES`` or ending in ``_`` and one of them (a table's
``headers = (...)``, a figure's ``labels = {key: "text"}``, ``run_labels = {...}``),
in each case only when the argument or assigned value is itself the literal
(in ``show(fig, summary + " More.")`` there is none) or a tuple, list or dict
written out in place that holds it: the items of a tuple or list and the
*values* of a dict count, nested ones included, so
``headers=("op", "finite diff")``, ``rows=[("case", f"{t:.1f} ms")]`` and
``labels={"fp16": "float16, no sync"}`` translate their texts while a dict's keys,
which the code looks things up by, stay as they are -- and whose source text,
``{...}`` placeholders left out, holds a run of 3 or more ASCII letters (so
``f"{x:.2f}"`` and ``"-" * 40`` are not). A cell with ``%magic`` or ``!shell``
lines is read with those lines blanked; a cell that still does not parse as
Python has no display literals. A ``zh`` must parse as the same kind of
literal (string or f-string) with the same placeholders (expression,
conversion and format spec; any order), and contain a Chinese character,
unless the entry says ``"keep": true`` (a string that is meant to stay
English, such as a name from the code, or a widget value the code compares).

Links in a translation are written exactly as in the English cell (relative to
the English notebook); ``build`` rebases them onto the Chinese notebook's
folder and sends a link to a notebook that has a Chinese edition to that
edition, so a chapter's links switch over as soon as its target is translated.

A translator's loop: ``status`` adds a stub for each new markdown cell or
display literal (``"zh": null``) and, for each changed one, the new English
next to the old (``"en_before"``), all marked ``"todo"``; an entry whose literal
left its cell is marked ``"todo"`` and ``"stale"``. Write ``zh``, delete
``todo`` (and ``en_before``; delete a stale entry), then ``build``. ``build``
refuses a catalog with an untranslated markdown cell or a malformed ``zh``,
and leaves a display literal English while its entry is missing or todo;
``check`` (and tests/notebooks/test_i18n.py) refuses anything left undone.
"""

from __future__ import annotations

import argparse
import ast
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
            "chapters/06_capstone_gpt.ipynb", "chapters/appendix_compiler_ablation.ipynb",
            "labs/lab1_graph/source.ipynb", "labs/lab2_autodiff/source.ipynb",
            "labs/lab3_distributed/source.ipynb", "labs/lab4_amp/source.ipynb")
GLOSSARY = ROOT / "chapters" / "zh" / "glossary.json"
# ](target) in markdown: a link or an image; the target ends at whitespace or ")"
LINK_TARGET = re.compile(r"(\]\()([^)\s]+)")
# what a glossary check skips: fenced and inline code, $math$, link targets
NOT_PROSE = re.compile(r"```.*?```|`[^`]*`|\$[^$]*\$|\]\([^)]*\)", re.DOTALL)
# keyword arguments whose string a reader sees: figure titles, axis and widget labels, captions
DISPLAY_KEYWORDS = frozenset({"title", "xlabel", "ylabel", "xaxis_title", "yaxis_title", "label",
                              "description", "caption", "text", "name", "headers", "labels",
                              "rows", "x_title", "y_title"})
# calls whose positional arguments a reader sees, and which of them: claim's sentence,
# everything print prints, the text summary of vizkit's show(figure, summary) and draw,
# a prediction's options (answer.choice(options, correct))
DISPLAYED_POSITIONS = {"claim": slice(0, 1), "print": slice(None),
                       "show": slice(1, 2), "draw": slice(1, 2), "choice": slice(0, 1)}
# keyword arguments a reader sees in these calls only (a prediction's explanation: why=)
DISPLAYED_CALL_KEYWORDS = {"show": frozenset({"summary"}), "draw": frozenset({"summary"}),
                           "prediction": frozenset({"why"})}
# widget attributes whose assigned text a reader sees: readout.value = f"...", w.description = "..."
DISPLAY_ATTRIBUTES = frozenset({"value", "description"})
# variables whose assigned texts a reader sees: a table's column heads, a figure's labels by key
# (also under a longer name that ends in "_" and one of these: run_labels)
DISPLAY_NAMES = frozenset({"headers", "labels"})
# the start of an IPython line the Python parser refuses: %magic, %%cell magic, !shell
MAGIC_LINE = re.compile(r"[ \t]*[%!]")
# what makes a literal text rather than a number, a separator or a format
WORD = re.compile(r"[A-Za-z]{3,}")
CJK = re.compile(r"[\u4e00-\u9fff]")


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
        return {"source": name_of(english), "language": LANGUAGE, "cells": {}, "strings": {}}
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
    kind: str          # missing | stale | todo | orphan, or "literal " + one of those | malformed
    english: str       # the English cell's current text, or the literal's ("" for an orphan)
    fault: str = ""    # what is wrong with a malformed translation

    def __str__(self) -> str:
        first = self.english.split("\n", 1)[0]
        what = {"missing": "has no translation",
                "stale": "changed since it was translated",
                "todo": "is marked todo in the catalog (write zh, then delete todo/en_before)",
                "orphan": "is in the catalog but no longer in the English notebook",
                "literal missing": "shows a literal that has no translation under strings",
                "literal todo": "has a strings entry marked todo (write zh, then delete "
                                "todo/en_before)",
                "literal stale": "has a strings entry whose en is no longer in the cell "
                                 "(delete it; status marks it)",
                "literal orphan": "has strings entries but is no longer a code cell of the "
                                  "English notebook (status drops them)",
                "literal malformed": f"has a strings entry to fix: {self.fault}"}[self.kind]
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


# --- display literals: what a code cell puts on screen -------------------------------------


@dataclass(frozen=True)
class Literal:
    """One display literal of a cell: its exact source text and where it sits
    (character offsets into the cell's source, ``start`` inclusive, ``end`` exclusive)."""
    start: int
    end: int
    text: str


def parsed_cell(source: str) -> ast.Module | None:
    """The syntax tree of a code cell, each %magic or !shell line the parser stops
    at blanked to spaces of the same length (so every offset stays where it was);
    None when the cell does not parse for any other reason."""
    lines = source.split("\n")
    while True:
        try:
            return ast.parse("\n".join(lines))
        except SyntaxError as error:
            at = (error.lineno or 0) - 1
            if not 0 <= at < len(lines) or not MAGIC_LINE.match(lines[at]):
                return None
            lines[at] = " " * len(lines[at])


def called_name(call: ast.Call) -> str | None:
    """``f`` for ``f(...)`` and ``obj.f(...)``; None for anything else (``fs[0](...)``)."""
    if isinstance(call.func, ast.Name):
        return call.func.id
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return None


def displayed_arguments(call: ast.Call) -> list[ast.expr]:
    """The arguments of ``call`` that a reader sees: the DISPLAYED_POSITIONS of its
    positional arguments, and the values of the DISPLAY_KEYWORDS and of the
    keywords DISPLAYED_CALL_KEYWORDS names for it."""
    name = called_name(call)
    shown = call.args[DISPLAYED_POSITIONS[name]] if name in DISPLAYED_POSITIONS else []
    keywords = DISPLAY_KEYWORDS | DISPLAYED_CALL_KEYWORDS.get(name, frozenset())
    return shown + [kw.value for kw in call.keywords if kw.arg in keywords]


def is_display_name(name: str) -> bool:
    """``labels``, ``headers`` and, e.g., ``run_labels``: a variable that holds texts to show."""
    return name.rpartition("_")[2] in DISPLAY_NAMES


def assigns_display_target(assign: ast.Assign) -> bool:
    """Whether one of the targets of ``assign`` is ``something.value`` or another
    of the DISPLAY_ATTRIBUTES (``a.value = b = "..."`` is one), or a variable
    named in DISPLAY_NAMES (``labels = {...}``) or ending in ``_`` and one of them."""
    return any((isinstance(target, ast.Attribute) and target.attr in DISPLAY_ATTRIBUTES)
               or (isinstance(target, ast.Name) and is_display_name(target.id))
               for target in assign.targets)



def with_contents(node: ast.expr) -> list[ast.expr]:
    """``node`` and, when it is a tuple, list or dict written out in place, the
    items (a dict: the values, not the keys) inside it, nested ones included."""
    if isinstance(node, (ast.Tuple, ast.List)):
        items = node.elts
    elif isinstance(node, ast.Dict):
        items = node.values
    else:
        return [node]
    return [node] + [inner for item in items for inner in with_contents(item)]


def displayed_nodes(tree: ast.Module) -> list[ast.expr]:
    """The expressions of ``tree`` that sit where a reader sees them: the displayed
    arguments of each call, the value of each assignment to a display attribute
    or name, and what a tuple, list or dict among them holds.
    The one place that decides what a display position is."""
    shown = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            shown += displayed_arguments(node)
        elif isinstance(node, ast.Assign) and assigns_display_target(node):
            shown.append(node.value)
    return [inner for node in shown for inner in with_contents(node)]


def is_text_literal(node: ast.AST) -> bool:
    """A ``str`` constant or an f-string (implicit concatenation makes one node)."""
    return isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant)
                                              and isinstance(node.value, str))


def without_placeholders(text: str) -> str:
    """An f-string's source text with each ``{...}`` placeholder (nested braces
    included) removed; ``{{`` and ``}}`` are kept, as the text they print."""
    kept, depth, i = [], 0, 0
    while i < len(text):
        pair = text[i:i + 2]
        if depth == 0 and pair in ("{{", "}}"):
            kept.append(pair)
            i += 2
            continue
        if text[i] == "{":
            depth += 1
        elif text[i] == "}" and depth:
            depth -= 1
        elif depth == 0:
            kept.append(text[i])
        i += 1
    return "".join(kept)


def visible_text(segment: str, node: ast.AST) -> str:
    """The part of a literal's source text a reader sees as words: all of a string,
    an f-string without its placeholders."""
    return without_placeholders(segment) if isinstance(node, ast.JoinedStr) else segment


def offset_in(source: str, line_starts: list[int], lineno: int, col_offset: int) -> int:
    """The character offset of ``ast``'s (line, UTF-8 byte column) position."""
    start = line_starts[lineno - 1]
    end = source.find("\n", start)
    line = source[start:] if end < 0 else source[start:end]
    return start + len(line.encode("utf-8")[:col_offset].decode("utf-8"))


def literal_slots(source: str) -> list[tuple[Literal, ast.AST]]:
    """Every str/f-string literal in a display position of the cell ``source``,
    whatever its text, with its node, in source order; [] when the cell does
    not parse as Python even with its magic lines blanked."""
    tree = parsed_cell(source)
    if tree is None:
        return []
    line_starts = [0] + [i + 1 for i, char in enumerate(source) if char == "\n"]
    found = {}
    for node in filter(is_text_literal, displayed_nodes(tree)):
        start = offset_in(source, line_starts, node.lineno, node.col_offset)
        end = offset_in(source, line_starts, node.end_lineno, node.end_col_offset)
        found[start] = (Literal(start, end, source[start:end]), node)
    return [found[start] for start in sorted(found)]


def display_literals(source: str) -> list[Literal]:
    """The display literals of the cell ``source`` (see the module's docstring), in order."""
    return [literal for literal, node in literal_slots(source)
            if WORD.search(visible_text(literal.text, node))]


def distinct_texts(literals: list[Literal]) -> list[str]:
    """The literals' source texts, each once, in order of first appearance."""
    return list(dict.fromkeys(literal.text for literal in literals))


def parsed_literal(text: str) -> ast.AST | None:
    """The node of ``text`` when it is exactly one str literal or f-string (pieces on
    several lines included, as inside the call's parentheses), else None."""
    try:
        node = ast.parse(f"(\n{text}\n)", mode="eval").body
    except SyntaxError:
        return None
    return node if is_text_literal(node) else None


def literal_kind(node: ast.AST) -> str:
    return "an f-string" if isinstance(node, ast.JoinedStr) else "a plain string"


def placeholders(node: ast.AST) -> list[str]:
    """An f-string's ``{...}`` placeholders, each written as a one-placeholder
    f-string (expression, conversion, format spec), sorted; [] for a plain string."""
    if not isinstance(node, ast.JoinedStr):
        return []
    return sorted(ast.unparse(ast.JoinedStr(values=[value])) for value in node.values
                  if isinstance(value, ast.FormattedValue))


def translation_faults(entry: dict) -> list[str]:
    """What is wrong with a finished ``{"en", "zh"}`` entry: a zh that is not a
    literal of en's kind, a placeholder lost or added, or no Chinese without keep."""
    en, zh = parsed_literal(entry["en"]), entry.get("zh")
    if not isinstance(zh, str) or parsed_literal(zh) is None:
        return ["zh is not one Python string literal or f-string (write it with its quotes, "
                "as it should appear in the code)"]
    zh_node = parsed_literal(zh)
    faults = []
    if literal_kind(en) != literal_kind(zh_node):
        faults.append(f"zh is {literal_kind(zh_node)} but en is {literal_kind(en)}: "
                      "use en's kind")
    if placeholders(en) != placeholders(zh_node):
        faults.append(f"zh's placeholders {placeholders(zh_node)} differ from en's "
                      f"{placeholders(en)}: keep every {{...}} exactly, numbers come from them")
    if not entry.get("keep") and not CJK.search(zh):
        faults.append('zh has no Chinese character: translate it, or add "keep": true '
                      "when it is meant to stay English")
    return faults


def code_cells(nb) -> list:
    return [cell for cell in nb.cells if cell.cell_type == "code"]


def string_problems(nb, catalog: dict, name: str) -> list[Problem]:
    """Every display literal of ``nb``'s code cells without a finished, well-formed
    translation in ``catalog["strings"]``, every entry whose literal left its
    cell (stale) and every cell entry whose code cell is gone (orphan)."""
    strings = catalog.get("strings", {})
    problems = []
    cells = code_cells(nb)
    for cell in cells:
        entries = strings.get(cell.id, [])
        current = distinct_texts(display_literals(cell.source))
        translated = {entry["en"]: entry for entry in entries}
        for text in current:
            entry = translated.get(text)
            if entry is None or entry.get("zh") is None:
                problems.append(Problem(name, cell.id, "literal missing", text))
            elif "todo" in entry:
                problems.append(Problem(name, cell.id, "literal todo", text))
            else:
                problems += [Problem(name, cell.id, "literal malformed", text, fault)
                             for fault in translation_faults(entry)]
        problems += [Problem(name, cell.id, "literal stale", entry["en"])
                     for entry in entries if entry["en"] not in current]
    present = {cell.id for cell in cells}
    problems += [Problem(name, cell_id, "literal orphan", "")
                 for cell_id in strings if cell_id not in present]
    return problems


def with_string_stubs(nb, catalog: dict) -> dict:
    """``catalog`` with a ``"strings"`` stub for each new display literal of ``nb``;
    a changed literal (its cell lost one and gained one) gets the old entry's zh
    and en as ``en_before``; a literal that left its cell without a successor is
    marked stale; entries of vanished cells are dropped; cells in notebook order."""
    old = catalog.get("strings", {})
    strings = {}
    for cell in code_cells(nb):
        current = distinct_texts(display_literals(cell.source))
        entries = {entry["en"]: entry for entry in old.get(cell.id, [])}
        gone = [entry for text, entry in entries.items() if text not in current]
        kept = []
        for text in current:
            if text in entries:
                kept.append(entries[text])
            elif gone:
                before = gone.pop(0)
                kept.append({"en": text, "en_before": before.get("en_before", before["en"]),
                             "zh": before.get("zh"), "todo": True})
            else:
                kept.append({"en": text, "zh": None, "todo": True})
        kept += [{**entry, "todo": True, "stale": "this literal is no longer in the cell: "
                  "delete the entry"} for entry in gone]
        if kept:
            strings[cell.id] = kept
    return {**catalog, "strings": strings}


def finished_translations(entries: list[dict]) -> dict[str, str]:
    """en -> zh for the entries that are done (a zh, no todo)."""
    return {entry["en"]: entry["zh"] for entry in entries
            if entry.get("zh") is not None and "todo" not in entry}


def substituted(source: str, literals: list[Literal], replacement: dict[str, str]) -> str:
    """``source`` with each of ``literals`` whose text ``replacement`` maps replaced,
    in place; every other character unchanged."""
    pieces, at = [], 0
    for literal in literals:
        if literal.text in replacement:
            pieces += [source[at:literal.start], replacement[literal.text]]
            at = literal.end
    return "".join(pieces) + source[at:]


def translated_code(source: str, entries: list[dict]) -> str:
    """The Chinese code cell: ``source`` with its finished display literals
    replaced by their translations."""
    return substituted(source, display_literals(source), finished_translations(entries))


def untranslated_code(source: str, entries: list[dict]) -> str:
    """The reverse of ``translated_code``, for checking it: each literal in a display
    position of the Chinese cell ``source`` that is a finished zh goes back to its en."""
    back = {zh: en for en, zh in finished_translations(entries).items()}
    return substituted(source, [literal for literal, _ in literal_slots(source)], back)


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


def translated_texts(nb, catalog: dict) -> list[tuple[str, str, str]]:
    """(cell id, English, Chinese) for each translated markdown cell and each
    finished display literal not kept English (an f-string without placeholders)."""
    pairs = []
    for cell in markdown_cells(nb):
        entry = catalog["cells"].get(cell.id) or {}
        if entry.get("zh") is not None:
            pairs.append((cell.id, cell.source, joined(entry["zh"])))
    for cell in code_cells(nb):
        entries = [e for e in catalog.get("strings", {}).get(cell.id, []) if not e.get("keep")]
        pairs += [(cell.id, without_placeholders(en), zh)
                  for en, zh in finished_translations(entries).items()]
    return pairs


def glossary_problems(nb, catalog: dict, name: str, glossary: dict) -> list[str]:
    """One line per translated cell or display literal that renders a glossary term
    differently, except where the glossary's ``exceptions`` allow it for that cell."""
    allowed = glossary["exceptions"].get(name, {})
    problems = []
    for cell_id, english, chinese in translated_texts(nb, catalog):
        for term in glossary_misses(english, chinese, glossary["terms"]):
            if term not in allowed.get(cell_id, []):
                problems.append(f"{name}: cell {cell_id} uses {term!r} but its translation lacks "
                                f"{glossary['terms'][term]!r} ({GLOSSARY.relative_to(ROOT)}); "
                                "use the term, or list it under exceptions with a reason")
    return problems


def variant_problems(nb, catalog: dict, name: str, glossary: dict) -> list[str]:
    """One line per refused rendering (the glossary's ``variants``) in the Chinese text
    of a translated cell or literal, or in a Chinese gloss of the English notebook."""
    texts = [(cell_id, "translation", chinese) for cell_id, _, chinese
             in translated_texts(nb, catalog)]
    texts += [(cell.id, "English cell", cell.source) for cell in markdown_cells(nb)]
    return [f"{name}: cell {cell_id} ({where}) writes {variant!r}; the edition's term is "
            f"{term!r} ({GLOSSARY.relative_to(ROOT)})"
            for cell_id, where, text in texts
            for variant, term in glossary.get("variants", {}).items()
            if variant in NOT_PROSE.sub(" ", text)]


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
    its catalog entry (links rebased), each code cell's finished display literals
    replaced by theirs, outputs cleared, everything else unchanged."""
    catalog = load_catalog(english)
    nb = read_notebook(english)
    problems = catalog_problems(nb, catalog, name_of(english)) + [
        p for p in string_problems(nb, catalog, name_of(english)) if p.kind == "literal malformed"]
    if problems:
        raise CatalogIncomplete(
            f"{catalog_path(english).relative_to(ROOT)} is not ready for a build:\n  "
            + "\n  ".join(map(str, problems))
            + "\nRun `python tools/i18n.py status` to write stubs, translate them (and fix the "
            "entries said to be wrong), then build.")
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            cell.source = rebased_links(joined(catalog["cells"][cell.id]["zh"]), english)
        elif cell.cell_type == "code":
            cell.source = translated_code(cell.source, catalog.get("strings", {}).get(cell.id, []))
            cell.outputs, cell.execution_count = [], None
    nb.metadata["course_edition"] = {
        "language": LANGUAGE, "generated_from": name_of(english),
        "note": "generated by `python tools/i18n.py build`; edit the catalog, not this file"}
    return nb


def notebook_text(nb) -> str:
    return nbformat.writes(nb) + "\n"


def build(notebooks: tuple[str, ...] = EDITIONS) -> list[Path]:
    """Write the Chinese edition of each of ``notebooks``; return those whose text changed."""
    changed = []
    for relative in notebooks:
        english = english_path(relative)
        text = notebook_text(translated_notebook(english))
        target = chinese_path(english)
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
            changed.append(target)
    return changed


def all_problems(nb, catalog: dict, name: str) -> list[Problem]:
    """What a catalog lacks: its markdown cells' and its display literals'."""
    return catalog_problems(nb, catalog, name) + string_problems(nb, catalog, name)


def selected(notebooks: list[str]) -> tuple[str, ...]:
    """The declared editions among ``notebooks`` (English paths); all when none is named."""
    if not notebooks:
        return EDITIONS
    unknown = [n for n in notebooks if Path(n).as_posix() not in EDITIONS]
    if unknown:
        raise CatalogIncomplete(f"{unknown} not in EDITIONS of tools/i18n.py: name English "
                                f"notebooks as it lists them, e.g. {EDITIONS[0]}")
    return tuple(Path(n).as_posix() for n in notebooks)


def status(notebooks: tuple[str, ...] = EDITIONS) -> list[str]:
    """Each catalog's problems (stubs are written for them) and glossary misses."""
    problems = []
    for relative in notebooks:
        english = english_path(relative)
        catalog, nb = load_catalog(english), read_notebook(english)
        found = all_problems(nb, catalog, name_of(english))
        if found or not catalog_path(english).exists():
            save_catalog(english, with_string_stubs(nb, with_stubs(nb, catalog)))
        problems += map(str, found)
        problems += glossary_problems(nb, catalog, name_of(english), load_glossary())
    return problems


def out_of_date(notebooks: tuple[str, ...] = EDITIONS) -> list[str]:
    """What ``check`` refuses: catalog problems (display literals included), glossary
    misses, and generated notebooks that differ from a build."""
    reasons = []
    for relative in notebooks:
        english = english_path(relative)
        nb, catalog = read_notebook(english), load_catalog(english)
        problems = all_problems(nb, catalog, name_of(english))
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
    parser.add_argument("notebooks", nargs="*", help="English notebooks to work on, as "
                        "EDITIONS lists them; all when none is named")
    arguments = parser.parse_args(argv)
    try:
        return run(arguments.command, selected(arguments.notebooks))
    except CatalogIncomplete as error:
        print(error, file=sys.stderr)
        return 1


def run(command: str, notebooks: tuple[str, ...] = EDITIONS) -> int:
    """Run one command, print its report; 1 when ``check`` finds something to do."""
    if command == "status":
        problems = status(notebooks)
        for problem in problems:
            print(problem)
        print(f"{len(problems)} thing(s) to translate or review in {len(notebooks)} notebook(s)"
              + ("; stubs written to the catalogs" if problems else ""))
        return 0
    if command == "build":
        changed = build(notebooks)
        for path in changed:
            print(f"wrote {path.relative_to(ROOT)}")
        print(f"{len(changed)} of {len(notebooks)} Chinese notebook(s) changed")
        return 0
    reasons = out_of_date(notebooks)
    for reason in reasons:
        print(reason)
    return 1 if reasons else 0


if __name__ == "__main__":
    sys.exit(main())
