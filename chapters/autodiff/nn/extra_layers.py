"""More layers with torch's names and reprs: the activations ``Softmin``,
``Softsign``, ``Tanhshrink``, ``Threshold``, ``GLU`` and ``PReLU`` (the one
with a learned parameter), the channel dropouts ``Dropout1d/2d``, and the
rearrangements ``PixelShuffle``, ``PixelUnshuffle`` and ``Unflatten``. Each
stores its options and calls one function (or Tensor method) of
:mod:`chapters.autodiff.functional`, where the maths is."""

from __future__ import annotations

import numpy as np

from ..functional.activations import glu, prelu, softmin, softsign, tanhshrink, threshold
from ..functional.layers import dropout1d, dropout2d
from ..functional.resampling import pixel_shuffle, pixel_unshuffle
from ..tensor import Tensor
from .activation import MODULE_STACKLEVEL, _with_inplace
from .module import Module, Parameter


class Softmin(Module):
    """softmax(-x) along ``dim`` (without ``dim``, torch's legacy choice)."""

    def __init__(self, dim: int | None = None):
        super().__init__()
        self.dim = dim

    def forward(self, x: Tensor) -> Tensor:
        return softmin(x, self.dim, _stacklevel=MODULE_STACKLEVEL)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softsign(Module):
    """x / (1 + |x|)."""

    def forward(self, x: Tensor) -> Tensor:
        return softsign(x)


class Tanhshrink(Module):
    """x - tanh(x)."""

    def forward(self, x: Tensor) -> Tensor:
        return tanhshrink(x)


class Threshold(Module):
    """x where x > ``threshold``, else ``value``."""

    def __init__(self, threshold: float, value: float, inplace: bool = False):
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, x: Tensor) -> Tensor:
        return threshold(x, self.threshold, self.value)

    def extra_repr(self) -> str:
        return _with_inplace(f"threshold={self.threshold}, value={self.value}", self.inplace)


class GLU(Module):
    """a * sigmoid(b) for the two halves a, b of the input along ``dim``."""

    def __init__(self, dim: int = -1):
        super().__init__()
        self.dim = dim

    def forward(self, x: Tensor) -> Tensor:
        return glu(x, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class PReLU(Module):
    """x for x > 0, ``weight * x`` otherwise, with ``num_parameters`` learned
    slopes (1, or one per input channel), all starting at ``init``."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, dtype=np.float32):
        super().__init__()
        self.num_parameters = num_parameters
        self.weight = Parameter(np.full(num_parameters, init, dtype=dtype))

    def forward(self, x: Tensor) -> Tensor:
        return prelu(x, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class Dropout1d(Module):
    """Zero whole channels of (N, C, L) or (C, L) inputs with probability ``p``
    in training, the rest scaled by 1/(1-p); identity in eval."""

    _function = staticmethod(dropout1d)

    def __init__(self, p: float = 0.5, inplace: bool = False):
        super().__init__()
        if not 0 <= p <= 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, x: Tensor) -> Tensor:
        return self._function(x, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout2d(Dropout1d):
    """Zero whole channels of (N, C, H, W) inputs with probability ``p`` in
    training, the rest scaled by 1/(1-p); identity in eval."""

    _function = staticmethod(dropout2d)


class PixelShuffle(Module):
    """(*, C r^2, H, W) -> (*, C, H r, W r) with r = ``upscale_factor``."""

    def __init__(self, upscale_factor: int):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, x: Tensor) -> Tensor:
        return pixel_shuffle(x, self.upscale_factor)

    def extra_repr(self) -> str:
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """(*, C, H r, W r) -> (*, C r^2, H, W) with r = ``downscale_factor``."""

    def __init__(self, downscale_factor: int):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, x: Tensor) -> Tensor:
        return pixel_unshuffle(x, self.downscale_factor)

    def extra_repr(self) -> str:
        return f"downscale_factor={self.downscale_factor}"


class Unflatten(Module):
    """Dim ``dim`` split into ``unflattened_size`` (Flatten's inverse)."""

    def __init__(self, dim: int, unflattened_size):
        super().__init__()
        self.dim, self.unflattened_size = dim, unflattened_size

    def forward(self, x: Tensor) -> Tensor:
        return x.unflatten(self.dim, tuple(self.unflattened_size))

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
