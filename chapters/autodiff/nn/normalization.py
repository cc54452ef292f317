"""Normalisation layers: ``LayerNorm``, ``BatchNorm1d/2d`` and ``GroupNorm``.

All compute ``(x - mean) / sqrt(var + eps) * weight + bias`` with the *biased*
variance; they differ in which axes the statistics are taken over:

* LayerNorm: the last ``len(normalized_shape)`` dims of each sample — no state;
* BatchNorm: every dim except the channel dim (dim 1), across the batch. In
  training it uses the batch's statistics and updates running estimates
  ``running = (1 - momentum) * running + momentum * batch_stat`` (the running
  variance uses the *unbiased* batch variance, as torch); ``eval()`` uses the
  running estimates, so a model behaves the same on one sample as on many;
* GroupNorm: each sample's channels in ``num_groups`` groups, each group over
  its channels and positions — no state, so independent of the batch size.
"""

from __future__ import annotations

import numpy as np

from ..functional.normalization import batch_norm, group_norm, layer_norm
from ..tensor import Tensor
from .module import Module, Parameter


class LayerNorm(Module):
    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, dtype=np.float32):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape, self.eps = tuple(normalized_shape), eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(np.ones(self.normalized_shape, dtype=dtype))
            self.register_parameter(
                "bias", Parameter(np.zeros(self.normalized_shape, dtype=dtype)) if bias else None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, x: Tensor) -> Tensor:
        return layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}"


class _BatchNorm(Module):
    expected_ndims: tuple[int, ...] = ()

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, dtype=np.float32):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        if affine:
            self.weight = Parameter(np.ones(num_features, dtype=dtype))
            self.bias = Parameter(np.zeros(num_features, dtype=dtype))
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", Tensor(np.zeros(num_features, dtype=dtype)))
            self.register_buffer("running_var", Tensor(np.ones(num_features, dtype=dtype)))
            self.register_buffer("num_batches_tracked", Tensor(np.array(0, dtype=np.int64)))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)

    def forward(self, x: Tensor) -> Tensor:
        if x.ndim not in self.expected_ndims:
            raise ValueError(f"{type(self).__name__}: expected a {self.expected_ndims}-D input "
                             f"(N, C, ...), got shape {tuple(x.shape)}")
        momentum = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            self.num_batches_tracked.data += 1
            if self.momentum is None:  # cumulative moving average, as torch
                momentum = 1.0 / float(self.num_batches_tracked.data)
        use_batch_stats = self.training or self.running_mean is None
        # Running buffers are passed only when they are to be read (eval) or updated.
        track = not self.training or self.track_running_stats
        return batch_norm(x, self.running_mean if track else None,
                            self.running_var if track else None, self.weight, self.bias,
                            training=use_batch_stats, momentum=momentum, eps=self.eps)

    def extra_repr(self) -> str:
        return f"{self.num_features}, eps={self.eps}, momentum={self.momentum}"


class BatchNorm1d(_BatchNorm):
    """Over ``(N, C)`` or ``(N, C, L)`` inputs."""

    expected_ndims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Over ``(N, C, H, W)`` inputs; statistics per channel over N, H, W."""

    expected_ndims = (4,)


class GroupNorm(Module):
    """``group_norm``: the channels split into ``num_groups`` groups, each
    normalized per sample over its channels and positions, then a
    per-channel affine (``weight`` ones, ``bias`` zeros, as torch: its
    ``state_dict`` names are the same, so torch weights load)."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, dtype=np.float32, *, bias: bool = True):
        super().__init__()
        if num_groups == 0:
            raise ZeroDivisionError("GroupNorm: num_groups must be positive, got 0")
        if num_groups < 0 or num_channels % num_groups:
            raise ValueError(f"GroupNorm: num_groups={num_groups} must be positive and divide "
                             f"num_channels={num_channels}")
        self.num_groups, self.num_channels = num_groups, num_channels
        self.eps, self.affine = eps, affine
        self.register_parameter("weight", Parameter(np.ones(num_channels, dtype=dtype))
                                if affine else None)
        self.register_parameter("bias", Parameter(np.zeros(num_channels, dtype=dtype))
                                if affine and bias else None)

    def forward(self, x: Tensor) -> Tensor:
        return group_norm(x, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, "
                f"affine={self.affine}, bias={self.bias is not None}")
