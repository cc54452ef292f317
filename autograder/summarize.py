"""Short, safe text for values in feedback: :func:`brief` and :func:`mismatch`.

Values shown to a learner come from their own (untrusted) code, so both
functions are total: whatever plain value they get (see :mod:`autograder.spec`),
they return a single line of at most ``limit`` characters and never raise. Huge
integers (past Python's int-to-str digit limit), deeply nested or
self-referencing containers, huge arrays and odd dtypes all get a summary
instead of an exception.

* ``brief(value, limit=80) -> str``: what a value looks like, e.g.
  ``array([1.0, 2.5])``, ``array([[1, 2], [3, 4]], dtype=int32)``,
  ``float32 array of shape (400,): 0.1, -2.5, 3.0, ...``, ``[1, 2, ... (1000 items)]``,
  ``<int with about 5000 digits>``.
* ``mismatch(expected, got, rtol=1e-6, atol=1e-8, limit=300) -> str``: where two
  values differ, e.g. ``shape differs: expected (2, 3), got (3, 2)`` or
  ``2 of 6 elements differ; at [0, 1]: expected 4.5, got 5.5; at [1, 2]: ...``
  (up to three elements, then the tolerances). Containers are walked to the
  first difference, named by its path (``at [1]['grad']: ...``). Returns ``""``
  when the values agree (numbers within ``|got - expected| <= atol + rtol *
  |expected|``, NaN matching NaN; ``rtol=atol=0`` for an exact comparison).
  ``language="zh"`` says it in Chinese (the tables of :mod:`autograder.messages`).

:func:`clip` cuts an already-rendered string to a length, marking the cut.
"""

from __future__ import annotations

import math

import numpy as np

from .messages import kind_name, message

DEFAULT_LIMIT = 80
"""Characters :func:`brief` returns at most when no ``limit`` is given."""

MIN_LIMIT = 12
"""Smaller limits are raised to this: a summary needs some room to say anything."""

MAX_DEPTH = 8
"""Containers nested deeper than this are shown as ``[...]``."""

SHOWN_DIFFERENCES = 3
"""How many differing array elements :func:`mismatch` names."""

_ELLIPSIS = "..."


def clip(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, ending in ``...`` where it was cut."""
    limit = max(int(limit), len(_ELLIPSIS))
    return text if len(text) <= limit else text[: limit - len(_ELLIPSIS)] + _ELLIPSIS


def brief(value, limit: int = DEFAULT_LIMIT) -> str:
    """A single line of at most ``limit`` characters describing ``value``; never raises.

    Numbers and strings are shown as ``repr`` shows them (huge ints by their
    number of digits), containers item by item until the room runs out (then
    ``... (N items)``), numpy arrays as ``array([...])`` when they fit, or else
    by dtype, shape and their first elements.
    """
    limit = max(_as_int(limit, DEFAULT_LIMIT), MIN_LIMIT)
    try:
        text = _brief(value, limit, 0)
    except Exception:  # RecursionError, MemoryError, an odd dtype's formatting, ...
        text = _fallback(value)
    return clip(_one_line(text), limit)


def mismatch(expected, got, rtol: float = 1e-6, atol: float = 1e-8,
             limit: int = 300, language: str = "en") -> str:
    """Where ``got`` differs from ``expected`` (``""`` if it does not); never raises.

    Arrays and numbers (and a list compared with an array) are compared
    elementwise with ``rtol``/``atol``; a shape or kind-of-dtype difference is
    reported as such. Lists, tuples and dicts are walked to their first
    difference. The text is one line of at most ``limit`` characters, in ``language``.
    """
    limit = max(_as_int(limit, 300), MIN_LIMIT)
    try:
        text = _diff(expected, got, "", float(rtol), float(atol), 0, language)
    except Exception:
        text = message(language, "diff_values", expected=brief(expected, limit // 2),
                       got=brief(got, limit // 2))
    return clip(_one_line(text), limit)


# ------------------------------------------------------------------ brief


def difference(compare, rtol: float, atol: float, expected, got, message: str,
               language: str = "en") -> str:
    """Where a failed value differs, in ``language``: :func:`mismatch` for the built-in
    ``"allclose"`` and ``"equal"`` comparisons (it names up to three array elements),
    else the comparison's own ``message``."""
    if callable(compare) or compare not in ("allclose", "equal"):
        return message
    exact = compare == "equal"
    return mismatch(expected, got, 0.0 if exact else rtol, 0.0 if exact else atol,
                    language=language) or message


def _as_int(limit, default: int) -> int:
    try:
        return int(limit)
    except (TypeError, ValueError, OverflowError):
        return default


def _one_line(text: str) -> str:
    return " ".join(text.split()) if "\n" in text or "\r" in text else text


def _fallback(value) -> str:
    try:
        return f"<{type(value).__name__} value>"
    except Exception:
        return "<value>"


def _brief(value, room: int, depth: int) -> str:
    """Text for ``value``; may exceed ``room`` (the caller clips) but never by much work."""
    if value is None or isinstance(value, bool | float | complex):
        return repr(value)
    if isinstance(value, int):
        return _int(value, room)
    if isinstance(value, str | bytes):
        return repr(value[: room + 1])
    if isinstance(value, np.ndarray):
        return _array(value, room)
    if isinstance(value, np.generic):
        return repr(value)
    if isinstance(value, list | tuple | dict | set | frozenset):
        if depth >= MAX_DEPTH:
            opening, closing = _brackets(value)
            return opening + _ELLIPSIS + closing
        return _container(value, room, depth)
    return _fallback(value)


def _int(value: int, room: int) -> str:
    digits = value.bit_length() * math.log10(2)
    if digits > max(room, 20):
        return f"<int with about {int(digits) + 1} digits>"
    return repr(value)


_CONTAINERS = ((list, "[", "]"), (tuple, "(", ")"), (dict, "{", "}"),
               (frozenset, "frozenset({", "})"), (set, "{", "}"))


def _container_type(value) -> type:
    return next(cls for cls, _, _ in _CONTAINERS if isinstance(value, cls))


def _brackets(value) -> tuple[str, str]:
    return next((o, c) for cls, o, c in _CONTAINERS if isinstance(value, cls))


def _container(value, room: int, depth: int) -> str:
    """Items one by one while they fit in ``room``; then how many there are in all."""
    kind = _container_type(value)
    opening, closing = _brackets(value)
    if kind is set and not value:
        return "set()"
    parts, used = [], len(opening) + len(closing)
    for item in (value.items() if kind is dict else value):
        text = (f"{_brief(item[0], room, depth + 1)}: {_brief(item[1], room, depth + 1)}"
                if kind is dict else _brief(item, room, depth + 1))
        parts.append(clip(text, room))
        used += len(parts[-1]) + 2
        if used > room:
            break
    if len(parts) == len(value) and used - 2 <= room:
        return opening + ", ".join(parts) + ("," if kind is tuple and len(parts) == 1 else "") \
            + closing
    more = f"{_ELLIPSIS} ({len(value)} items)"
    while len(parts) > 1 and used + len(more) > room:
        used -= len(parts.pop()) + 2
    parts[0] = clip(parts[0], room - len(opening) - len(closing) - len(more) - 2)
    return opening + ", ".join([*parts, more]) + closing


_DEFAULT_DTYPES = ("float64", "int64", "bool")
"""dtypes numpy's own repr leaves unsaid (and so does :func:`brief`)."""


def _array(a: np.ndarray, room: int) -> str:
    dtype = str(a.dtype)
    suffix = "" if dtype in _DEFAULT_DTYPES else f", dtype={dtype}"
    if a.ndim == 0:
        return f"array({_element(a[()])}{suffix})"
    if a.size == 0:
        return f"array([], shape={a.shape}{suffix or ', dtype=' + dtype})"
    if a.size <= room:
        text = f"array({_nested(a)}{suffix})"
        if len(text) <= room:
            return text
    head = f"{dtype} array of shape {a.shape}: "
    first, used = [], len(head) + len(_ELLIPSIS)
    for x in a.flat[: max(room // 2, 1)]:
        text = _element(x)
        if used + len(text) + 2 > room and first:
            break
        first.append(text)
        used += len(text) + 2
    return head + ", ".join(first) + (", " + _ELLIPSIS if len(first) < a.size else "")


def _nested(a: np.ndarray) -> str:
    if a.ndim == 1:
        return "[" + ", ".join(_element(x) for x in a) + "]"
    return "[" + ", ".join(_nested(row) for row in a) + "]"


def _element(x) -> str:
    """One array element in its own dtype's shortest form (float32 0.1 is ``0.1``)."""
    if isinstance(x, np.number):
        return str(x)
    if isinstance(x, np.bool_):
        return str(bool(x))
    if isinstance(x, np.str_ | np.bytes_):
        return repr(x.item()[:40])
    if isinstance(x, np.generic):      # datetime64, timedelta64, structured records
        return clip(str(x), 40)
    return _brief(x, 40, MAX_DEPTH - 1)   # an element of an object array


# ------------------------------------------------------------------ mismatch


def _where(path: str, language: str) -> str:
    return message(language, "diff_at", path=path) if path else ""


def _is_array_like(value) -> bool:
    return isinstance(value, np.ndarray | np.generic | int | float | complex) \
        and not isinstance(value, bool | np.bool_)


def _diff(expected, got, path: str, rtol: float, atol: float, depth: int,
          language: str) -> str:
    """The first difference between the two values, prefixed by its path; ``""`` if none."""
    where = _where(path, language)
    if depth > MAX_DEPTH * 4:
        return where + message(language, "diff_too_deep")
    if isinstance(expected, np.ndarray) or isinstance(got, np.ndarray) or (
            _is_array_like(expected) and _is_array_like(got)):
        return _diff_arrays(expected, got, path, rtol, atol, language)
    if isinstance(expected, list | tuple) and isinstance(got, list | tuple):
        if len(expected) != len(got):
            return where + message(language, "diff_items", expected=len(expected), got=len(got))
        for i, (e, g) in enumerate(zip(expected, got, strict=True)):
            found = _diff(e, g, f"{path}[{i}]", rtol, atol, depth + 1, language)
            if found:
                return found
        return ""
    if isinstance(expected, dict) and isinstance(got, dict):
        return _diff_dicts(expected, got, path, rtol, atol, depth, language)
    if type(expected) is not type(got) and not (
            isinstance(expected, set | frozenset) and isinstance(got, set | frozenset)):
        return where + message(language, "diff_values", expected=_described(expected, language),
                               got=_described(got, language))
    if _equal(expected, got):
        return ""
    return where + _values(expected, got, language)


def _values(expected, got, language: str) -> str:
    """"expected ..., got ..." with both values in brief."""
    return message(language, "diff_values", expected=brief(expected, 100), got=brief(got, 100))


def _described(value, language: str) -> str:
    """``None``, or the value's kind and what it looks like: ``a list ([1, 2])``."""
    if value is None:
        return "None"
    return message(language, "diff_described", kind=kind_name(language, _kind(value)),
                   value=brief(value, 60))


def _kind(value) -> str:
    if isinstance(value, bool | np.bool_):
        return "bool"
    if _is_array_like(value):
        return "number"
    if isinstance(value, list | tuple | dict | set | frozenset):
        return _container_type(value).__name__
    return type(value).__name__


def _equal(expected, got) -> bool:
    try:
        return bool(expected == got)
    except Exception:
        return False


def _diff_dicts(expected: dict, got: dict, path, rtol, atol, depth, language) -> str:
    missing = [k for k in expected if k not in got]
    extra = [k for k in got if k not in expected]
    if missing or extra:
        parts = ([message(language, "diff_missing_keys", keys=brief(missing, 60))]
                 if missing else []) + \
                ([message(language, "diff_unexpected_keys", keys=brief(extra, 60))]
                 if extra else [])
        return _where(path, language) + message(language, "diff_join").join(parts)
    for key in expected:
        found = _diff(expected[key], got[key], f"{path}[{brief(key, 30)}]", rtol, atol,
                      depth + 1, language)
        if found:
            return found
    return ""


def _category(a: np.ndarray) -> str:
    """What kind of values an array holds, as far as comparing them goes."""
    return {"b": "bool", "i": "number", "u": "number", "f": "number", "c": "number",
            "U": "text", "S": "bytes"}.get(a.dtype.kind, str(a.dtype))


def _diff_arrays(expected, got, path, rtol, atol, language) -> str:
    where = _where(path, language)
    try:
        e, g = np.asarray(expected), np.asarray(got)
    except (ValueError, TypeError):
        return where + _values(expected, got, language)
    if e.shape != g.shape:
        dtypes = message(language, "diff_shape_dtypes", expected=e.dtype, got=g.dtype) \
            if e.dtype != g.dtype else ""
        return where + message(language, "diff_shape", expected=e.shape, got=g.shape,
                               dtypes=dtypes)
    if "object" in (_category(e), _category(g)):   # a Python int too big for numpy
        return "" if _equal(expected, got) else where + _values(expected, got, language)
    if _category(e) != _category(g):
        return where + message(language, "diff_dtype", expected=e.dtype, got=g.dtype)
    numeric = _category(e) == "number"
    mask = _differing(e, g, rtol, atol) if numeric else ~np.asarray(e == g, dtype=bool)
    if not mask.any():
        return ""
    tolerance = message(language, "diff_tolerance", rtol=rtol, atol=atol) \
        if numeric and (rtol or atol) else ""
    if e.ndim == 0:
        return where + message(language, "diff_values", expected=_element(e[()]),
                               got=_element(g[()])) + tolerance
    spots = [tuple(int(i) for i in index) for index in np.argwhere(mask)[:SHOWN_DIFFERENCES]]
    shown = message(language, "diff_join").join(
        message(language, "diff_element_at", index=list(s), expected=_element(e[s]),
                got=_element(g[s])) for s in spots)
    more = message(language, "diff_more") if mask.sum() > len(spots) else ""
    return where + message(language, "diff_elements", count=int(mask.sum()), size=mask.size,
                           shown=shown, more=more, tolerance=tolerance)


def _differing(e: np.ndarray, g: np.ndarray, rtol: float, atol: float) -> np.ndarray:
    """Elements outside ``atol + rtol * |e|`` (NaN matches NaN), as compare.py decides."""
    wide = np.complex128 if "c" in (e.dtype.kind, g.dtype.kind) else np.float64
    with np.errstate(invalid="ignore", over="ignore"):
        close = np.isclose(g.astype(wide), e.astype(wide), rtol=rtol, atol=atol, equal_nan=True)
    return ~np.asarray(close, dtype=bool)
