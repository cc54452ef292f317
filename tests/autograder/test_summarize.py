"""brief() and mismatch(): short, single-line, never raising, whatever the value."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from autograder.summarize import brief, clip, mismatch


def _deep(depth):
    value = []
    for _ in range(depth):
        value = [value]
    return value


def _self_referencing():
    a = [1]
    a.append(a)
    d = {}
    d["me"] = d
    return [a, d]


ODD = [
    pytest.param(2 ** 100_000, id="huge-int"),
    pytest.param(-(10 ** 5000), id="huge-negative-int"),
    pytest.param(_deep(100_000), id="deeply-nested"),
    pytest.param(_self_referencing(), id="self-referencing"),
    pytest.param(np.zeros(10 ** 7), id="huge-array"),
    pytest.param(np.array([1, 2 ** 200], dtype=object), id="object-array-with-huge-int"),
    pytest.param(np.array([(1, 2.0)], dtype=[("a", "i4"), ("b", "f8")]), id="structured"),
    pytest.param(np.array(["2020-01-01"], dtype="datetime64[D]"), id="datetime64"),
    pytest.param(np.array([b"x" * 500]), id="bytes-array"),
    pytest.param("x\n" * 10_000, id="long-multiline-str"),
    pytest.param({"k" * 300: [1.5] * 300}, id="long-dict"),
    pytest.param(object(), id="not-a-plain-value"),
]


@pytest.mark.parametrize("value", ODD)
@pytest.mark.parametrize("limit", [12, 80, 300])
def test_odd_values_get_a_short_single_line(value, limit):
    text = brief(value, limit=limit)
    assert 0 < len(text) <= limit
    assert "\n" not in text and "\r" not in text


@pytest.mark.parametrize(("value", "text"), [pytest.param(v, t, id=t[:40]) for v, t in [
    (None, "None"), (True, "True"), (3, "3"), (0.5, "0.5"), ("ab", "'ab'"),
    (np.float32(0.1), "np.float32(0.1)"),
    (np.array(3.5, dtype=np.float32), "array(3.5, dtype=float32)"),
    (np.array([1.0, 2.5]), "array([1.0, 2.5])"),
    (np.array([[1, 2], [3, 4]], dtype=np.int32), "array([[1, 2], [3, 4]], dtype=int32)"),
    (np.zeros((0, 3)), "array([], shape=(0, 3), dtype=float64)"),
    (np.array([0.1, 0.2], dtype=np.float32), "array([0.1, 0.2], dtype=float32)"),
    ((1,), "(1,)"), ({"a": [1, 2]}, "{'a': [1, 2]}"), (set(), "set()"),
    (2 ** 100_000, "<int with about 30104 digits>"),
]])
def test_plain_values_read_like_python(value, text):
    assert brief(value) == text


def test_a_big_array_is_summarised_by_dtype_shape_and_first_elements():
    text = brief(np.arange(400, dtype=np.float32), limit=60)
    assert text.startswith("float32 array of shape (400,): 0.0, 1.0, 2.0")
    assert text.endswith("...") and len(text) <= 60


def test_a_long_list_says_how_many_items_it_has():
    text = brief(list(range(1000)), limit=40)
    assert text.startswith("[0, 1, 2") and text.endswith("... (1000 items)]")
    assert len(text) <= 40


def test_a_nonsense_limit_falls_back_to_a_usable_one():
    assert brief([1, 2], limit="wide") == "[1, 2]"
    assert len(brief("x" * 100, limit=0)) <= 12


def test_clip_marks_the_cut():
    assert clip("abcdef", 10) == "abcdef"
    assert clip("abcdefghijkl", 8) == "abcde..."


_plain = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=50)
    | hnp.arrays(hnp.scalar_dtypes(), hnp.array_shapes(min_dims=0, max_dims=3, max_side=6)),
    lambda inner: st.lists(inner, max_size=6) | st.tuples(inner, inner)
    | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=20)


@settings(max_examples=150, deadline=None)
@given(value=_plain, limit=st.integers(min_value=-5, max_value=200))
def test_brief_never_raises_and_never_exceeds_its_limit(value, limit):
    text = brief(value, limit=limit)
    assert len(text) <= max(limit, 12) and "\n" not in text


@settings(max_examples=150, deadline=None)
@given(expected=_plain, got=_plain)
def test_mismatch_never_raises_and_stays_short(expected, got):
    text = mismatch(expected, got, limit=200)
    assert len(text) <= 200 and "\n" not in text


def test_mismatch_names_up_to_three_differing_elements_with_their_indices():
    expected = np.arange(6.0).reshape(2, 3)
    got = expected.copy()
    got[0, 1], got[1, 0], got[1, 1], got[1, 2] = 9.0, 9.0, 9.0, 9.0
    text = mismatch(expected, got, rtol=1e-6, atol=1e-8)
    assert text.startswith("4 of 6 elements differ; at [0, 1]: expected 1.0, got 9.0; "
                           "at [1, 0]: expected 3.0, got 9.0; at [1, 1]: expected 4.0, got 9.0")
    assert "[1, 2]" not in text and "..." in text and "rtol=1e-06" in text


def test_mismatch_reports_shape_and_dtype_differences_before_values():
    assert mismatch(np.zeros((2, 3)), np.zeros((3, 2))) == \
        "shape differs: expected (2, 3), got (3, 2)"
    assert mismatch(np.zeros(2, bool), np.zeros(2)) == "dtype differs: expected bool, got float64"


def test_mismatch_respects_the_tolerances_and_nan():
    assert mismatch(np.array([1.0, np.nan]), np.array([1.0 + 1e-9, np.nan])) == ""
    assert mismatch(1.0, 1.0 + 1e-9, rtol=0, atol=0) == "expected 1.0, got 1.000000001"
    assert mismatch(np.float32(0.1), np.float32(0.1)) == ""


def test_mismatch_walks_containers_to_the_first_difference():
    expected = [1.0, {"grad": np.zeros(3), "loss": 0.5}]
    got = [1.0, {"grad": np.array([0.0, 2.0, 0.0]), "loss": 0.5}]
    assert mismatch(expected, got) == ("at [1]['grad']: 1 of 3 elements differ; at [1]: "
                                       "expected 0.0, got 2.0 (rtol=1e-06, atol=1e-08)")
    assert mismatch({"a": 1}, {"b": 1}) == "missing keys ['a']; unexpected keys ['b']"
    assert mismatch([1, 2], [1]) == "expected 2 items, got 1"
    assert mismatch("a", None) == "expected a str ('a'), got None"
    assert mismatch(2 ** 100_000, 3) == "expected <int with about 30104 digits>, got 3"
