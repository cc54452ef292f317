"""float16 and bfloat16 through the new op families against torch's CPU
kernels: values, dtypes and gradients (random cotangent). Tolerances are a
few units in the last place of the low-precision format: both engines
compute in float32 and round, but may round intermediate results apart."""

import numpy as np
import pytest

import chapters.autodiff as ad

from .parity import Tol, check_both

rng = np.random.default_rng(12)
LOW = {"float16": (np.float16, Tol(2e-3, 2e-3, 1e-2, 1e-2)),
       "bfloat16": (ad.bfloat16, Tol(1.6e-2, 1e-2, 5e-2, 5e-2))}


def distinct(*shape):
    """Distinct small multiples of 1/4 (exact in both formats, no ties)."""
    return ((rng.permutation(int(np.prod(shape))) - 6) / 4).reshape(shape).astype(np.float32)


INDEX = np.array([[0, 2], [3, 1], [1, 1]])

CASES = {
    "cos": lambda L, F, a: a.cos(),
    "log1p": lambda L, F, a: (a * a).log1p(),
    "round_frac": lambda L, F, a: a.round() + (a * 0.3).frac(),
    "remainder": lambda L, F, a: a % 1.5,
    "copysign": lambda L, F, a: L.copysign(a, a.flip(0)),
    "cumsum": lambda L, F, a: a.cumsum(1),
    "cumprod": lambda L, F, a: (a * 0.5).cumprod(0),
    "cummax": lambda L, F, a: a.cummax(1).values,
    "prod": lambda L, F, a: (a * 0.5).prod(1),
    "flip_roll_repeat": lambda L, F, a: a.flip(1).roll(1, 0).repeat(1, 2),
    "tril_diag": lambda L, F, a: a.tril().diag(),
    "gather_scatter": lambda L, F, a: a.scatter(1, L.tensor(INDEX), a.gather(1, L.tensor(INDEX))),
    "scatter_add": lambda L, F, a: a.scatter_add(1, L.tensor(INDEX), a[:, :2]),
    "scatter_reduce": lambda L, F, a: a.scatter_reduce(1, L.tensor(INDEX), a[:, 1:3], "amax"),
    "index_select_masked_fill": lambda L, F, a: a.index_select(0, L.tensor([2, 0])).masked_fill(
        a[:2] > 0, 0.25),
    "sort_topk": lambda L, F, a: a.sort(0).values + a.topk(4, 1).values,
    "einsum": lambda L, F, a: L.einsum("ij,kj->ik", a, a),
    "bmm": lambda L, F, a: L.bmm(a.reshape(1, 3, 4), a.reshape(1, 4, 3)),
    "lerp": lambda L, F, a: L.lerp(a, a.flip(0), 0.25),
}


@pytest.mark.parametrize("low", sorted(LOW))
@pytest.mark.parametrize("name", sorted(CASES))
def test_low_precision_matches_torch(name, low):
    dtype, tol = LOW[low]
    check_both(CASES[name], [distinct(3, 4).astype(dtype)], tol)
