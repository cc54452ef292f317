"""``InstanceNorm1d/2d``: each channel of each sample normalized over its
positions (:func:`chapters.autodiff.functional.instance_norm`), with torch's
defaults: no affine parameters and no running statistics. With
``track_running_stats=True`` the running estimates are updated in training
and used in ``eval()``, as BatchNorm's; unbatched inputs are accepted."""

from __future__ import annotations

import numpy as np

from ..functional.normalization import instance_norm
from ..tensor import Tensor
from .module import Module, Parameter


class _InstanceNorm(Module):
    #: the rank of an unbatched input (C, *positions); a batched one has one more
    unbatched_ndim = 0

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = False, track_running_stats: bool = False, dtype=np.float32,
                 *, bias: bool = True):
        super().__init__()
        self.num_features, self.eps, self.momentum = num_features, eps, momentum
        self.affine, self.track_running_stats = affine, track_running_stats
        self.register_parameter("weight", Parameter(np.ones(num_features, dtype=dtype))
                                if affine else None)
        self.register_parameter("bias", Parameter(np.zeros(num_features, dtype=dtype))
                                if affine and bias else None)
        stats = {"running_mean": np.zeros(num_features, dtype=dtype),
                 "running_var": np.ones(num_features, dtype=dtype),
                 "num_batches_tracked": np.array(0, dtype=np.int64)}
        for name, value in stats.items():
            self.register_buffer(name, Tensor(value) if track_running_stats else None)

    def forward(self, x: Tensor) -> Tensor:
        name, unbatched = type(self).__name__, self.unbatched_ndim
        if x.ndim not in (unbatched, unbatched + 1):
            raise ValueError(f"{name}: expected a {unbatched}-D (unbatched) or "
                             f"{unbatched + 1}-D input, got {x.ndim}-D")
        channel_dim = x.ndim - unbatched
        if self.affine and x.shape[channel_dim] != self.num_features:
            raise ValueError(f"{name}: expected the input's size at dim={channel_dim} to match "
                             f"num_features ({self.num_features}), got {x.shape[channel_dim]}")
        if x.ndim == unbatched:
            return self._normalize(x.unsqueeze(0)).squeeze(0)
        return self._normalize(x)

    def _normalize(self, x: Tensor) -> Tensor:
        return instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                             use_input_stats=self.training or not self.track_running_stats,
                             momentum=0.0 if self.momentum is None else self.momentum,
                             eps=self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class InstanceNorm1d(_InstanceNorm):
    """Instance norm of (N, C, L) or unbatched (C, L) inputs."""

    unbatched_ndim = 2


class InstanceNorm2d(_InstanceNorm):
    """Instance norm of (N, C, H, W) or unbatched (C, H, W) inputs."""

    unbatched_ndim = 3
