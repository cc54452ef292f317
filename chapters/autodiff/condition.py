"""``torch.where`` in both of its forms.

``where(condition, input, other)`` picks elementwise (:func:`.functions.where`);
``where(condition)`` alone is ``nonzero(condition, as_tuple=True)``: one int64
tensor of indices per dim, naming the elements where condition is nonzero.
"""

from __future__ import annotations

from . import functions
from .ops.select import nonzero

_MISSING = object()


def where(condition, input=_MISSING, other=_MISSING):
    """``condition ? input : other``, or with the condition alone the tuple of
    index tensors of its nonzero elements (as ``nonzero(as_tuple=True)``)."""
    if input is _MISSING and other is _MISSING:
        return nonzero(condition, as_tuple=True)
    if input is _MISSING or other is _MISSING:
        raise TypeError("where() takes the condition alone, or the condition, input and "
                        "other; pass both values to choose between, e.g. where(c, x, 0.0)")
    return functions.where(condition, input, other)
