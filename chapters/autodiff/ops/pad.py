"""Padding (填充): ``F.pad``'s constant, reflect, replicate and circular modes
as one idea, a *source index* per output position along each padded dim.

For a dim of size n padded by (before, after), output position i reads input
position ``s(i - before)``, where for j = i - before

    constant   j itself, or "no source" (the fill value) outside 0..n-1
    reflect    j mirrored at the edges without repeating them: -1 -> 1, n -> n-2
    replicate  j clamped to 0..n-1 (the edge value repeats)
    circular   j mod n (the tensor wraps around)

So padding is a gather along each dim, a linear map of x (plus the constant
fill), and its adjoint adds each output gradient back onto its source:
``pad_backward``. The two are each other's VJP. Negative padding crops.
"""

from __future__ import annotations

import numpy as np

from chapters.graph.ops import ShapeError, TensorMeta, register_op

from ..rules import register
from ..tensor import apply

MODES = ("constant", "reflect", "replicate", "circular")


def source_index(n: int, before: int, after: int, mode: str) -> np.ndarray:
    """For each of the n + before + after output positions, the input position
    it reads (-1: none, the constant fill)."""
    j = np.arange(-before, n + after)
    if mode == "reflect":
        return (n - 1) - np.abs((n - 1) - np.abs(j))
    if mode == "replicate":
        return np.clip(j, 0, n - 1)
    if mode == "circular":
        return j % n
    return np.where((j >= 0) & (j < n), j, -1)


def padded_dims(ndim: int, pad: tuple) -> list[tuple[int, int, int]]:
    """torch's pad tuple (last dim first: left, right, top, bottom, ...) as
    (dim, before, after) triples."""
    return [(ndim - 1 - k, pad[2 * k], pad[2 * k + 1]) for k in range(len(pad) // 2)]


def check_reflect(shape: tuple, pad: tuple) -> None:
    """Reflection mirrors once, so each pad must be smaller than its dim."""
    for dim, before, after in padded_dims(len(shape), pad):
        if max(before, after) >= shape[dim]:
            raise RuntimeError(
                f"pad: reflect padding ({before}, {after}) of dim {dim} must be smaller than its "
                f"size {shape[dim]} (a mirror cannot reach past the far edge); use "
                "mode='replicate' or pad less")


def _pad_meta(x: TensorMeta, pad, mode="constant", value=0.0) -> TensorMeta:
    if mode == "reflect":
        check_reflect(x.shape, pad)
    shape = list(x.shape)
    for dim, before, after in padded_dims(len(shape), pad):
        shape[dim] += before + after
        if shape[dim] < 0:
            raise ShapeError(f"pad: padding ({before}, {after}) crops dim {dim} of size "
                             f"{x.shape[dim]} to a negative size")
    return TensorMeta(tuple(shape), x.dtype)


@register_op("pad", _pad_meta)
def pad(x, pad, mode="constant", value=0.0):
    """Gather each padded dim at its source indices; constant mode fills the
    positions with no source with ``value``."""
    if mode == "reflect":
        check_reflect(x.shape, pad)
    for dim, before, after in padded_dims(x.ndim, pad):
        index = source_index(x.shape[dim], before, after, mode)
        x = np.take(x, np.clip(index, 0, None), axis=dim)
        if mode == "constant" and (index < 0).any():
            fill = np.expand_dims(index < 0, tuple(a for a in range(x.ndim) if a != dim))
            x = np.where(fill, np.asarray(value, x.dtype), x)
    return x


def _pad_backward_meta(g: TensorMeta, pad, mode, shape, **_) -> TensorMeta:
    return TensorMeta(tuple(shape), g.dtype)


@register_op("pad_backward", _pad_backward_meta)
def pad_backward(g, pad, mode, shape):
    """The adjoint of ``pad``: along each padded dim, add every output
    position's gradient onto its source (reflect and replicate edges collect
    several; constant fill positions have no source and drop out)."""
    for dim, before, after in reversed(padded_dims(g.ndim, pad)):
        index = source_index(shape[dim], before, after, mode)
        has_source = index >= 0
        moved = np.moveaxis(g, dim, 0)
        out = np.zeros((shape[dim],) + moved.shape[1:], dtype=g.dtype)
        np.add.at(out, index[has_source], moved[has_source])
        g = np.moveaxis(out, 0, dim)
    return g


def pad_vjp(ctx, g):
    """y = pad(x) = P x + fill, P a 0/1 gather matrix:  dL/dx = P^T g,
    the gradient added back onto each source (pad_backward)."""
    return (apply("pad_backward", (g,), {"pad": ctx.attrs["pad"],
                                         "mode": ctx.attrs.get("mode", "constant"),
                                         "shape": ctx.input_meta[0][0]}),)


def pad_jvp(primals, tangents, out, pad, mode="constant", value=0.0):
    """ty = P tx: the tangent padded with zeros (the fill is constant)."""
    return apply("pad", (tangents[0],), {"pad": pad, "mode": mode, "value": 0.0})


def pad_backward_vjp(ctx, g):
    """z = P^T x:  dL/dx = P g, padding with a zero fill."""
    return (apply("pad", (g,), {"pad": ctx.attrs["pad"], "mode": ctx.attrs["mode"],
                                "value": 0.0}),)


def pad_backward_jvp(primals, tangents, out, pad, mode, shape):
    """tz = P^T tx."""
    return apply("pad_backward", (tangents[0],), {"pad": pad, "mode": mode, "shape": shape})


def _pad_kernel(attrs: dict, input_meta: tuple, out_ndim: int):
    """torch's backward name depends on the mode and on how many dims are padded."""
    return attrs.get("mode", "constant"), len(attrs["pad"]) // 2


register("pad", vjp=pad_vjp, jvp=pad_jvp, movement=True, grad_fn="ConstantPadNdBackward0",
         grad_fn_variant=_pad_kernel,
         grad_fn_variants={**{(mode, k): f"{name}Pad{k}DBackward0"
                              for mode, name in (("reflect", "Reflection"),
                                                 ("replicate", "Replication"))
                              for k in (1, 2, 3)},
                           **{("circular", k): "CopySlices" for k in (1, 2, 3)}})
register("pad_backward", vjp=pad_backward_vjp, jvp=pad_backward_jvp, movement=True)
