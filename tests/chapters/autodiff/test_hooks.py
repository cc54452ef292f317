"""Leaf-only .grad, retain_grad and the three kinds of hooks, against torch."""

import numpy as np
import pytest
import torch

import chapters.autodiff as ad
from chapters.torchcheck import assert_close

X0 = np.array([0.5, -1.0, 2.0], dtype=np.float32)


def _run(lib, hooks):
    x = lib.tensor(X0, requires_grad=True)
    h = x * x
    y = h.tanh()
    hooks(x, h, y)
    (y * lib.tensor([1.0, 2.0, 3.0])).sum().backward()
    return x, h, y


def test_only_leaves_keep_grad_unless_retain_grad():
    results = []
    for lib in (ad, torch):
        x, h, y = _run(lib, lambda x, h, y: h.retain_grad())
        assert y.grad is None if lib is ad else True
        results.append((x.grad, h.grad))
    assert_close(results[0][0], results[1][0], rtol=1e-6, atol=1e-6, what="leaf grad")
    assert_close(results[0][1], results[1][1], rtol=1e-6, atol=1e-6, what="retained grad")


def test_tensor_hooks_can_replace_the_gradient():
    results = []
    for lib in (ad, torch):
        seen = []

        def hooks(x, h, y, seen=seen):
            h.register_hook(lambda g: g * 10)
            x.register_hook(lambda g: seen.append(np.array(g.detach().numpy())))

        x, _, _ = _run(lib, hooks)
        results.append((x.grad, seen[0]))
    assert_close(results[0][0], results[1][0], rtol=1e-4, atol=1e-6, what="hooked grad")
    assert_close(results[0][1], results[1][1], rtol=1e-4, atol=1e-6, what="grad seen by hook")


def test_post_accumulate_grad_hook_sees_the_accumulated_grad_once_per_backward():
    calls = {ad: [], torch: []}
    for lib in (ad, torch):
        x = lib.tensor(X0, requires_grad=True)
        x.register_post_accumulate_grad_hook(lambda t, lib=lib: calls[lib].append(
            t.grad.detach().numpy().copy()))
        (x * x + x).sum().backward()  # x used three times: one call, with the total
        (x * 2).sum().backward()
    assert len(calls[ad]) == len(calls[torch]) == 2
    for a, b in zip(calls[ad], calls[torch], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_removed_hook_does_not_run():
    x = ad.tensor(X0, requires_grad=True)
    handle = x.register_hook(lambda g: g * 0)
    handle.remove()
    x.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.ones(3, np.float32))


def test_grad_accumulates_and_owns_its_memory():
    x = ad.tensor(X0, requires_grad=True)
    y = ad.tensor(X0, requires_grad=True)
    (x + y).sum().backward()  # add passes the same gradient to both
    x.grad.mul_(5)  # changing one .grad in place must not change the other
    np.testing.assert_array_equal(y.grad.numpy(), np.ones(3, np.float32))
    (x * 1).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full(3, 6, np.float32))


def test_hooks_need_a_tensor_that_requires_grad():
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        ad.zeros(2).register_hook(lambda g: g)


def test_retained_grad_of_a_non_leaf_accumulates_like_torch():
    results = []
    for lib in (ad, torch):
        x = lib.tensor(X0, requires_grad=True)
        h = x.exp()
        h.retain_grad()
        y = (h * h).sum()
        y.backward(retain_graph=True)
        y.backward()
        results.append(h.grad)
    assert_close(results[0], results[1], rtol=1e-6, atol=1e-6, what="retained grad, twice")
