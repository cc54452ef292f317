"""Weight initialisation (权重初始化), with torch.nn.init's names and formulas.

Every function fills a tensor **in place** (hence the trailing underscore) and
returns it. The point of the formulas is to keep the variance of activations
(forward) and of gradients (backward) roughly constant from layer to layer:

* ``fan_in`` = inputs feeding one output unit (``in_features``, or
  ``in_channels * kh * kw`` for a convolution), ``fan_out`` the reverse;
* Xavier/Glorot: ``Var(w) = gain^2 * 2 / (fan_in + fan_out)``;
* Kaiming/He: ``Var(w) = gain^2 / fan``, with ``gain = sqrt(2)`` for ReLU;
* a uniform ``U(-b, b)`` has variance ``b^2 / 3``, so ``b = sqrt(3 * Var)``.

PyTorch's default for ``Linear`` and ``Conv2d`` is
``kaiming_uniform_(w, a=sqrt(5))``: gain ``sqrt(2 / (1 + 5))`` gives exactly
``b = 1 / sqrt(fan_in)`` — the same bound as their bias. The random numbers
come from the engine's generator (``chapters.autodiff.manual_seed``), not
torch's, so draws differ from torch's while the *distributions* are equal;
load a torch ``state_dict`` when identical values are needed.
"""

from __future__ import annotations

import math

import numpy as np

from ..grad_mode import no_grad
from ..random import default_generator
from ..tensor import Tensor


def _fill(tensor: Tensor, values: np.ndarray) -> Tensor:
    with no_grad():
        tensor.data[...] = values.astype(tensor.data.dtype)
    return tensor


def _rng(generator):
    return generator if generator is not None else default_generator()


def calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """``(fan_in, fan_out)`` of a weight ``(out, in, *kernel)``: the kernel's
    spatial size multiplies both."""
    if tensor.ndim < 2:
        raise ValueError(f"fan in and fan out need a tensor with at least 2 dims, "
                         f"got shape {tuple(tensor.shape)}")
    receptive = int(np.prod(tensor.shape[2:])) if tensor.ndim > 2 else 1
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The factor that keeps variance after ``nonlinearity`` (torch's table)."""
    if nonlinearity in ("linear", "conv1d", "conv2d", "conv3d", "sigmoid", "identity"):
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"calculate_gain: unsupported nonlinearity {nonlinearity!r}")


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator=None) -> Tensor:
    return _fill(tensor, _rng(generator).uniform(a, b, size=tensor.shape))


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator=None) -> Tensor:
    return _fill(tensor, _rng(generator).normal(mean, std, size=tensor.shape))


def constant_(tensor: Tensor, val: float) -> Tensor:
    return _fill(tensor, np.full(tensor.shape, val))


def zeros_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 0.0)


def ones_(tensor: Tensor) -> Tensor:
    return constant_(tensor, 1.0)


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    fan_in, fan_out = calculate_fan_in_and_fan_out(tensor)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator=None) -> Tensor:
    fan_in, fan_out = calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)), generator)


def _kaiming_std(tensor, a, mode, nonlinearity) -> float:
    fan_in, fan_out = calculate_fan_in_and_fan_out(tensor)
    fan = {"fan_in": fan_in, "fan_out": fan_out}.get(mode)
    if fan is None:
        raise ValueError(f"kaiming init: mode must be 'fan_in' or 'fan_out', got {mode!r}")
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu", generator=None) -> Tensor:
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity), generator)
