"""The remaining common functional ops as nn modules, against torch: torch's
state_dict loaded into ours gives the same output and gradients, reprs match,
and convolutions with padding="same" / "valid" (odd and even kernels,
dilation, the odd extra row/column) agree with torch's."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chapters.autodiff as ad
from chapters.autodiff import nn
from tests.chapters.autodiff.parity import FLOAT32, check_both, raises_like_torch
from tests.chapters.autodiff.test_nn import check_module_parity
from tests.chapters.autodiff.test_nn_more import _randomized

ONE_INPUT = {
    "Softmin": (lambda m: m.Softmin(dim=1), (3, 4, 5)),
    "Softmin-implicit-dim": (lambda m: m.Softmin(), (3, 4)),
    "Softsign": (lambda m: m.Softsign(), (4, 5)),
    "Tanhshrink": (lambda m: m.Tanhshrink(), (4, 5)),
    "Threshold": (lambda m: m.Threshold(0.1, -2.0), (4, 5)),
    "GLU": (lambda m: m.GLU(), (4, 6)),
    "GLU-dim1": (lambda m: m.Sequential(m.Linear(5, 6), m.GLU(dim=0)), (4, 5)),
    "PReLU": (lambda m: m.PReLU(), (4, 5)),
    "PReLU-per-channel": (lambda m: _randomized(m.PReLU(3, init=0.1)), (2, 3, 4, 4)),
    "PReLU-in-a-model": (lambda m: m.Sequential(m.Conv2d(2, 3, 3, padding="same"),
                                                m.PReLU(3)), (2, 2, 5, 5)),
    "InstanceNorm1d": (lambda m: m.InstanceNorm1d(3), (2, 3, 5)),
    "InstanceNorm1d-unbatched": (lambda m: m.InstanceNorm1d(3), (3, 5)),
    "InstanceNorm2d-affine": (lambda m: _randomized(m.InstanceNorm2d(3, affine=True)),
                              (2, 3, 4, 5)),
    "InstanceNorm2d-no-bias": (lambda m: _randomized(m.InstanceNorm2d(3, affine=True,
                                                                      bias=False)), (2, 3, 4, 4)),
    "InstanceNorm2d-in-a-model": (lambda m: m.Sequential(m.Conv2d(2, 3, 3), m.InstanceNorm2d(
        3, affine=True), m.PReLU()), (2, 2, 6, 6)),
    "PixelShuffle": (lambda m: m.Sequential(m.Conv2d(2, 8, 3, padding=1), m.PixelShuffle(2)),
                     (2, 2, 3, 4)),
    "PixelUnshuffle": (lambda m: m.Sequential(m.PixelUnshuffle(3), m.Conv2d(9, 2, 1)),
                       (1, 1, 6, 3)),
    "Unflatten": (lambda m: m.Sequential(m.Linear(4, 6), m.Unflatten(1, (2, 3))), (5, 4)),
    "Unflatten-inferred": (lambda m: m.Unflatten(-1, [2, -1]), (3, 8)),
    "Unfold": (lambda m: m.Unfold((2, 3), dilation=(2, 1), padding=1, stride=2), (2, 3, 7, 6)),
    "Unfold-then-Fold": (lambda m: m.Sequential(m.Unfold(3, padding=1), m.Fold(
        (5, 4), 3, padding=1)), (2, 2, 5, 4)),
    "Fold-unbatched": (lambda m: m.Fold((4, 5), 2, stride=(2, 1)), (8, 8)),
}


@pytest.mark.parametrize("name", sorted(ONE_INPUT))
def test_module_matches_torch_after_loading_its_state_dict(name):
    build, shape = ONE_INPUT[name]
    check_module_parity(build, shape)


#: (in, out, kernel, dilation, input shape): odd and even kernels, one of each
#: per dimension, dilations that make the total padding odd or even
CONV2D_SAME = {
    "odd-kernel": (2, 3, 3, 1, (2, 2, 6, 5)),
    "even-kernel": (2, 3, 4, 1, (2, 2, 6, 5)),
    "mixed-kernel": (2, 3, (2, 5), 1, (1, 2, 7, 6)),
    "even-kernel-even-dilation": (1, 2, 2, 2, (2, 1, 6, 6)),
    "dilated-mixed": (2, 2, (4, 3), (3, 2), (1, 2, 11, 8)),
}


@pytest.mark.parametrize("padding", ["same", "valid"])
@pytest.mark.parametrize("name", sorted(CONV2D_SAME))
def test_conv2d_padding_strings_match_torch(name, padding):
    cin, cout, kernel, dilation, shape = CONV2D_SAME[name]
    reference, _ = check_module_parity(
        lambda m: m.Conv2d(cin, cout, kernel, padding=padding, dilation=dilation), shape)
    if padding == "same":  # "same" keeps the spatial size: an independent check
        assert tuple(reference(torch.zeros(shape)).shape[2:]) == shape[2:]


@pytest.mark.parametrize("kernel, dilation", [(3, 1), (4, 1), (2, 3), (4, 2)])
@pytest.mark.parametrize("padding", ["same", "valid"])
def test_conv1d_padding_strings_match_torch(kernel, dilation, padding):
    check_module_parity(lambda m: m.Conv1d(2, 3, kernel, padding=padding, dilation=dilation),
                        (2, 2, 9))


@pytest.mark.parametrize("fn", [
    lambda lib, x, w: lib.nn.functional.conv2d(x, w, padding="same", stride=2),
    lambda lib, x, w: lib.nn.functional.conv2d(x, w, padding="same", stride=(1, 2)),
    lambda lib, x, w: lib.nn.functional.conv2d(x, w, padding="full"),
], ids=["stride", "stride-one-dim", "unknown-string"])
def test_conv2d_padding_string_errors_are_torchs(fn):

    raises_like_torch(fn, [np.ones((1, 1, 5, 5), np.float32), np.ones((1, 1, 3, 3), np.float32)])


@pytest.mark.parametrize("layer, shape", [("Dropout1d", (400, 6, 5)),
                                          ("Dropout2d", (400, 6, 3, 4))])
def test_channel_dropout_zeroes_whole_channels_and_keeps_the_mean(layer, shape):
    p = 0.25
    layer_module = getattr(nn, layer)(p)
    x = ad.ones(*shape, requires_grad=True)
    y = layer_module(x)
    per_channel = y.detach().numpy().reshape(shape[0], shape[1], -1)
    # every channel is all zeros or all 1/(1-p)
    assert np.all(per_channel.min(-1) == per_channel.max(-1))
    np.testing.assert_allclose(np.unique(per_channel), [0.0, 1 / (1 - p)], rtol=1e-6)
    dropped = (per_channel[..., 0] == 0).mean()  # 2400 draws: sd of the rate ~0.009
    assert abs(dropped - p) < 0.05
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), y.detach().numpy())
    layer_module.eval()
    assert np.array_equal(layer_module(x).detach().numpy(), x.detach().numpy())


@pytest.mark.parametrize("momentum", [0.3, None])
def test_instance_norm_running_stats_train_then_eval_match_torch(momentum):
    """Two training steps move the running statistics (as torch's); eval then
    normalizes with them, so the outputs differ from training's."""
    def build(m):
        return _randomized(m.InstanceNorm1d(3, momentum=momentum, affine=True,
                                            track_running_stats=True))
    reference, ours = check_module_parity(build, (4, 3, 6), seed=1)
    check_module_parity(lambda m: reference if m is torch.nn else ours, (4, 3, 6), seed=2)
    for name in ("running_mean", "running_var"):
        np.testing.assert_allclose(getattr(ours, name).numpy(),
                                   getattr(reference, name).numpy(), rtol=1e-5, atol=1e-6)
    reference.eval()
    ours.eval()
    check_module_parity(lambda m: reference if m is torch.nn else ours, (2, 3, 6), seed=3,
                        train=False)


def test_instance_norm_errors_are_torchs():
    def fn(lib, x):
        return lib.nn.functional.instance_norm(x)
    raises_like_torch(fn, [np.ones((2, 3, 1), np.float32)])
    with pytest.raises(ValueError, match="num_features"):
        nn.InstanceNorm1d(4, affine=True)(ad.ones(2, 3, 5))
    with pytest.raises(ValueError, match="4-D"):
        nn.InstanceNorm2d(3)(ad.ones(1, 1, 3, 4, 4))


def test_pixel_shuffles_of_an_empty_batch_have_the_documented_shapes():
    """(torch's pixel_unshuffle returns an empty input's shape unchanged)"""
    x = ad.zeros(0, 8, 2, 3, requires_grad=True)
    shuffled = nn.PixelShuffle(2)(x)
    assert shuffled.shape == (0, 2, 4, 6)
    assert nn.PixelUnshuffle(2)(shuffled).shape == (0, 8, 2, 3)
    shuffled.sum().backward()
    assert x.grad.shape == x.shape


SEVERAL_INPUTS = {
    "Bilinear": (lambda m: m.Bilinear(3, 4, 5), [(2, 6, 3), (2, 6, 4)]),
    "Bilinear-no-bias": (lambda m: m.Bilinear(2, 2, 3, bias=False), [(4, 2), (4, 2)]),
    "MarginRankingLoss": (lambda m: m.MarginRankingLoss(margin=0.5), [(6,), (6,), ("signs", (6,))]),
    "MarginRankingLoss-none": (lambda m: m.MarginRankingLoss(reduction="none"),
                               [(3, 1), (1, 4), ("signs", (3, 4))]),
    "TripletMarginLoss": (lambda m: m.TripletMarginLoss(margin=2.0), [(5, 4)] * 3),
    "TripletMarginLoss-swap-p1": (lambda m: m.TripletMarginLoss(p=1.0, swap=True,
                                                                reduction="sum"), [(5, 4)] * 3),
    "TripletMarginLoss-unbatched": (lambda m: m.TripletMarginLoss(), [(4,)] * 3),
}


@pytest.mark.parametrize("name", sorted(SEVERAL_INPUTS))
def test_several_input_module_matches_torch(name):
    """torch's parameters loaded into ours; output and every gradient compared."""
    build, shapes = SEVERAL_INPUTS[name]
    rng = np.random.default_rng(3)
    arrays = [rng.choice([-1.0, 1.0], s[1]).astype(np.float32) if s[0] == "signs"
              else rng.standard_normal(s).astype(np.float32) for s in shapes]
    torch.manual_seed(0)
    reference = build(torch.nn)
    ours = build(nn)
    ours.load_state_dict(reference.state_dict())
    check_both(lambda lib, F, *t: (reference if lib is torch else ours)(*t), arrays, FLOAT32)
    if isinstance(reference, torch.nn.Bilinear):  # the parameters' gradients too
        x1, x2 = (torch.from_numpy(a) for a in arrays)
        reference(x1, x2).sum().backward()
        ours(*(ad.tensor(a) for a in arrays)).sum().backward()
        for name_, p in ours.named_parameters():
            np.testing.assert_allclose(p.grad.numpy(), dict(reference.named_parameters())[
                name_].grad.numpy(), rtol=1e-5, atol=1e-6)


def test_bilinear_initial_values_are_torchs_distribution():
    """U(-1/sqrt(in1), 1/sqrt(in1)): the bound and a mean near 0."""
    layer = nn.Bilinear(16, 3, 40)
    weight = layer.weight.detach().numpy()
    assert np.abs(weight).max() <= 0.25 and np.abs(weight).max() > 0.24
    assert abs(weight.mean()) < 0.02


REPRS = [
    lambda m: m.Softmin(dim=1), lambda m: m.Softmin(), lambda m: m.Softsign(),
    lambda m: m.Tanhshrink(), lambda m: m.Threshold(0.1, 20),
    lambda m: m.Threshold(0.5, 1, inplace=True), lambda m: m.GLU(), lambda m: m.GLU(dim=1),
    lambda m: m.PReLU(), lambda m: m.PReLU(3, 0.1), lambda m: m.Dropout1d(),
    lambda m: m.Dropout2d(0.2, inplace=True), lambda m: m.InstanceNorm1d(3),
    lambda m: m.InstanceNorm2d(4, affine=True, track_running_stats=True),
    lambda m: m.InstanceNorm2d(4, eps=1e-3, affine=True, bias=False),
    lambda m: m.PixelShuffle(2), lambda m: m.PixelUnshuffle(3),
    lambda m: m.Unflatten(1, (2, 3)), lambda m: m.Unflatten(-1, [2, -1]),
    lambda m: m.Bilinear(2, 3, 4), lambda m: m.Bilinear(2, 3, 4, bias=False),
    lambda m: m.Unfold(2), lambda m: m.Unfold((2, 3), 2, 1, 2), lambda m: m.Fold((3, 3), 2),
    lambda m: m.Fold(4, (2, 2), stride=2), lambda m: m.MarginRankingLoss(0.5),
    lambda m: m.TripletMarginLoss(margin=2.0, swap=True),
    lambda m: m.Sequential(m.Linear(3, 2), m.PReLU(2), m.Softsign()),
    # convolutions show sizes as tuples and only the options that are not defaults
    lambda m: m.Conv2d(1, 2, 3), lambda m: m.Conv2d(2, 4, (3, 5), padding="same", groups=2),
    lambda m: m.Conv2d(1, 2, 3, stride=2, padding=1, dilation=2, bias=False),
    lambda m: m.Conv1d(2, 4, 3, stride=2, padding=1, groups=2),
    lambda m: m.ConvTranspose2d(1, 2, 3, stride=2, output_padding=1),
    lambda m: m.Dropout(0.3), lambda m: m.Dropout(0.3, inplace=True),
]


@pytest.mark.parametrize("build", REPRS)
def test_repr_matches_torch(build):
    assert repr(build(nn)) == repr(build(torch.nn))


def test_prelu_state_dict_names_and_initial_value_match_torch():
    ours, theirs = nn.PReLU(4, init=0.3), torch.nn.PReLU(4, init=0.3)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["weight"]
    assert ours.weight.tolist() == pytest.approx(theirs.weight.tolist())
