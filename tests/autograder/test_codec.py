"""The sandbox's wire format: plain values survive the round trip, nothing else does,
and malformed input never turns into anything but a CodecError."""

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from autograder import codec


def _same(a, b):
    if isinstance(a, np.ndarray):
        return (isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape
                and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    if isinstance(a, list | tuple):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, dict):
        return type(b) is dict and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


VALUES = [
    None, True, 0, -(2**70), 1.5, float("inf"), float("-inf"), float("nan"), "héllo", b"\x00\xff",
    3 + 4j, [1, [2, (3, 4)]], (), {"a": 1, (1, 2): [3.0], 7: None}, {1, 2, 3}, frozenset({"x"}),
    np.arange(6, dtype=np.int16).reshape(2, 3), np.zeros((0, 4), np.float32),
    np.array(2.5), np.array([True, False]), np.array([1 + 2j], np.complex64),
    np.arange(4, dtype=">f8"), np.float32(0.1), np.int64(-3), np.bool_(True),
]


@pytest.mark.parametrize("value", VALUES, ids=[repr(v)[:30] for v in VALUES])
def test_plain_values_round_trip_through_strict_json(value):
    text = codec.dumps(value)
    json.loads(text, parse_constant=lambda c: pytest.fail(f"non-standard JSON token {c}"))
    back = codec.loads(text)
    if isinstance(value, np.ndarray) and value.dtype.byteorder == ">":
        assert back.dtype == value.dtype.newbyteorder("=") and np.array_equal(back, value)
    elif isinstance(value, np.generic):
        assert type(back) is type(value) and back == value
    else:
        assert _same(value, back), (value, back)


@settings(max_examples=60, deadline=None)
@given(hnp.arrays(dtype=st.one_of(hnp.integer_dtypes(), hnp.floating_dtypes(),
                                  hnp.complex_number_dtypes(), hnp.boolean_dtypes()),
                  shape=hnp.array_shapes(min_dims=0, max_dims=3, max_side=4)))
def test_any_numeric_array_round_trips_bit_exactly(array):
    back = codec.loads(codec.dumps(array))
    assert back.shape == array.shape
    assert back.dtype == array.dtype.newbyteorder("=")
    assert back.tobytes() == array.astype(back.dtype).tobytes()


class Thing:
    pass


@pytest.mark.parametrize("value", [Thing(), np.array([Thing()], dtype=object), print,
                                   np.array(["a"]), [1, {2: Thing()}]])
def test_objects_and_non_numeric_arrays_are_refused_with_a_hint(value):
    with pytest.raises(codec.CodecError, match="cannot be sent back"):
        codec.encode(value)


def test_subclasses_of_plain_types_arrive_as_the_plain_type():
    class Liar(np.ndarray):
        def __eq__(self, other):
            return True

    class Int(int):
        def __eq__(self, other):
            return True

    back = codec.loads(codec.dumps([np.zeros(3).view(Liar), Int(5)]))
    assert type(back[0]) is np.ndarray and type(back[1]) is int and back[1] == 5
    assert not (back[0] == np.ones(3)).any()


@pytest.mark.parametrize("data", [
    {"$array": {"dtype": "|O", "shape": [1], "data": "AAAAAAAAAAA="}},
    {"$array": {"dtype": "<f8", "shape": [2], "data": "AAAAAAAAAAA="}},
    {"$array": {"dtype": "<f8", "shape": [-1], "data": ""}},
    {"$array": {"dtype": "V8", "shape": [1], "data": "AAAAAAAAAAA="}},
    {"$array": {"dtype": "<f8", "shape": [1], "data": "not base64!"}},
    {"$pickle": "gASVAAAAAAAAAAA="}, {"a": 1, "b": 2}, {"$dict": [[[1], 2]]}, {"$float": "1e309"},
    {"$set": [[1, 2]]}, {"$complex": ["a", 1]},
])
def test_malformed_or_unsafe_encodings_raise_codec_error(data):
    with pytest.raises(codec.CodecError):
        codec.decode(data)


def test_deep_nesting_is_refused_both_ways():
    deep = []
    for _ in range(codec.MAX_DEPTH + 5):
        deep = [deep]
    with pytest.raises(codec.CodecError):
        codec.encode(deep)
    with pytest.raises(codec.CodecError):
        codec.loads("[" * 100_000 + "]" * 100_000)
