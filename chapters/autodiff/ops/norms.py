"""Norms (范数): vector_norm, matrix_norm, and torch.norm / torch.dist on them.

The p-norm of the elements x_i reduced over ``dim`` is

    ||x||_p   = (sum_i |x_i|^p)^(1/p)     (p finite, p != 0)
    ||x||_0   = the number of non-zero x_i
    ||x||_inf = max_i |x_i|,   ||x||_-inf = min_i |x_i|.

Differentiating the finite case gives

    d||x||_p / dx_i = sgn(x_i) |x_i|^(p-1) / ||x||_p^(p-1),

which is x / ||x|| for p = 2 and sgn(x) for p = 1. At x_i = 0 or at a zero
norm the formula reads 0 * inf or 0 / 0; torch defines the gradient there
as 0 (so the 2-norm of the zero vector has gradient 0, not NaN) and so does
this engine. That is why the finite norms are one kernel with its own rule:
the composition sqrt(sum(x^2)) would give NaN at zero. The inf norms are
compositions, abs then amax / amin, whose rule already splits the gradient
evenly among tied elements (as torch does) and gives 0 at the zero vector
(sgn(0) = 0).

Matrix norms reduce two dims (rows r, columns c):

    'fro': sqrt(sum_rc A_rc^2)  (the 2-norm of all elements)
    1 / -1:     max / min over columns of sum_r |A_rc|
    inf / -inf: max / min over rows of sum_c |A_rc|

each a composition of abs, sum and amax / amin. The spectral norms (2, -2)
and the nuclear norm ('nuc') need singular values, which this engine does
not compute: they raise NotImplementedError.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from chapters.graph.ops import (
    TensorMeta,
    axes,
    check_dim,
    normalize_dims,
    reduced_shape,
    register_op,
)

from .. import dtypes
from ..dispatch import FLOAT32, public
from ..rules import register
from ..tensor import Tensor, apply, tensor_method
from .common import expand_reduced, masked, reduced_count

# ------------------------------------------------------- the finite p-norm


def _vector_norm_meta(x: TensorMeta, ord, dim=None, keepdim=False, **_) -> TensorMeta:
    return TensorMeta(reduced_shape("linalg.vector_norm", x.shape, dim, keepdim), x.dtype)


@register_op("linalg_vector_norm", _vector_norm_meta)
def vector_norm_kernel(x, ord, dim=None, keepdim=False):
    """(sum |x|^p)^(1/p) over ``dim`` for a finite ``ord`` p (p = 0 counts the
    non-zero elements), in x's floating dtype."""
    a = np.abs(x)
    dims = axes(dim, x.ndim)
    if ord == 0:
        out = np.sum(a != 0, axis=dims, keepdims=keepdim)
    elif ord == 1:
        out = np.sum(a, axis=dims, keepdims=keepdim)
    elif ord == 2:
        out = np.sqrt(np.sum(a * a, axis=dims, keepdims=keepdim))
    else:
        with np.errstate(divide="ignore"):  # 0 ** -1 = inf, whose (1/p)-th power is 0
            out = np.sum(a ** ord, axis=dims, keepdims=keepdim) ** (1 / ord)
    return np.asarray(out, dtype=x.dtype)


def norm_derivative(x: Tensor, norm: Tensor, ord: float, dim, keepdim: bool) -> Tensor:
    """d||x||_p / dx = sgn(x) |x|^(p-1) / ||x||^(p-1), set to 0 where x = 0
    and where the norm is 0 (torch's convention)."""
    if ord == 1:
        return x.sign()
    norm = expand_reduced(norm, x.data.shape, dim, keepdim)
    nonzero_x, nonzero_norm = x.data != 0, norm.data != 0
    with np.errstate(divide="ignore", invalid="ignore"):  # the 0/0 and 0 * inf masked here
        if ord == 2:
            return masked(x / norm, nonzero_norm)
        power = masked(x.sign() * x.abs() ** (ord - 1), nonzero_x)
        return masked(power * norm ** (1 - ord), nonzero_norm)


def vector_norm_vjp(ctx, g):
    """z = ||x||_p:  dL/dx = g d||x||_p/dx (no gradient for p = 0, a count)."""
    x, z = ctx.saved
    attrs = ctx.attrs
    if attrs["ord"] == 0:
        return (None,)
    shape = x.data.shape
    weight = norm_derivative(x, z, attrs["ord"], attrs["dim"], attrs["keepdim"])
    return (expand_reduced(g, shape, attrs["dim"], attrs["keepdim"]) * weight,)


def vector_norm_jvp(primals, tangents, out, ord, dim=None, keepdim=False):
    """tz = sum_dim (d||x||_p/dx) tx (0 for p = 0)."""
    x, t = primals[0], tangents[0]
    if ord == 0:
        return (t * 0).sum(dim, keepdim)
    return (norm_derivative(x, out, ord, dim, keepdim) * t).sum(dim, keepdim)


register("linalg_vector_norm", vjp=vector_norm_vjp, jvp=vector_norm_jvp, saves=(0, "out"))

# ------------------------------------------------------------ vector_norm


def _floating_input(op: str, x: Tensor, dtype) -> Tensor:
    """x in ``dtype`` (when given); both must be floating, as in torch."""
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype)
        if not dtypes.is_floating(dtype):
            raise RuntimeError(f"{op}: dtype should be floating point, but got {dtype}; "
                               "pass dtype=torch.float32 or leave it out.")
        x = x.to(dtype)
    if not dtypes.is_floating(x.dtype):
        raise RuntimeError(f"{op}: expected a floating point tensor as input, got {x.dtype}; "
                           "convert first, e.g. x.float().")
    return x


def _norm_dims(dim) -> tuple | None:
    """torch's dim: None or () for every dim, an int or a tuple of them."""
    if dim is None or (isinstance(dim, tuple | list) and not dim):
        return None
    return (dim,) if isinstance(dim, int) else tuple(dim)


def _check_identity(op: str, x: Tensor, ord: float, dim) -> None:
    """A norm of no elements is 0 when it is a sum; the max, the min and the
    negative powers (a min in disguise) have no value to start from."""
    if reduced_count(x.shape, dim) == 0 and (ord < 0 or ord == math.inf):
        raise RuntimeError(f"{op}: cannot compute the {ord} norm over no elements (tensor "
                           f"of shape {list(x.shape)}, dim {dim}): the operation has no "
                           "identity; reduce over non-empty dims.")


@public("linalg_vector_norm")
def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """torch.linalg.vector_norm: the ``ord``-norm of x's elements over ``dim``."""
    op = "linalg.vector_norm"
    if isinstance(ord, str) or not isinstance(ord, numbers.Real):
        raise TypeError(f"{op}: ord must be a number, got {ord!r}; for the Frobenius norm use "
                        "ord=2 here, or linalg.matrix_norm(A, 'fro').")
    x = _floating_input(op, x, dtype)
    dim = _norm_dims(dim)
    normalize_dims(op, dim, x.ndim)  # refuses a dim out of range or named twice
    ord = float(ord)
    _check_identity(op, x, ord, dim)
    if ord == math.inf:
        return x.abs().amax(dim, keepdim)
    if ord == -math.inf:
        return x.abs().amin(dim, keepdim)
    return apply("linalg_vector_norm", (x,), {"ord": ord, "dim": dim, "keepdim": keepdim})


# ------------------------------------------------------------ matrix_norm

#: the orders whose norms need singular values, which this engine leaves out
SPECTRAL_ORDERS = ("nuc", 2, -2)


def _sum_then_extremum(a: Tensor, sum_dim: int, pick_dim: int, largest: bool) -> Tensor:
    """max (or min) over ``pick_dim`` of sum |a| over ``sum_dim`` (dims kept).
    With no sums to pick from, torch's max is 0 (a constant, outside autograd)
    and its min an IndexError."""
    sums = a.abs().sum(sum_dim, keepdim=True)
    if sums.shape[pick_dim] == 0:
        if not largest:
            raise IndexError(f"linalg.matrix_norm: dim {pick_dim} of the matrix of shape "
                             f"{list(a.shape)} is empty, so there is no smallest sum to pick; "
                             "use a non-empty matrix or the 'fro' norm.")
        shape = tuple(1 if d == pick_dim else n for d, n in enumerate(sums.shape))
        return Tensor(np.zeros(shape, a.dtype))
    return sums.amax(pick_dim, keepdim=True) if largest else sums.amin(pick_dim, keepdim=True)


@public("linalg_matrix_norm")
def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """torch.linalg.matrix_norm over the two dims ``dim`` (rows, columns):
    'fro', 1, -1, inf, -inf (see the module docstring)."""
    op = "linalg.matrix_norm"
    if A.ndim < 2:
        raise RuntimeError(f"{op}: the input tensor A must have at least 2 dimensions, got "
                           f"shape {list(A.shape)}; use linalg.vector_norm for vectors.")
    dim = tuple(dim) if isinstance(dim, tuple | list) else (dim,)
    if len(dim) != 2:
        raise RuntimeError(f"{op}: dim must be a 2-tuple (rows, columns), got {dim}.")
    rows, cols = (check_dim(op, d, A.ndim) for d in dim)
    if rows == cols:
        raise RuntimeError(f"{op}: dim {dim} names one dimension twice; give two different "
                           "dims (rows, columns).")
    A = _floating_input(op, A, dtype)
    if ord == "fro":
        return vector_norm(A, 2, dim, keepdim)
    if ord in SPECTRAL_ORDERS:
        raise NotImplementedError(f"{op}: order {ord!r} needs the singular values of A, which "
                                  "this engine does not compute; use 'fro', 1, -1, inf or -inf.")
    if ord not in (1, -1, math.inf, -math.inf):
        raise RuntimeError(f"{op}: order {ord!r} not supported; use 'fro', 1, -1, inf or -inf.")
    over_columns = abs(ord) == 1  # 1: sum down each column, then pick a column
    out = _sum_then_extremum(A, rows if over_columns else cols, cols if over_columns else rows,
                             largest=ord > 0)
    if keepdim:
        return out
    return out.reshape(tuple(s for i, s in enumerate(out.shape) if i not in (rows, cols)))


# --------------------------------------------------------- norm and dist


@tensor_method()
@public("norm", autocast={"cuda": FLOAT32})
def norm(input, p="fro", dim=None, keepdim=False, dtype=None):
    """torch.norm: with a number p (None meaning 2), the vector norm over
    ``dim``; 'fro' over at most two dims is the vector 2-norm; other strings
    ('nuc') are matrix norms over ``dim`` (all dims when None)."""
    if isinstance(p, str):
        if p == "fro" and (dim is None or isinstance(dim, int) or len(dim) <= 2):
            return vector_norm(input, 2, dim, keepdim, dtype=dtype)
        dims = tuple(range(input.ndim)) if dim is None else dim
        return matrix_norm(input, p, dims, keepdim, dtype=dtype)
    return vector_norm(input, 2 if p is None else p, dim, keepdim, dtype=dtype)


@tensor_method()
@public("dist", autocast={"cuda": FLOAT32})
def dist(input, other, p=2):
    """torch.dist: ||input - other||_p over every element (the two broadcast)."""
    return vector_norm(input - other, p)
