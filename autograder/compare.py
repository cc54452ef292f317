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
self-check can highlight them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np


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


def _fail(path, message, mask=None) -> Comparison:
    where = f"at {path}: " if path else ""
    return Comparison(False, where + message, path, mask)


def _compare(expected, got, path, exact, rtol, atol) -> Comparison:
    kind_e, kind_g = _kind(expected), _kind(got)
    if kind_e == "array" or (kind_e in ("number", "bool") and kind_g == "array"):
        return _compare_arrays(np.asarray(expected), got, path, exact, rtol, atol)
    if kind_e != kind_g:
        return _fail(path, f"expected a {kind_e} ({_short(expected)}), got a {kind_g} "
                           f"({_short(got)})")
    if kind_e in ("None", "str"):
        return _OK if expected == got else _fail(path, f"expected {expected!r}, got {got!r}")
    if kind_e == "bool":
        return _OK if bool(expected) == bool(got) else _fail(
            path, f"expected {bool(expected)}, got {bool(got)}")
    if kind_e == "number":
        return _compare_arrays(np.asarray(expected), got, path, exact, rtol, atol)
    if kind_e == "sequence":
        if len(expected) != len(got):
            return _fail(path, f"expected {len(expected)} items, got {len(got)}")
        for i, (e, g) in enumerate(zip(expected, got, strict=True)):
            result = _compare(e, g, f"{path}[{i}]", exact, rtol, atol)
            if not result.ok:
                return result
        return _OK
    if kind_e == "dict":
        missing = [k for k in expected if k not in got]
        extra = [k for k in got if k not in expected]
        if missing or extra:
            parts = []
            if missing:
                parts.append(f"missing keys {_short(missing)}")
            if extra:
                parts.append(f"unexpected keys {_short(extra)}")
            return _fail(path, "; ".join(parts))
        for key in expected:
            result = _compare(expected[key], got[key], f"{path}[{key!r}]", exact, rtol, atol)
            if not result.ok:
                return result
        return _OK
    if kind_e == "set":
        return _compare_sets(expected, got, path)
    return _OK if expected == got else _fail(path, f"expected {_short(expected)}, "
                                                   f"got {_short(got)}")


def _compare_arrays(expected: np.ndarray, got, path, exact, rtol, atol) -> Comparison:
    if _kind(got) == "sequence" and not exact:
        try:  # a list of the right numbers is as good as an array in "allclose"
            got = np.asarray(got)
        except ValueError:
            pass
        if not isinstance(got, np.ndarray) or got.dtype.kind not in "biufc":
            return _fail(path, f"expected an array of shape {expected.shape}, got a "
                               f"sequence that is not a numeric array ({_short(got)})")
    if _kind(got) not in ("array", "number", "bool"):
        return _fail(path, f"expected an array of shape {expected.shape}, got a "
                           f"{_kind(got)} ({_short(got)})")
    got = np.asarray(got)
    if got.shape != expected.shape:
        return _fail(path, f"expected shape {expected.shape}, got shape {got.shape}")
    if expected.dtype.kind == "b" and got.dtype.kind != "b":
        return _fail(path, f"expected booleans, got dtype {got.dtype}")
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
    if expected.ndim == 0:
        return _fail(path, f"expected {_short(expected.item())}, got {_short(got.item())}"
                     + ("" if exact else f" (rtol={rtol:g}, atol={atol:g})"), mask)
    first = tuple(int(i) for i in np.argwhere(mask)[0])
    message = (f"{int(mask.sum())} of {mask.size} elements differ; first at index "
               f"{list(first)}: expected {expected[first]!r}, got {got[first]!r}")
    if not exact:
        with np.errstate(invalid="ignore", over="ignore"):
            diff = np.abs(got.astype(np.float64 if got.dtype.kind != "c" else np.complex128)
                          - expected)
        finite = np.abs(diff)[mask]
        finite = finite[np.isfinite(finite)]
        worst = finite.max() if finite.size else float("inf")
        message += f"; largest abs difference {worst:.3g} (rtol={rtol:g}, atol={atol:g})"
    return _fail(path, message, mask)


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


def _compare_sets(expected, got, path) -> Comparison:
    if _kind(got) not in ("sequence", "set", "array"):
        return _fail(path, f"expected a collection, got a {_kind(got)} ({_short(got)})")
    items = list(got.ravel()) if isinstance(got, np.ndarray) else list(got)
    want = Counter(_canonical(v) for v in expected)
    have = Counter(_canonical(v) for v in items)
    if want == have:
        return _OK
    missing = list((want - have).elements())
    extra = list((have - want).elements())
    parts = []
    if missing:
        parts.append(f"missing {_short(missing)}")
    if extra:
        parts.append(f"unexpected {_short(extra)}")
    return _fail(path, "; ".join(parts) + " (order does not matter)")


def compare(expected, got, mode="allclose", rtol: float = 1e-6, atol: float = 1e-8) -> Comparison:
    """Compare ``got`` with ``expected`` by ``mode`` (see the module docstring)."""
    if callable(mode):
        outcome = mode(expected, got)
        ok, message = outcome if isinstance(outcome, tuple) else (bool(outcome), "")
        return Comparison(bool(ok), "" if ok else (message or "custom comparison failed"))
    if mode == "set":
        return _compare_sets(expected, got, "")
    if mode not in ("allclose", "equal"):
        raise ValueError(f"unknown compare mode {mode!r}")
    return _compare(expected, got, "", mode == "equal", rtol, atol)
