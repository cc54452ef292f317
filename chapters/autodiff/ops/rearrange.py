"""Moving elements around: flip, roll, repeat, tile, tril, triu, diag.

None of these needs a rule of its own: each is a composition of ops that
already have one, and that is the lesson. flip and roll read x at a
permuted index (``getitem`` with an integer array, whose adjoint writes the
gradient back to where each element came from); repeat is a reshape, an
expand and a reshape (expand's adjoint sums the copies); tril/triu keep x
where a mask holds (``where``); diag reads or writes one diagonal
(``getitem`` / ``getitem_backward``). Like torch, every result is a new
tensor, never a view.
"""

from __future__ import annotations

import numpy as np

from chapters.graph.ops import normalize_dims

from ..dispatch import public
from ..tensor import Tensor, apply, tensor_method


def _dims_arg(dims) -> tuple:
    """``flip(0, 1)``, ``flip((0, 1))`` and ``flip([0, 1])`` alike."""
    if len(dims) == 1 and isinstance(dims[0], tuple | list):
        return tuple(dims[0])
    return tuple(dims)


def _take(x: Tensor, dim: int, positions: np.ndarray) -> Tensor:
    """x indexed along ``dim`` by the integer array ``positions`` (a copy)."""
    index = (slice(None),) * dim + (positions,)
    return apply("getitem", (x,), {"index": index})


@tensor_method()
@public("flip")
def flip(input, *dims):
    """torch.flip: reverse the order of elements along each of ``dims``."""
    out = input.clone()  # a new tensor even when nothing moves (0-d, no dims)
    for d in normalize_dims("flip", _dims_arg(dims), input.ndim) if input.ndim else ():
        out = _take(out, d, np.arange(input.shape[d] - 1, -1, -1))
    return out


@tensor_method()
@public("roll")
def roll(input, shifts, dims=None):
    """torch.roll: shift elements along ``dims`` by ``shifts``, wrapping
    around: out[(i + s) % n] = x[i]. With no dims, the flattened tensor is
    rolled and the shape restored."""
    if dims is None:
        return roll(input.reshape(-1), shifts, 0).reshape(input.shape)
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"roll: shifts {shifts} and dims {dims} must have the same length "
                           "(one shift per dim).")
    out = input.clone()
    for shift, dim in zip(shifts, dims, strict=True):
        (d,) = normalize_dims("roll", dim, input.ndim)
        n = input.shape[d] if input.ndim else 0
        if n:
            out = _take(out, d, (np.arange(n) - shift) % n)
    return out


@tensor_method()
@public("repeat")
def repeat(input, *sizes):
    """torch.repeat: tile the whole tensor ``sizes[i]`` times along dim i
    (``sizes`` may add leading dims). It is x reshaped to (1, s0, 1, s1, ...),
    expanded to (r0, s0, r1, s1, ...) and flattened pairwise, so its gradient
    is expand's: the sum over the copies."""
    sizes = tuple(int(s) for s in _dims_arg(sizes))
    if len(sizes) < input.ndim:
        raise RuntimeError(
            f"repeat: {len(sizes)} repeat counts {sizes} for a tensor with {input.ndim} dims; "
            "give one count per dim (use 1 to keep a dim), or tile() which pads with 1s.")
    shape = (1,) * (len(sizes) - input.ndim) + tuple(input.shape)
    paired = [n for s in shape for n in (1, s)]
    expanded = [n for r, s in zip(sizes, shape, strict=True) for n in (r, s)]
    out = input.reshape(paired).expand(*expanded)
    out = out.reshape(tuple(r * s for r, s in zip(sizes, shape, strict=True)))
    return out.clone() if np.may_share_memory(out.data, input.data) else out  # never a view


@tensor_method()
@public("tile")
def tile(input, dims):
    """torch.tile: repeat, with missing leading counts taken as 1."""
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    return repeat(input, *((1,) * (input.ndim - len(dims)) + dims))


def _triangle(op: str, input, diagonal: int, keep) -> Tensor:
    if input.ndim < 2:
        raise RuntimeError(f"{op}: input tensor must have at least 2 dimensions, got shape "
                           f"{list(input.shape)}; reshape a vector to a matrix first.")
    rows, cols = input.shape[-2:]
    mask = keep(np.ones((rows, cols), dtype=bool), diagonal)
    return apply("where", (mask, input, np.zeros((), input.dtype)))


@tensor_method()
@public("tril")
def tril(input, diagonal: int = 0):
    """torch.tril: keep the elements on and below the ``diagonal``-th
    diagonal of the last two dims, zero the rest (a ``where`` on a mask)."""
    return _triangle("tril", input, diagonal, np.tril)


@tensor_method()
@public("triu")
def triu(input, diagonal: int = 0):
    """torch.triu: keep the elements on and above the ``diagonal``-th diagonal."""
    return _triangle("triu", input, diagonal, np.triu)


def _diagonal_positions(n: int, diagonal: int) -> tuple:
    """(rows, cols) of the ``diagonal``-th diagonal's n elements."""
    k = np.arange(n)
    return (k, k + diagonal) if diagonal >= 0 else (k - diagonal, k)


@tensor_method()
@public("diag")
def diag(input, diagonal: int = 0):
    """torch.diag: a 1-D tensor becomes a square matrix with it on the
    ``diagonal``-th diagonal (a ``getitem_backward``: zeros with x written at
    those positions); a 2-D tensor gives that diagonal (a ``getitem``). Each
    is the other's adjoint, so each one's gradient is the other."""
    if input.ndim == 1:
        n = input.shape[0]
        size = n + abs(diagonal)
        return apply("getitem_backward", (input,), {
            "index": _diagonal_positions(n, diagonal), "shape": (size, size)})
    if input.ndim == 2:
        rows, cols = input.shape
        n = max(0, min(rows, cols - diagonal) if diagonal >= 0 else min(rows + diagonal, cols))
        return apply("getitem", (input,), {"index": _diagonal_positions(n, diagonal)})
    raise RuntimeError(f"diag(): supports 1D or 2D tensors, got {input.ndim}D of shape "
                       f"{list(input.shape)}; use torch.diagonal-style indexing for batches.")

