"""Forward mode: jvp against torch.func.jvp, and the n-JVPs-vs-one-VJP helper."""

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import chapters.autodiff as ad
import chapters.autodiff.functional as F
from chapters.autodiff.cost import gradient_by_jvps, gradient_by_vjp, jvp_vs_vjp_cost
from chapters.torchcheck import assert_close

rng = np.random.default_rng(3)
W = rng.standard_normal((4, 3))
IDX = np.array([2, 0, 0])

FUNCTIONS = {
    "arith": lambda lib, F, x: (x * 3 - 1) / (x * x + 2) + x**2,
    "unary": lambda lib, F, x: x.exp() + x.tanh() + x.sigmoid() + x.abs() + (x * x + 1).log(),
    "sqrt": lambda lib, F, x: (x * x + 1).sqrt(),
    "relu_clamp": lambda lib, F, x: F.relu(x) + x.clamp(min=-0.3, max=0.4),
    "leaky_gelu": lambda lib, F, x: (F.leaky_relu(x, 0.1) + F.gelu(x)
                                     + F.gelu(x, approximate="tanh")),
    "max_min": lambda lib, F, x: lib.maximum(x, x.T[:1, :].T * 0 + 0.1) + x.amax(dim=1,
                                                                              keepdim=True),
    "where": lambda lib, F, x: lib.where(x > 0, x * 2, x.exp()),
    "reductions": lambda lib, F, x: x.sum(dim=0) + x.mean(dim=0) + x.var(dim=0),
    "softmaxes": lambda lib, F, x: x.softmax(dim=1) + F.log_softmax(x, dim=1),
    "logsumexp": lambda lib, F, x: x.logsumexp(dim=1),
    "matmul": lambda lib, F, x: x @ lib.tensor(W.T),
    "linear": lambda lib, F, x: F.linear(x, lib.tensor(W), lib.tensor(W[:, 0] * 0 + 0.5)),
    "shapes": lambda lib, F, x: x.reshape(3, 4).transpose(0, 1).permute(1, 0).expand(2, 3, 4),
    "index_cat": lambda lib, F, x: lib.cat([x[1:], x[:, IDX][:2] * 2], dim=0),
    "stack": lambda lib, F, x: lib.stack([x, x * 2], dim=1),
    "layer_norm": lambda lib, F, x: F.layer_norm(x, (3,)),
    "conv_pool": lambda lib, F, x: F.max_pool2d(F.conv2d(x.reshape(1, 1, 4, 3),
                                                         lib.tensor(np.ones((2, 1, 2, 2))),
                                                         padding=1), 2),
    "avg_pool": lambda lib, F, x: F.avg_pool2d(x.reshape(1, 1, 4, 3), 2, stride=1),
    "embedding": lambda lib, F, x: F.embedding(lib.tensor([[3, 0], [1, 1]]), x),
    "batch_norm": lambda lib, F, x: F.batch_norm(x, None, None, x[0] * 0 + 2, x[1],
                                                 training=True),
    "dropout_eval": lambda lib, F, x: F.dropout(x, 0.4, training=False) * 2,
    "mse_ce": lambda lib, F, x: F.mse_loss(x, x * 0.5) + F.cross_entropy(x, lib.tensor(IDX[:4]
                                                                                      .tolist()
                                                                                      + [1])),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_jvp_matches_torch_func_jvp(name):
    f = FUNCTIONS[name]
    x0, t0 = rng.standard_normal((4, 3)), rng.standard_normal((4, 3))
    out_e, tan_e = ad.jvp(lambda x: f(ad, F, x), (ad.tensor(x0),), (ad.tensor(t0),))
    out_t, tan_t = torch.func.jvp(lambda x: f(torch, TF, x), (torch.tensor(x0),),
                                  (torch.tensor(t0),))
    assert_close(out_e, out_t, rtol=1e-12, atol=1e-12, what="primal output")
    assert_close(tan_e, tan_t, rtol=1e-10, atol=1e-12, what="tangent output")


def test_jvp_with_two_inputs_and_tuple_outputs():
    a0, b0, ta, tb = (rng.standard_normal(5) for _ in range(4))

    def f(a, b):
        return a * b, (a - b).exp()

    (oe1, oe2), (te1, te2) = ad.jvp(f, (ad.tensor(a0), ad.tensor(b0)),
                                    (ad.tensor(ta), ad.tensor(tb)))
    (ot1, ot2), (tt1, tt2) = torch.func.jvp(f, (torch.tensor(a0), torch.tensor(b0)),
                                            (torch.tensor(ta), torch.tensor(tb)))
    assert_close(te1, tt1, rtol=1e-12, atol=1e-12, what="tangent 1")
    assert_close(te2, tt2, rtol=1e-12, atol=1e-12, what="tangent 2")


def test_full_gradient_by_jvps_equals_one_vjp_and_costs_grow_with_n():
    def f(x):
        return (x.tanh() * x).sum()

    x = rng.standard_normal(6)
    np.testing.assert_allclose(gradient_by_jvps(f, x), gradient_by_vjp(f, x), rtol=1e-12)
    expected = 1 - np.tanh(x) ** 2
    np.testing.assert_allclose(gradient_by_vjp(f, x), np.tanh(x) + x * expected, rtol=1e-12)
    rows = jvp_vs_vjp_cost(sizes=(1, 8), repeats=1)
    assert [r["n"] for r in rows] == [1, 8]
    assert all(r["max_difference"] < 1e-12 and r["jvp_seconds"] > 0 for r in rows)
