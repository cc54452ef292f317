"""vizkit.graph_figures: the plotted numbers come from the timings, and the
picture and the words say the same."""

import pytest

from vizkit.graph_figures import overhead_figure, overhead_series, overhead_summary
from vizkit.timing import Timing

SIZES = [8, 4096]
ROWS = [{"fast": Timing(2e-6, 1e-6, 4e-6, 7), "slow": Timing(10e-6, 9e-6, 12e-6, 7)},
        {"fast": Timing(5e-6, 4e-6, 5.5e-6, 7), "slow": Timing(40e-6, 30e-6, 41e-6, 7)}]
LABELS = {"slow": "the slow one", "fast": "the fast one"}


def test_series_are_microseconds_with_distances_to_the_iqr_ends():
    slow, fast = overhead_series(SIZES, ROWS, LABELS)
    assert slow["name"] == "the slow one" and fast["name"] == "the fast one"
    assert slow["x"] == SIZES
    assert slow["median"] == pytest.approx([10, 40])
    assert slow["below"] == pytest.approx([1, 10]) and slow["above"] == pytest.approx([2, 1])
    assert fast["median"] == pytest.approx([2, 5]) and fast["below"] == pytest.approx([1, 1])


def test_series_refuse_sizes_and_rows_of_different_lengths():
    with pytest.raises(ValueError, match="2 sizes but 1 rows"):
        overhead_series(SIZES, ROWS[:1], LABELS)


def test_figure_draws_each_series_with_its_error_bars_on_log_axes():
    fig = overhead_figure(SIZES, ROWS, LABELS)
    assert [t.name for t in fig.data] == ["the slow one", "the fast one"]
    assert list(fig.data[0].y) == pytest.approx([10, 40])
    assert list(fig.data[0].error_y.arrayminus) == pytest.approx([1, 10])
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"


def test_summary_names_every_variant_at_both_ends():
    text = overhead_summary(SIZES, ROWS, LABELS)
    assert "8 elements: the slow one 10 µs (IQR 9 µs–12 µs)" in text
    assert "4096 elements:" in text and "the fast one 5 µs (IQR 4 µs–5.5 µs)" in text


def test_chinese_summary_and_axes_keep_every_timing(in_both_languages):
    english, chinese = in_both_languages(lambda: overhead_summary(SIZES, ROWS, LABELS))
    assert "8 个元素：the slow one 10 µs (IQR 9 µs–12 µs)" in chinese
    assert "中位数" in chinese and "四分位距" in chinese
    fig = in_both_languages(lambda: overhead_figure(SIZES, ROWS, LABELS))[1]
    assert fig.layout.xaxis.title.text == "元素个数" and "中位数" in fig.layout.title.text
    assert list(fig.data[0].y) == pytest.approx([10, 40])
