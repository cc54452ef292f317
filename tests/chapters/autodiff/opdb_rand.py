"""Op-table entries for the random draws that take an input tensor
(chapters/autodiff/sampling.py and factories.py); opdb._build adds them.

The engine's generator is not torch's, so each sample makes the draw
certain: probabilities 0 or 1, a standard deviation of 0, one-hot weights,
a range [a, a] or [a, a + 1), or a fact every draw has (``>= 0``). Dtypes,
shapes, refusals and gradients (torch's zeros) are then compared exactly;
the distributions themselves are checked in test_api_rand.py.
"""

from __future__ import annotations

import numpy as np

from tests.chapters.autodiff.opdb import (
    REALS,
    OpEntry,
    Sample,
    elementwise,
    entry,
    error,
    forms,
    one,
    ones_,
    transposed,
)


def _coins(rng, *shape) -> np.ndarray:
    """Probabilities that are 0 or 1: a certain outcome."""
    return rng.integers(0, 2, size=shape).astype(np.float64)


def _one_hot(rng, rows: int, categories: int) -> np.ndarray:
    """Rows of weights with one positive entry each: one possible category."""
    weights = np.zeros((rows, categories))
    weights[np.arange(rows), rng.integers(0, categories, size=rows)] = rng.uniform(0.5, 2, rows)
    return weights


def _fresh(name, *args):
    """``x.name(*args)`` on a detached copy (in-place fills are for updates
    outside autograd, as the engine's other in-place ops)."""
    return {f"Tensor.{name}": lambda lib, F, x: getattr(x.detach().clone(), name)(*args)}


def _bernoulli_entries() -> list[OpEntry]:
    def samples(rng):
        return [one("2d", _coins(rng, 3, 4)), one("0d", _coins(rng)),
                one("empty", _coins(rng, 0, 3)),
                one("transposed", _coins(rng, 4, 3), view=transposed)]

    def with_p(rng):
        return [one("p-one", rng.uniform(0, 1, (2, 3)), p=1.0),
                one("p-zero", rng.uniform(0, 1, (2, 3)), p=0.0),
                one("0d", rng.uniform(0, 1, ()), p=1.0)]

    # bernoulli(x, p): torch records it but its backward raises (no derivative
    # defined); the engine's gives zeros, as for bernoulli(p): nothing to compare
    return [entry("bernoulli", forms("bernoulli"), samples, errors=[
        error("probability above 1", lambda lib, F, p: lib.bernoulli(p), np.array([0.5, 1.5])),
        error("negative p", lambda lib, F, x: x.bernoulli(-0.1), ones_(2))]),
        entry("bernoulli-p", {"bernoulli": lambda lib, F, x, p: lib.bernoulli(x, p)}, with_p,
              differentiable=None)]


def _multinomial_entries() -> list[OpEntry]:
    def samples(rng):
        return [one("1d", _one_hot(rng, 1, 4)[0], num_samples=1),
                one("1d-replacement", _one_hot(rng, 1, 4)[0], num_samples=3, replacement=True),
                one("rows", _one_hot(rng, 3, 5), num_samples=1),
                one("rows-replacement", _one_hot(rng, 3, 5), num_samples=4, replacement=True),
                one("no-rows", np.ones((0, 3)), num_samples=2),
                one("transposed", _one_hot(rng, 4, 3).T.copy(), num_samples=1, view=transposed)]

    return [entry("multinomial", forms("multinomial"), samples, differentiable=False, errors=[
        error("more than categories, no replacement", lambda lib, F, w: w.multinomial(3),
              np.array([0.5, 0.5])),
        error("no samples", lambda lib, F, w: lib.multinomial(w, 0), np.array([0.5, 0.5])),
        error("negative weight", lambda lib, F, w: lib.multinomial(w, 1), np.array([-1.0, 2.0])),
        error("all weights zero", lambda lib, F, w: lib.multinomial(w, 1), np.zeros((2, 3))),
        error("3-d weights", lambda lib, F, w: lib.multinomial(w, 1), np.ones((2, 2, 2))),
        error("integer weights", lambda lib, F, w: lib.multinomial(w, 1), np.ones(3, np.int64))])]


def _normal_entries() -> list[OpEntry]:
    """std 0: every sample is its mean."""
    def samples(rng):
        return [Sample("same-shape", (rng.uniform(-2, 2, (3, 4)), np.zeros((3, 4)))),
                Sample("broadcast", (rng.uniform(-2, 2, (3, 1)), np.zeros((1, 4)))),
                Sample("0d", (rng.uniform(-2, 2, ()), np.zeros(()))),
                Sample("empty", (rng.uniform(-2, 2, (0, 3)), np.zeros((0, 3)))),
                Sample("transposed", (rng.uniform(-2, 2, (4, 3)), np.zeros((3, 4))),
                       view=transposed)]

    def single(rng):
        return [one("2d", rng.uniform(-2, 2, (3, 4))), one("0d", rng.uniform(-2, 2, ())),
                one("empty", rng.uniform(-2, 2, (0, 3)))]

    def zeros(rng):
        return [one("2d", np.zeros((3, 4))), one("0d", np.zeros(())),
                one("empty", np.zeros((0, 2)))]

    return [
        entry("normal", {"normal": lambda lib, F, m, s: lib.normal(m, s)}, samples, errors=[
            error("negative std", lambda lib, F, m, s: lib.normal(m, s), np.zeros(2),
                  np.array([1.0, -1.0])),
            error("shapes that do not broadcast", lambda lib, F, m, s: lib.normal(m, s),
                  np.zeros(4), np.ones((2, 2)))]),
        entry("normal-mean-tensor", {"normal": lambda lib, F, m: lib.normal(m, 0.0)}, single),
        entry("normal-std-tensor", {"normal": lambda lib, F, s: lib.normal(1.5, s)}, zeros),
    ]


def _fill_entries() -> list[OpEntry]:
    def samples(rng):
        return elementwise(rng, REALS)

    return [
        entry("normal_", _fresh("normal_", 2.0, 0.0), samples, differentiable=False,
              errors=[error("negative std", lambda lib, F, x: x.normal_(0.0, -1.0), ones_(2))]),
        entry("uniform_", _fresh("uniform_", 0.5, 0.5), samples, differentiable=False,
              errors=[error("from above to", lambda lib, F, x: x.uniform_(2.0, 1.0), ones_(2))]),
        entry("bernoulli_", _fresh("bernoulli_", 1.0), samples, differentiable=False,
              errors=[error("p above 1", lambda lib, F, x: x.bernoulli_(1.5), ones_(2))]),
        entry("random_", _fresh("random_", 1, 2), samples, differentiable=False, errors=[
            error("empty range", lambda lib, F, x: x.random_(5, 2), ones_(2)),
            error("beyond uint8", lambda lib, F, x: x.random_(0, 300), np.ones(2, np.uint8))]),
        entry("exponential_", {"Tensor.exponential_": lambda lib, F, x: x.detach().clone()
                               .exponential_(2.0) >= 0}, samples, differentiable=False,
              errors=[error("rate 0", lambda lib, F, x: x.exponential_(0.0), ones_(2))]),
    ]


def _like_entries() -> list[OpEntry]:
    def samples(rng):
        return [s for s in elementwise(rng, REALS) if s.desc in ("2d", "0d", "empty")]

    return [
        entry("rand_like", {"rand_like": lambda lib, F, x: lib.rand_like(x).floor()}, samples,
              differentiable=False),
        entry("randint_like", {"randint_like": lambda lib, F, x: lib.randint_like(x, 1)},
              samples, differentiable=False, errors=[
                  error("empty range", lambda lib, F, x: lib.randint_like(x, 3, 3), ones_(2))]),
    ]


def entries() -> list[OpEntry]:
    return (_bernoulli_entries() + _multinomial_entries() + _normal_entries()
            + _fill_entries() + _like_entries())
