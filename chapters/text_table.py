"""Plain-text and markdown tables whose columns line up in every language the course speaks.

``str.format`` pads by characters (``f"{name:>12}"``), but a monospace font
draws a Chinese character two columns wide, so a Chinese head or row name
pushes the rest of its line out of place. Here width is counted the way a
terminal or a notebook's output area draws it: a character whose Unicode
East Asian Width is *Wide* or *Fullwidth* takes 2 columns, any other 1.

Standard library only, like :mod:`chapters.language`, so engines and vizkit
can both use it.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

GAP = "  "
"""What separates two columns of a text table."""


def display_width(text: str) -> int:
    """Columns ``text`` takes in a monospace font: 2 per wide (CJK) character, else 1."""
    return sum(2 if unicodedata.east_asian_width(char) in "WF" else 1 for char in text)


def pad(text: str, width: int, align: str = "<") -> str:
    """``text`` padded with spaces to ``width`` columns: ``"<"`` left-aligned (spaces
    after), ``">"`` right-aligned (spaces before). Text already ``width`` or wider
    comes back unchanged, as ``str.format`` does."""
    if align not in ("<", ">"):
        raise ValueError(f"pad: align must be '<' (left) or '>' (right), not {align!r}")
    spaces = " " * max(0, width - display_width(text))
    return text + spaces if align == "<" else spaces + text


def text_table(rows: Sequence[Sequence[object]], headers: Sequence[str],
               align: str | None = None) -> str:
    """``rows`` under ``headers`` as aligned plain text: the heads, a rule of dashes,
    then one line per row.

    Each cell is written with ``str``; a column is as wide as its widest cell or
    head (by :func:`display_width`), and columns are separated by two spaces.
    ``align`` holds one ``"<"`` or ``">"`` per column; by default the first column
    (the row's name) is left-aligned and the others, usually numbers, right-aligned.
    """
    align = align or "<" + ">" * (len(headers) - 1)
    if len(align) != len(headers):
        raise ValueError(f"text_table: {len(headers)} headers but align={align!r} has "
                         f"{len(align)} entries; give one '<' or '>' per column")
    for number, row in enumerate(rows):
        if len(row) != len(headers):
            raise ValueError(f"text_table: {len(headers)} headers but row {number} has "
                             f"{len(row)} cells; give every row one cell per header")
    lines = [[str(cell) for cell in row] for row in [headers, *rows]]
    widths = [max(display_width(line[column]) for line in lines) for column in range(len(headers))]
    lines.insert(1, ["-" * width for width in widths])
    return "\n".join(GAP.join(pad(cell, width, side) for cell, width, side
                              in zip(line, widths, align, strict=True)).rstrip()
                     for line in lines)


def markdown_table(rows: Sequence[Sequence[object]], headers: Sequence[str]) -> str:
    """``rows`` under ``headers`` as a markdown table (a notebook renders it aligned)."""
    if any(len(row) != len(headers) for row in rows):
        raise ValueError(f"markdown_table: every row needs {len(headers)} cells, one per header")
    lines = [headers, ["---"] * len(headers), *rows]
    return "\n".join("| " + " | ".join(str(cell) for cell in line) + " |" for line in lines)
