"""The words of every figure, in each language the course speaks.

Each vizkit module keeps its own table, ``{"en": {key: text}, "zh": {key: text}}``,
next to the code that uses it; :func:`words` picks the current language's half
(see :mod:`chapters.language`). Texts are ``str.format`` templates, so numbers are
formatted once, the same way, in both languages. Chinese terms follow
``chapters/zh/glossary.json``.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from chapters.language import LANGUAGES, language

CJK_FONT = "Noto Sans CJK SC, Source Han Sans SC, Microsoft YaHei, PingFang SC, sans-serif"
"""Plotly font family for Chinese figures: the first installed CJK font draws them."""


def check_table(table: dict) -> dict:
    """Return ``table`` after checking that every language has the same keys."""
    keys = {lang: set(table.get(lang, ())) for lang in LANGUAGES}
    reference = keys[LANGUAGES[0]]
    for lang, found in keys.items():
        if found != reference:
            raise KeyError(f"string table for {lang!r} differs from {LANGUAGES[0]!r}: missing "
                           f"{sorted(reference - found)}, extra {sorted(found - reference)}")
    return table


def words(table: dict) -> dict:
    """The current language's half of ``table``."""
    return table[language()]


LABELS_FILE = Path(__file__).resolve().parents[1] / "chapters" / "zh" / "labels.json"
"""The Chinese names of the labels the chapters' code uses as keys (see :func:`label`)."""


@cache
def _labels() -> dict[str, str]:
    table = json.loads(LABELS_FILE.read_text(encoding="utf-8"))
    return table["labels"]


def label(text: str) -> str:
    """``text`` as the current language shows it, for a name the code also uses as a key
    (a run, a recipe, a mode: ``runs["float32"]``), so the code cannot translate it where
    it is written. English shows ``text`` itself; Chinese looks it up in
    ``chapters/zh/labels.json``, and a name missing there is an error, not English text
    left in a Chinese page."""
    if language() == "en":
        return text
    try:
        return _labels()[text]
    except KeyError:
        raise KeyError(f"label {text!r} has no Chinese name: add it to "
                       f"{LABELS_FILE.relative_to(LABELS_FILE.parents[2])} under \"labels\"") \
            from None
