"""The Chinese edition's typography (tools/zh_typography.py): every rule catches
what it names and leaves code, maths and correct text alone; the mechanical fixes
make the text pass; and every Chinese text of the course passes."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from .harness import ROOT

spec = importlib.util.spec_from_file_location("zh_typography", ROOT / "tools" / "zh_typography.py")
typography = sys.modules["zh_typography"] = importlib.util.module_from_spec(spec)
spec.loader.exec_module(typography)

WRONG = {
    "ASCII punctuation": "梯度相加, 再更新",
    "ASCII parenthesis": "混合精度(mixed precision)训练",
    "the letter x": "输入是 512 x 10 的 logits",
    "a hyphen or dash": "这 8-16 倍的差距",
    "thousands grouped by spaces": "一条 5 000 个算子的链",
    "a space before %": "误差达到 100 %",
    "bold around punctuation": "四个概念**、损失缩放**和",
}
RIGHT = ["梯度相加，再更新", "混合精度（mixed precision）训练", "输入是 512 × 10 的 logits",
         "这 8～16 倍的差距", "一条 5,000 个算子的链", "误差达到 100%", "四个概念、**损失缩放**和",
         "代码 `f(x, y)` 和公式 $a - b$ 不算正文", "log2(损失缩放) 是函数记号", "0x3C00 是十六进制"]


@pytest.mark.parametrize("rule", WRONG)
def test_each_rule_catches_what_it_names(rule):
    found = typography.problems(WRONG[rule], "sample")
    assert [p.rule for p in found if p.rule.startswith(rule)], (rule, found)


@pytest.mark.parametrize("text", RIGHT)
def test_correct_text_code_and_maths_pass(text):
    assert typography.problems(text, "sample") == []


def test_one_title_style_for_numbered_chapters_and_labs():
    assert typography.problems("# 第 2 章 · 自动微分\n\n# 实验 1 · 计算图", "t") == []
    assert typography.problems("# 实验 1 — 计算图", "t")
    for title in ("# 第 2 章 — 自动微分", "# 05 · 综合实战"):
        assert typography.problems(title, "t")
        assert typography.fixed(title).startswith("# 第 ")
        assert typography.problems(typography.fixed(title), "t") == []


@pytest.mark.parametrize("rule", [r for r in WRONG if not r.startswith("ASCII")])
def test_the_mechanical_fixes_make_the_text_pass(rule):
    assert typography.problems(typography.fixed(WRONG[rule]), "sample") == []



def test_every_chinese_text_of_the_course_passes():
    found = typography.all_problems()
    assert not found, (f"{len(found)} typography problem(s); `python tools/zh_typography.py "
                       "--fix` makes the mechanical fixes:\n" + "\n".join(map(str, found[:40])))
