"""``torch.nn.utils``'s training helpers: gradient clipping and flat parameter vectors.

Gradient clipping by norm (梯度裁剪) rescales *all* gradients together so that
their joint norm is at most ``max_norm``, keeping the update's direction:

    total = || (||g_1||_p, ||g_2||_p, ...) ||_p       (= ||concat(g_1, g_2, ...)||_p)
    g_i  <- g_i * min(1, max_norm / (total + 1e-6))

The ``1e-6`` keeps the division finite when every gradient is zero. Clipping
by value clamps each entry to ``[-clip_value, clip_value]`` instead, which can
change the direction. Both act in place on ``.grad`` after ``backward()`` and
before ``optimizer.step()``; parameters without a gradient are skipped.
``foreach`` is accepted so torch code runs unchanged; it only selects a faster
kernel in torch and changes nothing here.
"""

from __future__ import annotations

import math

import numpy as np

from ..factories import tensor
from ..functions import cat
from ..tensor import Tensor

_SMALL = 1e-6


def _as_list(parameters) -> list[Tensor]:
    return [parameters] if isinstance(parameters, Tensor) else list(parameters)


def _vector_norm(array: np.ndarray, norm_type: float) -> np.ndarray:
    """``||x||_p = (sum |x_i|^p)^(1/p)``, or ``max |x_i|`` for ``p = inf``, in ``x``'s dtype."""
    magnitude = np.abs(array.ravel())
    if norm_type == math.inf:
        return np.max(magnitude, initial=magnitude.dtype.type(0))
    if norm_type == 2:
        return np.sqrt(np.dot(magnitude, magnitude))
    return np.sum(magnitude ** norm_type) ** (1 / norm_type)


def get_total_norm(tensors, norm_type: float = 2.0, error_if_nonfinite: bool = False,
                   foreach=None) -> Tensor:
    """The p-norm of the norms of ``tensors`` (the norm of them all, concatenated)."""
    tensors = _as_list(tensors)
    norm_type = float(norm_type)
    if not norm_type > 0:
        raise ValueError(f"norm_type must be positive or inf, got {norm_type}: "
                         "use 2.0 (Euclidean), 1.0 or float('inf')")
    if not tensors:
        return tensor(0.0)
    norms = np.stack([_vector_norm(t.data, norm_type) for t in tensors])
    total = _vector_norm(norms, norm_type)
    if error_if_nonfinite and not np.isfinite(total):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from `parameters` is "
            "non-finite, so it cannot be clipped. Look for the op that produced inf/nan "
            "(detect_anomaly helps), or set `error_if_nonfinite=False` to scale the "
            "gradients by the non-finite norm anyway")
    return tensor(total)


def clip_grads_with_norm_(parameters, max_norm: float, total_norm: Tensor,
                          foreach=None) -> None:
    """Scale every gradient in place by ``min(1, max_norm / (total_norm + 1e-6))``."""
    total = np.asarray(total_norm.data)
    scale = np.minimum(total.dtype.type(max_norm) / (total + total.dtype.type(_SMALL)), 1)
    with np.errstate(invalid="ignore"):  # an inf norm gives inf * 0 = nan, silently as torch
        for p in _as_list(parameters):
            if p.grad is not None:
                p.grad.data *= scale.astype(p.grad.data.dtype)


def clip_grad_norm_(parameters, max_norm: float, norm_type: float = 2.0,
                    error_if_nonfinite: bool = False, foreach=None) -> Tensor:
    """Clip the joint norm of the gradients to ``max_norm``; returns the norm
    *before* clipping (worth logging: spikes show an unstable run)."""
    parameters = _as_list(parameters)
    grads = [p.grad for p in parameters if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite)
    clip_grads_with_norm_(parameters, max_norm, total)
    return total


def clip_grad_value_(parameters, clip_value: float, foreach=None) -> None:
    """Clamp every gradient entry to ``[-clip_value, clip_value]``, in place."""
    clip_value = float(clip_value)
    for p in _as_list(parameters):
        if p.grad is not None:
            np.clip(p.grad.data, -clip_value, clip_value, out=p.grad.data)


def parameters_to_vector(parameters) -> Tensor:
    """All parameters flattened and concatenated into one vector (differentiable)."""
    return cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters) -> None:
    """Give each parameter its slice of ``vec`` as its values: the inverse of
    :func:`parameters_to_vector` (the parameters then share ``vec``'s memory)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected Tensor, but got: {type(vec).__name__} "
                        "(build the vector with parameters_to_vector or tensor(...))")
    start = 0
    for p in parameters:
        size = p.data.size
        if start + size > vec.data.size:
            raise RuntimeError(f"vector_to_parameters: the vector has {vec.data.size} entries, "
                             "fewer than the parameters hold; build it with "
                             "parameters_to_vector of the same parameters")
        p.data = vec.data[start:start + size].reshape(p.data.shape)
        start += size
