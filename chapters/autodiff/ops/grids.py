"""Grids and index patterns: meshgrid, broadcast_tensors, broadcast_shapes,
cartesian_prod, combinations, tril_indices, triu_indices.

None of these needs a rule of its own; each is a composition of ops that
already have one, so there is no new derivative to get wrong:

* meshgrid(a, b)[0][i, j] = a[i] is a reshaped to (n, 1) and expanded to
  (n, m): expand's adjoint sums the copies, so dL/da[i] = sum_j g[i, j];
* broadcast_tensors(x, y) expands each to the common shape (the same rule);
* cartesian_prod(a, b) stacks the flattened meshgrid outputs as columns;
* combinations(x, r)[k] = x[c_k] for the k-th r-subset c_k of positions, a
  ``getitem`` with an integer array whose adjoint sums the copies.

tril_indices and triu_indices build int64 positions from two sizes: no
input, no gradient.
"""

from __future__ import annotations

import itertools

import numpy as np

from .. import dtypes
from ..dispatch import public
from ..functions import stack
from ..tensor import Tensor, apply


def _tensor_list(op: str, tensors: tuple) -> list:
    """``f(a, b)`` and ``f([a, b])`` alike; every element must be a Tensor."""
    if len(tensors) == 1 and isinstance(tensors[0], list | tuple):
        tensors = tuple(tensors[0])
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}(): expected Tensors, got {type(t).__name__} at position "
                            f"{i}; wrap it with torch.tensor(...).")
    return list(tensors)


def _vectors(op: str, tensors: list, *, allow_0d: bool) -> None:
    """The inputs must be 1-d (or 0-d where allowed) and share one dtype."""
    for i, t in enumerate(tensors):
        if t.ndim > 1 or (t.ndim == 0 and not allow_0d):
            raise RuntimeError(f"{op}: expected 1-d tensors{' (or 0-d)' if allow_0d else ''}, "
                               f"got shape {list(t.shape)} at position {i}; flatten it with "
                               "x.reshape(-1).")
    if len({t.dtype for t in tensors}) > 1:
        raise RuntimeError(f"{op} expects all tensors to have the same dtype, got "
                           f"{[str(t.dtype) for t in tensors]}; convert them with .to(dtype).")


@public("meshgrid")
def meshgrid(*tensors, indexing: str = "ij"):
    """torch.meshgrid: for 1-d inputs t_0..t_{n-1} of lengths s_k, n tensors
    of shape (s_0, ..., s_{n-1}) with out_k[i_0, ..., i_{n-1}] = t_k[i_k]
    ("ij", matrix indexing). With "xy" (Cartesian indexing) the first two
    dims swap: shape (s_1, s_0, s_2, ...), as numpy.meshgrid. Each output is
    t_k reshaped and expanded (a view): expand's adjoint sums over the copies."""
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but '
                           f"received: {indexing}")
    xs = _tensor_list("meshgrid", tensors)
    _vectors("meshgrid", xs, allow_0d=True)
    axes = list(range(len(xs)))
    if indexing == "xy" and len(xs) > 1:
        axes[0], axes[1] = 1, 0
    sizes = [t.data.size for t in xs]
    shape = tuple(sizes[a] for a in axes)
    outs = []
    for t, axis in zip(xs, axes, strict=True):
        lined_up = [1] * len(xs)
        lined_up[axis] = -1
        outs.append(t.reshape(lined_up).expand(shape))
    return tuple(outs)


@public("broadcast_shapes")
def broadcast_shapes(*shapes) -> tuple:
    """torch.broadcast_shapes: the shape tensors of the given shapes (ints or
    sequences) broadcast to, without making any tensor (a tuple here)."""
    shapes = [(s,) if isinstance(s, int | np.integer) else tuple(s) for s in shapes]
    try:
        return tuple(int(n) for n in np.broadcast_shapes(*shapes))
    except ValueError:
        raise RuntimeError(f"broadcast_shapes: shapes {[list(s) for s in shapes]} do not "
                           "broadcast; in each dim (from the right) the sizes must match or "
                           "be 1.") from None


@public("broadcast_tensors")
def broadcast_tensors(*tensors):
    """torch.broadcast_tensors: each tensor expanded to the shape they all
    broadcast to (views); the gradient of each is expand's, the sum over
    the broadcast dims."""
    xs = _tensor_list("broadcast_tensors", tensors)
    shape = broadcast_shapes(*(t.shape for t in xs))
    return tuple(t.expand(shape) for t in xs)


@public("cartesian_prod")
def cartesian_prod(*tensors):
    """torch.cartesian_prod: every tuple (a_i, b_j, ...) as one row, rows in
    lexicographic order: the "ij" meshgrid flattened and stacked as columns
    (a single input comes back as a 1-d copy)."""
    xs = _tensor_list("cartesian_prod", tensors)
    _vectors("cartesian_prod", xs, allow_0d=False)
    if len(xs) == 1:
        return xs[0].clone()
    return stack([g.reshape(-1) for g in meshgrid(*xs, indexing="ij")], dim=1)


@public("combinations")
def combinations(input, r: int = 2, with_replacement: bool = False):
    """torch.combinations: the r-element subsets of a 1-d input, one per row,
    in itertools.combinations order (with_replacement: positions may repeat,
    itertools.combinations_with_replacement). out = x[C] for the (k, r)
    integer array C of positions, so dL/dx[i] sums g over where i appears."""
    _vectors("combinations", [input], allow_0d=False)
    if r < 0:
        raise RuntimeError(f"combinations: Expect a non-negative number, but got {r}.")
    if r == 0:
        return Tensor(np.empty(0, input.dtype))
    choose = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    positions = np.array(list(choose(range(input.shape[0]), r)), dtype=np.int64)
    return apply("getitem", (input,), {"index": positions.reshape(-1, r)})


def _triangle_indices(op: str, row: int, col: int, offset: int, dtype, keep) -> Tensor:
    dtype = dtypes.as_dtype(dtype)
    if dtype.kind not in "iu":
        raise NotImplementedError(f"{op}: not implemented for {dtype}; the positions are "
                                  "integers, ask for dtype=torch.int64 or torch.int32.")
    for name, n in (("row", row), ("col", col)):
        if n < 0:
            raise RuntimeError(f"{op}: {name} must be non-negative, got {n}.")
    rows, cols = np.nonzero(keep(np.ones((row, col), dtype=bool), offset))
    return Tensor(np.stack([rows, cols]).astype(dtype))


@public("tril_indices")
def tril_indices(row: int, col: int, offset: int = 0, *, dtype=dtypes.int64):
    """torch.tril_indices: the (row, col) positions on and below the
    ``offset``-th diagonal of a row x col matrix, as a (2, n) tensor in
    row-major order (``x[tuple(tril_indices(...))]`` reads them)."""
    return _triangle_indices("tril_indices", row, col, offset, dtype, np.tril)


@public("triu_indices")
def triu_indices(row: int, col: int, offset: int = 0, *, dtype=dtypes.int64):
    """torch.triu_indices: the positions on and above the ``offset``-th diagonal."""
    return _triangle_indices("triu_indices", row, col, offset, dtype, np.triu)
