"""Matrix products with torch's fixed ranks, and fused multiply-adds.

``mm`` (matrix @ matrix) and ``mv`` (matrix @ vector) are ``matmul`` with
its rank and dtype checks made strict: matmul broadcasts batches and
accepts any ranks, mm and mv insist. ``addmm`` and ``addmv`` are

    beta * input + alpha * (mat1 @ mat2)      (input broadcast to the product),

and ``addcmul`` / ``addcdiv`` are input + value * t1 * t2 and input + value *
t1 / t2. Each is a composition of ops that already have rules (matmul, mul,
div, add, where), so there is no new derivative to get wrong: the gradient
of beta * input + alpha * A B is beta G for input, alpha G B^T for A and
alpha A^T G for B, which the chain rule through those ops produces by itself.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..core import operands
from ..dispatch import LOWER_PRECISION, PROMOTE, public
from ..tensor import Tensor, apply, tensor_method

# --------------------------------------------------------------- checks


def _require(ok: bool, message: str) -> None:
    if not ok:
        raise RuntimeError(message)


def _dims(t: Tensor) -> str:
    return "x".join(map(str, t.shape))


def _check_no_bool(op: str, dtype: np.dtype) -> None:
    """torch's matrix kernels have no bool version (NotImplementedError)."""
    if dtype == dtypes.bool_:
        raise NotImplementedError(f"{op}: not implemented for bool tensors (as in torch); "
                                  "convert first, e.g. x.long() or x.float().")


def _scalar_in(dtype: np.dtype, scalar):
    """torch converts beta and alpha to the tensors' dtype: an integer product
    takes int(0.5) = 0, not 0.5."""
    return scalar if dtypes.is_floating(dtype) else int(scalar)


def _scaled_sum(op: str, input, product: Tensor, beta, alpha) -> Tensor:
    """beta * input + alpha * product; input (broadcast to the product's
    shape, never beyond it) must have the product's dtype. With beta = 0,
    input is ignored, its NaNs and infinities too, as in torch."""
    _require(input.dtype == product.dtype, f"{op}: input has dtype {input.dtype} but the "
             f"product {product.dtype}; they must have the same dtype, cast one first, "
             "e.g. input.to(mat.dtype).")
    try:
        np.broadcast_to(np.empty(input.shape, bool), product.shape)
    except ValueError:
        raise RuntimeError(f"{op}: input of shape {list(input.shape)} cannot be broadcast to "
                           f"the product's shape {list(product.shape)}; give input that "
                           "shape, or a shape with 1s where it should repeat.") from None
    beta, alpha = (_scalar_in(product.dtype, s) for s in (beta, alpha))
    if alpha != 1:
        product = product * alpha
    if beta == 0:  # 0 * input would turn its inf/NaN into NaN
        return product + apply("where", (np.zeros((), bool), input, np.zeros((), input.dtype)))
    return product + (input if beta == 1 else input * beta)


# ------------------------------------------------------------- mm, addmm


@tensor_method()
@public("mm", autocast={"cpu": LOWER_PRECISION, "cuda": LOWER_PRECISION})
def mm(input, mat2):
    """torch.mm: (n, m) @ (m, p) -> (n, p), both 2-D and of one dtype."""
    _require(input.ndim == 2, f"mm: self must be a matrix, got a {input.ndim}-D tensor of "
             f"shape {list(input.shape)}; use matmul for vectors and batches.")
    _require(mat2.ndim == 2, f"mm: mat2 must be a matrix, got a {mat2.ndim}-D tensor of "
             f"shape {list(mat2.shape)}; use matmul for vectors and batches.")
    _require(input.shape[1] == mat2.shape[0], f"mat1 and mat2 shapes cannot be multiplied "
             f"({_dims(input)} and {_dims(mat2)}): the columns of mat1 must equal the rows "
             "of mat2.")
    _require(input.dtype == mat2.dtype, f"mm: expected m1 and m2 to have the same dtype, but "
             f"got {input.dtype} and {mat2.dtype}; cast one first, e.g. mat2.to(input.dtype).")
    _check_no_bool("mm", input.dtype)
    return apply("matmul", (input, mat2))


@tensor_method()
@public("addmm", autocast={"cpu": LOWER_PRECISION, "cuda": LOWER_PRECISION})
def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """torch.addmm: beta * input + alpha * (mat1 @ mat2)."""
    return _scaled_sum("addmm", input, mm(mat1, mat2), beta, alpha)


# ------------------------------------------------------------- mv, addmv


@tensor_method()
@public("mv", autocast={"cuda": LOWER_PRECISION})
def mv(input, vec):
    """torch.mv: (n, m) @ (m,) -> (n,)."""
    _require(input.ndim == 2 and vec.ndim == 1, f"mv: vector + matrix @ vector expected, "
             f"got a matrix of shape {list(input.shape)} and a vector of shape "
             f"{list(vec.shape)}; the matrix must be 2-D and the vector 1-D.")
    _require(input.shape[1] == vec.shape[0], f"mv: size mismatch, mat ({_dims(input)}) and "
             f"vec ({_dims(vec)}): the vector's length must equal the matrix's columns.")
    _require(input.dtype == vec.dtype, f"mv: the matrix is {input.dtype} and the vector "
             f"{vec.dtype}; they must have the same dtype, cast one first.")
    _check_no_bool("mv", input.dtype)
    return apply("matmul", (input, vec))


@tensor_method()
@public("addmv", autocast={"cuda": LOWER_PRECISION})
def addmv(input, mat, vec, *, beta=1, alpha=1):
    """torch.addmv: beta * input + alpha * (mat @ vec)."""
    return _scaled_sum("addmv", input, mv(mat, vec), beta, alpha)


# ------------------------------------------------------ addcmul, addcdiv


@tensor_method()
@public("addcmul", autocast={"cuda": PROMOTE})
def addcmul(input, tensor1, tensor2, *, value=1):
    """torch.addcmul: input + value * tensor1 * tensor2, broadcast and promoted
    over all three (the value scales without promoting, as torch's alpha)."""
    dtype = dtypes.result_dtype([t.data for t in (input, tensor1, tensor2)])
    _check_no_bool("addcmul", dtype)
    product = tensor1.to(dtype) * tensor2.to(dtype)
    return input.to(dtype) + (product if value == 1 else product * _scalar_in(dtype, value))


@tensor_method()
@public("addcdiv", autocast={"cuda": PROMOTE})
def addcdiv(input, tensor1, tensor2, *, value=1):
    """torch.addcdiv: input + value * tensor1 / tensor2 (a true division)."""
    if not (dtypes.is_floating(tensor1.dtype) or dtypes.is_floating(tensor2.dtype)):
        raise RuntimeError("addcdiv: integer division with addcdiv is not supported (torch "
                           "refuses it too); for a true division convert first, "
                           "tensor1.float(), or write input + value * (tensor1 // tensor2).")
    a, b = operands(tensor1, tensor2)
    quotient = apply("div", (a, b))
    return input + (quotient if value == 1 else quotient * value)
