"""The words of every figure, in each language the course speaks.

Each vizkit module keeps its own table, ``{"en": {key: text}, "zh": {key: text}}``,
next to the code that uses it; :func:`words` picks the current language's half
(see :mod:`chapters.language`). Texts are ``str.format`` templates, so numbers are
formatted once, the same way, in both languages. Chinese terms follow
``chapters/zh/glossary.json``.
"""

from __future__ import annotations

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
