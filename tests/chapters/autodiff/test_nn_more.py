"""The functional additions as nn modules, against torch: one lambda on both
engines, torch's state_dict loaded into ours, reprs; and what an op-table row
cannot say (kl_div's batchmean, smooth_l1 at |d| = beta, group_norm's
statistics, max_pool1d's indices)."""

from __future__ import annotations

import inspect
from pathlib import Path

import numpy as np
import pytest
import torch

import chapters.autodiff as ad
import chapters.autodiff.functional as F
from chapters.autodiff import nn
from chapters.autodiff.functional.pooling import adaptive_windows
from chapters.torchcheck import assert_close
from tests.chapters.autodiff.parity import FLOAT32, FLOAT64, check_both, raises_like_torch
from tests.chapters.autodiff.test_nn import check_module_parity

RNG = np.random.default_rng(7)


def _randomized(module):
    """A torch module's parameters drawn at random (GroupNorm starts at 1 and 0,
    where a wrong gradient could hide), so loading them is a real test."""
    if isinstance(module, torch.nn.Module):
        with torch.no_grad():
            for p in module.parameters():
                p.uniform_(-2.0, 2.0)
    return module


ONE_INPUT = {
    "LeakyReLU": (lambda m: m.LeakyReLU(0.2), (4, 5)),
    "Softmax": (lambda m: m.Softmax(dim=-1), (3, 4, 5)),
    "Softmax-implicit-dim": (lambda m: m.Softmax(), (3, 4)),
    "LogSoftmax": (lambda m: m.LogSoftmax(dim=1), (3, 4, 5)),
    "SiLU": (lambda m: m.SiLU(), (4, 5)),
    "ELU": (lambda m: m.ELU(alpha=0.5), (4, 5)),
    "CELU": (lambda m: m.CELU(alpha=2.0), (4, 5)),
    "SELU": (lambda m: m.SELU(), (4, 5)),
    "Softplus": (lambda m: m.Softplus(beta=2.0, threshold=1.0), (4, 5)),
    "Mish": (lambda m: m.Mish(), (4, 5)),
    "Hardtanh": (lambda m: m.Hardtanh(-0.5, 0.7), (4, 5)),
    "ReLU6": (lambda m: m.Sequential(m.Linear(5, 5), m.ReLU6()), (4, 5)),
    "Hardsigmoid": (lambda m: m.Hardsigmoid(), (4, 5)),
    "Hardswish": (lambda m: m.Hardswish(), (4, 5)),
    "LogSigmoid": (lambda m: m.LogSigmoid(), (4, 5)),
    "GroupNorm-affine": (lambda m: _randomized(m.GroupNorm(3, 6)), (2, 6, 4, 3)),
    "GroupNorm-no-affine": (lambda m: m.GroupNorm(2, 4, affine=False), (3, 4, 5)),
    "GroupNorm-no-bias": (lambda m: _randomized(m.GroupNorm(2, 4, bias=False)), (3, 4)),
    "GroupNorm-in-a-model": (lambda m: m.Sequential(m.Conv2d(2, 4, 3), _randomized(
        m.GroupNorm(2, 4)), m.SiLU()), (2, 2, 6, 6)),
    "AdaptiveAvgPool2d": (lambda m: m.AdaptiveAvgPool2d((2, 3)), (2, 3, 5, 7)),
    "AdaptiveAvgPool2d-global": (lambda m: m.Sequential(m.Conv2d(2, 3, 3), m.AdaptiveAvgPool2d(
        1), m.Flatten(), m.Linear(3, 2)), (2, 2, 7, 6)),
    "AdaptiveMaxPool2d": (lambda m: m.AdaptiveMaxPool2d((3, None)), (2, 5, 7)),
    "MaxPool1d": (lambda m: m.MaxPool1d(3, stride=2, padding=1), (2, 3, 9)),
    "AvgPool1d": (lambda m: m.AvgPool1d(3, stride=2, padding=1, count_include_pad=False),
                  (2, 3, 9)),
}


@pytest.mark.parametrize("name", sorted(ONE_INPUT))
def test_module_matches_torch_after_loading_its_state_dict(name):
    build, shape = ONE_INPUT[name]
    check_module_parity(build, shape)


def _probs(*shape):
    return RNG.dirichlet(np.ones(shape[-1]), shape[:-1]).astype(np.float32)


TWO_INPUTS = {
    "L1Loss": (lambda m: m.L1Loss(), (3, 4), (3, 4)),
    "NLLLoss": (lambda m: m.NLLLoss(reduction="sum"), (3, 4), None),
    "SmoothL1Loss": (lambda m: m.SmoothL1Loss(beta=0.5), (3, 4), (3, 4)),
    "HuberLoss": (lambda m: m.HuberLoss(reduction="none", delta=0.5), (3, 4), (3, 4)),
    "KLDivLoss": (lambda m: m.KLDivLoss(reduction="batchmean"), (3, 4), "probs"),
    "KLDivLoss-log-target": (lambda m: m.KLDivLoss(reduction="sum", log_target=True),
                             (3, 4), (3, 4)),
    "CosineSimilarity": (lambda m: m.CosineSimilarity(dim=-1), (3, 1, 4), (2, 4)),
    "PairwiseDistance": (lambda m: m.PairwiseDistance(p=1.0, keepdim=True), (3, 4), (3, 4)),
}


@pytest.mark.parametrize("name", sorted(TWO_INPUTS))
def test_two_input_module_matches_torch(name):
    build, first, second = TWO_INPUTS[name]
    x = RNG.standard_normal(first).astype(np.float32)
    if second is None:  # class indices
        arrays, mask = [x, np.array([1, 0, 3])], [True, False]
    elif second == "probs":
        arrays, mask = [np.log(_probs(*first)), _probs(*first)], None
    else:
        arrays, mask = [x, RNG.standard_normal(second).astype(np.float32)], None
    check_both(lambda lib, F, a, b: build(lib.nn)(a, b), arrays, FLOAT32, grad_mask=mask)


REPRS = [
    lambda m: m.LeakyReLU(), lambda m: m.LeakyReLU(0.2, inplace=True),
    lambda m: m.Softmax(dim=1), lambda m: m.Softmax(), lambda m: m.LogSoftmax(dim=-1),
    lambda m: m.SiLU(), lambda m: m.SiLU(inplace=True), lambda m: m.ELU(0.5),
    lambda m: m.CELU(), lambda m: m.SELU(), lambda m: m.Softplus(2, 10), lambda m: m.Mish(),
    lambda m: m.Hardtanh(-2, 3), lambda m: m.ReLU6(), lambda m: m.ReLU6(inplace=True),
    lambda m: m.Hardsigmoid(), lambda m: m.Hardswish(inplace=True), lambda m: m.LogSigmoid(),
    lambda m: m.GroupNorm(2, 4), lambda m: m.GroupNorm(2, 4, eps=1e-3, affine=False),
    lambda m: m.AdaptiveAvgPool2d((3, None)), lambda m: m.AdaptiveMaxPool2d(2),
    lambda m: m.MaxPool1d(3, 2, 1), lambda m: m.AvgPool1d(3), lambda m: m.AvgPool1d(3, 2, 1),
    lambda m: m.MaxPool2d(2), lambda m: m.AvgPool2d(3, 1),
    lambda m: m.L1Loss(), lambda m: m.NLLLoss(), lambda m: m.SmoothL1Loss(),
    lambda m: m.HuberLoss(), lambda m: m.KLDivLoss(), lambda m: m.CosineSimilarity(),
    lambda m: m.PairwiseDistance(),
    lambda m: m.Sequential(m.Linear(2, 4), m.GroupNorm(2, 4), m.Hardtanh()),
]


@pytest.mark.parametrize("k", range(len(REPRS)))
def test_repr_is_torchs(k):
    assert repr(REPRS[k](nn)) == repr(REPRS[k](torch.nn))


def test_group_norm_state_dict_has_torchs_names():
    assert list(nn.GroupNorm(2, 4).state_dict()) == list(torch.nn.GroupNorm(2, 4).state_dict())
    assert list(nn.GroupNorm(2, 4, affine=False).state_dict()) == []


def test_new_modules_are_exported_under_torchs_names():
    new = {"LeakyReLU", "Softmax", "LogSoftmax", "SiLU", "ELU", "SELU", "Softplus", "Mish",
           "Hardtanh", "ReLU6", "GroupNorm", "AdaptiveAvgPool2d", "MaxPool1d", "AvgPool1d",
           "L1Loss", "NLLLoss", "SmoothL1Loss", "HuberLoss", "KLDivLoss", "CosineSimilarity"}
    assert new <= set(nn.__all__)
    for name in nn.__all__:
        assert hasattr(nn, name), name
    assert all(hasattr(torch.nn, name) for name in new)


# ------------------------------------------------- what a table row cannot say


def test_kl_div_batchmean_is_the_divergence_per_sample():
    """sum_n sum_c t (log t - log p) / N: the KL divergence of each sample,
    averaged; 'mean' divides by N * C instead (the number of elements)."""
    log_p, t = np.log(_probs(4, 5)).astype(np.float64), _probs(4, 5).astype(np.float64)
    expected = np.sum(t * (np.log(t) - log_p)) / 4
    both = check_both(lambda lib, F, a, b: F.kl_div(a, b, reduction="batchmean"),
                      [log_p, t], FLOAT64)
    assert np.isclose(both.engine_out.item(), expected, rtol=1e-12)
    mean = F.kl_div(ad.tensor(log_p), ad.tensor(t), reduction="mean")
    assert np.isclose(mean.item(), expected / 5, rtol=1e-12)


def test_kl_div_zero_target_adds_nothing_and_integer_inputs_are_refused():
    log_p = np.log(np.array([[0.5, 0.25, 0.25]]))
    t = np.array([[0.0, 0.5, 0.5]])
    expected = np.sum(t[:, 1:] * (np.log(t[:, 1:]) - log_p[:, 1:]))
    # the target's gradient at t = 0 is NaN in torch (xlogy's 0 / 0), -input here: not compared
    both = check_both(lambda lib, F, a, b: F.kl_div(a, b, reduction="sum"), [log_p, t],
                      FLOAT64, grad_mask=[True, False])
    assert np.isclose(both.engine_out.item(), expected, rtol=1e-12)
    raises_like_torch(lambda lib, a, b: lib.nn.functional.kl_div(a, b),
                      [np.ones(3, np.int64), np.ones(3, np.int64)])


@pytest.mark.parametrize("beta", [0.5, 1.0, 2.0])
def test_smooth_l1_at_the_seam_is_continuous_with_slope_one(beta):
    """At |d| = beta both pieces give 0.5 beta, and the slope is +-1 from both sides."""
    d = np.array([-beta, beta, -beta * 0.999, beta * 1.001])
    target = np.zeros_like(d)
    both = check_both(lambda lib, F, x, t: F.smooth_l1_loss(x, t, reduction="none", beta=beta),
                      [d, target], FLOAT64)
    assert np.allclose(both.engine_out.data[:2], 0.5 * beta)
    x = ad.tensor(d, requires_grad=True)
    F.smooth_l1_loss(x, ad.tensor(target), reduction="sum", beta=beta).backward()
    assert np.allclose(x.grad.data, [-1.0, 1.0, -0.999, 1.0])


def test_huber_is_delta_times_smooth_l1():
    x, t = RNG.standard_normal((3, 4)) * 2, RNG.standard_normal((3, 4))
    huber = F.huber_loss(ad.tensor(x), ad.tensor(t), delta=0.7, reduction="none")
    smooth = F.smooth_l1_loss(ad.tensor(x), ad.tensor(t), beta=0.7, reduction="none")
    assert np.allclose(huber.data, 0.7 * smooth.data, rtol=1e-12)


def _group_norm_numpy(x, groups, weight, bias, eps):
    """Group norm from its definition: statistics over each (sample, group)."""
    n, c = x.shape[:2]
    g = x.reshape(n, groups, -1)
    normed = (g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + eps)
    shape = (1, c) + (1,) * (x.ndim - 2)
    return normed.reshape(x.shape) * weight.reshape(shape) + bias.reshape(shape)


@pytest.mark.parametrize("affine", [True, False])
def test_group_norm_matches_its_definition_and_torch(affine):
    x = RNG.standard_normal((3, 6, 4, 2)) * 3 + 1
    w, b = RNG.standard_normal(6), RNG.standard_normal(6)
    if affine:
        both = check_both(lambda lib, F, a, wt, bs: F.group_norm(a, 3, wt, bs, eps=1e-4),
                          [x, w, b], FLOAT64)
        expected = _group_norm_numpy(x, 3, w, b, 1e-4)
    else:
        both = check_both(lambda lib, F, a: F.group_norm(a, 3, eps=1e-4), [x], FLOAT64)
        expected = _group_norm_numpy(x, 3, np.ones(6), np.zeros(6), 1e-4)
    assert np.allclose(both.engine_out.data, expected, rtol=1e-10, atol=1e-12)


def test_group_norm_errors_are_torchs():
    raises_like_torch(lambda lib, x: lib.nn.functional.group_norm(x, 3), [np.ones((2, 4, 3))])
    raises_like_torch(lambda lib, x, w: lib.nn.functional.group_norm(x, 2, w),
                      [np.ones((2, 4, 3)), np.ones(3)])
    with pytest.raises(ValueError, match="divide"):
        nn.GroupNorm(3, 4)


def test_max_pool1d_indices_are_positions_along_the_length():
    x = RNG.standard_normal((2, 3, 9)).astype(np.float32)
    ours = F.max_pool1d(ad.tensor(x), 3, stride=2, padding=1,
                                       return_indices=True)
    theirs = torch.nn.functional.max_pool1d(torch.from_numpy(x), 3, stride=2, padding=1,
                                            return_indices=True)
    assert_close(ours[0], theirs[0], rtol=0, atol=0, what="values")
    assert_close(ours[1], theirs[1], rtol=0, atol=0, what="indices")


def test_adaptive_windows_cover_the_input_as_torch():
    """Every output window is [floor(i n / m), ceil((i + 1) n / m)): checked by
    pooling a one-hot input, whose average is 1 / window length where it lies."""
    assert adaptive_windows(3, 7) == [(0, 3), (2, 5), (4, 7)]
    assert adaptive_windows(4, 2) == [(0, 1), (0, 1), (1, 2), (1, 2)]
    x = np.eye(7, dtype=np.float64)[None, None]
    check_both(lambda lib, F, a: F.adaptive_avg_pool2d(a, (3, 4)), [x], FLOAT64)


def test_hardtanh_refuses_a_reversed_range_like_torch():
    with pytest.raises(ValueError, match="min_val"):
        F.hardtanh(ad.tensor([1.0]), 2.0, 1.0)
    with pytest.raises(ValueError, match="min_val"):
        nn.Hardtanh(2.0, 1.0)
    with pytest.raises(ValueError):
        torch.nn.functional.hardtanh(torch.tensor([1.0]), 2.0, 1.0)


def test_functional_is_a_package_of_small_modules_reexported_by_name():
    """Each topic module stays short (at most 300 lines) and every public
    function it defines is reachable as ``F.name``."""
    for path in sorted(Path(F.__file__).parent.glob("*.py")):
        assert len(path.read_text().splitlines()) <= 300, f"{path.name} is over 300 lines"
    defined = {n for n, v in inspect.getmembers(F, inspect.isfunction)
               if v.__module__.startswith(f"{F.__name__}.")}
    assert {"softplus", "group_norm", "kl_div", "adaptive_avg_pool2d", "cross_entropy",
            "pad"} <= defined <= set(F.__all__)
