"""Ordering: sort, argsort, topk, unique.

Sorting is a permutation, chosen by comparing values, so it has no rule of
its own: the engine computes the permutation's indices with numpy, and the
sorted values are ``gather(x, dim, indices)``, whose gradient sends each
g back to the element it came from. topk is the first k of a sort. unique's
result has no gradient in torch either, so it is computed outside the
history. NaN sorts as the largest value, as in torch.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from chapters.graph.ops import normalize_dims

from ..dispatch import public
from ..dtypes import bool_
from ..tensor import Tensor, apply, tensor_method

_Sorted = namedtuple("return_types", ["values", "indices"])


def _sort_order(x: np.ndarray, dim: int, descending: bool) -> np.ndarray:
    """The stable sorting permutation along ``dim``: equal elements keep their
    order, in both directions (descending is the ascending order of x read
    backwards, then read backwards again)."""
    if not descending:
        return np.argsort(x, axis=dim, kind="stable")
    n = x.shape[dim]
    backwards = np.argsort(np.flip(x, dim), axis=dim, kind="stable")
    return n - 1 - np.flip(backwards, dim)


def _permutation(op: str, input, dim: int, descending: bool) -> tuple:
    """``(dim, indices)`` for sorting ``input`` (0-d read as 1 element)."""
    (d,) = normalize_dims(op, dim, input.ndim)
    order = _sort_order(np.atleast_1d(input.data), d, descending).astype(np.int64)
    return d, order


def _gathered(input, d: int, indices: np.ndarray) -> Tensor:
    """input's values at ``indices`` along ``d``, shaped as input (0-d too)."""
    flat = input.reshape(indices.shape) if not input.ndim else input
    values = apply("gather", (flat,), {"dim": d, "index": indices})
    return values.reshape(()) if not input.ndim else values


@tensor_method()
@public("sort")
def sort(input, dim: int = -1, descending: bool = False, *, stable: bool = False):
    """torch.sort: ``(values, indices)`` along ``dim``. This engine always
    sorts stably (torch does when ``stable=True``; otherwise the order of
    ties is unspecified there)."""
    d, order = _permutation("sort", input, dim, descending)
    return _Sorted(_gathered(input, d, order), Tensor(order.reshape(input.shape)))


@tensor_method()
@public("argsort")
def argsort(input, dim: int = -1, descending: bool = False, *, stable: bool = False):
    """torch.argsort: the indices that sort input along ``dim``."""
    _, order = _permutation("argsort", input, dim, descending)
    return Tensor(order.reshape(input.shape))


@tensor_method()
@public("msort")
def msort(input):
    """torch.msort: the values sorted along dim 0."""
    return sort(input, 0).values


@tensor_method()
@public("topk")
def topk(input, k: int, dim: int = -1, largest: bool = True, sorted: bool = True):
    """torch.topk: the k largest (or smallest) values along ``dim`` and their
    indices, largest first: the first k entries of a sort."""
    if input.dtype == bool_:
        raise RuntimeError("topk does not support bool tensors (as in torch on the CPU); "
                           "convert first, e.g. x.int().topk(k).")
    d, order = _permutation("topk", input, dim, descending=largest)
    size = order.shape[d]
    if not 0 <= k <= size:
        raise RuntimeError(f"topk: selected index k={k} out of range for dim {d} of size "
                           f"{size}; k must lie in [0, {size}].")
    first_k = np.take(order, np.arange(k), axis=d)
    if not input.ndim:
        return _Sorted(_gathered(input, d, first_k), Tensor(first_k.reshape(())))
    return _Sorted(_gathered(input, d, first_k), Tensor(first_k))


@tensor_method()
@public("unique")
def unique(input, sorted: bool = True, return_inverse: bool = False,
           return_counts: bool = False, dim: int | None = None):
    """torch.unique: the distinct values (sorted), optionally the index of
    each input element in them and how often each occurs. Not differentiable
    (in torch neither): the result carries no history."""
    axis = None if dim is None else normalize_dims("unique", dim, input.ndim)[0]
    values, inverse, counts = np.unique(input.data, return_inverse=True, return_counts=True,
                                        axis=axis)
    out = [Tensor(values)]
    if return_inverse:
        shape = input.shape if axis is None else (input.shape[axis],)
        out.append(Tensor(inverse.reshape(shape).astype(np.int64)))
    if return_counts:
        out.append(Tensor(counts.astype(np.int64)))
    return out[0] if len(out) == 1 else tuple(out)
