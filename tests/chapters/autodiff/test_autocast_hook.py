"""The autocast hook: called once per public op, internals and backward unhooked."""

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import chapters.autodiff as ad
import chapters.autodiff.functional as F
from chapters.autodiff.dispatch import get_autocast_hook, set_autocast_hook
from chapters.torchcheck import assert_close

LOWER = {"linear", "matmul", "conv2d"}


def half_hook(op, args):
    """A minimal chapter-4-style policy: matmul-like ops run in float16."""
    if op not in LOWER:
        return args
    return tuple(a.half() if isinstance(a, ad.Tensor) and a.dtype == ad.float32 else a
                 for a in args)


@pytest.fixture
def recorded():
    calls = []
    set_autocast_hook(lambda op, args: calls.append(op) or args)
    yield calls
    set_autocast_hook(None)


def test_each_public_op_reaches_the_hook_once(recorded):
    x = ad.randn(4, 3, requires_grad=True)
    w = ad.randn(2, 3, requires_grad=True)
    loss = F.cross_entropy(F.linear(x, w), ad.tensor([0, 1, 1, 0]))
    assert recorded == ["linear", "cross_entropy"]
    recorded.clear()
    y = (x @ w.T).exp().sum()
    assert recorded == ["permute", "matmul", "exp", "sum"]
    recorded.clear()
    loss.backward()
    y.backward()
    assert recorded == []  # backward never calls the hook


def test_casts_made_by_the_hook_do_not_reach_the_hook():
    calls = []

    def hook(op, args):
        calls.append(op)
        return half_hook(op, args)

    set_autocast_hook(hook)
    try:
        y = F.linear(ad.randn(2, 3), ad.randn(4, 3))
    finally:
        set_autocast_hook(None)
    assert calls == ["linear"] and y.dtype == ad.float16


def test_set_and_get_autocast_hook():
    assert get_autocast_hook() is None
    set_autocast_hook(half_hook)
    try:
        assert get_autocast_hook() is half_hook
    finally:
        set_autocast_hook(None)
    assert get_autocast_hook() is None


def test_linear_under_a_float16_hook_matches_torch_autocast():
    rng = np.random.default_rng(0)
    x0, w0, b0 = (rng.standard_normal(s).astype(np.float32) for s in ((8, 5), (3, 5), (3,)))
    x, w, b = (ad.tensor(a, requires_grad=True) for a in (x0, w0, b0))
    set_autocast_hook(half_hook)
    try:
        y = F.linear(x, w, b)
    finally:
        set_autocast_hook(None)
    xt, wt, bt = (torch.tensor(a, requires_grad=True) for a in (x0, w0, b0))
    with torch.autocast("cpu", dtype=torch.float16):
        yt = TF.linear(xt, wt, bt)
    assert y.dtype == ad.float16 and yt.dtype == torch.float16
    assert_close(y, yt, rtol=2e-3, atol=2e-3, what="autocast linear")
    cot = rng.standard_normal((8, 3)).astype(np.float16)
    y.backward(ad.tensor(cot))
    yt.backward(torch.tensor(cot))
    for ge, gt, what in ((x.grad, xt.grad, "x"), (w.grad, wt.grad, "w"), (b.grad, bt.grad, "b")):
        assert ge.dtype == ad.float32 and gt.dtype == torch.float32
        assert_close(ge, gt, rtol=1e-2, atol=1e-2, what=f"grad of {what}")


def probabilities(*shape):
    return ad.tensor(np.random.default_rng(0).uniform(0.1, 0.9, shape).astype(np.float32))


# functional ops that are compositions inside: the hook sees each once, by torch's name
COMPOSITES = {
    "binary_cross_entropy": lambda: F.binary_cross_entropy(probabilities(4), probabilities(4)),
    "binary_cross_entropy_with_logits": lambda: F.binary_cross_entropy_with_logits(
        probabilities(4), probabilities(4)),
    "scaled_dot_product_attention": lambda: F.scaled_dot_product_attention(
        probabilities(2, 3, 4), probabilities(2, 5, 4), probabilities(2, 5, 6), is_causal=False),
    "one_hot": lambda: F.one_hot(ad.tensor([0, 2, 1])),
    "conv1d": lambda: F.conv1d(probabilities(1, 2, 6), probabilities(3, 2, 2)),
    "conv_transpose2d": lambda: F.conv_transpose2d(probabilities(1, 2, 3, 3),
                                                   probabilities(2, 1, 2, 2)),
    "interpolate": lambda: F.interpolate(probabilities(1, 1, 3, 3), scale_factor=2,
                                         mode="bilinear"),
    "constant_pad_nd": lambda: F.pad(probabilities(2, 3), (1, 1)),
    "reflection_pad2d": lambda: F.pad(probabilities(1, 3, 3), (1, 1, 1, 1), mode="reflect"),
    "replication_pad1d": lambda: F.pad(probabilities(2, 3), (2, 0), mode="replicate"),
    "_pad_circular": lambda: F.pad(probabilities(1, 1, 3, 3), (1, 0, 0, 1), mode="circular"),
}


@pytest.mark.parametrize("name", list(COMPOSITES))
def test_a_composite_functional_op_reaches_the_hook_once(name, recorded):
    COMPOSITES[name]()
    assert recorded == [name]


def test_pad_refuses_non_constant_padding_of_more_than_three_dims_as_torch():
    x = ad.zeros(1, 2, 3, 3, 3)
    with pytest.raises(NotImplementedError, match="pads the last 1, 2 or 3 dims"):
        F.pad(x, (1,) * 8, mode="reflect")
    with pytest.raises(NotImplementedError):
        TF.pad(torch.zeros(1, 2, 3, 3, 3), (1,) * 8, mode="reflect")
    assert F.pad(x, (1,) * 8).shape == TF.pad(torch.zeros(1, 2, 3, 3, 3), (1,) * 8).shape
