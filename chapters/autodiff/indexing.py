"""torch's indexing rule, as numpy indexing steps.

numpy and torch agree on ``x[index]`` except in one place: an integer next
to an integer array. numpy counts the integer as one more advanced index
(broadcast with the arrays), torch applies it first, as basic indexing that
removes its dimension. The two disagree when a slice separates them:
for x of shape (2, 3, 4), ``x[0, :, [1, 2]]`` is (2, 3) in numpy, because
numpy moves separated advanced indices to the front, and (3, 2) in torch,
which has only one advanced index left after taking ``x[0]``.

:func:`torch_index` splits such an index into torch's two steps, each of
which numpy then does as torch does.
"""

from __future__ import annotations

import numpy as np


def _is_int(part) -> bool:
    return isinstance(part, int | np.integer) and not isinstance(part, bool | np.bool_)


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
    return tuple(first), tuple(then)


def index_torch_style(x: np.ndarray, index) -> np.ndarray:
    """``x[index]`` with torch's meaning of the index."""
    first, then = torch_index(index)
    return x[first] if then is None else x[first][then]
