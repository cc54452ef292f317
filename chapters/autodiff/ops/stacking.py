"""Stacking and turning: hstack, vstack, dstack, column_stack, row_stack,
atleast_1d/2d/3d, rot90, fliplr, flipud.

None of these needs a rule of its own: each is a composition of ``reshape``,
``cat``, ``flip`` and ``transpose``, which already have one, so the gradient
of a stack is the slices of g where each input landed (cat's), and the
gradient of a rotation is g rotated back (flip's and transpose's).

The stacks first lift every input to enough dims (``atleast_*``), then join
along one dim: hstack along dim 1 (dim 0 for vectors), vstack along dim 0,
dstack along dim 2. rot90 turns the plane ``dims`` by k quarter turns, from
the first dim towards the second: one turn is flip the second dim, then swap
the two.
"""

from __future__ import annotations

from ..dispatch import PROMOTE, public
from ..functions import cat
from ..tensor import Tensor, tensor_method
from .rearrange import flip

#: torch's stacks call cat, so CPU autocast promotes mixed float16/float32 inputs as cat's
_LIKE_CAT = {"cpu": PROMOTE}

#: the shape a tensor of fewer dims takes in atleast_{1,2,3}d, by its ndim
_LIFTS = {
    1: {0: lambda s: (1,)},
    2: {0: lambda s: (1, 1), 1: lambda s: (1, *s)},
    3: {0: lambda s: (1, 1, 1), 1: lambda s: (1, *s, 1), 2: lambda s: (*s, 1)},
}


def _lift(x: Tensor, ndim: int) -> Tensor:
    """x with at least ``ndim`` dims (a view, or x itself when it has them)."""
    lift = _LIFTS[ndim].get(x.ndim)
    return x if lift is None else x.reshape(lift(tuple(x.shape)))


def _atleast(ndim: int, tensors: tuple):
    """``atleast_nd(x)`` gives a tensor; several tensors, or one list, a tuple."""
    if len(tensors) == 1 and isinstance(tensors[0], list | tuple):
        return tuple(_lift(x, ndim) for x in tensors[0])
    if len(tensors) == 1:
        return _lift(tensors[0], ndim)
    return tuple(_lift(x, ndim) for x in tensors)


@public("atleast_1d")
def atleast_1d(*tensors):
    """torch.atleast_1d: a 0-d tensor becomes shape (1,); others are returned as they are."""
    return _atleast(1, tensors)


@public("atleast_2d")
def atleast_2d(*tensors):
    """torch.atleast_2d: 0-d -> (1, 1), a vector (n,) -> a row (1, n)."""
    return _atleast(2, tensors)


@public("atleast_3d")
def atleast_3d(*tensors):
    """torch.atleast_3d: 0-d -> (1, 1, 1), (n,) -> (1, n, 1), (m, n) -> (m, n, 1)."""
    return _atleast(3, tensors)


def _nonempty(op: str, tensors) -> list:
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError(f"{op} expects a non-empty TensorList; pass a list of tensors, "
                           f"e.g. torch.{op}([a, b]).")
    return tensors


@public("hstack", autocast=_LIKE_CAT)
def hstack(tensors):
    """torch.hstack: join side by side, along dim 1 (along dim 0 for vectors)."""
    xs = [_lift(x, 1) for x in _nonempty("hstack", tensors)]
    return cat(xs, 0 if xs[0].ndim == 1 else 1)


@public("vstack", autocast=_LIKE_CAT)
def vstack(tensors):
    """torch.vstack: join as rows, along dim 0 after lifting vectors to rows (1, n)."""
    return cat([_lift(x, 2) for x in _nonempty("vstack", tensors)], 0)


@public("row_stack", autocast=_LIKE_CAT)
def row_stack(tensors):
    """torch.row_stack: torch's other name for vstack."""
    return vstack(tensors)


@public("dstack", autocast=_LIKE_CAT)
def dstack(tensors):
    """torch.dstack: join along dim 2 (depth) after atleast_3d."""
    return cat([_lift(x, 3) for x in _nonempty("dstack", tensors)], 2)


@public("column_stack", autocast=_LIKE_CAT)
def column_stack(tensors):
    """torch.column_stack: 0-d and 1-d inputs become columns (n, 1), then hstack."""
    xs = _nonempty("column_stack", tensors)
    return hstack([x.reshape(x.numel(), 1) if x.ndim <= 1 else x for x in xs])


@tensor_method()
@public("fliplr")
def fliplr(input):
    """torch.fliplr: reverse the columns (dim 1); needs at least 2 dims."""
    if input.ndim < 2:
        raise RuntimeError(f"fliplr: Input must be >= 2-d, got shape {list(input.shape)}; "
                           "use flip(x, 0) to reverse a vector.")
    return flip(input, 1)


@tensor_method()
@public("flipud")
def flipud(input):
    """torch.flipud: reverse the rows (dim 0); needs at least 1 dim."""
    if input.ndim < 1:
        raise RuntimeError("flipud: Input must be >= 1-d, got a 0-d tensor; there is "
                           "nothing to reverse (x.reshape(1) first).")
    return flip(input, 0)


def _rotation_dims(input, dims) -> tuple[int, int]:
    dims = tuple(dims)
    if len(dims) != 2:
        raise RuntimeError(f"rot90: expected total rotation dims == 2, but got dims = "
                           f"{len(dims)}; name the plane to turn, e.g. dims=(0, 1).")
    if input.ndim < 2:
        raise RuntimeError(f"rot90: expected total dims >= 2, but got total dims = "
                           f"{input.ndim}; a rotation needs a plane (two dims).")
    for d in dims:
        if not -input.ndim <= d < input.ndim:
            raise IndexError(f"rot90: Dimension out of range (expected to be in range of "
                             f"[{-input.ndim}, {input.ndim - 1}], but got {d})")
    first, second = (d % input.ndim for d in dims)
    if first == second:
        raise RuntimeError(f"rot90: expected rotation dims to be different, but got dim0 = "
                           f"{dims[0]} and dim1 = {dims[1]}")
    return first, second


@tensor_method()
@public("rot90")
def rot90(input, k: int = 1, dims=(0, 1)):
    """torch.rot90: k quarter turns in the plane ``dims``, from dims[0]
    towards dims[1] (negative k turns the other way). One turn is
    flip(dims[1]) then transpose; two flip both dims; three flip(dims[0]) then
    transpose. Zero turns give a copy."""
    first, second = _rotation_dims(input, dims)
    turns = k % 4
    if turns == 1:
        return flip(input, second).transpose(first, second)
    if turns == 2:
        return flip(input, first, second)
    if turns == 3:
        return flip(input, first).transpose(first, second)
    return input.clone()
