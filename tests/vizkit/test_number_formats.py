"""vizkit.number_formats: the figures carry the numbers they claim to show."""

import math

import numpy as np
import pytest

from chapters.amp.formats import FORMATS
from vizkit import number_formats as nf


def test_bit_layout_cells_spell_the_encoding():
    fig = nf.bit_layout_figure(-1.5, formats=("float16", "float8_e4m3fn"))
    by_kind = {}
    for trace in fig.data:
        by_kind.setdefault(trace.name, []).append("".join(trace.text))
    # float16 -1.5 = 1|01111|1000000000 ; e4m3fn -1.5 = 1|0111|100
    assert by_kind["sign"] == ["1", "1"]
    assert by_kind["exponent"] == ["01111", "0111"]
    assert by_kind["mantissa"] == ["1000000000", "100"]


def test_range_figure_spans_match_formats():
    fig = nf.range_figure(("float16", "bfloat16"))
    normal = [t for t in fig.data if t.name == "normal"]
    f16 = FORMATS["float16"]
    assert normal[0].base[0] == math.log2(f16.smallest_normal)
    assert normal[0].base[0] + normal[0].x[0] == pytest.approx(math.log2(f16.max))


def test_number_line_gaps_are_eps_times_magnitude():
    values = nf.representable_between("float16", 1.0, 2.0)
    assert values.size == 2**10 + 1
    np.testing.assert_allclose(np.diff(values), FORMATS["float16"].eps)
    f32 = nf.representable_between("float32", 1.0, 1.0 + 10 * 2**-23)
    assert f32.size == 11
    with pytest.raises(ValueError, match="narrow the interval"):
        nf.number_line_figure("float16", 0.0, 100.0)
    with pytest.raises(ValueError, match="0 <= low < high"):
        nf.representable_between("float16", 2.0, 1.0)


def test_histogram_vs_range_drops_zeros_and_marks_limits():
    fig = nf.histogram_vs_range({"grads": np.array([0.0, 1e-9, 1.0, np.inf])}, "float16")
    np.testing.assert_allclose(fig.data[0].x, np.log2([1e-9, 1.0]))
    xs = sorted(shape.x0 for shape in fig.layout.shapes)
    assert xs == [-24, -14, pytest.approx(math.log2(65504))]


def test_loss_scale_timeline_marks_overflow_steps():
    fig = nf.loss_scale_timeline([4.0, 8.0, 4.0, 4.0], overflow_steps=[2])
    assert list(fig.data[0].y) == [2, 3, 2, 2]
    assert list(fig.data[1].x) == [2]


def test_explorer_updates_its_table_when_the_value_changes():
    box = nf.format_explorer(0.1, formats=("float16",))
    text, slider = box.children[0].children
    table = box.children[1]
    assert "0|01011|1001100110" in table.value
    text.value = "65536"
    assert "inf" in table.value
    slider.value = 0.0  # log10 |x| = 0 -> 1.0
    assert "0|01111|0000000000" in table.value
    text.value = "abc"
    assert "not a number" in table.value


def test_chinese_figures_name_the_fields_and_keep_the_bits(in_both_languages):
    english, chinese = in_both_languages(
        lambda: nf.bit_layout_figure(-1.5, formats=("float16",)))
    assert [t.name for t in chinese.data] == ["符号位", "指数位", "尾数位"]
    assert [t.text for t in chinese.data] == [t.text for t in english.data]
    assert chinese.layout.annotations[0].text == "-1.5（normal，相对误差 0.0e+00）"
    assert "位布局" in chinese.layout.title.text
    chinese = in_both_languages(lambda: nf.loss_scale_timeline([4.0, 8.0, 4.0], [2]))[1]
    assert chinese.data[1].name == "溢出：跳过这一步，缩放因子减半"
    assert "损失缩放" in chinese.layout.title.text
    chinese = in_both_languages(lambda: nf.range_figure(("float16",)))[1]
    assert "动态范围" in chinese.layout.title.text and chinese.data[0].name == "次正规数"
    table = in_both_languages(lambda: nf.encoding_table_html(0.1, ("float16",)))[1]
    assert "<th>相对误差</th>" in table and "0|01011|1001100110" in table
