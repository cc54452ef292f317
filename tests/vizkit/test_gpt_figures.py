"""Chapter 6's loss figure: one line and one set of markers per run, named in the
course's language, and a summary with each run's first and last loss."""

import pytest

from chapters.language import set_language
from vizkit.gpt_figures import loss_figure, loss_summary

HISTORY = {"loss": [4.5, 3.9, 3.4], "val": [[3, 3.6]]}


@pytest.fixture
def chinese():
    set_language("zh")
    yield
    set_language(None)


def test_each_run_has_a_training_line_and_held_out_markers():
    fig = loss_figure({"engines": HISTORY, "torch": {**HISTORY, "val": []}})
    assert [(t.name, t.mode) for t in fig.data] == [
        ("engines: training loss", "lines"), ("engines: held-out loss", "markers"),
        ("torch: training loss", "lines")]
    assert list(fig.data[1].x) == [3] and fig.layout.xaxis.title.text == "step"
    assert loss_summary({"engines": HISTORY}) == "engines: 4.500 -> 3.400 in 3 steps."


def test_the_chinese_figure_speaks_chinese(chinese):
    fig = loss_figure({"engines": HISTORY})
    assert fig.data[0].name == "引擎：训练损失" and fig.layout.title.text.startswith("综合实战")
    assert loss_summary({"engines": HISTORY}) == "引擎：3 步内从 4.500 降到 3.400。"
