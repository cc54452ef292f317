"""Activations (激活函数): elementwise nonlinearities, and softmax along a dim."""

from __future__ import annotations

import warnings

from ..dispatch import FLOAT32, LOWER_PRECISION, public
from ..functions import where
from ..tensor import Tensor, apply
from ._common import _floating_only, _no_bool, _tensor


@public("relu")
def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(x, 0)."""
    return _tensor(input).relu()


@public("leaky_relu")
def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """x if x > 0 else negative_slope * x."""
    _floating_only("leaky_relu", input)
    return apply("leaky_relu", (input,), {"negative_slope": negative_slope})


@public("gelu")
def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """x * Phi(x) (``approximate="tanh"``: the tanh formula)."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    _floating_only("gelu", input)
    return apply("gelu", (input,), {"approximate": approximate})


@public("sigmoid")
def sigmoid(input: Tensor) -> Tensor:
    return apply("sigmoid", (input,))


@public("tanh")
def tanh(input: Tensor) -> Tensor:
    return apply("tanh", (input,))


@public("silu")
def silu(input: Tensor) -> Tensor:
    """x * sigmoid(x)."""
    _floating_only("silu", input)
    return input * apply("sigmoid", (input,))


def implicit_softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    """torch's deprecated choice when softmax, softmin or log_softmax gets no ``dim``:
    dim 0 for 0-, 1- and 3-D inputs, else dim 1, with torch's warning ``stacklevel`` up."""
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call "
                  "to include dim=X as an argument.", UserWarning, stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


# Each of the three takes torch's positional ``_stacklevel`` (frames up to the caller, for
# the warning); the engine's counts one more frame, the public-op wrapper.

@public("softmax")
def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """e^x_i / sum_j e^x_j along ``dim``."""
    if dim is None:
        dim = implicit_softmax_dim("softmax", input.ndim, _stacklevel + 1)
    x = input if dtype is None else input.to(dtype)
    return x.softmax(dim)


@public("log_softmax")
def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,
                dtype=None) -> Tensor:
    """x - logsumexp(x) along ``dim``."""
    if dim is None:
        dim = implicit_softmax_dim("log_softmax", input.ndim, _stacklevel + 1)
    x = input if dtype is None else input.to(dtype)
    return x.log_softmax(dim)


# The activations below are compositions of ops that have rules (exp, log1p,
# expm1, tanh, where), so their gradients come from those rules. Where a
# branch of ``where`` could overflow (exp of a large x), its input is first
# capped on the side where it is not chosen: the branch not taken then holds
# a finite value, and its zero gradient stays zero instead of 0 * inf = NaN.
# NaN fails every comparison, so each ``where`` is written to send it down
# the branch torch's kernel sends it (its gradient too), and the other
# branch sees a finite stand-in: 0 * NaN would poison its zero gradient.


def _softplus(x: Tensor, beta: float, threshold: float) -> Tensor:
    """softplus without the public-op bookkeeping (shared with logsigmoid and mish)."""
    bx = x * beta
    capped = where(bx > threshold, threshold, bx)
    return where(bx > threshold, x, capped.exp().log1p() / beta)


@public("softplus", autocast={"cuda": FLOAT32})
def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """softplus(x) = log(1 + e^(beta x)) / beta, a smooth relu; where
    beta x > threshold it is x itself (they differ by log(1 + e^-(beta x)) / beta,
    below e^-20 / beta at the default threshold).
    d/dx = sigmoid(beta x) (1 where the linear branch is taken)."""
    _floating_only("softplus", input)
    return _softplus(input, beta, threshold)


def _elu(x: Tensor, alpha: float, input_scale: float = 1.0) -> Tensor:
    """x for x > 0, alpha (e^(x input_scale) - 1) otherwise (elu, selu and celu)."""
    negative = (where(x <= 0, x, 0.0) * input_scale).expm1() * alpha
    return where(x <= 0, negative, x)


@public("elu")
def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """elu(x) = x for x > 0, alpha (e^x - 1) otherwise; d/dx = 1 or alpha e^x
    (at 0 the left side's, alpha, as torch)."""
    _floating_only("elu", input)
    return _elu(input, alpha)


#: selu's constants (Klambauer et al. 2017): they keep activations at zero mean
#: and unit variance through deep stacks of layers
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


@public("selu")
def selu(input: Tensor, inplace: bool = False) -> Tensor:
    """selu(x) = scale * elu(x, alpha) with fixed alpha ~ 1.6733 and scale ~ 1.0507."""
    _floating_only("selu", input)
    return _elu(input, SELU_ALPHA) * SELU_SCALE


@public("celu")
def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """celu(x) = x for x > 0, alpha (e^(x / alpha) - 1) otherwise: elu with
    slope 1 at 0 from both sides, whatever alpha."""
    if alpha == 0:
        raise RuntimeError("celu: alpha cannot be 0 (the negative side is "
                           "alpha (exp(x / alpha) - 1)); pass a non-zero alpha")
    _floating_only("celu", input)
    return _elu(input, alpha, 1 / alpha)


@public("logsigmoid")
def logsigmoid(input: Tensor) -> Tensor:
    """log sigmoid(x) = -softplus(-x), which stays finite where sigmoid(x)
    underflows; d/dx = 1 - sigmoid(x) = sigmoid(-x)."""
    _floating_only("logsigmoid", input)
    return -_softplus(-input, 1.0, 20.0)


@public("mish")
def mish(input: Tensor, inplace: bool = False) -> Tensor:
    """mish(x) = x tanh(softplus(x))."""
    _floating_only("mish", input)
    return input * _softplus(input, 1.0, 20.0).tanh()


@public("softmin", autocast={"cuda": FLOAT32})
def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3, dtype=None) -> Tensor:
    """softmin(x) = softmax(-x): weights that favour the smallest entries.
    A composition (negation, softmax), so its gradient is theirs."""
    if dim is None:
        dim = implicit_softmax_dim("softmin", input.ndim, _stacklevel + 1)
    x = input if dtype is None else input.to(dtype)
    return (-x).softmax(dim)


@public("softsign")
def softsign(input: Tensor) -> Tensor:
    """softsign(x) = x / (1 + |x|), a tanh-like squash with polynomial tails;
    d/dx = 1 / (1 + |x|)^2. A composition (abs, add, div); integers give floats."""
    _no_bool("softsign", input)
    return input / (input.abs() + 1)


@public("tanhshrink")
def tanhshrink(input: Tensor) -> Tensor:
    """tanhshrink(x) = x - tanh(x); d/dx = tanh(x)^2. A composition (tanh, sub)."""
    _no_bool("tanhshrink", input)
    return input - input.tanh()


@public("threshold")
def threshold(input: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """x where x > threshold, else ``value`` (in x's dtype); d/dx = 1 where
    x > threshold, else 0. A composition (comparison, masked_fill)."""
    _no_bool("threshold", input)
    return input.masked_fill(~(input > threshold), value)


@public("glu")
def glu(input: Tensor, dim: int = -1) -> Tensor:
    """Gated linear unit: split x in halves a, b along ``dim``; a * sigmoid(b).
    d/da = sigmoid(b), d/db = a sigmoid(b) (1 - sigmoid(b)), from the rules of
    chunk, sigmoid and mul."""
    _floating_only("glu", input)
    size = input.shape[dim] if input.ndim else 1
    if input.ndim == 0 or size % 2:
        raise RuntimeError(f"glu: halving dimension must be even, but dimension {dim} is size "
                           f"{size}; give a dim of even size")
    a, b = input.chunk(2, dim)
    return a * apply("sigmoid", (b,))


@public("prelu", autocast={"cpu": LOWER_PRECISION, "cuda": LOWER_PRECISION})
def prelu(input: Tensor, weight: Tensor) -> Tensor:
    """prelu(x) = x for x > 0, w x otherwise, with a learned slope w: one for
    all channels or one per channel (dim 1). d/dx = 1 or w (w at 0, as torch);
    d/dw = x where x <= 0, summed over what w was broadcast to. A composition
    (where, mul)."""
    _floating_only("prelu", input, weight)
    channels = input.shape[1] if input.ndim >= 2 else 1
    if weight.numel() not in (1, channels):
        raise RuntimeError(f"prelu: mismatch of parameter numbers and input channel size: "
                           f"found {weight.numel()} parameters and {channels} channels; give "
                           "one slope or one per channel (dim 1)")
    slope = weight.reshape(()) if weight.numel() == 1 else weight.reshape(
        (channels,) + (1,) * (input.ndim - 2))
    return where(input > 0, input, slope * input)
