"""Matrix products: matmul and the ``linear`` layer op (y = x W^T + b).

For Z = A B the two sides of the Jacobian are dL/dA = G B^T, dL/dB = A^T G
(reverse) and tZ = tA B + A tB (forward). matmul's kernel is chapter 1's
(:mod:`chapters.graph.ops`); linear is defined here.
"""

from __future__ import annotations

import numpy as np

from chapters.graph.ops import ShapeError, TensorMeta, broadcast_shapes, register_op

from ..rules import FULL_PRECISION, register

# ----------------------------------------------------------------- matmul
# kernel: chapters.graph.ops.matmul (np.matmul, torch.matmul's shape rule)


def matmul_vjp(ctx, g):
    """Z = A B:  dL/dA = G B^T,  dL/dB = A^T G. A 1-D operand is treated as a
    row (A) or column (B) vector, then the added dimension is dropped."""
    a, b = ctx.saved
    need_a, need_b = ctx.needs_input_grad
    a2 = a.unsqueeze(0) if a.ndim == 1 else a
    b2 = b.unsqueeze(-1) if b.ndim == 1 else b
    if a.ndim == b.ndim == 1:  # a dot product: g is 0-d, one row times one column
        g2 = g.reshape(1, 1)
    else:
        g2 = g.unsqueeze(-2) if a.ndim == 1 else g
        g2 = g2.unsqueeze(-1) if b.ndim == 1 else g2
    ga = gb = None
    if need_a:
        ga = g2 @ b2.mT
        ga = ga.squeeze(-2) if a.ndim == 1 else ga
    if need_b:
        gb = a2.mT @ g2
        gb = gb.squeeze(-1) if b.ndim == 1 else gb
    return ga, gb


def matmul_jvp(primals, tangents, out):
    """tZ = tA B + A tB."""
    (a, b), (ta, tb) = primals, tangents
    return ta @ b + a @ tb


def _matmul_kernel(attrs: dict, input_meta: tuple, out_ndim: int):
    """Which torch kernel a call dispatches to: operand ranks (2, 2) -> mm,
    (2, 1) -> mv, (1, 1) -> dot."""
    if None not in input_meta:
        return tuple(len(shape) for shape, _ in input_meta)
    return (1, 1) if out_ndim == 0 else None


register("matmul", vjp=matmul_vjp, jvp=matmul_jvp, saves=(0, 1),
         grad_fn_variant=_matmul_kernel,
         grad_fn_variants={(2, 2): "MmBackward0", (2, 1): "MvBackward0",
                           (1, 1): "DotBackward0"})

# ----------------------------------------------------------------- linear


def _linear_meta(x: TensorMeta, w: TensorMeta, b: TensorMeta | None = None, **_) -> TensorMeta:
    if len(w.shape) != 2 or not x.shape or x.shape[-1] != w.shape[1]:
        raise ShapeError(
            f"linear: input of shape {x.shape} does not fit weight {w.shape}: the weight is "
            "(out_features, in_features) and the input's last dimension must be in_features.")
    shape = x.shape[:-1] + (w.shape[0],)
    if b is not None:
        broadcast_shapes("linear", shape, b.shape)
    return TensorMeta(shape, np.result_type(x.dtype, w.dtype))


@register_op("linear", _linear_meta)
def linear(x, w, b=None):
    """y = x W^T + b (W is (out_features, in_features), as torch.nn.Linear).

    The batch dimensions of x are flattened into rows first: one (rows, in) @
    (in, out) product, which numpy hands to BLAS whole, runs far faster than
    the stack of small products numpy makes of a 3-D x (180 vs 105 us for
    8 x 32 rows of 64 -> 256 features)."""
    out = np.matmul(x.reshape(-1, x.shape[-1]), w.T).reshape(*x.shape[:-1], w.shape[0])
    if b is not None:
        out += b
    return out


def linear_vjp(ctx, g):
    """y = x W^T + b:  dL/dx = g W,  dL/dW = g^T x (summed over batch dims),
    dL/db = g summed over batch dims (the engine's sum back to b's shape)."""
    x, w = ctx.saved[:2]
    needs = ctx.needs_input_grad
    gx = g @ w if needs[0] else None
    gw = None
    if needs[1]:
        out_features, in_features = w.data.shape
        gw = g.reshape(-1, out_features).mT @ x.reshape(-1, in_features)
    gb = g if len(needs) > 2 and needs[2] else None
    return (gx, gw, gb)[:len(needs)]


def linear_vjp_fast(ctx, g):
    """linear_vjp on arrays: the same numpy products, without a tensor per step;
    inputs of mixed or low-precision dtypes keep the Tensor rule (None)."""
    x, w = ctx.saved_arrays[:2]
    if x.dtype not in FULL_PRECISION or w.dtype != x.dtype or g.dtype != x.dtype:
        return None
    needs = ctx.needs_input_grad
    out_features, in_features = w.shape
    rows = g.reshape(-1, out_features)  # one BLAS product, as in the forward
    gx = np.matmul(rows, w).reshape(*g.shape[:-1], in_features) if needs[0] else None
    gw = None
    if needs[1]:
        gw = np.matmul(rows.swapaxes(-1, -2), x.reshape(-1, in_features))
    gb = g if len(needs) > 2 and needs[2] else None
    return (gx, gw, gb)[:len(needs)]


def linear_jvp(primals, tangents, out):
    """ty = tx W^T + x tW^T + tb."""
    x, w = primals[:2]
    tx, tw = tangents[:2]
    t = tx @ w.mT + x @ tw.mT
    return t + tangents[2] if len(tangents) > 2 and tangents[2] is not None else t


def _linear_kernel(attrs: dict, input_meta: tuple, out_ndim: int):
    """torch runs a 2-D linear as addmm (with bias) or mm (without); 3-D adds a view."""
    return None if out_ndim != 2 else ("bias" if len(input_meta) == 3 else "no bias")


register("linear", vjp=linear_vjp, jvp=linear_jvp, saves=(0, 1), vjp_fast=linear_vjp_fast,
         grad_fn_variant=_linear_kernel,
         grad_fn_variants={"bias": "AddmmBackward0", "no bias": "MmBackward0"})
