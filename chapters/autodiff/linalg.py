"""``torch.linalg``'s names: norm, vector_norm, matrix_norm.

The norms themselves, their math and their gradients are in
:mod:`chapters.autodiff.ops.norms`; this module is the namespace torch code
reaches them through (``torch.linalg.norm(x)``), and holds ``norm``, which
picks the vector or the matrix norm from ``ord`` and ``dim``.
"""

from __future__ import annotations

from .dispatch import public
from .ops.norms import matrix_norm, vector_norm


@public("linalg_norm")
def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """torch.linalg.norm: a vector norm over one dim, a matrix norm over two.

    With neither ``ord`` nor ``dim``, the 2-norm of every element. With
    ``ord`` but no ``dim``, A must be 1-D (a vector norm) or 2-D (a matrix
    norm). A ``dim`` of one int is a vector norm (ord 2 by default), of two a
    matrix norm ('fro' by default)."""
    if dim is None:
        if ord is None:
            return vector_norm(A, 2, None, keepdim, dtype=dtype)
        if A.ndim not in (1, 2):
            raise RuntimeError(f"linalg.norm: if dim is not specified but ord is, the input "
                               f"must be 1D or 2D, got {A.ndim}D; pass dim=(-2, -1) for a "
                               "batch of matrices or flatten A for a vector norm.")
        dim = (0,) if A.ndim == 1 else (0, 1)
    dim = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dim) == 1:
        return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)
    if len(dim) == 2:
        return matrix_norm(A, "fro" if ord is None else ord, dim, keepdim, dtype=dtype)
    raise RuntimeError(f"linalg.norm: dim must have length 1 or 2, got {list(dim)}; use "
                       "linalg.vector_norm for a norm over more dims.")


__all__ = ["matrix_norm", "norm", "vector_norm"]
