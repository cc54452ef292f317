"""Ops that rearrange or join values without computing: reshape, transpose,
permute, broadcast_to (``expand``), cat, stack.

Each is linear, and its VJP is its adjoint: the rearrangement undone
(reshape back, transpose again, the inverse permutation), copies summed
(expand), or slices taken (cat, stack). The first four have chapter 1's
kernels (:mod:`chapters.graph.ops`) and may return views of their input.
"""

from __future__ import annotations

import numpy as np

from chapters.graph.ops import ShapeError, TensorMeta, normalize_dims, register_op

from ..rules import register
from ..tensor import apply

# ------------------------------------------------------------------ views
# kernels: chapters.graph.ops.reshape, .transpose, .permute, .broadcast_to


def reshape_vjp(ctx, g):
    """z = reshape(x):  dL/dx = g reshaped back."""
    return (g.reshape(ctx.input_meta[0][0]),)


def reshape_jvp(primals, tangents, out, shape):
    """tz = reshape(tx)."""
    return tangents[0].reshape(out.shape)


def transpose_vjp(ctx, g):
    """z = transpose(x, i, j):  dL/dx = transpose(g, i, j) (its own inverse)."""
    return (g.transpose(ctx.attrs["dim0"], ctx.attrs["dim1"]),)


def transpose_jvp(primals, tangents, out, dim0, dim1):
    """tz = transpose(tx, i, j)."""
    return tangents[0].transpose(dim0, dim1)


def permute_vjp(ctx, g):
    """z = permute(x, p):  dL/dx = permute(g, inverse of p)."""
    dims = [d % g.ndim for d in ctx.attrs["dims"]]
    return (g.permute(*np.argsort(dims).tolist()),)


def permute_jvp(primals, tangents, out, dims):
    """tz = permute(tx, p)."""
    return tangents[0].permute(*dims)


def broadcast_to_vjp(ctx, g):
    """z = expand(x):  dL/dx = g summed over the copies; returning g as is lets
    the engine's sum-back-to-shape do exactly that."""
    return (g,)


def broadcast_to_jvp(primals, tangents, out, shape):
    """tz = expand(tx)."""
    return tangents[0].expand(shape)


register("reshape", vjp=reshape_vjp, jvp=reshape_jvp, view=True, movement=True,
         grad_fn="ViewBackward0")
register("transpose", vjp=transpose_vjp, jvp=transpose_jvp, view=True, movement=True)
register("permute", vjp=permute_vjp, jvp=permute_jvp, view=True, movement=True)
register("broadcast_to", vjp=broadcast_to_vjp, jvp=broadcast_to_jvp, view=True,
         movement=True, grad_fn="ExpandBackward0")

# ------------------------------------------------------------ cat, stack


def _join_meta(op: str, new_axis: bool):
    def infer(*xs: TensorMeta, dim=0, **_) -> TensorMeta:
        if not xs:
            raise ShapeError(f"{op}: expected a non-empty sequence of tensors")
        ndim = len(xs[0].shape) + new_axis
        d = normalize_dims(op, dim, ndim)[0]
        for x in xs:
            if len(x.shape) != len(xs[0].shape) or any(
                    a != b for i, (a, b) in enumerate(zip(x.shape, xs[0].shape, strict=True))
                    if new_axis or i != d):
                raise ShapeError(
                    f"{op}: sizes of tensors must match except in dimension {dim}; got shapes "
                    + ", ".join(str(list(t.shape)) for t in xs))
        shape = list(xs[0].shape)
        if new_axis:
            shape.insert(d, len(xs))
        else:
            shape[d] = sum(x.shape[d] for x in xs)
        return TensorMeta(tuple(shape), np.result_type(*(x.dtype for x in xs)))

    return infer


@register_op("cat", _join_meta("cat", False))
def cat(*xs, dim=0, sizes=None):
    """Join along an existing dimension (``sizes``, each input's size along
    ``dim``, is kept for the derivative)."""
    return np.concatenate(xs, axis=dim)


def cat_vjp(ctx, g):
    """z = cat(x_1..x_n, dim):  dL/dx_k = the slice of g where x_k landed."""
    d = ctx.attrs["dim"] % g.ndim
    grads, start = [], 0
    for need, size in zip(ctx.needs_input_grad, ctx.attrs["sizes"], strict=True):
        index = (slice(None),) * d + (slice(start, start + size),)
        grads.append(g[index] if need else None)
        start += size
    return tuple(grads)


def cat_jvp(primals, tangents, out, dim=0, sizes=None):
    """tz = cat(t_1..t_n, dim)."""
    return apply("cat", tangents, {"dim": dim, "sizes": sizes})


register("cat", vjp=cat_vjp, jvp=cat_jvp, movement=True)


@register_op("stack", _join_meta("stack", True))
def stack(*xs, dim=0):
    """Join along a new dimension."""
    return np.stack(xs, axis=dim)


def stack_vjp(ctx, g):
    """z = stack(x_1..x_n, dim):  dL/dx_k = g[..., k, ...] at position dim."""
    d = ctx.attrs.get("dim", 0) % g.ndim
    return tuple(g[(slice(None),) * d + (k,)] if m is not None else None
                 for k, m in enumerate(ctx.input_meta))


def stack_jvp(primals, tangents, out, dim=0):
    """tz = stack(t_1..t_n, dim)."""
    return apply("stack", tangents, {"dim": dim})


register("stack", vjp=stack_vjp, jvp=stack_jvp, movement=True)
