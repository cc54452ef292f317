"""The data behind the mixed-precision figures, checked on small hand-made runs."""

import math

from vizkit.amp_figures import (
    half_precision_figure,
    half_precision_findings,
    half_precision_series,
    half_precision_summary,
)

MODES = ("float32", "float16 weights, no masters", "float16 + float32 masters")
ADAM = {MODES[0]: {"loss": [2.0, 1.5, 1.0]},
        MODES[1]: {"loss": [2.0, math.nan, math.inf]},
        MODES[2]: {"loss": [2.0, 1.6, 1.1]}}
SGD = {MODES[0]: {"lost": [0.0, 0.0, 0.0]},
       MODES[1]: {"lost": [0.5, 0.7, 0.6]},
       MODES[2]: {"lost": [0.0, 0.01, 0.02]}}


def test_findings_name_the_first_broken_step_and_the_lost_percentages():
    found = half_precision_findings(ADAM, SGD, MODES)
    assert found["first_nan"] == 1
    assert math.isclose(found["lost_bare"], 60.0)
    assert math.isclose(found["lost_master"], 1.0)
    assert found["final"] == {MODES[0]: 1.0, MODES[1]: math.inf, MODES[2]: 1.1}


def test_findings_without_a_broken_step():
    healthy = {**ADAM, MODES[1]: {"loss": [2.0, 1.9, 1.8]}}
    found = half_precision_findings(healthy, SGD, MODES)
    assert found["first_nan"] is None
    assert "ends at 1.800" in half_precision_summary(found, MODES)


def test_series_leave_gaps_for_non_finite_losses_and_put_sgd_on_the_second_axis():
    series = half_precision_series(ADAM, SGD, MODES)
    assert [s["name"] for s in series] == [f"Adam: {m}" for m in MODES] + [f"SGD: {m}"
                                                                          for m in MODES]
    assert series[1]["y"] == [2.0, None, None]
    assert [s["axis"] for s in series] == ["y"] * 3 + ["y2"] * 3
    assert series[4]["y"] == [50.0, 70.0, 60.0]


def test_figure_draws_every_series_and_summary_quotes_the_findings():
    fig = half_precision_figure(ADAM, SGD, MODES, adam_lr=1e-3, sgd_lr=0.01)
    assert len(fig.data) == 6
    assert fig.layout.yaxis2.overlaying == "y"
    text = half_precision_summary(half_precision_findings(ADAM, SGD, MODES), MODES)
    assert "turns NaN at step 1" in text and "60%" in text and "1.0%" in text
