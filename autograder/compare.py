"""Comparing what a learner's function returned with the reference's value.

Runs only in trusted code, on values rebuilt by :mod:`autograder.codec`, so a
submission cannot change how it is compared (its ``__eq__``, a patched
``numpy.allclose`` and the like live and die in the sandbox).

Modes:

* ``"allclose"``: numbers and arrays agree within ``|got - expected| <= atol +
  rtol * |expected|`` (NaN matches NaN); shapes, container lengths, dict keys,
  strings, booleans and ``None`` must match exactly; a list and a tuple with the
  same elements are treated alike, and a list of numbers may stand for an array.
* ``"equal"``: everything exact (numbers compared by value, arrays elementwise).
* ``"set"``: both are collections with the same elements, in any order, counting
  repeats.
* a callable ``(expected, got) -> (ok, message)`` for anything else.

A failed comparison names the first place it differs (``path`` like ``[2]['w']``)
and, for arrays, carries a boolean ``mask`` of the mismatching elements so the
self-check can highlight them. Messages are in the ``language`` asked for
(:mod:`autograder.messages`); English by default.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from .messages import kind_name, message


@dataclass(frozen=True)
class Comparison:
    ok: bool
    message: str = ""
    path: str = ""
    mask: np.ndarray | None = None


_OK = Comparison(True)


def _kind(value) -> str:
    if value is None:
        return "None"
    if isinstance(value, bool | np.bool_):
        return "bool"
    if isinstance(value, int | float | complex | np.number):
        return "number"
    if isinstance(value, np.ndarray):
        return "array"
    if isinstance(value, list | tuple):
        return "sequence"
    if isinstance(value, dict):
        return "dict"
    if isinstance(value, set | frozenset):
        return "set"
    return type(value).__name__


def _short(value, limit: int = 80) -> str:
    text = np.array2string(value, threshold=20) if isinstance(value, np.ndarray) else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _fail(path, text, language, mask=None) -> Comparison:
    return Comparison(False, _where(path, language) + text, path, mask)


def _where(path, language) -> str:
    return message(language, "diff_at", path=path) if path else ""


def _compare(expected, got, path, exact, rtol, atol, language) -> Comparison:
    kind_e, kind_g = _kind(expected), _kind(got)
    if kind_e == "array" or (kind_e in ("number", "bool") and kind_g == "array"):
        return _compare_arrays(np.asarray(expected), got, path, exact, rtol, atol, language)
    if kind_e != kind_g:
        return _fail(path, message(language, "cmp_kinds", expected_kind=kind_name(language, kind_e),
                                   expected=_short(expected), got=_short(got),
                                   got_kind=kind_name(language, kind_g)), language)
    if kind_e in ("None", "str"):
        return _OK if expected == got else _fail(
            path, message(language, "diff_values", expected=repr(expected), got=repr(got)),
            language)
    if kind_e == "bool":
        return _OK if bool(expected) == bool(got) else _fail(
            path, message(language, "diff_values", expected=bool(expected), got=bool(got)),
            language)
    if kind_e == "number":
        return _compare_arrays(np.asarray(expected), got, path, exact, rtol, atol, language)
    if kind_e == "sequence":
        if len(expected) != len(got):
            return _fail(path, message(language, "diff_items", expected=len(expected),
                                       got=len(got)), language)
        for i, (e, g) in enumerate(zip(expected, got, strict=True)):
            result = _compare(e, g, f"{path}[{i}]", exact, rtol, atol, language)
            if not result.ok:
                return result
        return _OK
    if kind_e == "dict":
        return _compare_dicts(expected, got, path, exact, rtol, atol, language)
    if kind_e == "set":
        return _compare_sets(expected, got, path, language)
    return _OK if expected == got else _fail(
        path, message(language, "diff_values", expected=_short(expected), got=_short(got)),
        language)


def _compare_dicts(expected, got, path, exact, rtol, atol, language) -> Comparison:
    missing = [k for k in expected if k not in got]
    extra = [k for k in got if k not in expected]
    if missing or extra:
        parts = ([message(language, "diff_missing_keys", keys=_short(missing))]
                 if missing else []) + \
                ([message(language, "diff_unexpected_keys", keys=_short(extra))]
                 if extra else [])
        return _fail(path, message(language, "diff_join").join(parts), language)
    for key in expected:
        result = _compare(expected[key], got[key], f"{path}[{key!r}]", exact, rtol, atol,
                          language)
        if not result.ok:
            return result
    return _OK


def _compare_arrays(expected: np.ndarray, got, path, exact, rtol, atol,
                    language) -> Comparison:
    if _kind(got) == "sequence" and not exact:
        try:  # a list of the right numbers is as good as an array in "allclose"
            got = np.asarray(got)
        except ValueError:
            pass
        if not isinstance(got, np.ndarray) or got.dtype.kind not in "biufc":
            return _fail(path, message(language, "cmp_not_numeric", shape=expected.shape,
                                       got=_short(got)), language)
    if _kind(got) not in ("array", "number", "bool"):
        return _fail(path, message(language, "cmp_not_array", shape=expected.shape,
                                   kind=kind_name(language, _kind(got)), got=_short(got)),
                     language)
    got = np.asarray(got)
    if got.shape != expected.shape:
        return _fail(path, message(language, "cmp_shape", expected=expected.shape,
                                   got=got.shape), language)
    if expected.dtype.kind == "b" and got.dtype.kind != "b":
        return _fail(path, message(language, "cmp_booleans", dtype=got.dtype), language)
    if exact or expected.dtype.kind == "b":
        mask = ~((expected == got) | (_isnan(expected) & _isnan(got)))
    else:
        e = expected.astype(np.complex128 if expected.dtype.kind == "c" else np.float64)
        g = got.astype(np.complex128 if got.dtype.kind == "c" else np.float64)
        with np.errstate(invalid="ignore", over="ignore"):
            close = np.isclose(g, e, rtol=rtol, atol=atol, equal_nan=True)
        mask = ~close
    mask = np.asarray(mask)
    if not mask.any():
        return _OK
    tolerance = "" if exact else message(language, "diff_tolerance", rtol=rtol, atol=atol)
    if expected.ndim == 0:
        return _fail(path, message(language, "diff_values", expected=_short(expected.item()),
                                   got=_short(got.item())) + tolerance, language, mask)
    first = tuple(int(i) for i in np.argwhere(mask)[0])
    text = message(language, "cmp_elements", count=int(mask.sum()), size=mask.size,
                   index=list(first), expected=repr(expected[first]), got=repr(got[first]))
    if not exact:
        text += message(language, "cmp_largest", worst=_largest(expected, got, mask)) + tolerance
    return _fail(path, text, language, mask)


def _largest(expected: np.ndarray, got: np.ndarray, mask: np.ndarray) -> float:
    """The largest finite ``|got - expected|`` among the mismatching elements (inf if none)."""
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(got.astype(np.float64 if got.dtype.kind != "c" else np.complex128)
                      - expected)
    finite = np.abs(diff)[mask]
    finite = finite[np.isfinite(finite)]
    return finite.max() if finite.size else float("inf")


def _isnan(a: np.ndarray) -> np.ndarray:
    return np.isnan(a) if a.dtype.kind in "fc" else np.zeros(a.shape, bool)


def _canonical(value):
    """A hashable, order-free stand-in for a decoded value (for set comparison)."""
    if isinstance(value, np.ndarray):
        return ("array", value.shape, tuple(value.ravel().tolist()))
    if isinstance(value, list | tuple):
        return ("seq", tuple(_canonical(v) for v in value))
    if isinstance(value, dict):
        return ("dict", frozenset((_canonical(k), _canonical(v)) for k, v in value.items()))
    if isinstance(value, set | frozenset):
        return ("set", frozenset(_canonical(v) for v in value))
    if isinstance(value, np.generic):
        return value.item()
    return value


def _compare_sets(expected, got, path, language) -> Comparison:
    if _kind(got) not in ("sequence", "set", "array"):
        return _fail(path, message(language, "cmp_collection", kind=kind_name(language, _kind(got)),
                                   got=_short(got)), language)
    items = list(got.ravel()) if isinstance(got, np.ndarray) else list(got)
    want = Counter(_canonical(v) for v in expected)
    have = Counter(_canonical(v) for v in items)
    if want == have:
        return _OK
    missing = list((want - have).elements())
    extra = list((have - want).elements())
    parts = ([message(language, "cmp_missing", items=_short(missing))] if missing else []) + \
            ([message(language, "cmp_unexpected", items=_short(extra))] if extra else [])
    return _fail(path, message(language, "diff_join").join(parts)
                 + message(language, "cmp_any_order"), language)


def compare(expected, got, mode="allclose", rtol: float = 1e-6, atol: float = 1e-8,
            language: str = "en") -> Comparison:
    """Compare ``got`` with ``expected`` by ``mode`` (see the module docstring); a failure's
    message is in ``language`` (a custom comparison's own message is left as it is)."""
    if callable(mode):
        outcome = mode(expected, got)
        ok, text = outcome if isinstance(outcome, tuple) else (bool(outcome), "")
        return Comparison(bool(ok), "" if ok else (text or message(language,
                                                                   "cmp_custom_failed")))
    if mode == "set":
        return _compare_sets(expected, got, "", language)
    if mode not in ("allclose", "equal"):
        raise ValueError(f"unknown compare mode {mode!r}: use 'allclose', 'equal', 'set' or a "
                         "callable (expected, got) -> (ok, message)")
    return _compare(expected, got, "", mode == "equal", rtol, atol, language)
