"""Dtypes end to end: torch's promotion rules, weak scalars, casts with gradients,
and low-precision forward/backward against torch."""

import itertools

import numpy as np
import pytest
import torch

import chapters.autodiff as ad
from chapters.torchcheck import assert_close, to_numpy, to_torch

from .parity import Tol, check_both

DTYPES = ["bool", "int64", "float16", "bfloat16", "float32", "float64"]


def _make(lib, dtype, ndim):
    shape = (2,) * ndim
    if lib is torch:
        return torch.ones(shape, dtype=getattr(torch, dtype))
    return ad.ones(shape, dtype=ad.dtypes.as_dtype(dtype))


@pytest.mark.parametrize(("a", "b"), list(itertools.product(DTYPES, DTYPES)))
@pytest.mark.parametrize(("ndim_a", "ndim_b"), [(1, 1), (1, 0)])
def test_tensor_tensor_promotion_matches_torch(a, b, ndim_a, ndim_b):
    engine = (_make(ad, a, ndim_a) * _make(ad, b, ndim_b)).dtype
    expected = (_make(torch, a, ndim_a) * _make(torch, b, ndim_b)).dtype
    assert engine.name == str(expected).removeprefix("torch.")


@pytest.mark.parametrize("a", DTYPES)
@pytest.mark.parametrize("scalar", [True, 2, 2.5])
def test_python_scalars_are_weak(a, scalar):
    engine = (_make(ad, a, 1) + scalar).dtype
    expected = (_make(torch, a, 1) + scalar).dtype
    assert engine.name == str(expected).removeprefix("torch.")


def test_true_division_of_integers_gives_float32():
    assert (ad.tensor([1, 2]) / 2).dtype == ad.float32
    assert (torch.tensor([1, 2]) / 2).dtype == torch.float32


@pytest.mark.parametrize("cast", ["half", "bfloat16", "double"])
def test_cast_gradient_comes_back_in_the_input_dtype(cast):
    results = []
    for lib in (ad, torch):
        x = lib.tensor([0.1, 0.2, 0.3], requires_grad=True)
        y = getattr(x, cast)()
        ((y * 3.0).float() * lib.tensor([1.0, 2.0, 3.0])).sum().backward()
        results.append((y.dtype, x.grad))
    assert results[0][0].name == str(results[1][0]).removeprefix("torch.")
    assert_close(results[0][1], results[1][1], rtol=0, atol=0, what="x.grad")


def test_mixed_dtype_op_sends_each_input_its_own_dtype_gradient():
    results = []
    for lib in (ad, torch):
        a = lib.tensor([0.5, 1.5], dtype=lib.float16, requires_grad=True)
        b = lib.tensor([2.0, 3.0], requires_grad=True)
        (a * b).sum().backward()
        results.append((a.grad, b.grad))
    for (ge, gt), what in zip(zip(*results, strict=True), ("float16 input", "float32 input"),
                              strict=True):
        assert_close(ge, gt, rtol=0, atol=0, what=what)


LOW = {"float16": Tol(1e-3, 1e-3, 1e-2, 1e-2), "bfloat16": Tol(1e-2, 1e-2, 5e-2, 5e-2)}
LOW_CASES = {
    "mul_add": lambda lib, F, a, b: a * b + 1.5,
    "exp_tanh": lambda lib, F, a, b: a.exp() * b.tanh(),
    "matmul": lambda lib, F, a, b: a @ b.T,
    "softmax": lambda lib, F, a, b: (a * b).softmax(dim=1),
    "sum_mean": lambda lib, F, a, b: a.sum(dim=1) + b.mean(dim=1),
    "linear_relu": lambda lib, F, a, b: F.relu(F.linear(a, b)),
}


@pytest.mark.parametrize("dtype", sorted(LOW))
@pytest.mark.parametrize("name", sorted(LOW_CASES))
def test_low_precision_forward_and_backward_match_torch(name, dtype):
    rng = np.random.default_rng(5)
    arrays = [rng.standard_normal((3, 4)).astype(ad.dtypes.as_dtype(dtype)) for _ in range(2)]
    both = check_both(LOW_CASES[name], arrays, LOW[dtype])
    assert both.engine_out.dtype.name == dtype


def test_bfloat16_round_trips_bit_for_bit_through_torchcheck():
    x = ad.randn(8).bfloat16()
    assert np.array_equal(to_numpy(to_torch(x)).view(np.int16), x.numpy().view(np.int16))
