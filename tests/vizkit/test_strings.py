"""Every vizkit string table: both languages have the same keys and placeholders,
and each Chinese text uses the glossary's term wherever its English text names one
(chapters/zh/glossary.json, the rule the Chinese chapters follow)."""

import importlib
import json
import re
import string
from pathlib import Path

import pytest

from vizkit.strings import check_table

ROOT = Path(__file__).resolve().parents[2]
GLOSSARY = json.loads((ROOT / "chapters" / "zh" / "glossary.json").read_text("utf-8"))["terms"]
TABLES = {"figures": "TEXT", "memory_views": "TEXT", "graph_figures": "TEXT",
          "autodiff_figures": "TEXT", "gradient_flow": "TEXT", "comm_views": "TEXT",
          "distributed_figures": "TEXT", "number_formats": "TEXT", "amp_figures": "TEXT",
          "execution_stepper": "TEXT", "graphviz_views": "SUMMARY_TEXT",
          "autograd_views": "TEXT", "gpt_figures": "TEXT"}


def pairs(english, chinese, where=""):
    """(where, English text, Chinese text) for every leaf of two parallel tables."""
    if isinstance(english, dict):
        for key, value in english.items():
            if key in chinese:
                yield from pairs(value, chinese[key], f"{where}.{key}")
    elif isinstance(english, tuple):
        for i, (e, c) in enumerate(zip(english, chinese, strict=True)):
            yield from pairs(e, c, f"{where}[{i}]")
    else:
        yield where, english, chinese


def placeholders(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def glossary_terms(text: str) -> set[str]:
    """The glossary terms ``text`` names in prose (placeholders and code such as
    ``optimizer.step()`` left out)."""
    prose = re.sub(r"\{[^}]*\}|\w+(?:\.\w+)+(?:\(\w*\))?|\w+\(\w*\)", " ", text)
    plain = prose.lower().replace("-", " ").replace("_", " ")
    return {term for term in GLOSSARY
            if re.search(rf"(?<![\w.]){re.escape(term)}(s|es)?(?![\w(])", plain)}


@pytest.mark.parametrize("module", sorted(TABLES))
def test_chinese_table_matches_the_english_one(module):
    table = getattr(importlib.import_module(f"vizkit.{module}"), TABLES[module])
    check_table(table)
    for where, english, chinese in pairs(table["en"], table["zh"]):
        if not isinstance(english, str):
            continue
        assert placeholders(english) == placeholders(chinese), f"{module}{where}"
        missing = {term: GLOSSARY[term] for term in glossary_terms(english)
                   if GLOSSARY[term] not in chinese}
        assert not missing, f"{module}{where}: {chinese!r} lacks the glossary terms {missing}"


def test_check_table_names_the_missing_keys():
    with pytest.raises(KeyError, match=r"missing \['b'\]"):
        check_table({"en": {"a": 1, "b": 2}, "zh": {"a": 1}})
