"""Elementwise math and rounding (ops.elementwise, ops.rounding) against torch.

One lambda per case drives both engines; values, dtypes and gradients
(random cotangent) are compared with explicit tolerances, over 0-d, empty,
non-contiguous and broadcast shapes, integer and bool inputs, and the
exception types torch raises. Differentiable ops also pass gradcheck in
float64.
"""

import numpy as np
import pytest
import torch

import chapters.autodiff as ad

from .parity import FLOAT32, Tol, case_tests, check_both, raises_like_torch

rng = np.random.default_rng(2024)


def normal(*shape):
    return np.asarray(rng.standard_normal(shape), dtype=np.float32)


def positive(*shape):
    return np.asarray(rng.random(shape) + 0.5, dtype=np.float32)


def unit(*shape):
    """Inside (-0.9, 0.9): the domain of asin and acos, away from its edges."""
    return np.asarray(rng.uniform(-0.9, 0.9, shape), dtype=np.float32)


def off_grid(*shape):
    """Values a quarter away from every multiple of 0.5, so that rounding and
    the quotients of remainder/fmod by +-2 are never at a jump."""
    return np.asarray(rng.integers(-8, 8, shape) + 0.25, dtype=np.float32)


def ints(*shape, low=-9, high=9):
    return rng.integers(low, high, shape).astype(np.int64)


def divisors(*shape):
    """Nonzero integers of both signs."""
    return (rng.integers(1, 5, shape) * rng.choice([-1, 1], shape)).astype(np.int64)


SMOOTH = ("sin", "cos", "tan", "atan", "log2", "log10", "log1p", "expm1", "erf")
ROUND = ("floor", "ceil", "trunc", "round", "frac")

CASES = {
    **{f"{op}": (lambda lib, F, a, op=op: getattr(a, op)(), [positive(3, 4)]) for op in SMOOTH},
    **{f"{op}_function": (lambda lib, F, a, op=op: getattr(lib, op)(a), [positive(5)])
       for op in SMOOTH},
    "asin": (lambda lib, F, a: a.asin(), [unit(3, 4)]),
    "acos": (lambda lib, F, a: lib.acos(a), [unit(3, 4)]),
    "arcsin_alias": (lambda lib, F, a: lib.arcsin(a), [unit(4)]),
    "method_aliases": (lambda lib, F, a: a.arcsin() + a.arccos() + a.arctan() + a.fix(),
                       [unit(4)]),
    "sin_0d": (lambda lib, F, a: a.sin(), [normal()]),
    "cos_empty": (lambda lib, F, a: a.cos(), [normal(0, 3)]),
    "tan_noncontiguous": (lambda lib, F, a: a.t().tan(), [unit(3, 4)]),
    "log1p_strided": (lambda lib, F, a: a[:, ::2].log1p(), [positive(3, 6)]),
    "expm1_tiny": (lambda lib, F, a: (a * 1e-6).expm1(), [normal(5)]),
    **{op: (lambda lib, F, a, op=op: getattr(a, op)(), [off_grid(3, 4)]) for op in ROUND},
    "round_ties_to_even": (lambda lib, F, a: (a * 0 + lib.tensor([0.5, 1.5, 2.5, -0.5])).round(),
                           [normal(4)]),
    "round_decimals": (lambda lib, F, a: a.round(decimals=2), [normal(3, 4)]),
    "frac_noncontiguous": (lambda lib, F, a: a.t().frac(), [off_grid(3, 4) * 1.3]),
    "remainder": (lambda lib, F, a, b: a % b, [off_grid(3, 4), np.float32([2.0, -2.0, 2.0,
                                                                            -2.0])]),
    "remainder_scalar": (lambda lib, F, a: a % -1.5, [off_grid(2, 3)]),
    "remainder_function": (lambda lib, F, a, b: lib.remainder(a, b), [off_grid(3, 1),
                                                                      positive(4) + 1]),
    "fmod": (lambda lib, F, a, b: lib.fmod(a, b), [off_grid(3, 4), np.float32([2.0, -2.0, 2.0,
                                                                               -2.0])]),
    "fmod_0d": (lambda lib, F, a: lib.fmod(a, 2.0), [np.asarray(-7.25, dtype=np.float32)]),
    "floor_divide_grad_free": (lambda lib, F, a, b: a.div(b, rounding_mode="floor"),
                               [off_grid(3, 4), positive(4)]),
    "div_trunc": (lambda lib, F, a, b: lib.div(a, b, rounding_mode="trunc"),
                  [off_grid(3, 4), -positive(3, 1)]),
    "copysign": (lambda lib, F, a, b: lib.copysign(a, b), [normal(3, 4), normal(4)]),
    "copysign_scalar": (lambda lib, F, a: a.copysign(-1.0), [normal(5)]),
    "lerp_scalar_weight": (lambda lib, F, a, b: lib.lerp(a, b, 0.3), [normal(3, 4),
                                                                      normal(3, 4)]),
    "lerp_tensor_weight": (lambda lib, F, a, b, w: a.lerp(b, w), [normal(3, 4), normal(4),
                                                                  normal(3, 1)]),
}

TOLERANCES = {"tan_noncontiguous": Tol(1e-5, 1e-6, 1e-4, 1e-4)}


test_op_matches_torch_float32, test_op_matches_torch_float64 = case_tests(
    CASES, overrides=TOLERANCES)


LOW = Tol(1e-2, 1e-2, 1e-2, 1e-2)


@pytest.mark.parametrize("dtype", [np.float16, "bfloat16"])
@pytest.mark.parametrize("op", ["sin", "expm1", "floor", "frac", "atan"])
def test_low_precision_is_computed_in_float32_and_rounded(op, dtype):
    arrays = [positive(3, 4).astype(ad.bfloat16 if dtype == "bfloat16" else dtype)]
    check_both(lambda lib, F, a: getattr(a, op)(), arrays, LOW)


INTEGER_CASES = {
    "sin_int": (lambda lib, F, a: a.sin(), [ints(3, 4)]),
    "log2_int": (lambda lib, F, a: a.log2(), [ints(5, low=1)]),
    "expm1_bool": (lambda lib, F, a: (a > 0).expm1(), [ints(5)]),
    "floor_int": (lambda lib, F, a: a.floor(), [ints(3, 4)]),
    "round_int": (lambda lib, F, a: lib.round(a), [ints(3, 4)]),
    "remainder_int": (lambda lib, F, a, b: a % b, [ints(3, 4), divisors(4)]),
    "remainder_bool_by_int": (lambda lib, F, a: (a > 0) % 2, [ints(6)]),
    "rmod_int": (lambda lib, F, a: 7 % a, [divisors(6)]),
    "rmod_float": (lambda lib, F, a: 5.0 % a, [np.float32([2.0, -3.0, 1.5])]),  # torch: no grad
    "fmod_int": (lambda lib, F, a, b: lib.fmod(a, b), [ints(3, 4), divisors(3, 1)]),
    "floordiv_int": (lambda lib, F, a, b: a // b, [ints(3, 4), divisors(4)]),
    "rfloordiv_int": (lambda lib, F, a: 7 // a, [divisors(6)]),
    "floordiv_int_by_float": (lambda lib, F, a: a // 2.5, [ints(6)]),
    "div_trunc_int": (lambda lib, F, a, b: a.div(b, rounding_mode="trunc"),
                      [ints(3, 4), divisors(4)]),
    "div_floor_int64_exact": (lambda lib, F, a: a.div(3, rounding_mode="floor"),
                              [np.array([2**62 + 1, -(2**62) - 1])]),
    "copysign_int": (lambda lib, F, a, b: lib.copysign(a, b), [ints(3, 4), ints(4)]),
    "isnan": (lambda lib, F, a: (a / a).isnan(), [np.float32([0.0, 1.0, -2.0])]),
    "isinf": (lambda lib, F, a: lib.isinf(1 / a), [np.float32([0.0, -0.0, 2.0])]),
    "isfinite": (lambda lib, F, a: lib.isfinite(a.log()), [np.float32([0.0, -1.0, 2.0])]),
    "isnan_int": (lambda lib, F, a: a.isnan(), [ints(4)]),
    "isfinite_int": (lambda lib, F, a: a.isfinite(), [ints(4)]),
    "isclose": (lambda lib, F, a, b: lib.isclose(a, a + b * 1e-6), [normal(3, 4), normal(4)]),
    "isclose_tolerances": (lambda lib, F, a: a.isclose(a + 0.05, rtol=0, atol=0.1),
                           [normal(5)]),
    "isclose_nan": (lambda lib, F, a: lib.isclose(a / a, a / a, equal_nan=True),
                    [np.float32([0.0, 1.0])]),
    "isclose_int": (lambda lib, F, a: lib.isclose(a, a + 1, atol=1), [ints(4)]),
    "isnan_empty": (lambda lib, F, a: a.isnan(), [normal(0)]),
}


@pytest.mark.parametrize("name", sorted(INTEGER_CASES))
def test_integer_bool_and_predicate_results_match_torch(name):
    fn, arrays = INTEGER_CASES[name]
    both = check_both(fn, arrays, FLOAT32, grad_mask=[False] * len(arrays))
    assert str(both.engine_out.dtype) == str(both.torch_out.dtype).removeprefix("torch.")


ERRORS = {
    "frac_int": (lambda lib, a: a.frac(), [ints(3)]),
    "floor_bool": (lambda lib, a: (a > 0).floor(), [ints(3)]),
    "lerp_int": (lambda lib, a: lib.lerp(a, a, 0.5), [ints(3)]),
    "lerp_mixed_dtypes": (lambda lib, a: lib.lerp(a, a.double(), 0.5), [normal(3)]),
    "isclose_mixed_dtypes": (lambda lib, a: lib.isclose(a, a.long()), [normal(3)]),
    "remainder_int_by_zero": (lambda lib, a: a % 0, [ints(3)]),
    "floordiv_int_by_zero": (lambda lib, a: a // (a * 0), [ints(3)]),
    "div_bad_rounding_mode": (lambda lib, a: a.div(2, rounding_mode="nearest"), [normal(3)]),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_have_torchs_exception_types(name):
    raises_like_torch(*ERRORS[name])


def test_float_division_by_zero_gives_nan_as_in_torch():
    for lib in (ad, torch):
        out = lib.tensor([1.0, -2.0]) % 0.0
        assert np.isnan(np.asarray(out.tolist())).all()


GRADCHECK = {
    **{op: (lambda x, op=op: getattr(x, op)(), positive(2, 3)) for op in SMOOTH},
    "asin": (lambda x: x.asin(), unit(2, 3)),
    "acos": (lambda x: x.acos(), unit(2, 3)),
    "frac": (lambda x: x.frac(), off_grid(2, 3) * 1.1),
    "floor": (lambda x: x.floor(), off_grid(2, 3)),
    "remainder": (lambda x: (x * 3) % (x + 4.2), positive(2, 3)),
    "fmod": (lambda x: ad.fmod(x * 3, -(x + 0.9)), positive(2, 3)),
    "copysign": (lambda x: x.copysign(x - 1.0), positive(2, 3)),
    "lerp": (lambda x: ad.lerp(x, x * x, x.sin()), normal(2, 3)),
}


@pytest.mark.parametrize("name", sorted(GRADCHECK))
def test_gradcheck_float64(name):
    fn, array = GRADCHECK[name]
    x = ad.tensor(array.astype(np.float64), requires_grad=True)
    assert ad.gradcheck(fn, (x,))


@pytest.mark.parametrize("op", ["sin", "tan", "log1p", "expm1", "frac"])
def test_forward_mode_matches_the_reverse_rule(op):
    x = ad.tensor(positive(4).astype(np.float64), requires_grad=True)
    t = ad.tensor(normal(4).astype(np.float64))
    _, tangent = ad.jvp(lambda v: getattr(v, op)(), (x,), (t,))
    (vjp_diag,) = ad.grad(getattr(x, op)().sum(), x)
    np.testing.assert_allclose(tangent.detach().numpy(), vjp_diag.numpy() * t.numpy(), rtol=1e-12)
