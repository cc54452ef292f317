"""Chinese typography of the Chinese edition, checked: one set of rules for every
Chinese text the course shows (chapter and lab catalogs, README.zh-CN.md).

    python tools/zh_typography.py            # list every problem, exit 1 when there is one
    python tools/zh_typography.py --fix      # first make the mechanical fixes, then list the rest

The rules (the ones d2l-zh and most Chinese technical books follow):

* **full-width punctuation** in Chinese text: a comma, colon, semicolon, question
  or exclamation mark, or a parenthesis next to a Chinese character is the
  full-width one (，：；？！（）); ASCII ones stay in code, maths and English;
* **×** between the numbers of a shape or size ("512 × 10"), not the letter x;
* **～** for a range of numbers ("8～16 倍"), not a hyphen or dash;
* **one digit grouping**: thousands separated by commas ("16,384"), never by spaces;
* **%** right after its number ("25%"), without a space;
* **one title style** for numbered chapters and labs: "# 第 N 章 · 标题", "# 实验 N · 标题";
* **no bold around punctuation**: ``**`` does not open after, or close before, a
  punctuation mark ("**、损失缩放**" bolds the comma).

Code spans, fenced code, ``$maths$`` and link targets are not prose and are skipped.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CJK = "\u4e00-\u9fff"
NOT_PROSE = re.compile(r"```.*?```|`[^`\n]*`|\$\$.*?\$\$|\$[^$\n]*\$|\]\([^)]*\)|<[^>\n]*>",
                       re.DOTALL)
RULES = [
    ("ASCII punctuation next to Chinese text: use ，：；？！",
     re.compile(rf"[{CJK}][,;:?!](?=\s|$|[{CJK}])|[,;:?!]\s*[{CJK}]")),
    ("ASCII parenthesis next to Chinese text: use （）",
     re.compile(rf"[{CJK}]\(|\)[{CJK}]|(?<![A-Za-z0-9_])\([{CJK}][^()]*\)")),
    ("the letter x between the numbers of a size: use ×", re.compile(r"\b(?!0x)\d+\s*x\s*\d+\b")),
    ("a hyphen or dash for a range of numbers: use ～",
     re.compile(r"\b\d+(?:\.\d+)?\s*[-–—]\s*\d+(?:\.\d+)?\s*(?:倍|个|步|层|字节|秒|毫秒|位|次|%)")),
    ("thousands grouped by spaces: group them with commas (16,384)",
     re.compile(r"(?<![\d.,])\d{1,3}(?: \d{3})+(?![\d.])")),
    ("a space before %: write 25%", re.compile(r"\d\s+%")),
]
BOLD = re.compile(r"\*\*([^*\n]+?)\*\*")   # left to right, so each pair is one bold span
PUNCTUATION = "、，。：；？！"
BOLD_RULE = "bold around punctuation: keep the mark outside **…**"
TITLE = re.compile(r"^# (?:第 \d+ 章|实验 \d+) · \S")
NUMBERED_TITLE = re.compile(r"^#\s+(?:第\s*\d+\s*章|实验\s*\d+|\d+\s*[·—-])")


@dataclass(frozen=True)
class Problem:
    where: str
    rule: str
    text: str

    def __str__(self) -> str:
        return f"{self.where}: {self.rule}: …{self.text}…"


def prose(text: str) -> str:
    """``text`` with code, maths, HTML tags and link targets blanked out."""
    return NOT_PROSE.sub(lambda m: " " * len(m.group(0)), text)


def problems(text: str, where: str) -> list[Problem]:
    """Every rule ``text`` (Chinese markdown or a displayed string) breaks."""
    found = []
    plain = prose(text)
    for rule, pattern in RULES:
        for match in pattern.finditer(plain):
            start, end = max(0, match.start() - 12), min(len(text), match.end() + 12)
            found.append(Problem(where, rule, text[start:end].replace("\n", " ")))
    for match in BOLD.finditer(plain):
        inner = match.group(1)
        if inner[0] in PUNCTUATION or inner[-1] in PUNCTUATION:
            found.append(Problem(where, BOLD_RULE, match.group(0)))
    for heading in (line for line in text.splitlines() if line.startswith("# ")):
        if NUMBERED_TITLE.match(heading) and not TITLE.match(heading):
            found.append(Problem(where, "title: write '# 第 N 章 · 标题' or '# 实验 N · 标题'",
                                 heading))
    return found


# the mechanical fixes, in prose only: (pattern, replacement)
FIXES = [
    (re.compile(r"(\d)\s+%"), r"\1%"),
    (re.compile(r"(?<![\d.,])(\d{1,3})((?: \d{3})+)(?![\d.])"),
     lambda m: m.group(1) + m.group(2).replace(" ", ",")),
    (re.compile(r"\b(?!0x)(\d+)(\s*)x(\s*)(\d+)\b"), r"\1\2×\3\4"),
    (re.compile(r"\b(\d+(?:\.\d+)?)\s*[-–—]\s*(\d+(?:\.\d+)?)(\s*(?:倍|个|步|层|字节|秒|毫秒|位|次|%))"),
     r"\1～\2\3"),
    (BOLD, lambda m: _punctuation_outside(m.group(1))),
    (re.compile(rf"(?<=\*\*)([{PUNCTUATION}]+) +"), r"\1"),   # no space after a full-width mark
    (re.compile(r"^# (?:第 (\d+) 章|0?(\d+)) [·—-] ", re.MULTILINE),
     lambda m: f"# 第 {m.group(1) or m.group(2)} 章 · "),
]


def _punctuation_outside(inner: str) -> str:
    """One bold span, its leading and trailing punctuation moved outside the ``**``."""
    body = inner.strip(PUNCTUATION)
    if not body:
        return f"**{inner}**"
    lead = inner[:len(inner) - len(inner.lstrip(PUNCTUATION))]
    trail = inner[len(inner.rstrip(PUNCTUATION)):]
    return f"{lead}**{body}**{trail}"


def fixed(text: str) -> str:
    """``text`` with the mechanical fixes made in its prose; code, maths and link
    targets untouched."""
    spans, last, out = [m.span() for m in NOT_PROSE.finditer(text)], 0, []
    for start, end in [*spans, (len(text), len(text))]:
        piece = text[last:start]
        for pattern, replacement in FIXES:
            piece = pattern.sub(replacement, piece)
        out += [piece, text[start:end]]
        last = end
    return "".join(out)


def fix_file(path: Path) -> None:
    """Make the mechanical fixes in one catalog's Chinese or in a markdown file."""
    if path.suffix != ".json":
        path.write_text(fixed(path.read_text(encoding="utf-8")), encoding="utf-8")
        return
    catalog = json.loads(path.read_text(encoding="utf-8"))
    for entry in catalog.get("cells", {}).values():
        if entry.get("zh"):
            entry["zh"] = fixed("\n".join(entry["zh"])).split("\n")
    for entries in catalog.get("strings", {}).values():
        for entry in entries:
            if entry.get("zh") and not entry.get("keep"):
                entry["zh"] = fixed(entry["zh"])
    path.write_text(json.dumps(catalog, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def literal_text(source: str) -> str:
    """The text a displayed Python literal shows (its pieces joined), roughly: what
    lies between its quotes, with f-string fields kept as they are."""
    pieces = re.findall(r'[rRfFbB]*"((?:[^"\\]|\\.)*)"|[rRfFbB]*\'((?:[^\'\\]|\\.)*)\'', source)
    return "".join(a or b for a, b in pieces)


def catalog_problems(path: Path) -> list[Problem]:
    """The problems of one catalog's Chinese: its markdown cells and its literals."""
    catalog = json.loads(path.read_text(encoding="utf-8"))
    name = path.relative_to(ROOT).as_posix()
    found = []
    for cell_id, entry in catalog.get("cells", {}).items():
        if entry.get("zh"):
            found += problems("\n".join(entry["zh"]), f"{name} cell {cell_id}")
    for cell_id, entries in catalog.get("strings", {}).items():
        for entry in entries:
            if entry.get("zh") and not entry.get("keep"):
                found += problems(literal_text(entry["zh"]), f"{name} strings {cell_id}")
    return found


def chinese_texts() -> list[Path]:
    """Every file of the Chinese edition this module checks."""
    return (sorted((ROOT / "chapters" / "zh" / "catalog").glob("*.json"))
            + sorted((ROOT / "labs").glob("*/source.zh.json"))
            + [ROOT / "README.zh-CN.md"])


def all_problems() -> list[Problem]:
    found = []
    for path in chinese_texts():
        if path.suffix == ".json":
            found += catalog_problems(path)
        else:
            found += problems(path.read_text(encoding="utf-8"), path.name)
    return found


def main(argv: list[str]) -> int:
    paths = [ROOT / a for a in argv if a != "--fix"] or chinese_texts()
    if "--fix" in argv:
        for path in paths:
            fix_file(path)
    found = all_problems()
    for problem in found:
        print(problem)
    print(f"{len(found)} typography problem(s) in {len(chinese_texts())} file(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
