"""conv2d with dilation and groups, conv1d and conv_transpose2d against torch:
one lambda per case, a random cotangent, explicit tolerances, exception
types; gradcheck in float64; forward mode against reverse mode."""

import numpy as np
import pytest
import torch

import chapters.autodiff as ad
import chapters.autodiff.functional as F

from .parity import FLOAT64, Tol, check_both

rng = np.random.default_rng(3)
# sums of up to ~50 float32 products per output
CONV = Tol(fwd_rtol=1e-5, fwd_atol=1e-5, grad_rtol=1e-4, grad_atol=1e-4)


def normal(*shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


CASES = {
    "conv2d_dilation": (lambda lib, F, x, w: F.conv2d(x, w, dilation=2),
                        [normal(2, 3, 8, 7), normal(4, 3, 3, 2)]),
    "conv2d_groups": (lambda lib, F, x, w, b: F.conv2d(x, w, b, groups=3, padding=1),
                      [normal(2, 6, 5, 5), normal(9, 2, 3, 3), normal(9)]),
    "conv2d_depthwise_strided_dilated": (lambda lib, F, x, w: F.conv2d(
        x, w, stride=(2, 1), padding=(2, 1), dilation=(2, 3), groups=4),
        [normal(1, 4, 9, 9), normal(4, 1, 3, 2)]),
    "conv1d": (lambda lib, F, x, w, b: F.conv1d(x, w, b, stride=2, padding=1),
               [normal(2, 3, 11), normal(5, 3, 3), normal(5)]),
    "conv1d_groups_dilation": (lambda lib, F, x, w: F.conv1d(x, w, padding=3, dilation=3,
                                                             groups=2),
                               [normal(2, 4, 10), normal(6, 2, 3)]),
    "conv_transpose2d": (lambda lib, F, x, w, b: F.conv_transpose2d(x, w, b),
                         [normal(2, 3, 4, 5), normal(3, 2, 3, 3), normal(2)]),
    "conv_transpose2d_strided": (lambda lib, F, x, w: F.conv_transpose2d(
        x, w, stride=(2, 3), padding=(1, 0), output_padding=(1, 2)),
        [normal(2, 3, 4, 4), normal(3, 2, 3, 3)]),
    "conv_transpose2d_groups_dilation": (lambda lib, F, x, w, b: F.conv_transpose2d(
        x, w, b, stride=2, padding=1, output_padding=1, groups=2, dilation=2),
        [normal(2, 4, 3, 4), normal(4, 3, 2, 3), normal(6)]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_torch(name):
    fn, arrays = CASES[name]
    check_both(fn, arrays, CONV)


@pytest.mark.parametrize("name", ["conv2d_depthwise_strided_dilated",
                                  "conv_transpose2d_groups_dilation"])
def test_float64_matches_torch(name):
    fn, arrays = CASES[name]
    check_both(fn, [a.astype(np.float64) for a in arrays], FLOAT64)


@pytest.mark.parametrize("name", ["conv2d_groups", "conv_transpose2d_groups_dilation"])
def test_gradcheck(name):
    fn, arrays = CASES[name]
    inputs = [ad.tensor(a[:1].astype(np.float64) if i == 0 else a.astype(np.float64),
                        requires_grad=True) for i, a in enumerate(arrays)]
    assert ad.gradcheck(lambda *xs: fn(ad, F, *xs), inputs)


def test_conv_transpose2d_is_the_adjoint_of_conv2d():
    """Independent of torch: <conv2d(x, W), y> = <x, conv_transpose2d(y, W)>
    for the same stride, padding, dilation and groups."""
    x, w, y = normal(2, 4, 9, 8), normal(6, 2, 3, 2), normal(2, 6, 4, 4)
    attrs = dict(stride=2, padding=1, dilation=2, groups=2)
    lhs = (F.conv2d(ad.tensor(x), ad.tensor(w), **attrs).data * y).sum()
    rhs = (x * F.conv_transpose2d(ad.tensor(y), ad.tensor(w), output_padding=(0, 1),
                                  **attrs).data).sum()
    np.testing.assert_allclose(lhs, rhs, rtol=1e-4)


def test_conv_transpose2d_forward_mode_matches_reverse_mode():
    """<J t, c> (forward mode) equals <t, J^T c> (reverse mode)."""
    x, w = normal(1, 2, 3, 3).astype(np.float64), normal(2, 3, 2, 2).astype(np.float64)
    tx, tw = np.ones_like(x), np.zeros_like(w)
    _, tangent = ad.jvp(lambda x, w: F.conv_transpose2d(x, w, stride=2),
                        (ad.tensor(x), ad.tensor(w)), (ad.tensor(tx), ad.tensor(tw)))
    cot = normal(*tangent.shape).astype(np.float64)
    xe = ad.tensor(x, requires_grad=True)
    F.conv_transpose2d(xe, ad.tensor(w), stride=2).backward(ad.tensor(cot))
    np.testing.assert_allclose((tangent.data * cot).sum(), (xe.grad.data * tx).sum(),
                               rtol=1e-10)


@pytest.mark.parametrize("call", [
    lambda F, x, w: F.conv2d(x, w, groups=2),           # 3 input channels, 2 groups
    lambda F, x, w: F.conv_transpose2d(x, w, stride=2, output_padding=2),
    lambda F, x, w: F.conv1d(x, w),                     # 4-D input to conv1d
])
def test_errors_match_torch(call):
    x, w = normal(1, 3, 5, 5), normal(3, 3, 2, 2)
    with pytest.raises(RuntimeError):
        call(torch.nn.functional, torch.tensor(x), torch.tensor(w))
    with pytest.raises(RuntimeError, match="conv"):
        call(F, ad.tensor(x), ad.tensor(w))


MODULES = {
    "Conv2d_groups_dilation": (lambda nn: nn.Conv2d(4, 6, 3, stride=2, padding=2, dilation=2,
                                                    groups=2), (2, 4, 9, 8)),
    "Conv1d": (lambda nn: nn.Conv1d(3, 4, 3, padding=1, groups=1), (2, 3, 10)),
    "ConvTranspose2d": (lambda nn: nn.ConvTranspose2d(4, 6, (3, 2), stride=2, padding=1,
                                                      output_padding=1, groups=2), (2, 4, 3, 4)),
    "MaxPool2d": (lambda nn: nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True), (2, 3, 6, 7)),
    "AvgPool2d": (lambda nn: nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False),
                  (2, 3, 6, 7)),
}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_modules_load_torch_weights_and_match(name):
    make, shape = MODULES[name]
    torch.manual_seed(0)
    theirs, ours = make(torch.nn), make(ad.nn)
    assert ([(n, tuple(p.shape)) for n, p in ours.named_parameters()]
            == [(n, tuple(p.shape)) for n, p in theirs.named_parameters()])
    ours.load_state_dict(theirs.state_dict())
    x = normal(*shape)
    xe, xt = ad.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ye, yt = ours(xe), theirs(xt)
    np.testing.assert_allclose(ye.data, yt.detach().numpy(), rtol=1e-5, atol=1e-5)
    cot = normal(*yt.shape)
    ye.backward(ad.tensor(cot))
    yt.backward(torch.tensor(cot))
    np.testing.assert_allclose(xe.grad.data, xt.grad.numpy(), rtol=1e-4, atol=1e-4)
    for (n, p), q in zip(ours.named_parameters(), theirs.parameters(), strict=True):
        np.testing.assert_allclose(p.grad.data, q.grad.numpy(), rtol=1e-4, atol=1e-4,
                                   err_msg=n)


def test_conv_init_bounds_follow_fan_in_per_group():
    """torch's bound 1/sqrt(fan_in), fan_in = in_channels / groups * kernel area."""
    layer = ad.nn.Conv2d(8, 4, 3, groups=4)
    assert np.abs(layer.weight.data).max() <= 1 / np.sqrt(2 * 9)
    assert np.abs(layer.weight.data).max() > 0.5 / np.sqrt(2 * 9)
