"""The safe encoding of values between the grader and its sandbox: JSON with tags.

Never pickle: unpickling runs code chosen by whoever wrote the bytes. Here the
decoder only ever builds plain values, whatever the bytes say:

=====================  ===========================================================
value                  JSON
=====================  ===========================================================
None, bool, int, str   themselves
float                  itself if finite, else ``{"$float": "nan" | "inf" | "-inf"}``
list                   a JSON array
tuple                  ``{"$tuple": [...]}``
dict (any hashable     ``{"$dict": [[key, value], ...]}``
keys)
set / frozenset        ``{"$set": [...]}`` / ``{"$frozenset": [...]}``
complex                ``{"$complex": [re, im]}``
bytes                  ``{"$bytes": "<base64>"}``
numpy array            ``{"$array": {"dtype": "<f4", "shape": [2, 3], "data": "<base64>"}}``
numpy scalar           ``{"$scalar": {"dtype": "<f4", "data": "<base64>"}}``
=====================  ===========================================================

Only boolean, integer, unsigned, float and complex dtypes cross; objects of any
other type are refused with a message saying what to return instead.

This module imports only the standard library and numpy: the sandbox child loads
it too, so it must not import the rest of the project.
"""

import base64
import json
import math

import numpy as np

MAX_DEPTH = 64
_NUMERIC_KINDS = "biufc"


class CodecError(ValueError):
    """A value cannot be encoded, or bytes do not decode to a plain value."""


def _dtype_str(dtype) -> str:
    return dtype.newbyteorder("<").str if dtype.byteorder not in "|=<" else dtype.str


def _encode(value, depth):
    if depth > MAX_DEPTH:
        raise CodecError(f"value nested deeper than {MAX_DEPTH} levels")
    t = type(value)
    if value is None or t is bool or t is str:
        return value
    if t is int:
        return value
    if t is float:
        if math.isfinite(value):
            return value
        return {"$float": "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")}
    if isinstance(value, np.ndarray):
        array = np.asarray(value).view(np.ndarray)
        if array.dtype.kind not in _NUMERIC_KINDS:
            raise CodecError(f"numpy arrays of dtype {array.dtype} cannot be sent back; "
                             "use a numeric or boolean dtype")
        little = array.astype(array.dtype.newbyteorder("<"), copy=False)
        data = np.ascontiguousarray(little).tobytes()
        return {"$array": {"dtype": _dtype_str(little.dtype), "shape": list(array.shape),
                           "data": base64.b64encode(data).decode("ascii")}}
    if isinstance(value, np.generic):
        array = np.asarray(value)
        if array.dtype.kind not in _NUMERIC_KINDS:
            raise CodecError(f"numpy scalars of dtype {array.dtype} cannot be sent back")
        little = array.astype(array.dtype.newbyteorder("<"))
        return {"$scalar": {"dtype": _dtype_str(little.dtype),
                            "data": base64.b64encode(little.tobytes()).decode("ascii")}}
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return _encode(float(value), depth)
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, complex):
        return {"$complex": [_encode(float(value.real), depth), _encode(float(value.imag), depth)]}
    if isinstance(value, bytes | bytearray):
        return {"$bytes": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, list):
        return [_encode(v, depth + 1) for v in list.__iter__(value)]
    if isinstance(value, tuple):
        return {"$tuple": [_encode(v, depth + 1) for v in tuple.__iter__(value)]}
    if isinstance(value, dict):
        return {"$dict": [[_encode(k, depth + 1), _encode(v, depth + 1)]
                          for k, v in dict.items(value)]}
    if isinstance(value, frozenset):
        return {"$frozenset": [_encode(v, depth + 1) for v in value]}
    if isinstance(value, set):
        return {"$set": [_encode(v, depth + 1) for v in value]}
    raise CodecError(f"a value of type {t.__module__}.{t.__qualname__} cannot be sent back; "
                     "return plain values (numbers, str, numpy arrays, and lists/tuples/dicts "
                     "of them)")


def encode(value) -> object:
    """Turn a plain value into JSON-ready data (raises :class:`CodecError`)."""
    return _encode(value, 0)


def dumps(value) -> str:
    return json.dumps(encode(value), allow_nan=False, separators=(",", ":"))


def _hashable(value):
    try:
        hash(value)
    except TypeError as err:
        raise CodecError(f"unhashable {type(value).__name__} used as a dict key or set "
                         "element") from err
    return value


def _array_from(spec, scalar):
    if not isinstance(spec, dict) or not isinstance(spec.get("dtype"), str) \
            or not isinstance(spec.get("data"), str):
        raise CodecError("malformed array")
    try:
        dtype = np.dtype(spec["dtype"])
    except TypeError as err:
        raise CodecError(f"unknown dtype {spec['dtype']!r}") from err
    if dtype.kind not in _NUMERIC_KINDS or dtype.fields is not None or dtype.subdtype:
        raise CodecError(f"dtype {dtype} is not allowed")
    shape = () if scalar else spec.get("shape")
    if not isinstance(shape, list | tuple) or \
            not all(type(n) is int and n >= 0 for n in shape):
        raise CodecError("malformed array shape")
    try:
        data = base64.b64decode(spec["data"].encode("ascii"), validate=True)
    except (ValueError, UnicodeEncodeError) as err:
        raise CodecError("array data is not base64") from err
    if len(data) != math.prod(shape) * dtype.itemsize:
        raise CodecError(f"array data has {len(data)} bytes, shape {list(shape)} of {dtype} "
                         f"needs {math.prod(shape) * dtype.itemsize}")
    array = np.frombuffer(data, dtype=dtype).reshape(shape).astype(dtype.newbyteorder("="))
    return array[()] if scalar else array


def _decode(data, depth):
    if depth > MAX_DEPTH:
        raise CodecError(f"value nested deeper than {MAX_DEPTH} levels")
    t = type(data)
    if data is None or t in (bool, int, str):
        return data
    if t is float:
        return data
    if t is list:
        return [_decode(v, depth + 1) for v in data]
    if t is not dict or len(data) != 1:
        raise CodecError(f"unexpected {t.__name__} in encoded value")
    (tag, body), = data.items()
    if tag == "$float":
        if body not in ("nan", "inf", "-inf"):
            raise CodecError("malformed float")
        return float(body)
    if tag == "$array":
        return _array_from(body, scalar=False)
    if tag == "$scalar":
        return _array_from(body, scalar=True)
    if tag == "$bytes" and type(body) is str:
        try:
            return base64.b64decode(body.encode("ascii"), validate=True)
        except (ValueError, UnicodeEncodeError) as err:
            raise CodecError("bytes are not base64") from err
    if type(body) is not list:
        raise CodecError(f"malformed {tag}")
    if tag == "$tuple":
        return tuple(_decode(v, depth + 1) for v in body)
    if tag == "$complex" and len(body) == 2:
        re_, im = (_decode(v, depth + 1) for v in body)
        if type(re_) not in (int, float) or type(im) not in (int, float):
            raise CodecError("malformed complex")
        return complex(re_, im)
    if tag == "$set":
        return {_hashable(_decode(v, depth + 1)) for v in body}
    if tag == "$frozenset":
        return frozenset(_hashable(_decode(v, depth + 1)) for v in body)
    if tag == "$dict":
        out = {}
        for pair in body:
            if type(pair) is not list or len(pair) != 2:
                raise CodecError("malformed dict entry")
            out[_hashable(_decode(pair[0], depth + 1))] = _decode(pair[1], depth + 1)
        return out
    raise CodecError(f"unknown tag {tag!r}")


def decode(data) -> object:
    """Rebuild a plain value from :func:`encode`'s output (raises :class:`CodecError`)."""
    try:
        return _decode(data, 0)
    except RecursionError as err:
        raise CodecError("value nested too deeply") from err


def loads(text: str) -> object:
    try:
        return decode(json.loads(text))
    except (json.JSONDecodeError, RecursionError) as err:
        raise CodecError(f"not valid JSON: {err}") from err
