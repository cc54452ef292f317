"""Normalization: layer_norm and batch_norm (ops with their own rules), and the
compositions group_norm, instance_norm and normalize."""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..dispatch import FLOAT32, public
from ..grad_mode import no_grad
from ..tensor import Tensor, apply
from ._common import _floating_only, _vector_norm


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


@public("group_norm", autocast={"cuda": FLOAT32})
def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Split the C channels of an (N, C, ...) input into ``num_groups`` groups
    of C / G consecutive channels and normalize each group of each sample
    over its channels and positions, x_hat = (x - mean) / sqrt(var + eps)
    (biased variance), then w_c x_hat + b_c per channel. A composition:
    layer_norm's op on the input seen as (N, G, C / G * positions), then the
    per-channel affine, so the gradient comes from those rules. With
    ``num_groups=1`` it is layer_norm over (C, ...) with per-channel weights;
    with ``num_groups=C``, instance norm."""
    _floating_only("group_norm", input)
    if input.ndim < 2:
        raise RuntimeError(f"group_norm: expected an input of at least 2 dims (N, C, ...), got "
                           f"shape {list(input.shape)}")
    channels = input.shape[1]
    if num_groups == 0:
        raise ZeroDivisionError("group_norm: num_groups must be positive, got 0")
    if num_groups < 0 or channels % num_groups:
        raise RuntimeError(f"group_norm: the {channels} channels of the input of shape "
                           f"{list(input.shape)} must split into num_groups={num_groups} "
                           "equal groups; pick a num_groups that divides them")
    for what, param in (("weight", weight), ("bias", bias)):
        if param is not None and tuple(param.shape) != (channels,):
            raise RuntimeError(f"group_norm: {what} of shape {list(param.shape)} must be a "
                               f"vector of the {channels} channels")
    per_group = input.numel() // max(input.shape[0] * num_groups, 1)
    grouped = input.reshape(input.shape[0], num_groups, per_group)
    out = apply("layer_norm", (grouped, None, None), {"dims": (2,), "eps": eps})
    out = out.reshape(*input.shape)
    per_channel = (channels,) + (1,) * (input.ndim - 2)
    if weight is not None:
        out = out * weight.reshape(per_channel).to(input.dtype)
    if bias is not None:
        out = out + bias.reshape(per_channel).to(input.dtype)
    return out


@public("normalize", autocast={"cuda": FLOAT32})
def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12,
              out=None) -> Tensor:
    """x / max(||x||_p, eps) along ``dim``: each slice scaled to unit p-norm
    (a slice with norm below eps is divided by eps instead, so zeros stay
    zeros). A composition of abs, pow, sum and div."""
    if out is not None:
        raise NotImplementedError("normalize: out= is not implemented; use the returned tensor")
    if not dtypes.is_floating(input.dtype):
        raise RuntimeError(f"normalize: expected a floating point input, got {input.dtype}; "
                           "convert first, e.g. x.float()")
    return input / _vector_norm(input, p, dim, keepdim=True, floor=eps)


@public("instance_norm")
def instance_norm(input: Tensor, running_mean: Tensor | None = None,
                  running_var: Tensor | None = None, weight: Tensor | None = None,
                  bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalize each channel of each sample over its positions,
    x_hat = (x - mean) / sqrt(var + eps) (biased variance), then w_c x_hat + b_c:
    a composition, group_norm with one group per channel. Running statistics,
    when given, move toward the batch's average of the per-sample statistics
    (``running = (1 - momentum) running + momentum * stat``, the variance with
    Bessel's correction, as torch); ``use_input_stats=False`` normalizes with
    them instead, as batch_norm in eval."""
    _floating_only("instance_norm", input)
    if not use_input_stats:
        return batch_norm(input, running_mean, running_var, weight, bias, training=False,
                          eps=eps)
    if input.ndim < 2 or int(np.prod(input.shape[2:])) <= 1:
        raise ValueError(f"instance_norm: expected more than 1 spatial element when using the "
                         f"input's statistics, got input size {list(input.shape)}; give an "
                         "(N, C, L, ...) input with positions to normalize over")
    _track_instance_stats(input, running_mean, running_var, momentum)
    return group_norm(input, input.shape[1], weight, bias, eps)


def _track_instance_stats(input: Tensor, running_mean, running_var, momentum: float) -> None:
    """The running statistics' in-place update (no gradient): the per-(sample,
    channel) mean and unbiased variance over the positions, averaged over the
    batch."""
    positions = tuple(range(2, input.ndim))
    with no_grad():
        x = input.data.astype(np.float32) if input.dtype in dtypes.LOW_PRECISION else input.data
        if running_mean is not None:
            running_mean.mul_(1 - momentum).add_(x.mean(axis=positions).mean(0) * momentum)
        if running_var is not None:
            running_var.mul_(1 - momentum).add_(
                x.var(axis=positions, ddof=1).mean(0) * momentum)
