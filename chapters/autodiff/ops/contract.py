"""Contractions: einsum, and dot, outer, bmm, baddbmm.

``einsum("ij,jk->ik", a, b)`` names every axis with a letter; an output
element sums the product of the inputs over the letters missing from the
output. Such a sum is linear in each operand, and its adjoint is another
einsum: the gradient of operand k is the einsum of g with the *other*
operands that produces operand k's letters,

    dL/da = einsum("ik,jk->ij", g, b)   for   z = einsum("ij,jk->ik", a, b).

A letter only operand k has (summed away on its own, as j in "ij->i") is
missing from that product; the gradient is constant along it, so it is
re-inserted as a broadcast. A letter operand k repeats ("ii", a diagonal)
reads only the diagonal, so its gradient is the gradient of the diagonal
put back on it, zero elsewhere. dot, outer, bmm and baddbmm are matmul, mul
and add with torch's shape and dtype checks.
"""

from __future__ import annotations

import string

import numpy as np

from chapters.graph.ops import TensorMeta, register_op

from ..dispatch import LOWER_PRECISION, PROMOTE, public
from ..dtypes import check_implemented
from ..rules import register
from ..tensor import Tensor, apply, tensor_method

# ------------------------------------------------------------------ einsum


def _parse(equation: str, ndims: list[int]) -> tuple[list[str], str]:
    """``(input subscripts, output subscripts)`` in explicit form, each
    ``...`` replaced by letters of its own (right-aligned across operands)."""
    equation = equation.replace(" ", "")
    lhs, arrow, out = equation.partition("->")
    inputs = lhs.split(",")
    if len(inputs) != len(ndims):
        raise RuntimeError(f"einsum(): the equation {equation!r} names {len(inputs)} operands "
                           f"but {len(ndims)} were given; give one subscript per operand.")
    spare = [c for c in "ZYXWVUTSRQPONMLKJIHGFEDCBA" if c not in equation]
    width = max((n - len(s.replace("...", "")) for s, n in zip(inputs, ndims, strict=True)
                 if "..." in s), default=0)
    ellipsis = "".join(spare[:width][::-1])
    expanded = [s.replace("...", ellipsis[width - (n - len(s.replace("...", ""))):])
                for s, n in zip(inputs, ndims, strict=True)]
    if not arrow:
        letters = "".join(expanded)
        out = ellipsis + "".join(sorted(c for c in set(letters) - set(ellipsis)
                                        if letters.count(c) == 1))
    else:
        out = out.replace("...", ellipsis)
    for s, n in zip(expanded, ndims, strict=True):
        if len(s) != n:
            raise RuntimeError(f"einsum(): the subscript {s!r} has {len(s)} letters for an "
                               f"operand with {n} dims; give one letter per dim.")
    return expanded, out


def _einsum_meta(*operands: TensorMeta, equation: str) -> TensorMeta:
    shape = np.einsum(equation, *(np.empty(o.shape, o.dtype) for o in operands)).shape
    return TensorMeta(shape, operands[0].dtype)


#: einsum always takes this many inputs, the unused ones None, so that its
#: registration can name every input as saved for backward
MAX_OPERANDS = 8


@register_op("einsum", _einsum_meta)
def einsum_kernel(*operands, equation):
    """numpy's einsum for an explicit equation ("ij,jk->ik"), on the given
    operands (the padding Nones left out)."""
    operands = [o for o in operands if o is not None]
    return np.asarray(np.einsum(equation, *operands, optimize=len(operands) > 2))


def _padded(operands) -> tuple:
    return tuple(operands) + (None,) * (MAX_OPERANDS - len(operands))


def _operand_gradient(equation: str, g: Tensor, operands: tuple, k: int, shape: tuple):
    """dL/d operand k: the einsum of g with the other operands that yields
    operand k's letters (see the module docstring)."""
    inputs, out = equation.split("->")[0].split(","), equation.split("->")[1]
    mine = inputs[k]
    unique = "".join(dict.fromkeys(mine))  # the letters of the diagonal operand k reads
    sizes = dict(zip(mine, shape, strict=True))
    others = [s for j, s in enumerate(inputs) if j != k]
    seen = set(out).union(*others)
    kept = "".join(c for c in unique if c in seen)
    sub = ",".join([out, *others]) + "->" + kept
    rest = [o for j, o in enumerate(operands[:len(inputs)]) if j != k]
    grad = apply("einsum", _padded([g, *rest]), {"equation": sub})
    if kept != unique:
        grad = grad.reshape([sizes[c] if c in seen else 1 for c in unique]).expand(
            tuple(sizes[c] for c in unique))
    return grad if unique == mine else _onto_diagonal(grad, unique, mine, sizes, equation)


def _onto_diagonal(grad: Tensor, unique: str, mine: str, sizes: dict, equation: str) -> Tensor:
    """The gradient of a diagonal put back on it: each repeat of a letter c
    gets a fresh letter c' and a factor delta(c, c') (an identity matrix), so
    for mine = "bii":  einsum("bi,iA->biA", grad, eye)."""
    fresh = iter(c for c in string.ascii_letters if c not in equation)
    renamed, deltas = "", []
    for c in mine:
        if c in renamed:
            new = next(fresh)
            deltas.append(c + new)
            c = new
        renamed += c
    eyes = [np.eye(sizes[d[0]], dtype=grad.data.dtype) for d in deltas]
    sub = ",".join([unique, *deltas]) + "->" + renamed
    return apply("einsum", _padded([grad, *eyes]), {"equation": sub})


def einsum_vjp(ctx, g):
    """z = einsum(eq, x_1, ..., x_n):  dL/dx_k = einsum(out, others -> in_k)
    of g with the other operands, broadcast along letters only x_k has."""
    operands = ctx.saved
    equation = ctx.attrs["equation"]
    return tuple(_operand_gradient(equation, g, operands, k, meta[0]) if meta else None
                 for k, meta in enumerate(ctx.input_meta))


def einsum_jvp(primals, tangents, out, equation):
    """tz = sum_k einsum(eq, x_1, .., tx_k, .., x_n) (the product rule)."""
    total = None
    for k, t in enumerate(tangents):
        if t is not None:
            term = apply("einsum", _padded(primals[:k] + (t,) + primals[k + 1:]),
                         {"equation": equation})
            total = term if total is None else total + term
    return total


register("einsum", vjp=einsum_vjp, jvp=einsum_jvp, saves=tuple(range(MAX_OPERANDS)))


@public("einsum", autocast={"cpu": LOWER_PRECISION, "cuda": LOWER_PRECISION})
def einsum(equation: str, *operands):
    """torch.einsum: sum of products over the letters the output leaves out;
    ``...`` and the implicit form (no ``->``) as in torch. Operands share
    one dtype (up to 8 of them). Under autocast it runs in low precision, as
    torch's does (its einsum is computed by bmm, a lower-precision op)."""
    if len(operands) == 1 and isinstance(operands[0], list | tuple):
        operands = tuple(operands[0])
    if not 1 <= len(operands) <= MAX_OPERANDS:
        raise RuntimeError(f"einsum(): this engine takes 1 to {MAX_OPERANDS} operands, got "
                           f"{len(operands)}; split the contraction into several einsums.")
    dtypes = {o.dtype for o in operands}
    if len(dtypes) > 1:
        raise RuntimeError(f"einsum(): expected all operands to have one dtype, got "
                           f"{sorted(map(str, dtypes))}; cast them first, e.g. b.to(a.dtype).")
    check_implemented("einsum", operands[0].dtype, bool_ok=False)
    inputs, out = _parse(equation, [o.ndim for o in operands])
    return apply("einsum", _padded(operands), {"equation": ",".join(inputs) + "->" + out})


# ------------------------------------------------------ dot, outer, bmm


def _require(op: str, ok: bool, message: str) -> None:
    if not ok:
        raise RuntimeError(f"{op}: {message}")


def _same_dtype(op: str, a: Tensor, b: Tensor) -> None:
    """Products of two tensors of one dtype, not bool (torch has no bool kernel)."""
    _require(op, a.dtype == b.dtype, f"expected both tensors to have the same dtype, got "
             f"{a.dtype} and {b.dtype}; cast one first, e.g. b.to(a.dtype).")
    check_implemented(op, a.dtype, bool_ok=False)


@tensor_method()
@public("dot", autocast={"cuda": PROMOTE})
def dot(input, tensor):
    """torch.dot: sum_i a_i b_i of two 1-D tensors of one dtype and length."""
    _require("dot", input.ndim == 1 and tensor.ndim == 1,
             f"1D tensors expected, but got {input.ndim}D and {tensor.ndim}D tensors; "
             "use matmul or einsum for matrices.")
    _same_dtype("dot", input, tensor)
    _require("dot", input.shape == tensor.shape, f"inconsistent tensor size, expected "
             f"{input.shape[0]} elements in both, got {input.shape[0]} and {tensor.shape[0]}")
    return apply("matmul", (input, tensor))


@tensor_method()
@public("outer")
def outer(input, vec2):
    """torch.outer: z_ij = a_i b_j of two 1-D tensors (a broadcast mul)."""
    _require("outer", input.ndim == 1 and vec2.ndim == 1,
             f"expected 1D tensors, got {input.ndim}D and {vec2.ndim}D; flatten them first.")
    return input.reshape(-1, 1) * vec2.reshape(1, -1)


@tensor_method()
@public("bmm", autocast={"cpu": LOWER_PRECISION, "cuda": LOWER_PRECISION})
def bmm(input, mat2):
    """torch.bmm: a batch of matrix products, (b, n, m) @ (b, m, p) -> (b, n, p),
    with no broadcasting (matmul broadcasts; bmm insists)."""
    _require("bmm", input.ndim == 3 and mat2.ndim == 3,
             f"batch1 must be a 3D tensor and batch2 must be a 3D tensor, got shapes "
             f"{list(input.shape)} and {list(mat2.shape)}")
    _require("bmm", input.shape[0] == mat2.shape[0] and input.shape[2] == mat2.shape[1],
             f"shapes {list(input.shape)} and {list(mat2.shape)} do not fit: the batch sizes "
             "must be equal and the inner sizes (dims 2 and 1) too.")
    _same_dtype("bmm", input, mat2)
    return apply("matmul", (input, mat2))


@tensor_method()
@public("baddbmm", autocast={"cpu": LOWER_PRECISION, "cuda": LOWER_PRECISION})
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """torch.baddbmm: beta input + alpha bmm(batch1, batch2); with beta = 0
    input is ignored (its NaNs too), as in torch."""
    product = bmm(batch1, batch2)
    if alpha != 1:
        product = product * alpha
    if beta == 0:  # 0 * input would turn its inf/NaN into NaN
        return product + apply("where", (np.zeros((), bool), input, np.zeros((), input.dtype)))
    return product + (input if beta == 1 else input * beta)
