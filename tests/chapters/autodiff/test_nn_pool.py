"""max_pool2d and avg_pool2d with ceil_mode, dilation, return_indices,
count_include_pad and divisor_override against torch: one lambda per case,
a random cotangent, explicit tolerances; gradcheck in float64."""

import numpy as np
import pytest
import torch

import chapters.autodiff as ad
import chapters.autodiff.functional as F

from .parity import FLOAT32, FLOAT64, check_both

rng = np.random.default_rng(9)


def normal(*shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


CASES = {
    "max_ceil": (lambda lib, F, x: F.max_pool2d(x, 3, stride=2, ceil_mode=True),
                 [normal(2, 3, 8, 7)]),
    "max_ceil_padding": (lambda lib, F, x: F.max_pool2d(x, 3, stride=2, padding=1,
                                                         ceil_mode=True), [normal(1, 2, 6, 9)]),
    "max_dilation": (lambda lib, F, x: F.max_pool2d(x, 2, stride=1, dilation=2),
                     [normal(2, 2, 6, 7)]),
    "max_dilation_padding_ceil": (lambda lib, F, x: F.max_pool2d(
        x, (3, 2), stride=(2, 3), padding=(1, 1), dilation=(2, 2), ceil_mode=True),
        [normal(1, 3, 9, 10)]),
    "avg_exclude_pad": (lambda lib, F, x: F.avg_pool2d(x, 3, stride=2, padding=1,
                                                       count_include_pad=False),
                        [normal(2, 3, 7, 6)]),
    "avg_ceil_include_pad": (lambda lib, F, x: F.avg_pool2d(x, 3, stride=2, padding=1,
                                                            ceil_mode=True),
                             [normal(2, 2, 6, 6)]),
    "avg_ceil_exclude_pad": (lambda lib, F, x: F.avg_pool2d(x, (2, 3), stride=2, padding=1,
                                                            ceil_mode=True,
                                                            count_include_pad=False),
                             [normal(1, 2, 7, 8)]),
    "avg_divisor_override": (lambda lib, F, x: F.avg_pool2d(x, 2, divisor_override=3),
                             [normal(2, 2, 6, 6)]),
    "max_int_padding": (lambda lib, F, x: F.max_pool2d(x, 3, stride=2, padding=1),
                        [rng.integers(-2**31, 2**31 - 1, (1, 2, 5, 5)).astype(np.int32)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name):
    fn, arrays = CASES[name]
    check_both(fn, arrays, FLOAT32)


@pytest.mark.parametrize("name", ["max_dilation_padding_ceil", "avg_ceil_exclude_pad"])
def test_float64_and_gradcheck(name):
    fn, arrays = CASES[name]
    arrays = [a.astype(np.float64) for a in arrays]
    check_both(fn, arrays, FLOAT64)
    x = ad.tensor(arrays[0][:1, :1], requires_grad=True)
    assert ad.gradcheck(lambda x: fn(ad, F, x), (x,))


@pytest.mark.parametrize("kwargs", [
    dict(kernel_size=2),
    dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
    dict(kernel_size=(2, 3), stride=1, padding=(1, 1), dilation=(2, 1)),
])
def test_return_indices_match_torch(kwargs):
    x = normal(2, 3, 7, 8)
    out, idx = F.max_pool2d(ad.tensor(x), return_indices=True, **kwargs)
    out_t, idx_t = torch.nn.functional.max_pool2d(torch.tensor(x), return_indices=True,
                                                  **kwargs)
    np.testing.assert_array_equal(out.data, out_t.numpy())
    assert idx.dtype == np.int64
    np.testing.assert_array_equal(idx.data, idx_t.numpy())


def test_indices_point_at_the_maxima():
    """Independent of torch: gathering the input at the indices gives the output."""
    x = normal(2, 3, 9, 7)
    out, idx = F.max_pool2d(ad.tensor(x), 3, stride=2, padding=1, dilation=2, ceil_mode=True,
                            return_indices=True)
    flat = x.reshape(2, 3, -1)
    picked = np.take_along_axis(flat, idx.data.reshape(2, 3, -1), axis=2)
    np.testing.assert_array_equal(picked.reshape(out.shape), out.data)


@pytest.mark.parametrize("call", [
    lambda F, x: F.max_pool2d(x, 2, padding=2),
    lambda F, x: F.avg_pool2d(x, 2, padding=2),
    lambda F, x: F.avg_pool2d(x, 2, divisor_override=0),
])
def test_errors_match_torch(call):
    x = normal(1, 1, 6, 6)
    with pytest.raises(RuntimeError):
        call(torch.nn.functional, torch.tensor(x))
    with pytest.raises(RuntimeError, match="pool"):
        call(F, ad.tensor(x))


FORWARD_MODE = {
    "max_pool_ceil_dilation": lambda x: F.max_pool2d(x, 2, stride=2, padding=1, dilation=2,
                                                     ceil_mode=True),
    "avg_pool_ceil_exclude_pad": lambda x: F.avg_pool2d(x, 3, stride=2, padding=1,
                                                        ceil_mode=True, count_include_pad=False),
    "pad_reflect": lambda x: F.pad(x, (2, 1, 1, 2), mode="reflect"),
    "interpolate_bilinear": lambda x: F.interpolate(x, size=(7, 4), mode="bilinear"),
}


@pytest.mark.parametrize("name", sorted(FORWARD_MODE))
def test_forward_mode_matches_reverse_mode(name):
    """<J t, c> from one JVP equals <t, J^T c> from one VJP (float64)."""
    fn = FORWARD_MODE[name]
    x, t = normal(2, 2, 5, 6, dtype=np.float64), normal(2, 2, 5, 6, dtype=np.float64)
    _, tangent = ad.jvp(fn, (ad.tensor(x),), (ad.tensor(t),))
    cot = normal(*tangent.shape, dtype=np.float64)
    xe = ad.tensor(x, requires_grad=True)
    fn(xe).backward(ad.tensor(cot))
    np.testing.assert_allclose((tangent.data * cot).sum(), (xe.grad.data * t).sum(), rtol=1e-10)
