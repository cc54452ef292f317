"""Comparison modes: tolerances, structure, order-free sets, and messages and
masks that point at the actual mismatch."""

import numpy as np
import pytest

from autograder.compare import compare


def test_allclose_accepts_within_tolerance_and_rejects_just_outside():
    expected = np.array([1.0, 100.0])
    rtol, atol = 1e-3, 1e-6
    inside = expected + (atol + rtol * np.abs(expected)) * 0.9
    outside = expected + (atol + rtol * np.abs(expected)) * 1.1
    assert compare(expected, inside, "allclose", rtol, atol).ok
    assert not compare(expected, outside, "allclose", rtol, atol).ok


def test_the_mask_marks_exactly_the_elements_outside_tolerance():
    rng = np.random.default_rng(0)
    expected = rng.normal(size=(4, 5))
    got = expected.copy()
    bad = [(0, 3), (2, 1), (3, 4)]
    for i in bad:
        got[i] += 0.5
    result = compare(expected, got, "allclose", 1e-6, 1e-8)
    assert not result.ok
    assert sorted(map(tuple, np.argwhere(result.mask).tolist())) == bad
    assert "3 of 20 elements differ" in result.message and "[0, 3]" in result.message


def test_nan_matches_nan_but_not_a_number():
    assert compare(np.array([np.nan, 1.0]), np.array([np.nan, 1.0])).ok
    assert not compare(np.array([np.nan]), np.array([0.0])).ok


@pytest.mark.parametrize("expected, got, words", [
    (np.zeros((2, 3)), np.zeros((3, 2)), "expected shape (2, 3), got shape (3, 2)"),
    ({"w": 1.0, "b": 2.0}, {"w": 1.0}, "missing keys ['b']"),
    ({"w": 1.0}, {"w": 1.0, "x": 0}, "unexpected keys ['x']"),
    ([1, 2, 3], [1, 2], "expected 3 items, got 2"),
    ({"g": [np.ones(2), np.ones(2)]}, {"g": [np.ones(2), np.zeros(2)]}, "at ['g'][1]"),
    (True, 1, "expected a bool"),
    ("relu", "ReLU", "expected 'relu', got 'ReLU'"),
    (None, 0, "expected a None"),
    (1.0, "1.0", "expected a number"),
])
def test_structural_mismatches_name_the_place_and_the_difference(expected, got, words):
    result = compare(expected, got)
    assert not result.ok and words in result.message, result.message


def test_lists_and_tuples_alike_and_a_list_of_numbers_may_stand_for_an_array():
    assert compare((1.0, [2.0, 3.0]), [1.0, (2.0, 3.0)]).ok
    assert compare(np.array([1.0, 2.0]), [1.0, 2.0]).ok
    assert not compare(np.array([1.0, 2.0]), [1.0, "2"]).ok


def test_equal_mode_is_exact():
    assert compare([1, 2], [1, 2], "equal").ok
    assert not compare(np.array([1.0]), np.array([1.0 + 1e-12]), "equal").ok
    assert compare(np.array([1.0]), np.array([1.0 + 1e-12]), "allclose").ok


def test_set_mode_ignores_order_but_counts_repeats():
    assert compare([[1, 2], [3]], [[3], [1, 2]], "set").ok
    assert not compare([1, 1, 2], [1, 2], "set").ok
    result = compare([1, 2, 3], [3, 4, 1], "set")
    assert "missing [2]" in result.message and "unexpected [4]" in result.message


def test_custom_comparison():
    def same_parity(expected, got):
        return (expected % 2 == got % 2, "wrong parity")

    assert compare(4, 10, same_parity).ok
    result = compare(4, 3, same_parity)
    assert not result.ok and result.message == "wrong parity"
