"""Text tables line up by display width: a Chinese character takes two columns."""

import pytest

from chapters.text_table import display_width, markdown_table, pad, text_table


def test_display_width_counts_cjk_characters_twice_and_ascii_once():
    assert display_width("finite diff") == len("finite diff")
    assert display_width("有限差分") == 8
    assert display_width("torch 节点") == 6 + 4
    assert display_width("") == 0


def test_pad_matches_str_format_for_ascii_and_fills_columns_for_chinese():
    for text in ("AD", "finite diff", "x"):
        assert pad(text, 12, ">") == f"{text:>12}"
        assert pad(text, 12) == f"{text:<12}"
    assert pad("有限差分", 12, ">") == " " * 4 + "有限差分"
    assert pad("too long for it", 4) == "too long for it"
    with pytest.raises(ValueError, match="align must be"):
        pad("x", 3, "^")


def test_text_table_columns_start_at_the_same_display_column_in_every_line():
    rows = [("前向", 1.5, "ok"), ("a much longer name", 12.25, "有限差分")]
    lines = text_table(rows, headers=("名称", "毫秒", "note")).split("\n")
    assert len(lines) == 4 and set(lines[1]) == {"-", " "}
    del lines[1]
    # right-aligned columns: each cell ends at the same display column in every line
    for column in (("毫秒", "1.5", "12.25"), ("note", "ok", "有限差分")):
        ends = {display_width(line[:line.index(cell) + len(cell)])
                for line, cell in zip(lines, column, strict=True)}
        assert len(ends) == 1, column
    assert lines[1].startswith("前向 ") and display_width(lines[1]) == display_width(lines[2])

def test_text_table_in_english_reads_like_the_format_specs_it_replaces():
    table = text_table([(5, "0.12ms"), (50, "1.50ms")], headers=("n", "AD"))
    assert table.split("\n") == [f"{'n':<2}  {'AD':>6}", "--  ------", f"{5:<2}  {'0.12ms':>6}",
                                 f"{50:<2}  {'1.50ms':>6}"]


def test_text_table_says_which_row_has_the_wrong_number_of_cells():
    with pytest.raises(ValueError, match="row 1 has 1 cells"):
        text_table([("a", 1), ("b",)], headers=("name", "value"))
    with pytest.raises(ValueError, match="align"):
        text_table([("a", 1)], headers=("name", "value"), align="<")


def test_markdown_table_has_a_head_a_rule_and_one_line_per_row():
    assert markdown_table([("a", "**b**")], headers=("情况", "选择")).split("\n") == [
        "| 情况 | 选择 |", "| --- | --- |", "| a | **b** |"]
    with pytest.raises(ValueError, match="2 cells"):
        markdown_table([("a",)], headers=("x", "y"))
