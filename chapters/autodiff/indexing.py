"""torch's indexing rule, as numpy indexing steps.

First, what the index *is* (:func:`torch_parts`). torch reads a Python list as
a tuple of indices when it is short (under 32 items) and holds a tensor, an
array, another sequence, a slice, ``...`` or None, with a UserWarning that this
reading is deprecated: ``x[[[0, 1], [1, 2]]]`` is ``x[[0, 1], [1, 2]]``, while
numpy would read the same list as one (2, 2) integer array. Any other sequence,
inside a tuple or alone, is one integer (or bool) tensor. A 0-d integer tensor
selects like an ``int``; a Python bool is a 0-d mask (``x[True]`` adds a dim of
size 1, ``x[False]`` one of size 0); a uint8 tensor is a (deprecated) mask.

Then, what it does: numpy and torch agree on ``x[index]`` except in one place: an
integer next to an integer array. numpy counts the integer as one more advanced index
(broadcast with the arrays), torch applies it first, as basic indexing that
removes its dimension. The two disagree when a slice separates them:
for x of shape (2, 3, 4), ``x[0, :, [1, 2]]`` is (2, 3) in numpy, because
numpy moves separated advanced indices to the front, and (3, 2) in torch,
which has only one advanced index left after taking ``x[0]``.

:func:`torch_index` splits such an index into torch's two steps, each of
which numpy then does as torch does.
"""

from __future__ import annotations

import warnings

import numpy as np

#: torch's words when a list is read as a tuple of indices, and for a uint8 mask
NON_TUPLE_SEQUENCE = (
    "Using a non-tuple sequence for multidimensional indexing is deprecated and will be "
    "changed in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will "
    "be interpreted as tensor index, x[torch.tensor(seq)], which will result either in an "
    "error or a different result")
UINT8_MASK = ("indexing with dtype torch.uint8 is now deprecated, please use a dtype "
              "torch.bool instead.")


def _is_int(part) -> bool:
    return isinstance(part, int | np.integer) and not isinstance(part, bool | np.bool_)


def _reads_as_tuple(index: list) -> bool:
    """torch's rule for a list: a tuple of indices when short and holding any
    array, sequence, slice, ``...`` or None (engine tensors are arrays by now)."""
    return len(index) < 32 and any(
        isinstance(item, np.ndarray | list | tuple | slice) or item is Ellipsis or item is None
        for item in index)


def _part(part, stacklevel: int):
    """One item of an index, as numpy must see it to do what torch does."""
    if isinstance(part, list | tuple):  # a sequence inside an index is one tensor
        part = np.asarray(part) if len(part) else np.zeros(0, np.int64)
    elif isinstance(part, bool | np.bool_):
        return np.asarray(part)  # a 0-d mask: an advanced index, as in torch
    if not isinstance(part, np.ndarray):
        return part
    if part.dtype == np.uint8:
        warnings.warn(UINT8_MASK, UserWarning, stacklevel=stacklevel + 1)
        return part.astype(np.bool_)
    if part.ndim == 0 and part.dtype.kind in "iu":
        return int(part)  # torch selects with a 0-d integer tensor, as with an int
    return part


def torch_parts(index, stacklevel: int = 2):
    """``index`` (engine tensors already replaced by their arrays) with torch's
    meaning made explicit: a list that torch reads as a tuple becomes one (with
    torch's warning, shown ``stacklevel`` frames up), every sequence inside becomes
    an array, and 0-d integer arrays, bools and uint8 masks become what torch
    takes them for."""
    if isinstance(index, list) and _reads_as_tuple(index):
        warnings.warn(NON_TUPLE_SEQUENCE, UserWarning, stacklevel=stacklevel)
        index = tuple(index)
    if not isinstance(index, tuple):
        return _part(index, stacklevel + 1)
    parts = []
    for part in index:  # a loop, not a comprehension: no frame between here and the caller
        parts.append(_part(part, stacklevel + 1))
    return _one_ellipsis(tuple(parts))


def _one_ellipsis(parts: tuple) -> tuple:
    """torch lets a second ``...`` through when only no-op items follow it (it
    skips past the last dim); numpy refuses any second one. Those tails are
    dropped; any other index with two ``...`` is refused, as torch does."""
    where = [k for k, part in enumerate(parts) if part is Ellipsis]
    if len(where) < 2:
        return parts
    if all(part is Ellipsis or (isinstance(part, slice) and part == slice(None))
           for part in parts[where[1]:]):
        return parts[:where[1]]
    raise IndexError(f"an index can only have a single ellipsis ('...') followed by other "
                     f"items; got {len(where)} in {parts}. Keep one '...'.")


def torch_index(index) -> tuple:
    """``(first, then)`` such that torch's ``x[index]`` is numpy's
    ``x[first][then]``; ``then`` is None when numpy's ``x[index]`` is already
    torch's (no integer mixed with arrays). ``first`` holds the integers,
    slices, None and Ellipsis (basic indexing: a view), with every array's
    dimensions kept whole; ``then`` holds the arrays at their dimensions of
    the result."""
    if type(index) is not tuple:  # a single index: nothing to mix
        return index, None
    has_array = has_int = False
    for part in index:
        has_array = has_array or isinstance(part, np.ndarray)
        has_int = has_int or _is_int(part)
    if not (has_array and has_int):
        return index, None
    first, then = [], []
    for part in index:
        if isinstance(part, np.ndarray):  # a bool mask spans as many dims as it has
            first += [slice(None)] * (part.ndim if part.dtype == np.bool_ else 1)
            then.append(part)
        elif _is_int(part):  # done by the first step: its dimension is gone
            first.append(part)
        else:  # a slice or None is done by the first step; Ellipsis spans the same dims
            first.append(part)
            then.append(Ellipsis if part is Ellipsis else slice(None))
    if not any(part is Ellipsis for part in first):
        first.append(Ellipsis)  # a no-op that keeps x[first] a view when every dim is an int
    return tuple(first), tuple(then)


def index_torch_style(x: np.ndarray, index) -> np.ndarray:
    """``x[index]`` with torch's meaning of the index."""
    first, then = torch_index(index)
    return x[first] if then is None else x[first][then]
