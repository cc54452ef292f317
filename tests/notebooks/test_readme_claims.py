"""The README's table of the source's claims points at real chapter sections.

Each row of "## What the course checks of its source" names chapter sections as
`` `NN` §K `` (notebook ``chapters/NN_*.ipynb``, heading ``## K.``) and says how
the claim is treated: **checked**, **shown**, **explained** or **not covered**.
This test fails when a named section does not exist, when a **checked** row's
"where" column names a section without a code cell containing ``claim(`` or
``assert``, or when the count line under the table disagrees with the rows.

Reads the stored notebooks only; executing them is test_notebooks.py's job.
"""

from __future__ import annotations

import re
from collections import Counter

import nbformat
import pytest

from .harness import ROOT

README = ROOT / "README.md"
HEADING = "## What the course checks of its source"
KINDS = ("checked", "shown", "explained", "not covered")
COLUMNS = ("section", "claim", "verdict", "where", "how")
REFERENCE = re.compile(r"`(0\d)` §(\d+½?)")
NUMBERED_SECTION = re.compile(r"^## (\d+½?)\.")
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
CHECK_MARKS = ("claim(", "assert")
COUNT_LINE = re.compile(r"^(\d+) of (\d+) claims are checked by the notebooks, (\d+) shown "
                        r"without a check, (\d+) explained, (\d+) not covered\.$", re.MULTILINE)


def readme_section(text: str) -> str:
    """The text of the claims section, up to the next ``## `` heading."""
    start = text.index(HEADING) + len(HEADING)
    following = text.find("\n## ", start)
    return text[start:] if following < 0 else text[start:following]


def table_rows(section: str) -> list[dict[str, str]]:
    """The table's body rows as dicts keyed by COLUMNS (header and rule skipped)."""
    lines = [line for line in section.splitlines() if line.startswith("|")]
    rows = []
    for line in lines[2:]:
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) != len(COLUMNS):
            raise ValueError(f"a table row has {len(cells)} columns, not {len(COLUMNS)} "
                             f"({', '.join(COLUMNS)}); escape '|' inside a cell: {line}")
        rows.append(dict(zip(COLUMNS, cells, strict=True)))
    return rows


def kind_of(row: dict[str, str]) -> str | None:
    """The treatment the row's "how" column starts with, in bold, or None."""
    found = re.match(r"\*\*(" + "|".join(KINDS) + r")\*\*", row["how"])
    return found.group(1) if found else None


def code_by_section(cells) -> dict[str, list[str]]:
    """Section number (the K of ``## K.``) -> the sources of the code cells under it.

    A code cell belongs to the last ``## `` heading above it; an unnumbered one
    (``## Exercises``) ends the numbered section before it.
    """
    sections: dict[str, list[str]] = {}
    current = None
    for cell in cells:
        if cell.cell_type == "markdown":
            for line in FENCE.sub("", cell.source).splitlines():
                if line.startswith("## "):
                    numbered = NUMBERED_SECTION.match(line)
                    current = numbered.group(1) if numbered else None
                    if current is not None:
                        sections.setdefault(current, [])
        elif cell.cell_type == "code" and current is not None:
            sections[current].append(cell.source)
    return sections


def chapter_sections() -> dict[str, dict[str, list[str]]]:
    """Notebook number ("01") -> its sections, read from chapters/NN_*.ipynb."""
    return {path.name[:2]: code_by_section(nbformat.read(path, as_version=4).cells)
            for path in sorted((ROOT / "chapters").glob("0[0-9]_*.ipynb"))}


def problems_in_rows(rows: list[dict[str, str]], chapters: dict) -> list[str]:
    """What is wrong with the rows, given the chapters' sections (empty when all is well)."""
    problems = []
    for number, row in enumerate(rows, start=1):
        name = f"row {number} ({row['claim'][:60]}...)"
        kind = kind_of(row)
        if kind is None:
            problems.append(f"{name}: the 'how' column must start with one of "
                            + ", ".join(f"**{k}**" for k in KINDS))
        for notebook, section in REFERENCE.findall(" ".join(row.values())):
            if section not in chapters.get(notebook, {}):
                problems.append(f"{name}: names `{notebook}` §{section}, but chapter {notebook} "
                                f"has no heading '## {section}.'; fix the reference")
        if kind == "checked":
            where = REFERENCE.findall(row["where"])
            if not where:
                problems.append(f"{name}: a checked row must name its section(s) in 'where'")
            for notebook, section in where:
                code = chapters.get(notebook, {}).get(section)
                if code is not None and not any(m in src for src in code for m in CHECK_MARKS):
                    problems.append(
                        f"{name}: says checked, but `{notebook}` §{section} has no code cell "
                        "with 'claim(' or 'assert'; mark it shown, or add the check")
    return problems


def count_problem(section: str, rows: list[dict[str, str]]) -> str | None:
    """A message when the count line is missing or disagrees with the rows."""
    line = COUNT_LINE.search(section)
    if line is None:
        return ("no count line 'N of M claims are checked by the notebooks, S shown without a "
                "check, E explained, U not covered.' under the table")
    counts = Counter(kind_of(row) for row in rows)
    expected = (counts["checked"], len(rows), counts["shown"], counts["explained"],
                counts["not covered"])
    stated = tuple(int(g) for g in line.groups())
    if stated != expected:
        return f"the count line says {stated}, the table has {expected} (checked, rows, " \
               "shown, explained, not covered); update the line"
    return None


@pytest.fixture(scope="module")
def section() -> str:
    return readme_section(README.read_text(encoding="utf-8"))


def test_table_covers_every_source_section(section):
    rows = table_rows(section)
    covered = {row["section"] for row in rows}
    missing = {"3.1", "3.2", "3.3", "3.4", "3.5", "3.6"} - covered
    assert not missing, f"the README's claims table has no row for source section(s) {missing}"


def test_rows_name_existing_sections_and_checked_rows_have_checks(section):
    problems = problems_in_rows(table_rows(section), chapter_sections())
    assert not problems, "README claims table:\n" + "\n".join(problems)


def test_count_line_matches_the_table(section):
    problem = count_problem(section, table_rows(section))
    assert problem is None, problem


def _notebook(*cells):
    return [nbformat.v4.new_markdown_cell(s) if kind == "md" else nbformat.v4.new_code_cell(s)
            for kind, s in cells]


def _row(where, how):
    return {"section": "3.1", "claim": "a claim", "verdict": "right", "where": where, "how": how}


def test_sections_end_at_an_unnumbered_heading_and_ignore_fenced_code():
    cells = _notebook(("md", "## 1. First"), ("code", "x = 1"),
                      ("md", "## 8½. Half\n```bash\n## 9. not a heading\n```"),
                      ("code", "assert x"), ("md", "## Exercises"), ("code", "claim(1)"))
    assert code_by_section(cells) == {"1": ["x = 1"], "8½": ["assert x"]}


def test_checker_rejects_a_missing_section_and_an_unchecked_checked_row():
    chapters = {"01": code_by_section(_notebook(("md", "## 1. A"), ("code", "print(1)"),
                                                ("md", "## 2. B"), ("code", "assert True")))}
    assert problems_in_rows([_row("`01` §2", "**checked**: the assert"),
                             _row("`01` §1", "**shown**: printed")], chapters) == []
    unchecked = problems_in_rows([_row("`01` §1", "**checked**: nothing")], chapters)
    assert len(unchecked) == 1 and "no code cell with 'claim(' or 'assert'" in unchecked[0]
    missing = problems_in_rows([_row("`01` §3", "**explained**")], chapters)
    assert len(missing) == 1 and "no heading '## 3.'" in missing[0]
    assert "must start with" in problems_in_rows([_row("`01` §1", "shown")], chapters)[0]


def test_count_check_rejects_a_stale_count_line():
    rows = [_row("`01` §1", "**checked**: a"), _row("`01` §1", "**shown**: b")]
    good = "1 of 2 claims are checked by the notebooks, 1 shown without a check, " \
           "0 explained, 0 not covered."
    assert count_problem(good, rows) is None
    assert "update the line" in count_problem(good.replace("1 of 2", "2 of 2"), rows)
    assert "no count line" in count_problem("", rows)
