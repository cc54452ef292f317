"""F.pad (constant, reflect, replicate, circular) and F.interpolate against
torch: one lambda per case, a random cotangent, explicit tolerances, torch's
backward names and exception types; gradcheck in float64."""

import numpy as np
import pytest
import torch

import chapters.autodiff as ad
import chapters.autodiff.functional as F

from .parity import FLOAT32, FLOAT64, check_both

rng = np.random.default_rng(5)


def normal(*shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


PAD_CASES = {
    "constant_last": (lambda lib, F, x: F.pad(x, (1, 2)), [normal(2, 3)]),
    "constant_value_3dims": (lambda lib, F, x: F.pad(x, (1, 0, 2, 1, 0, 1), value=-1.5),
                             [normal(2, 3, 4)]),
    "constant_crop": (lambda lib, F, x: F.pad(x, (-1, 2, 1, -2)), [normal(2, 4, 5)]),
    "reflect_1d": (lambda lib, F, x: F.pad(x, (2, 3), mode="reflect"), [normal(2, 3, 5)]),
    "reflect_2d": (lambda lib, F, x: F.pad(x, (1, 2, 2, 1), mode="reflect"),
                   [normal(2, 3, 4, 5)]),
    "replicate_2d": (lambda lib, F, x: F.pad(x, (3, 1, 0, 2), mode="replicate"),
                     [normal(3, 4, 5)]),
    "replicate_3d": (lambda lib, F, x: F.pad(x, (1, 1, 2, 0, 0, 1), mode="replicate"),
                     [normal(1, 2, 3, 3, 2)]),
    "circular_2d": (lambda lib, F, x: F.pad(x, (2, 1, 1, 3), mode="circular"),
                    [normal(1, 2, 4, 5)]),
    "constant_int": (lambda lib, F, x: F.pad(x, (1, 1), value=7), [np.arange(6).reshape(2, 3)]),
}


@pytest.mark.parametrize("name", sorted(PAD_CASES))
def test_pad_matches_torch(name):
    fn, arrays = PAD_CASES[name]
    both = check_both(fn, arrays, FLOAT32)
    if both.torch_out.grad_fn is not None:
        assert both.engine_out.grad_fn.name == type(both.torch_out.grad_fn).__name__


@pytest.mark.parametrize("mode", ["constant", "reflect", "replicate", "circular"])
def test_pad_gradcheck(mode):
    x = ad.tensor(normal(1, 2, 3, 4, dtype=np.float64), requires_grad=True)
    assert ad.gradcheck(lambda x: F.pad(x, (2, 1, 1, 2), mode=mode), (x,))


def test_pad_backward_counts_each_source_once_per_copy():
    """Independent of torch: replicate padding of [a, b, c] by (2, 1) reads a
    three times and c twice, so the gradient of the sum is [3, 1, 2]."""
    x = ad.tensor(np.ones((1, 1, 3), np.float32), requires_grad=True)
    F.pad(x, (2, 1), mode="replicate").sum().backward()
    np.testing.assert_array_equal(x.grad.data, [[[3, 1, 2]]])


@pytest.mark.parametrize("shape, call, error", [
    ((2, 3, 4), lambda F, x: F.pad(x, (1,)), RuntimeError),
    ((2, 3, 4), lambda F, x: F.pad(x, (1, 1) * 4), RuntimeError),
    ((2, 3, 4), lambda F, x: F.pad(x, (1, 1), mode="foo"), NotImplementedError),
    ((2, 3, 4), lambda F, x: F.pad(x, (4, 0), mode="reflect"), RuntimeError),
    ((2, 3, 4), lambda F, x: F.pad(x, (1, 1), mode="reflect", value=2.0), RuntimeError),
    ((1, 1, 2, 3), lambda F, x: F.pad(x, (1, 1), mode="replicate"), NotImplementedError),
])
def test_pad_errors_match_torch(shape, call, error):
    x = normal(*shape)
    with pytest.raises(error):
        call(torch.nn.functional, torch.tensor(x))
    with pytest.raises(error, match="pad"):
        call(F, ad.tensor(x))


INTERPOLATE_CASES = {
    "nearest_size_2d": (lambda lib, F, x: F.interpolate(x, size=(5, 7)), [normal(2, 3, 3, 4)]),
    "nearest_downsample": (lambda lib, F, x: F.interpolate(x, size=(2, 3)),
                           [normal(1, 2, 5, 7)]),
    "nearest_scale_1d": (lambda lib, F, x: F.interpolate(x, scale_factor=2.5),
                         [normal(2, 3, 4)]),
    "linear_1d": (lambda lib, F, x: F.interpolate(x, size=9, mode="linear"), [normal(2, 3, 4)]),
    "linear_1d_corners": (lambda lib, F, x: F.interpolate(x, size=9, mode="linear",
                                                          align_corners=True),
                          [normal(2, 3, 4)]),
    "bilinear_scale": (lambda lib, F, x: F.interpolate(x, scale_factor=2, mode="bilinear"),
                       [normal(2, 3, 3, 4)]),
    "bilinear_scale_pair": (lambda lib, F, x: F.interpolate(x, scale_factor=(1.5, 0.5),
                                                            mode="bilinear"),
                            [normal(1, 2, 4, 6)]),
    "bilinear_corners": (lambda lib, F, x: F.interpolate(x, size=(6, 5), mode="bilinear",
                                                         align_corners=True),
                         [normal(2, 3, 3, 4)]),
    "bilinear_down": (lambda lib, F, x: F.interpolate(x, size=(2, 3), mode="bilinear"),
                      [normal(1, 2, 5, 7)]),
}


@pytest.mark.parametrize("name", sorted(INTERPOLATE_CASES))
def test_interpolate_matches_torch(name):
    fn, arrays = INTERPOLATE_CASES[name]
    check_both(fn, arrays, FLOAT32)


@pytest.mark.parametrize("name", ["bilinear_corners", "bilinear_scale_pair", "nearest_size_2d"])
def test_interpolate_float64_matches_torch(name):
    fn, arrays = INTERPOLATE_CASES[name]
    check_both(fn, [a.astype(np.float64) for a in arrays], FLOAT64)


def test_interpolate_gradcheck():
    x = ad.tensor(normal(1, 2, 3, 4, dtype=np.float64), requires_grad=True)
    assert ad.gradcheck(lambda x: F.interpolate(x, size=(5, 3), mode="bilinear"), (x,))


def test_bilinear_keeps_a_linear_ramp():
    """Independent of torch: with align_corners=True, resampling samples of
    a linear function gives samples of the same function at the new points."""
    ramp = np.linspace(0, 1, 4, dtype=np.float32)[None, None, None, :].repeat(3, 2)
    out = F.interpolate(ad.tensor(ramp), size=(3, 7), mode="bilinear", align_corners=True)
    np.testing.assert_allclose(out.data[0, 0, 0], np.linspace(0, 1, 7), atol=1e-6)


@pytest.mark.parametrize("shape, call, error", [
    ((1, 2, 3), lambda F, x: F.interpolate(x, scale_factor=2, mode="bilinear"),
     NotImplementedError),
    ((1, 2, 3), lambda F, x: F.interpolate(x, size=4, scale_factor=2), ValueError),
    ((1, 2, 3), lambda F, x: F.interpolate(x, scale_factor=2, align_corners=True), ValueError),
])
def test_interpolate_errors_match_torch(shape, call, error):
    x = normal(*shape)
    with pytest.raises(error):
        call(torch.nn.functional, torch.tensor(x))
    with pytest.raises(error, match="interpolate"):
        call(F, ad.tensor(x))
