"""Where a tensor's elements sit in memory: ``stride``, ``is_contiguous``,
``data_ptr``, ``storage_offset``, and ``f"{loss:.3f}"`` (``__format__``).

A tensor's values are a numpy array, and numpy describes memory as torch
does: a start address and, per dim, a stride (how far apart neighbours along
that dim are). numpy counts strides in bytes, torch in elements, so each
stride here is numpy's divided by the element size. A view (``x.t()``,
``x[1:]``, ``x.expand(...)``) shares its base's memory: its ``data_ptr`` is the
address of its first element, and its ``storage_offset`` counts elements
from the start of the memory it shares.

Deliberate differences: a stride of a dim of size 1 or 0 may differ from
torch's (neither library reads it); ``contiguous()`` returns the tensor
itself even when it is not contiguous (the engine's kernels take any layout);
one element read with an integer per dim (``x[1, 2]``) is a copy, as numpy
makes it, where torch gives a 0-d view (offset 6 in a 4 x 4 tensor).
"""

from __future__ import annotations

import numpy as np

from chapters.graph.ops import check_dim

from .tensor import Tensor, tensor_method


@tensor_method()
def stride(self: Tensor, dim: int | None = None):
    """Per dim, how many elements apart neighbours along that dim are
    (``x.stride()``), or that of one dim (``x.stride(dim)``)."""
    steps = tuple(s // self.data.itemsize for s in self.data.strides)
    if dim is None:
        return steps
    return steps[check_dim("stride", dim, self.ndim)]


@tensor_method()
def is_contiguous(self: Tensor) -> bool:
    """Whether the elements sit in row-major order with no gaps: strides
    (..., n_last, 1) up to dims of size 1, which may have any stride."""
    return bool(self.data.flags.c_contiguous)


def _memory_owner(array: np.ndarray) -> np.ndarray:
    """The array whose memory ``array`` views (itself, if it owns its memory)."""
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


@tensor_method()
def data_ptr(self: Tensor) -> int:
    """The address of the first element: equal for a tensor and its views at
    offset 0, larger by offset * element size for the others."""
    return int(self.data.__array_interface__["data"][0])


@tensor_method()
def storage_offset(self: Tensor) -> int:
    """How many elements the first element sits after the start of the
    memory this tensor shares (0 unless it is a view into another tensor)."""
    start = _memory_owner(self.data).__array_interface__["data"][0]
    return (data_ptr(self) - start) // self.data.itemsize


@tensor_method()
def __format__(self: Tensor, spec: str) -> str:
    """``f"{loss:.3f}"``: a 0-d tensor formats as its Python number; any
    other tensor only with an empty spec (its ``str``), as in torch."""
    if self.ndim == 0:
        return format(self.item(), spec)
    if spec:
        raise TypeError(f"unsupported format string {spec!r} passed to Tensor.__format__: "
                        f"only a 0-d tensor formats as a number, this one has shape "
                        f"{list(self.shape)}; format x.item() or x.tolist() instead")
    return str(self)
