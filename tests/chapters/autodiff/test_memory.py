"""Memory life cycle: saved tensors, retain_graph, version counters, no_grad, detach."""

import gc

import numpy as np
import pytest
import torch

import chapters.autodiff as ad
from chapters.torchcheck import assert_close, to_torch


def _step(w):
    """mul saves both inputs (w twice), exp saves its output."""
    return (w * w).exp().sum()


def test_saved_bytes_are_freed_by_backward():
    w = ad.randn(100, requires_grad=True)
    start = ad.saved_tensor_bytes()
    loss = _step(w)
    assert ad.saved_tensor_bytes() - start == 3 * w.nbytes
    loss.backward()
    assert ad.saved_tensor_bytes() == start


def test_keeping_the_loss_tensor_in_a_loop_keeps_every_graph_alive():
    w = ad.randn(100, requires_grad=True)
    start = ad.saved_tensor_bytes()
    total = 0
    for _ in range(5):
        total = total + _step(w)  # the pitfall: total holds all five graphs
    assert ad.saved_tensor_bytes() - start == 5 * 3 * w.nbytes
    del total
    gc.collect()
    assert ad.saved_tensor_bytes() == start
    total = 0.0
    for _ in range(5):
        loss = _step(w)
        total += loss.item()  # the fix: a Python float holds no graph
    assert ad.saved_tensor_bytes() - start == 3 * w.nbytes  # only the last `loss`
    del loss
    assert ad.saved_tensor_bytes() == start


def test_no_grad_saves_nothing_and_detach_cuts_the_graph():
    w = ad.randn(50, requires_grad=True)
    start = ad.saved_tensor_bytes()
    with ad.no_grad():
        y = _step(w)
    assert ad.saved_tensor_bytes() == start and y.grad_fn is None
    d = (w * 2).detach()
    assert d.is_leaf and not d.requires_grad
    assert np.shares_memory(d.numpy(), (w * 1).detach().numpy()) is False


@pytest.mark.parametrize("lib", [ad, torch], ids=["engine", "torch"])
def test_second_backward_needs_retain_graph(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        y.backward()


def test_retain_graph_allows_a_second_backward_that_accumulates():
    results = []
    for lib in (ad, torch):
        x = lib.tensor([1.0, -2.0], requires_grad=True)
        y = (x.exp() * x).sum()
        y.backward(retain_graph=True)
        y.backward()
        results.append(x.grad)
    assert_close(results[0], results[1], rtol=1e-6, atol=1e-6, what="twice-accumulated grad")


@pytest.mark.parametrize("lib", [ad, torch], ids=["engine", "torch"])
def test_in_place_change_of_a_saved_tensor_is_detected(lib):
    x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
    h = x * 2
    y = (h * h).sum()  # mul saves h
    with lib.no_grad():
        h.mul_(3)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


@pytest.mark.parametrize("lib", [ad, torch], ids=["engine", "torch"])
def test_views_share_the_version_counter(lib):
    x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    h = x * 1
    y = h.exp().sum()  # exp saves its output, not h: changing h is harmless...
    z = (h.tanh() * h).sum()  # ...but mul saves h itself
    with lib.no_grad():
        h[0].add_(1)  # in place through a view
    y.backward()
    with pytest.raises(RuntimeError, match="inplace"):
        z.backward()
    assert h._version == 1


def test_in_place_ops_bump_the_version_like_torch():
    a, t = ad.zeros(3), torch.zeros(3)
    for v in (a, t):
        v.add_(1)
        v.mul_(2)
        v.sub_(v, alpha=0.5)
        v.div_(2)
        v.copy_(v * 3)
        v.zero_()
    assert a._version == t._version == 6
    assert_close(a, t, rtol=0, atol=0)


def test_saved_output_unpacks_with_its_own_node_for_higher_order():
    x = ad.tensor([0.5], requires_grad=True)
    y = x.exp()
    (saved,) = y.grad_fn.saved
    assert saved.grad_fn is y.grad_fn and np.array_equal(saved.numpy() if not saved.requires_grad
                                                         else saved.detach().numpy(), y.data)
    xt = to_torch([0.5], requires_grad=True)
    assert xt.exp().grad_fn._saved_result is not None


def test_retain_graph_keeps_saved_bytes_until_the_graph_dies():
    w = ad.randn(64, requires_grad=True)
    start = ad.saved_tensor_bytes()
    loss = _step(w)
    loss.backward(retain_graph=True)
    assert ad.saved_tensor_bytes() - start == 3 * w.nbytes
    del loss
    assert ad.saved_tensor_bytes() == start
