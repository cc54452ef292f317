"""The data behind the mixed-precision figures, checked on small hand-made runs."""

import math

import numpy as np
import pytest

from chapters.capstone.side_by_side import RunResult
from chapters.language import set_language
from vizkit.amp_figures import (
    SCALER_LOOP_EDGES,
    SCALER_LOOP_NODES,
    SPREAD_FLOOR,
    engine_over_torch_figure,
    half_precision_figure,
    half_precision_findings,
    half_precision_series,
    half_precision_summary,
    held_bytes_figure,
    held_bytes_findings,
    lost_update_figure,
    lost_update_summary,
    lost_update_thresholds,
    overlay_series,
    replica_spread_figure,
    replica_spreads,
    runs_table,
    scale_and_skips_figure,
    scaler_loop_diagram,
    skip_markers,
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


# ------------------------------------------------------------ chapter 4

def test_lost_update_thresholds_read_the_levels_off_a_curve():
    x = [-13.0, -12.5, -12.0, -11.5, -11.0, -10.5]
    found = lost_update_thresholds(x, {"f": [1.0, 1.0, 0.995, 0.5, 0.005, 0.0],
                                       "never": [0.3, 0.3, 0.3, 0.3, 0.3, 0.3]})
    assert found["f"] == {"all_lost_up_to": -12.0, "none_lost_from": -11.0,
                          "half_lost_at": -11.5}
    assert found["never"]["all_lost_up_to"] is None and found["never"]["none_lost_from"] is None


def test_a_bump_after_the_threshold_moves_it():
    """'Every update lost up to x' must hold for all points up to x, not only at x."""
    found = lost_update_thresholds([0, 1, 2, 3], {"f": [1.0, 0.5, 1.0, 0.0]})
    assert found["f"]["all_lost_up_to"] == 0 and found["f"]["none_lost_from"] == 3


def test_lost_update_figure_and_summary():
    fractions = {"float16": [1.0, 0.5, 0.0], "bfloat16": [1.0, 1.0, 0.5]}
    fig = lost_update_figure([-12, -11.5, -11], fractions)
    assert [t.name for t in fig.data] == ["float16", "bfloat16"]
    text = lost_update_summary(lost_update_thresholds([-12, -11.5, -11], fractions))
    assert "float16 loses at least 99% of the updates up to 2**-12" in text
    assert "at most 1% from 2**-11 up" in text
    assert "bfloat16 loses at least 99% of the updates up to 2**-11.5 of the weight, about half " \
           "at 2**-11 and more than 1% at every ratio measured" in text


def test_scaler_loop_edges_join_known_nodes_and_the_skip_branch_is_drawn():
    names = set(SCALER_LOOP_NODES)
    assert all(tail in names and head in names for tail, head, _ in SCALER_LOOP_EDGES)
    source = scaler_loop_diagram().source
    assert 'unscale -> skip [label="inf / NaN"]' in source
    assert "unscale -> step [label=finite]" in source


# ------------------------------------------------------------ chapter 5

def _run(loss, scale, skipped, weights):
    return RunResult(np.asarray(loss, float), np.asarray(scale, float), np.asarray(skipped),
                     weights)


W = {"w": np.array([1.0, 2.0])}
RUNS = {"synced": {"engine": _run([2.0, 1.0], [8, 8], [False, False], [W, W]),
                   "torch": _run([2.0, 1.1], [8, 8], [False, False], [W, W])},
        "drifted": {"engine": _run([2.0, 1.0], [8, 4], [False, True],
                                   [W, {"w": np.array([1.0, 2.5])}]),
                    "torch": _run([2.0, np.nan], [8, 4], [False, True], [W, W])},
        "_p2p_seconds": [0.1]}


def test_overlay_series_puts_torch_under_the_engine():
    series = overlay_series({"fp16": ([1.0, 0.5], [1.0, 0.6], None)})
    assert [s["name"] for s in series] == ["PyTorch, fp16", "engine, fp16"]
    assert series[0]["line"]["width"] > series[1]["line"]["width"]
    assert series[0]["y"] == [1.0, 0.6] and series[1]["y"] == [1.0, 0.5]
    fig = engine_over_torch_figure({"fp16": ([1.0, 0.5], [1.0, 0.6], None)}, "t", "loss")
    assert len(fig.data) == 2


def test_replica_spreads_skip_private_entries_and_floor_zero():
    spreads = replica_spreads(RUNS)
    assert spreads["labels"] == ["synced", "drifted"]
    assert spreads["engine"] == [SPREAD_FLOOR, 0.5]
    assert spreads["torch"] == [SPREAD_FLOOR, SPREAD_FLOOR]
    assert len(replica_spread_figure(RUNS).data) == 2
    assert list(replica_spread_figure(RUNS).data[0].x) == ["synced", "drifted"]



def test_runs_table_has_a_row_per_run_and_ignores_non_finite_torch_losses():
    rows = runs_table(RUNS).splitlines()
    assert len(rows) == 4
    assert rows[2].startswith("| synced | 1.0000 | 1.1000 | 9.1e-02 | 0.0e+00 | 0.0e+00 | 0 / 0")
    assert "| drifted | 1.0000 | nan | 0.0e+00 | 5.0e-01 | 0.0e+00 | 1 / 1 |" == rows[3]


def test_runs_are_named_in_the_current_language(monkeypatch):
    chinese = {"synced": "同步", "drifted": "不同步"}
    monkeypatch.setattr("vizkit.strings._labels", lambda: chinese)
    set_language("zh")
    try:
        named = runs_table(RUNS).splitlines()
        bars = list(replica_spread_figure(RUNS).data[0].x)
    finally:
        set_language(None)
    assert named[2].startswith("| 同步 | 1.0000") and named[3].startswith("| 不同步 | 1.0000")
    assert bars == ["同步", "不同步"]


def test_held_bytes_findings():
    held = {"leak": [100, 200, 300], "no_grad": [0, 0, 0]}
    found = held_bytes_findings(held, "leak", budget_bytes=10_000, larger_by=10)
    assert found == {"per_iteration": 100, "last": 300, "iterations": 3, "to_budget": 100,
                     "to_budget_larger": 10, "others_stay_at_zero": True}
    assert len(held_bytes_figure(held).data) == 2


def test_findings_refuse_inputs_that_cannot_be_read():
    with pytest.raises(ValueError, match="one fraction per ratio"):
        lost_update_thresholds([0, 1], {"f": [1.0]})
    with pytest.raises(KeyError, match="the loops measured are"):
        held_bytes_findings({"leak": [1]}, "leek", budget_bytes=10)
    with pytest.raises(ValueError, match="does not leak"):
        held_bytes_findings({"no_grad": [0, 0]}, "no_grad", budget_bytes=10)


def test_skip_markers_sit_on_the_scale_curve():
    marks = skip_markers(RUNS["drifted"]["engine"])
    assert marks == {"steps": [1], "scales": [4.0]}
    fig = scale_and_skips_figure({"engine": RUNS["drifted"]["engine"]}, "scale")
    assert list(fig.data[1].x) == [1] and fig.layout.title.text == "scale"


def test_chinese_summaries_quote_the_same_findings(in_both_languages):
    found = half_precision_findings(ADAM, SGD, MODES)
    chinese = in_both_languages(lambda: half_precision_summary(found, MODES))[1]
    assert "在第 1 步变成 NaN" in chinese and "60% 的权重更新被舍入掉" in chinese
    assert "主权重" in chinese
    fractions = {"float16": [1.0, 0.5, 0.0], "bfloat16": [1.0, 1.0, 0.5]}
    thresholds = lost_update_thresholds([-12, -11.5, -11], fractions)
    chinese = in_both_languages(lambda: lost_update_summary(thresholds))[1]
    assert chinese.startswith("float16：更新量不超过权重的 2**-12 倍时，至少丢失 99% 的更新")
    assert "在测量的每个比值上丢失都超过 1%" in chinese


def test_chinese_diagram_legends_and_the_table_head(in_both_languages):
    english, chinese = in_both_languages(lambda: scaler_loop_diagram().source)
    assert "unscale -> skip [label=\"inf / NaN\"]" in chinese and "跳过这一步" in chinese
    assert "scaler.scale(loss)" in chinese and "Noto Sans CJK SC" in chinese
    series = in_both_languages(lambda: overlay_series({"fp16": ([1.0, 0.5], [1.0, 0.6], None)}))
    assert [s["name"] for s in series[1]] == ["PyTorch，fp16", "参考引擎，fp16"]
    assert [s["y"] for s in series[1]] == [s["y"] for s in series[0]]
    assert "最终损失，参考引擎" in in_both_languages(lambda: runs_table({}))[1]
