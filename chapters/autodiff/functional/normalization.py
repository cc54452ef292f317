"""Normalization: layer_norm and batch_norm (ops with their own rules)."""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..dispatch import FLOAT32, public
from ..grad_mode import no_grad
from ..tensor import Tensor, apply
from ._common import _floating_only


@public("layer_norm", autocast={"cuda": FLOAT32})
def layer_norm(input: Tensor, normalized_shape, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalize over the last ``len(normalized_shape)`` dims, then w * x_hat + b
    (floating inputs only, as torch)."""
    if not dtypes.is_floating(input.dtype):
        raise NotImplementedError(f"layer_norm: expected a floating point input, got "
                                  f"{input.dtype}; convert first, e.g. x.float()")
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if tuple(input.shape[input.ndim - len(shape):]) != shape:
        raise RuntimeError(f"layer_norm: normalized_shape {list(shape)} does not match the last "
                           f"dims of the input of shape {list(input.shape)}")
    for what, param in (("weight", weight), ("bias", bias)):
        if param is not None and tuple(param.shape) != shape:
            raise RuntimeError(f"layer_norm: {what} of shape {list(param.shape)} must have the "
                               f"normalized_shape {list(shape)}")
    dims = tuple(range(input.ndim - len(shape), input.ndim))
    return apply("layer_norm", (input, weight, bias), {"dims": dims, "eps": eps})


@public("batch_norm")
def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None,
               training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Per-channel (dim 1) normalization. Training: batch statistics, and the
    running ones move toward them in place:
    ``running = (1 - momentum) running + momentum * batch`` (the variance with
    Bessel's correction, as torch). Eval: the running statistics."""
    _floating_only("batch_norm", input)
    dims = (0,) + tuple(range(2, input.ndim))
    shape = (1, input.shape[1]) + (1,) * (input.ndim - 2)
    if training:
        n = input.numel() // input.shape[1]
        if n <= 1:
            raise ValueError(f"batch_norm: expected more than 1 value per channel when "
                             f"training, got input of shape {list(input.shape)}")
        if running_mean is not None or running_var is not None:
            with no_grad():
                x = input.data.astype(np.float32) if input.dtype in dtypes.LOW_PRECISION \
                    else input.data
                if running_mean is not None:
                    running_mean.mul_(1 - momentum).add_(x.mean(axis=dims) * momentum)
                if running_var is not None:
                    running_var.mul_(1 - momentum).add_(x.var(axis=dims, ddof=1) * momentum)
        return apply("batch_norm", (input, weight, bias), {"dims": dims, "eps": eps})
    if running_mean is None or running_var is None:
        raise RuntimeError("batch_norm: running_mean and running_var are needed when not "
                           "training (evaluation mode normalizes with them)")
    mean = running_mean.data.reshape(shape)
    rstd = (1.0 / np.sqrt(running_var.data + eps)).reshape(shape).astype(input.dtype)
    out = (input - mean.astype(input.dtype)) * rstd
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out
