"""Ops chapter 2 adds to the chapter 1 registry: casts, indexing, more
reductions and activations, joining tensors, and the ``linear`` layer op.

Each is registered like every chapter 1 op: a numpy kernel plus a meta rule
(shape and dtype without running). Some exist only as the *derivative* of
another op and are linear maps, adjoint to it: ``getitem_backward`` scatters
a gradient back into the shape ``getitem`` read from, ``scatter_add`` is the
adjoint of ``gather``. Being ops with their own rules, they let backward
itself be differentiated.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from chapters.graph.ops import (
    ShapeError,
    TensorMeta,
    broadcast_shapes,
    float_dtype,
    normalize_dims,
    reduced_shape,
    register_op,
)


def _same(x: TensorMeta, **_) -> TensorMeta:
    return x


def _floating(x: TensorMeta, **_) -> TensorMeta:
    return TensorMeta(x.shape, float_dtype(x.dtype))


def _axes(dim, ndim):
    return None if dim is None else normalize_dims("", dim, ndim)


# -------------------------------------------------------------------- casts


def _cast_meta(x: TensorMeta, dtype, **_) -> TensorMeta:
    return TensorMeta(x.shape, dtype)


@register_op("cast", _cast_meta, elementwise=True)
def cast(x, dtype):
    """The same values in ``dtype`` (rounded to nearest, as torch's ``.to``)."""
    return x.astype(dtype)


# ----------------------------------------------------------------- indexing


def _index_meta(x: TensorMeta, index, **_) -> TensorMeta:
    out = np.empty(x.shape, dtype=np.bool_)[index]
    return TensorMeta(np.shape(out), x.dtype)


@register_op("getitem", _index_meta)
def getitem(x, index):
    """``x[index]``: basic slicing gives a view, integer arrays a copy."""
    return x[index]


def _has_arrays(index) -> bool:
    parts = index if isinstance(index, tuple) else (index,)
    return any(isinstance(p, np.ndarray | list) for p in parts)


def _getitem_backward_meta(g: TensorMeta, index, shape, **_) -> TensorMeta:
    return TensorMeta(shape, g.dtype)


@register_op("getitem_backward", _getitem_backward_meta)
def getitem_backward(g, index, shape):
    """zeros(shape) with ``g`` added at ``index``: the adjoint of ``getitem``.
    Integer-array indices may repeat an element; ``np.add.at`` sums those."""
    out = np.zeros(shape, dtype=g.dtype)
    if _has_arrays(index):
        np.add.at(out, index, g)
    else:
        out[index] = g
    return out


def _gather_meta(x: TensorMeta, dim, index, **_) -> TensorMeta:
    return TensorMeta(np.shape(index), x.dtype)


@register_op("gather", _gather_meta)
def gather(x, dim, index):
    """``out[i][j] = x[i][index[i][j]]`` along ``dim`` (torch.gather)."""
    return np.take_along_axis(x, index, axis=dim)


def _scatter_add_meta(g: TensorMeta, dim, index, shape, **_) -> TensorMeta:
    return TensorMeta(shape, g.dtype)


def along_axis_index(index: np.ndarray, dim: int) -> tuple:
    """The full fancy index that addresses ``index`` along ``dim``."""
    grids = list(np.indices(index.shape, sparse=True))
    grids[dim % index.ndim] = index
    return tuple(grids)


@register_op("scatter_add", _scatter_add_meta)
def scatter_add(g, dim, index, shape):
    """zeros(shape) with ``g`` added at ``index`` along ``dim``: gather's adjoint."""
    out = np.zeros(shape, dtype=g.dtype)
    np.add.at(out, along_axis_index(index, dim), g)
    return out


# --------------------------------------------------------------- reductions


def _reduce_meta(op: str):
    def infer(x: TensorMeta, dim=None, keepdim=False, **_) -> TensorMeta:
        return TensorMeta(reduced_shape(op, x.shape, dim, keepdim), x.dtype)

    return infer


@register_op("amax", _reduce_meta("amax"))
def amax(x, dim=None, keepdim=False):
    """The largest value over ``dim`` (all dims when None)."""
    return np.max(x, axis=_axes(dim, x.ndim), keepdims=keepdim)


def _var_meta(x: TensorMeta, dim=None, keepdim=False, correction=1, **_) -> TensorMeta:
    return TensorMeta(reduced_shape("var", x.shape, dim, keepdim), float_dtype(x.dtype))


@register_op("var", _var_meta)
def var(x, dim=None, keepdim=False, correction=1):
    """sum((x - mean)^2) / (N - correction) over ``dim``."""
    return np.var(x, axis=_axes(dim, x.ndim), keepdims=keepdim, ddof=correction)


def _logsumexp_meta(x: TensorMeta, dim, keepdim=False, **_) -> TensorMeta:
    return TensorMeta(reduced_shape("logsumexp", x.shape, dim, keepdim), float_dtype(x.dtype))


@register_op("logsumexp", _logsumexp_meta)
def logsumexp(x, dim, keepdim=False):
    """log(sum(exp(x))) over ``dim``, computed as m + log(sum(exp(x - m)))
    with m the max, so that exp cannot overflow."""
    axes = _axes(dim, x.ndim)
    m = np.max(x, axis=axes, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)
    out = m + np.log(np.sum(np.exp(x - m), axis=axes, keepdims=True))
    return out if keepdim else np.squeeze(out, axis=axes)


def _log_softmax_meta(x: TensorMeta, dim, **_) -> TensorMeta:
    normalize_dims("log_softmax", dim, len(x.shape))
    return _floating(x)


@register_op("log_softmax", _log_softmax_meta)
def log_softmax(x, dim):
    """x - logsumexp(x) along ``dim``: log-probabilities, stable for large x."""
    m = np.max(x, axis=dim, keepdims=True)
    shifted = x - m
    return shifted - np.log(np.sum(np.exp(shifted), axis=dim, keepdims=True))


# -------------------------------------------------------------- activations


def _clamp_meta(x: TensorMeta, min=None, max=None, **_) -> TensorMeta:
    return x


@register_op("clamp", _clamp_meta, elementwise=True)
def clamp(x, min=None, max=None):
    """min(max(x, min), max); a missing bound is no bound."""
    return np.clip(x, min, max).astype(x.dtype, copy=False)


@register_op("leaky_relu", _same, elementwise=True)
def leaky_relu(x, negative_slope=0.01):
    """x for x > 0, negative_slope * x otherwise."""
    return np.where(x > 0, x, x * np.asarray(negative_slope, x.dtype))


@register_op("erf", _floating, elementwise=True)
def erf(x):
    """The error function erf(x) = 2/sqrt(pi) * integral_0^x exp(-t^2) dt."""
    return special.erf(x).astype(float_dtype(x.dtype), copy=False)


_SQRT_2_OVER_PI = math.sqrt(2 / math.pi)


@register_op("gelu", _floating, elementwise=True)
def gelu(x, approximate="none"):
    """x * Phi(x), Phi the standard normal CDF; ``approximate="tanh"`` uses
    0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))."""
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x**3)))
    return (0.5 * x * (1 + special.erf(x / math.sqrt(2)))).astype(x.dtype, copy=False)


# ----------------------------------------------------------------- joining


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


@register_op("stack", _join_meta("stack", True))
def stack(*xs, dim=0):
    """Join along a new dimension."""
    return np.stack(xs, axis=dim)


# ------------------------------------------------------------------ linear


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
    """y = x W^T + b (W is (out_features, in_features), as torch.nn.Linear)."""
    out = np.matmul(x, w.T)
    if b is not None:
        out += b
    return out
