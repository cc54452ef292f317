"""Drawing from distributions: ``normal``, ``bernoulli``, ``multinomial``, and
the in-place fills ``normal_``, ``uniform_``, ``bernoulli_``, ``random_``,
``exponential_`` (weight initialisation, dropout masks, data shuffling).

Every draw comes from the engine's generator (:mod:`.random`, or the
``generator=`` given), a different stream from torch's: same distribution,
other values.

Gradients: a sample is not a differentiable function of its parameters, and
torch's rule is that the gradient of ``normal(mean, std)`` or
``bernoulli(p)`` with respect to them is zero (the result still requires
grad). Here that is a composition, no new rule: ``where(False, mean, sample)``
has the sample's values, and where's VJP sends the parameter nothing (zeros).

The in-place fills follow the engine's in-place rule (``Tensor._check_inplace``):
refused under grad mode on a tensor that requires grad, so initialise weights
under ``no_grad()`` as ``nn.init`` does. Torch also refuses a leaf; on a
non-leaf it records a zero gradient, which this engine does not record.
"""

from __future__ import annotations

import numpy as np

from . import dtypes
from .device import check_cpu
from .dispatch import public
from .random import FLOAT_INTEGER_TOP, generator_or_default, integer_bounds, integers
from .tensor import Tensor, apply, as_shape, tensor_method


def _zero_gradient_to(sample: Tensor, *parameters) -> Tensor:
    """``sample``, recorded as depending on each parameter tensor that requires
    grad with gradient zero: where(False, parameter, sample)."""
    never = np.zeros(sample.shape, dtype=bool)
    for p in parameters:
        if isinstance(p, Tensor) and p.requires_grad:
            sample = apply("where", (never, p.to(sample.dtype), sample))
    return sample


def _check_floating(op: str, dtype: np.dtype) -> None:
    dtypes.check_implemented(op, dtype, bool_ok=False, integer_ok=False)


def _values(x) -> np.ndarray:
    return x.data if isinstance(x, Tensor) else np.asarray(x, dtype=np.float64)


def _normal_shape(mean, std, size) -> tuple:
    """The result's shape: ``size`` for two numbers, else mean's and std's broadcast."""
    if not isinstance(mean, Tensor) and not isinstance(std, Tensor):
        if size is None:
            raise TypeError("normal(mean, std) with two numbers needs a size, e.g. "
                            "normal(0.0, 1.0, (2, 3)); or pass mean or std as a tensor")
        return as_shape(size)
    try:
        return np.broadcast_shapes(np.shape(_values(mean)), np.shape(_values(std)))
    except ValueError:
        raise RuntimeError(f"normal: the shapes of mean {list(np.shape(_values(mean)))} and "
                           f"std {list(np.shape(_values(std)))} do not broadcast; give them "
                           "one shape (or one of them as a number)") from None


@public("normal")
def normal(mean, std=1.0, size=None, *, generator=None, dtype=None, device=None) -> Tensor:
    """Samples of N(mean, std^2) as mean + std * z with z ~ N(0, 1): mean and
    std are tensors (broadcast together) or numbers (then ``size`` gives the
    shape). The dtype is the tensors' (float32 for two numbers)."""
    check_cpu("normal", device)
    tensors = [t for t in (mean, std) if isinstance(t, Tensor)]
    dtype = dtypes.as_dtype(dtype) if dtype is not None else (
        dtypes.result_dtype(tensors) if tensors else dtypes.float32)
    _check_floating("normal", dtype)
    if np.any(_values(std) < 0):
        raise RuntimeError("normal expects all elements of std >= 0.0; std is a standard "
                           "deviation (take abs() or exp() of it first)")
    shape = _normal_shape(mean, std, size)
    z = generator_or_default(generator).standard_normal(shape)
    sample = Tensor((_values(mean) + _values(std) * z).astype(dtype))
    return _zero_gradient_to(sample, mean, std)


def _check_probability(op: str, p) -> None:
    if np.any(~((_values(p) >= 0) & (_values(p) <= 1))):
        raise RuntimeError(f"{op} expects p to be in [0, 1]; a probability outside it (or "
                           "NaN) has no coin to flip: clamp it, or take sigmoid() of logits")


@tensor_method()
@public("bernoulli")
def bernoulli(input: Tensor, p: float | None = None, *, generator=None) -> Tensor:
    """1 with probability p, else 0, elementwise, in input's dtype: p is
    ``input`` itself (a floating tensor of probabilities), or the number ``p``
    (then input gives only the shape and dtype, any dtype)."""
    if p is None:
        _check_floating("bernoulli", input.dtype)
    probability = input.data if p is None else p
    _check_probability("bernoulli", probability)
    draws = generator_or_default(generator).random(input.shape) < probability
    return _zero_gradient_to(Tensor(draws.astype(input.dtype)), input)


def _check_distributions(probs: np.ndarray, num_samples: int, replacement: bool) -> None:
    """torch's checks on multinomial's rows of weights."""
    if num_samples <= 0:
        raise RuntimeError(f"multinomial: cannot sample n_sample <= 0 samples (got "
                           f"{num_samples}); ask for at least one")
    if not replacement and num_samples > probs.shape[-1]:
        raise RuntimeError(f"multinomial: cannot sample n_sample > prob_dist.size(-1) samples "
                           f"without replacement ({num_samples} > {probs.shape[-1]} "
                           "categories); pass replacement=True or ask for fewer")
    if not np.all(np.isfinite(probs) & (probs >= 0)):
        raise RuntimeError("multinomial: probability tensor contains either `inf`, `nan` or "
                           "element < 0; weights must be finite and non-negative")
    if np.any(probs.sum(axis=-1) <= 0):
        raise RuntimeError("multinomial: invalid multinomial distribution (sum of "
                           "probabilities <= 0); each row needs a positive weight")


def _draw_rows(rng, probs: np.ndarray, num_samples: int, replacement: bool) -> np.ndarray:
    """Category indices per row of weights. With replacement: independent
    draws with P(k) = w_k / sum(w). Without: each row's categories ordered
    by E_k / w_k with E_k ~ Exp(1), the first ``num_samples`` kept; the
    smallest of those is category k with probability w_k / sum(w), and the
    rest follow as draws from what remains (zero weights come last)."""
    if replacement:
        return np.stack([rng.choice(len(row), num_samples, p=row / row.sum())
                         for row in probs]) if len(probs) else np.zeros((0, num_samples))
    with np.errstate(divide="ignore"):
        keys = rng.exponential(size=probs.shape) / probs
    return np.argsort(keys, axis=-1, kind="stable")[:, :num_samples]


@tensor_method()
@public("multinomial")
def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,
                generator=None) -> Tensor:
    """``num_samples`` category indices per row of weights ``input`` (1-d: one
    distribution, 2-d: one per row), drawn with probability proportional to
    the weights; int64, shape (num_samples,) or (rows, num_samples)."""
    if not dtypes.is_floating(input.dtype):
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got "
                           f"{input.dtype}; convert the weights first, e.g. w.float()")
    if input.ndim not in (1, 2):
        raise RuntimeError(f"multinomial: prob_dist must be 1 or 2 dim, got shape "
                           f"{list(input.shape)}; reshape to (rows, categories)")
    probs = input.data.astype(np.float64).reshape(-1, input.shape[-1])
    _check_distributions(probs, num_samples, replacement)
    rows = _draw_rows(generator_or_default(generator), probs, num_samples, replacement)
    return Tensor(rows.astype(np.int64).reshape(*input.shape[:-1], num_samples))


# ------------------------------------------------------------------ in place


def _fill(x: Tensor, values: np.ndarray) -> Tensor:
    """Write ``values`` into x's memory (x's dtype) and bump its version."""
    x.data[...] = values
    x._vbox[0] += 1
    return x


@tensor_method()
def normal_(self: Tensor, mean: float = 0.0, std: float = 1.0, *, generator=None) -> Tensor:
    """Fill with samples of N(mean, std^2)."""
    self._check_inplace("normal_")
    _check_floating("normal_", self.dtype)
    if std < 0:
        raise RuntimeError(f"normal_ expects std >= 0.0, but found std {std}; std is a "
                           "standard deviation")
    z = generator_or_default(generator).standard_normal(self.shape)
    return _fill(self, mean + std * z)


@tensor_method()
def uniform_(self: Tensor, from_: float = 0.0, to: float = 1.0, *, generator=None) -> Tensor:
    """Fill with samples uniform on [from_, to)."""
    self._check_inplace("uniform_")
    _check_floating("uniform_", self.dtype)
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={from_} > to={to}; swap the bounds")
    return _fill(self, generator_or_default(generator).uniform(from_, to, self.shape))


@tensor_method()
def bernoulli_(self: Tensor, p=0.5, *, generator=None) -> Tensor:
    """Fill with 1 with probability p (a number, or a tensor broadcast to
    x's shape), else 0; any dtype."""
    self._check_inplace("bernoulli_")
    _check_probability("bernoulli_", p)
    try:
        probability = np.broadcast_to(_values(p), self.shape)
    except ValueError:
        raise RuntimeError(f"bernoulli_: p of shape {list(np.shape(_values(p)))} does not "
                           f"broadcast to the tensor's shape {list(self.shape)}; give p that "
                           "shape, or one it broadcasts from") from None
    return _fill(self, generator_or_default(generator).random(self.shape)
                 < probability)


@tensor_method()
def random_(self: Tensor, from_: int | None = None, to: int | None = None, *,
            generator=None) -> Tensor:
    """Fill with integers uniform on [from_, to): ``random_(to)`` draws from
    [0, to), ``random_()`` from every integer x's dtype holds exactly
    ([0, 2^24] for float32, [0, max] for an integer dtype)."""
    self._check_inplace("random_")
    if to is None and from_ is not None:
        from_, to = 0, from_
    if to is None:
        to = (FLOAT_INTEGER_TOP[self.dtype] if dtypes.is_floating(self.dtype)
              else integer_bounds(self.dtype)[1]) + 1
    values = integers("random_", from_ or 0, to, self.shape, self.dtype, generator)
    return _fill(self, values)


@tensor_method()
def exponential_(self: Tensor, lambd: float = 1.0, *, generator=None) -> Tensor:
    """Fill with samples of the exponential distribution of rate ``lambd``
    (density lambd e^(-lambd x) on x >= 0, mean 1 / lambd)."""
    self._check_inplace("exponential_")
    if not dtypes.is_floating(self.dtype):
        raise RuntimeError(f"exponential_: the exponential distribution is continuous, so "
                           f"the tensor must be floating point, not {self.dtype}; use "
                           "x.float()")
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    return _fill(self, generator_or_default(generator).exponential(
        1 / lambd, self.shape))
