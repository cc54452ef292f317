"""Interleaved timings keep their spread; faster() refuses overlapping ranges."""

import pytest

from vizkit.timing import Timing, faster, interleaved_medians


def test_timing_of_reports_median_and_interquartile_range():
    t = Timing.of([5.0, 1.0, 2.0, 4.0, 3.0])
    assert (t.median, t.low, t.high, t.rounds) == (3.0, 2.0, 4.0, 5)
    assert t.spread == pytest.approx(2 / 3)
    assert str(Timing.of([2e-3] * 5)) == "2 ms (IQR 2 ms–2 ms)"


def test_interleaved_medians_calls_round_robin_after_warmup():
    calls = []
    fns = {name: (lambda name=name: calls.append(name)) for name in "ab"}
    timings = interleaved_medians(fns, repeats=5, number=2, warmup=1)
    assert calls == ["a", "b"] + ["a", "a", "b", "b"] * 5
    assert set(timings) == {"a", "b"} and all(t.rounds == 5 for t in timings.values())


def test_interleaved_medians_reads_the_clock_it_is_given():
    ticks = iter(range(100))
    timings = interleaved_medians({"a": lambda: None}, repeats=5, number=2,
                                  clock=lambda: float(next(ticks)))
    assert timings["a"].median == 0.5          # each round: one tick for two calls


def test_interleaved_medians_needs_five_repeats():
    with pytest.raises(ValueError, match="at least 5 repeats"):
        interleaved_medians({"a": lambda: None}, repeats=3)


def test_faster_needs_separated_ranges_and_the_margin():
    quick, slow = Timing(1.0, 0.9, 1.1, 5), Timing(2.0, 1.8, 2.2, 5)
    assert faster(quick, slow) and not faster(slow, quick)
    assert faster(quick, slow, margin=1.5) and not faster(quick, slow, margin=2.0)
    noisy = Timing(1.0, 0.5, 1.9, 5)
    assert not faster(noisy, slow)
