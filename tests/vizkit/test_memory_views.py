"""vizkit.memory_views' working-set bars: the data, the picture and the words agree."""

from types import SimpleNamespace

import pytest

from vizkit.memory_views import working_set_figure, working_set_rows, working_set_summary

USES = {"eager": SimpleNamespace(persistent=0, per_call=4096),
        "planned": SimpleNamespace(persistent=2048, per_call=1024)}


def test_rows_split_persistent_and_per_call_and_compare_with_the_first():
    rows = working_set_rows(USES)
    assert [r["name"] for r in rows] == ["eager", "planned"]
    assert rows[1]["persistent_kib"] == 2 and rows[1]["per_call_kib"] == 1
    assert rows[1]["total_kib"] == 3 and rows[1]["relative"] == pytest.approx(0.75)
    assert rows[0]["relative"] == 1


def test_figure_stacks_the_two_parts_per_run():
    fig = working_set_figure(USES)
    assert fig.layout.barmode == "stack"
    persistent, per_call = fig.data
    assert list(persistent.x) == ["eager", "planned"] and list(persistent.y) == [0, 2]
    assert list(per_call.y) == [4, 1]


def test_summary_states_the_numbers_of_the_figure():
    text = working_set_summary(USES)
    assert "planned: 2 KiB persistent + 1 KiB per call = 3 KiB (0.75x eager)" in text
    assert "eager: 0 KiB persistent + 4 KiB per call = 4 KiB (1.00x eager)" in text


def test_chinese_summary_uses_the_glossary_terms_and_the_same_numbers(in_both_languages):
    english, chinese = in_both_languages(lambda: working_set_summary(USES))
    assert "常驻 2 KiB + 每次调用 1 KiB = 3 KiB（eager 的 0.75x）" in chinese
    assert "工作集" in chinese and "persistent" not in chinese


def test_chinese_figure_labels_its_bars_in_chinese(in_both_languages):
    english, chinese = in_both_languages(lambda: working_set_figure(USES))
    assert [t.name for t in chinese.data] == ["常驻（只分配一次）", "每次调用"]
    assert "工作集" in chinese.layout.title.text
    assert [list(t.y) for t in chinese.data] == [list(t.y) for t in english.data]
