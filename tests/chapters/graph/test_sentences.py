"""The sentences (and a table's column heads) chapter 1's helpers print follow the
course's language: English exactly as before, Chinese under ``set_language("zh")``,
the same numbers in both."""

import re
import unicodedata

import numpy as np
import pytest

from chapters.graph import plan_memory, trace
from chapters.graph.ablation import pass_label
from chapters.graph.fx_compare import side_by_side
from chapters.graph.memory import SUMMARY
from chapters.graph.passes import PIPELINE, PassReport
from chapters.graph.passes.report import TEXTS
from chapters.language import LANGUAGES, set_language

CHINESE = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(autouse=True)
def _english(english_by_default):
    """Each test starts and ends with no language chosen (English)."""


def numbers_in(text: str) -> list[str]:
    return sorted(re.findall(r"\d+(?:\.\d+)?", text))


def chain(x):
    a = x.tanh()
    b = a * 2.0
    return (b.exp() - a).sum(dim=1)


X = np.ones((256, 512), np.float32)  # 512 KiB per float32 intermediate


def test_memory_summary_in_english_is_unchanged():
    # tanh, mul, exp, sub: four 512 KiB values; a (tanh) lives until sub, so at most three
    # are alive at once, and the plan needs two buffers (exp's result can go into b's)
    plan = plan_memory(trace(chain, X))
    assert plan.summary() == ("4 intermediates in 2 buffers: naive 2048.0 KiB, freed at last "
                              "use 1536.0 KiB peak, planned 1024.0 KiB")


def test_memory_summary_speaks_chinese_with_the_same_numbers():
    plan = plan_memory(trace(chain, X))
    english = plan.summary()
    set_language("zh")
    chinese = plan.summary()
    assert CHINESE.search(chinese) and "缓冲区" in chinese
    assert numbers_in(chinese) == numbers_in(english)


def test_every_language_has_a_memory_summary():
    assert set(SUMMARY) == set(LANGUAGES)


REPORT = PassReport("constant folding", removed=[f"n{k}" for k in range(10)], added=["c_1"])


def test_pass_report_in_english_is_unchanged():
    assert str(REPORT) == ("constant folding: removed 10 node(s) (n0, n1, n2, n3, n4, n5, n6, n7, "
                           "...); added c_1")
    assert str(PassReport("dead-code elimination")) == "dead-code elimination: removed 0 node(s)"


def test_pass_report_speaks_chinese():
    set_language("zh")
    assert str(REPORT) == ("常量折叠：删除了 10 个节点（n0、n1、n2、n3、n4、n5、n6、n7、……）；"
                           "新增 c_1")


def test_a_pass_without_a_chinese_name_keeps_its_own():
    set_language("zh")
    assert str(PassReport("my pass", removed=["x"])) == "my pass：删除了 1 个节点（x）"


def test_pass_report_tables_have_the_same_keys_and_name_every_pipeline_pass():
    assert set(TEXTS) == set(LANGUAGES)
    assert set(TEXTS["en"]) == set(TEXTS["zh"])
    assert {pass_label(one_pass) for one_pass in PIPELINE} <= set(TEXTS["zh"]["names"])


def scaled_tanh(x):
    return (x * 2.0).tanh()


def columns(line: str) -> int:
    """Monospace columns of ``line``, counted here apart from the module under test."""
    return sum(2 if unicodedata.east_asian_width(char) in "WF" else 1 for char in line)


def test_fx_side_by_side_heads_its_columns_in_the_course_language_and_stays_aligned():
    graph = trace(scaled_tanh, np.ones(3))
    english = side_by_side(scaled_tanh, graph).splitlines()
    set_language("zh")
    chinese = side_by_side(scaled_tanh, graph).splitlines()
    assert english[0].split() == ["our", "node", "our", "op", "torch.fx", "node", "torch.fx",
                                  "target"]
    assert chinese[0].split() == ["我们的节点", "我们的算子", "torch.fx", "节点", "torch.fx",
                                  "目标"]
    for table in (english, chinese):  # every row pads every column: one width per table
        assert len({columns(line) for line in table}) == 1, table
