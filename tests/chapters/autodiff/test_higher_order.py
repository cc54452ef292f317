"""Higher-order gradients: the backward pass recorded with create_graph=True."""

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import chapters.autodiff as ad
import chapters.autodiff.functional as F
from chapters.torchcheck import assert_close, to_torch

rng = np.random.default_rng(7)

# f(lib, F, x) -> tensor; grad-of-grad is taken with a random cotangent at each level
FUNCTIONS = {
    "cube": lambda lib, F, x: x**3,
    "exp_sin_like": lambda lib, F, x: (x.tanh() * x.exp()).sum(dim=1),
    "softmax": lambda lib, F, x: x.softmax(dim=1),
    "log_softmax": lambda lib, F, x: F.log_softmax(x, dim=1),
    "sigmoid_div": lambda lib, F, x: x.sigmoid() / (1 + x * x),
    "sqrt_log": lambda lib, F, x: (x * x + 1).sqrt().log(),
    "gelu": lambda lib, F, x: F.gelu(x),
    "layer_norm": lambda lib, F, x: F.layer_norm(x, (4,)),
    "matmul": lambda lib, F, x: x @ x.T,
    "mse": lambda lib, F, x: F.mse_loss(x.tanh(), x * 0.5),
    "cross_entropy": lambda lib, F, x: F.cross_entropy(x, lib.tensor([0, 3, 1])),
    "var": lambda lib, F, x: x.var(dim=1),
    "getitem": lambda lib, F, x: (x[:, [0, 0, 2]] ** 2).sum(dim=0),
    "conv2d": lambda lib, F, x: F.conv2d(x.reshape(1, 1, 3, 4),
                                         lib.tensor(np.ones((2, 1, 2, 2)))) ** 2,
    "max_pool": lambda lib, F, x: F.max_pool2d((x * x).reshape(1, 1, 3, 4), 2, stride=1),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_grad_of_grad_matches_torch(name):
    f = FUNCTIONS[name]
    x0 = rng.standard_normal((3, 4))
    results = []
    for lib, Fn, grad, tensor in ((ad, F, ad.grad, ad.tensor),
                                  (torch, TF, torch.autograd.grad, torch.tensor)):
        x = tensor(x0, requires_grad=True)
        y = f(lib, Fn, x)
        v = tensor(np.random.default_rng(1).standard_normal(tuple(y.shape)))
        (g,) = grad(y, x, v, create_graph=True)
        w = tensor(np.random.default_rng(2).standard_normal(tuple(g.shape)))
        (gg,) = grad(g, x, w)
        results.append((g, gg))
    assert_close(results[0][0].detach(), results[1][0], rtol=1e-10, atol=1e-10,
                 what="first derivative")
    assert_close(results[0][1], results[1][1], rtol=1e-9, atol=1e-10, what="second derivative")


def test_hessian_vector_product_matches_torch_functional_hvp():
    def loss(lib, Fn, w):
        x = lib.tensor(np.linspace(-1, 1, 12).reshape(4, 3))
        return Fn.softmax(x @ w, dim=1).log().sum() + (w**4).sum()

    w0, v0 = rng.standard_normal((3, 2)), rng.standard_normal((3, 2))
    _, hvp_t = torch.autograd.functional.hvp(lambda w: loss(torch, TF, w), torch.tensor(w0),
                                             torch.tensor(v0))
    w = ad.tensor(w0, requires_grad=True)
    (g,) = ad.grad(loss(ad, F, w), w, create_graph=True)
    (hvp_e,) = ad.grad((g * ad.tensor(v0)).sum(), w)
    assert_close(hvp_e, hvp_t, rtol=1e-10, atol=1e-10, what="Hessian-vector product")


def test_third_derivative_of_a_polynomial():
    x = ad.tensor(1.5, dtype=ad.float64, requires_grad=True)
    y = x**4
    (d1,) = ad.grad(y, x, create_graph=True)
    (d2,) = ad.grad(d1, x, create_graph=True)
    (d3,) = ad.grad(d2, x)
    assert d3.item() == pytest.approx(24 * 1.5)


def test_backward_with_create_graph_leaves_a_differentiable_grad():
    xt = to_torch(np.array([0.3, -1.2]), requires_grad=True)
    x = ad.tensor([0.3, -1.2], dtype=ad.float64, requires_grad=True)
    for v in (x, xt):
        (v.exp() * v).sum().backward(create_graph=True)
    assert x.grad.grad_fn is not None
    (gx,) = ad.grad(x.grad.sum(), x)
    (gt,) = torch.autograd.grad(xt.grad.sum(), xt)
    assert_close(gx, gt, rtol=1e-12, atol=1e-12, what="d(sum grad)/dx")
