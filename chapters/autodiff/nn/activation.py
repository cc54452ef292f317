"""Activation modules: each stores its options and calls one function of
``functional`` (:mod:`chapters.autodiff.functional.activations` and
``.piecewise`` hold the maths). ``inplace=True`` is accepted and shown in the
repr, as torch's, but the engine always returns a new tensor."""

from __future__ import annotations

import numpy as np

from ..functional.activations import (
    celu,
    elu,
    gelu,
    glu,
    leaky_relu,
    log_softmax,
    logsigmoid,
    mish,
    prelu,
    relu,
    selu,
    silu,
    softmax,
    softmin,
    softplus,
    softsign,
    tanhshrink,
    threshold,
)
from ..functional.piecewise import hardsigmoid, hardswish, hardtanh
from ..tensor import Tensor
from .module import Module, Parameter


def _with_inplace(text: str, inplace: bool) -> str:
    """torch's reprs add ``inplace=True`` only when it is set."""
    return f"{text}, inplace=True" if inplace else text


class LeakyReLU(Module):
    """x for x > 0, ``negative_slope * x`` otherwise."""

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False):
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, x: Tensor) -> Tensor:
        return leaky_relu(x, self.negative_slope)

    def extra_repr(self) -> str:
        return _with_inplace(f"negative_slope={self.negative_slope}", self.inplace)


#: the ``_stacklevel`` a softmax-like module passes, torch's own: the implicit-dim warning
#: then names the line that called the module (forward, then Module.__call__, are between)
MODULE_STACKLEVEL = 5


class Softmax(Module):
    """e^x_i / sum_j e^x_j along ``dim``."""

    def __init__(self, dim: int | None = None):
        super().__init__()
        self.dim = dim

    def forward(self, x: Tensor) -> Tensor:
        return softmax(x, self.dim, _stacklevel=MODULE_STACKLEVEL)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    """log softmax along ``dim``, computed as x - logsumexp(x) (no overflow)."""

    def forward(self, x: Tensor) -> Tensor:
        return log_softmax(x, self.dim, _stacklevel=MODULE_STACKLEVEL)


class SiLU(Module):
    """x * sigmoid(x) (also called swish)."""

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, x: Tensor) -> Tensor:
        return silu(x)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class ELU(Module):
    """x for x > 0, ``alpha (e^x - 1)`` otherwise."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, x: Tensor) -> Tensor:
        return elu(x, self.alpha)

    def extra_repr(self) -> str:
        return _with_inplace(f"alpha={self.alpha}", self.inplace)


class CELU(ELU):
    """x for x > 0, ``alpha (e^(x / alpha) - 1)`` otherwise."""

    def forward(self, x: Tensor) -> Tensor:
        return celu(x, self.alpha)


class SELU(SiLU):
    """``scale * elu(x, alpha)`` with selu's fixed constants."""

    def forward(self, x: Tensor) -> Tensor:
        return selu(x)


class Softplus(Module):
    """log(1 + e^(beta x)) / beta, linear where beta x > threshold."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, x: Tensor) -> Tensor:
        return softplus(x, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Mish(SiLU):
    """x tanh(softplus(x))."""

    def forward(self, x: Tensor) -> Tensor:
        return mish(x)


class Hardtanh(Module):
    """x clamped to [min_val, max_val]."""

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False):
        super().__init__()
        if min_val > max_val:
            raise ValueError(f"Hardtanh: min_val {min_val} cannot be greater than max_val "
                             f"{max_val}")
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace

    def forward(self, x: Tensor) -> Tensor:
        return hardtanh(x, self.min_val, self.max_val)

    def extra_repr(self) -> str:
        return _with_inplace(f"min_val={self.min_val}, max_val={self.max_val}", self.inplace)


class ReLU6(Hardtanh):
    """min(max(x, 0), 6): Hardtanh(0, 6), as torch's (whose repr hides the bounds)."""

    def __init__(self, inplace: bool = False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Hardsigmoid(SiLU):
    """relu6(x + 3) / 6 (torch's repr does not show ``inplace`` here)."""

    def forward(self, x: Tensor) -> Tensor:
        return hardsigmoid(x)

    def extra_repr(self) -> str:
        return ""


class Hardswish(Hardsigmoid):
    """x relu6(x + 3) / 6."""

    def forward(self, x: Tensor) -> Tensor:
        return hardswish(x)


class LogSigmoid(Module):
    """log sigmoid(x) = -softplus(-x)."""

    def forward(self, x: Tensor) -> Tensor:
        return logsigmoid(x)


class ReLU(Module):
    def forward(self, x: Tensor) -> Tensor:
        return relu(x)


class GELU(Module):
    """``x * Phi(x)``; ``approximate="tanh"`` uses the tanh formula, as torch."""

    def __init__(self, approximate: str = "none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, x: Tensor) -> Tensor:
        return gelu(x, approximate=self.approximate)


class Tanh(Module):
    def forward(self, x: Tensor) -> Tensor:
        return x.tanh()


class Sigmoid(Module):
    def forward(self, x: Tensor) -> Tensor:
        return x.sigmoid()


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
