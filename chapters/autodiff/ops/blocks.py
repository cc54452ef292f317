"""Matrices built from pieces, and read back: block_diag, kron, trace, cdist.

Each is a composition of ops that already have rules, so there is no new
derivative to get wrong:

* block_diag(A, B) = [[A, 0], [0, B]]: ``cat`` of each block with zeros
  beside it, so each block's gradient is its own tile of g;
* kron(a, b)[i*m + j] = a[i] b[j]: a reshaped to (n, 1), b to (1, m), a
  broadcast ``mul``, flattened; so dL/da[i] = sum_j g[i*m + j] b[j] (and in
  more dims, one such pair per dim);
* trace(A) = sum_i A[i, i]: ``diag`` (a ``getitem``) then ``sum``, so
  dL/dA = g I (g on the diagonal, zeros elsewhere);
* cdist(X, Y, p)[i, j] = ||X[i] - Y[j]||_p: a broadcast ``sub`` then
  ``linalg.vector_norm`` over the last dim. Its rule gives torch's
  gradient, sgn(d)|d|^(p-1) / ||d||^(p-1) per difference d, and 0 where
  the two points coincide (||d|| = 0), where the norm has no derivative.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..dispatch import FLOAT32, public
from ..functions import cat
from ..tensor import Tensor, tensor_method
from .norms import vector_norm
from .rearrange import diag


def _as_matrix(i: int, t) -> Tensor:
    """A block: 0-d as (1, 1), 1-d as one row (1, n), 2-d as it is."""
    if not isinstance(t, Tensor):
        raise TypeError(f"block_diag(): expected Tensors, got {type(t).__name__} at position "
                        f"{i}; wrap it with torch.tensor(...).")
    if t.ndim > 2:
        raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer dimensions. "
                           f"Input {i} has {t.ndim} dimensions; reshape it to a matrix first.")
    return t.reshape(1, -1) if t.ndim < 2 else t


@public("block_diag")
def block_diag(*tensors):
    """torch.block_diag: the blocks along the diagonal of one matrix of
    shape (sum of rows, sum of cols), zeros elsewhere, in the dtype the
    blocks promote to. Row band k is ``cat`` of zeros, block k and zeros."""
    blocks = [_as_matrix(i, t) for i, t in enumerate(tensors)]
    if not blocks:
        return Tensor(np.zeros((1, 0), dtypes.float32))
    dtype = dtypes.result_dtype([t.data for t in tensors])  # a 0-d block promotes as 0-d
    width = sum(b.shape[1] for b in blocks)
    bands, left = [], 0
    for b in blocks:
        rows, cols = b.shape
        before = Tensor(np.zeros((rows, left), dtype))
        after = Tensor(np.zeros((rows, width - left - cols), dtype))
        bands.append(cat([before, b.to(dtype), after], dim=1))
        left += cols
    return cat(bands, dim=0)


@tensor_method()
@public("kron")
def kron(input, other):
    """torch.kron: the Kronecker product. With both padded to n dims (leading
    1s), out[i_0*m_0 + j_0, ...] = a[i_0, ...] * b[j_0, ...]: a reshaped to
    (a_0, 1, a_1, 1, ...), b to (1, b_0, 1, b_1, ...), multiplied with
    broadcasting, and each (a_k, b_k) pair of dims merged."""
    n = max(input.ndim, other.ndim)
    a_shape = (1,) * (n - input.ndim) + tuple(input.shape)
    b_shape = (1,) * (n - other.ndim) + tuple(other.shape)
    spread_a = input.reshape([s for k in a_shape for s in (k, 1)])
    spread_b = other.reshape([s for k in b_shape for s in (1, k)])
    return (spread_a * spread_b).reshape([p * q for p, q in zip(a_shape, b_shape, strict=True)])


@tensor_method()
@public("trace", autocast={"cpu": FLOAT32})
def trace(input):
    """torch.trace: the sum of a matrix's diagonal, sum_i A[i, i] (int64 for
    integer matrices; torch refuses bool): ``diag`` then ``sum``, so the
    gradient is g on the diagonal."""
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim} "
                           f"(shape {list(input.shape)}); for a batch use "
                           "x.diagonal(dim1=-2, dim2=-1).sum(-1).")
    dtypes.check_implemented("trace", input.dtype, bool_ok=False)
    return diag(input).sum()


def _check_cdist(x1, x2, p) -> None:
    for name, x in (("X1", x1), ("X2", x2)):
        if not dtypes.is_floating(x.dtype):
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got "
                               f"{x.dtype}; convert it with .float().")
        if x.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: "
                               f"{x.ndim}D; give points as rows, x.reshape(-1, features).")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"cdist: X1 and X2 must have the same number of columns, got "
                           f"{x1.shape[-1]} and {x2.shape[-1]} (shapes {list(x1.shape)}, "
                           f"{list(x2.shape)}).")
    if x1.dtype in (dtypes.float16, dtypes.bfloat16):
        raise NotImplementedError(f"cdist: not implemented for {x1.dtype} on the CPU (as in "
                                  "torch); compute in float32, x.float().")
    if p < 0:
        raise RuntimeError(f"cdist only supports non-negative p values, got {p}.")


@public("cdist", autocast={"cpu": FLOAT32, "cuda": FLOAT32})
def cdist(x1, x2, p: float = 2.0, compute_mode=None):
    """torch.cdist: out[..., i, j] = ||x1[..., i, :] - x2[..., j, :]||_p for
    every pair of rows (batch dims broadcast). Computed directly from the
    differences (torch may use a matmul for p = 2 on large inputs; the
    values agree to rounding). ``compute_mode`` is accepted and ignored."""
    _check_cdist(x1, x2, p)
    if x1.dtype != x2.dtype:
        raise RuntimeError(f"cdist: X1 and X2 must have the same dtype, got {x1.dtype} and "
                           f"{x2.dtype}; convert one with .to(other.dtype).")
    differences = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    distances = vector_norm(differences, p, dim=-1)
    if p == 0:  # a count of differing coordinates: torch's gradient is 0, not none
        return distances + (differences * 0).sum(-1)
    return distances
