"""Every op of the issue's coverage list, forward and backward, against torch.

Each case is ONE lambda ``fn(lib, F, *tensors)`` run on both engines; the
gradient is taken against a random cotangent. The CUDA column runs torch on
the GPU where one is present.
"""

import numpy as np
import pytest

from .parity import FLOAT32, FLOAT64, Tol, check_both, devices, in_float64

rng = np.random.default_rng(1234)


def normal(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def positive(*shape):
    return (rng.random(shape) + 0.5).astype(np.float32)


def labels(n, classes):
    return rng.integers(0, classes, size=n).astype(np.int64)


IDX = np.array([[1, 2, 1], [4, 0, 1]])
TARGET = np.array([0, 3, 1, 1, 2])

CASES = {
    # arithmetic, with broadcasting and Python scalars
    "add": (lambda lib, F, a, b: a + b, [normal(3, 4), normal(4)]),
    "add_scalar": (lambda lib, F, a: 2.5 + a, [normal(3)]),
    "sub": (lambda lib, F, a, b: a - b, [normal(2, 3, 1), normal(3, 4)]),
    "rsub_scalar": (lambda lib, F, a: 1.0 - a, [normal(3)]),
    "mul": (lambda lib, F, a, b: a * b, [normal(3, 1), normal(1, 4)]),
    "div": (lambda lib, F, a, b: a / b, [normal(3, 4), positive(4)]),
    "rdiv_scalar": (lambda lib, F, a: 2.0 / a, [positive(5)]),
    "neg": (lambda lib, F, a: -a, [normal(3, 2)]),
    "pow_tensor": (lambda lib, F, a, b: a**b, [positive(3, 4), normal(3, 4)]),
    "pow_scalar": (lambda lib, F, a: a**3, [normal(5)]),
    "pow_fractional": (lambda lib, F, a: a**0.5, [positive(5)]),
    "rpow_scalar": (lambda lib, F, a: 2.0**a, [normal(5)]),
    "exp": (lambda lib, F, a: a.exp(), [normal(4, 3)]),
    "log": (lambda lib, F, a: a.log(), [positive(4, 3)]),
    "sqrt": (lambda lib, F, a: a.sqrt(), [positive(6)]),
    "abs": (lambda lib, F, a: a.abs(), [normal(6)]),
    "maximum": (lambda lib, F, a, b: lib.maximum(a, b), [normal(3, 4), normal(4)]),
    "minimum": (lambda lib, F, a, b: lib.minimum(a, b), [normal(3, 4), normal(3, 1)]),
    "maximum_ties": (lambda lib, F, a: lib.maximum(a, a * 1.0), [normal(5)]),
    "clamp": (lambda lib, F, a: a.clamp(min=-0.5, max=0.7), [normal(4, 5)]),
    "clamp_min": (lambda lib, F, a: a.clamp(min=0.1), [normal(4, 5)]),
    "where": (lambda lib, F, a, b: lib.where(a > b, a, b * 2), [normal(3, 4), normal(4)]),
    # activations
    "relu": (lambda lib, F, a: F.relu(a), [normal(4, 5)]),
    "relu_method": (lambda lib, F, a: a.relu(), [normal(7)]),
    "leaky_relu": (lambda lib, F, a: F.leaky_relu(a, 0.2), [normal(4, 5)]),
    "gelu": (lambda lib, F, a: F.gelu(a), [normal(4, 5)]),
    "gelu_tanh": (lambda lib, F, a: F.gelu(a, approximate="tanh"), [normal(4, 5)]),
    "sigmoid": (lambda lib, F, a: a.sigmoid(), [normal(4, 5) * 4]),
    "tanh": (lambda lib, F, a: a.tanh(), [normal(4, 5)]),
    "softmax": (lambda lib, F, a: a.softmax(dim=1), [normal(3, 5)]),
    "softmax_dim0": (lambda lib, F, a: F.softmax(a, dim=0), [normal(3, 5) * 10]),
    "log_softmax": (lambda lib, F, a: F.log_softmax(a, dim=-1), [normal(3, 5)]),
    "logsumexp": (lambda lib, F, a: a.logsumexp(dim=1), [normal(3, 5) * 20]),
    "logsumexp_keepdim": (lambda lib, F, a: a.logsumexp(dim=0, keepdim=True), [normal(3, 5)]),
    # reductions
    "sum_all": (lambda lib, F, a: a.sum(), [normal(3, 4)]),
    "sum_dim": (lambda lib, F, a: a.sum(dim=1), [normal(3, 4, 2)]),
    "sum_dims_keepdim": (lambda lib, F, a: a.sum(dim=(0, 2), keepdim=True), [normal(3, 4, 2)]),
    "mean_all": (lambda lib, F, a: a.mean(), [normal(3, 4)]),
    "mean_dim_keepdim": (lambda lib, F, a: a.mean(dim=-1, keepdim=True), [normal(3, 4)]),
    "max_all": (lambda lib, F, a: a.max(), [normal(3, 4)]),
    "max_dim": (lambda lib, F, a: a.max(dim=1).values, [normal(3, 4)]),
    "max_dim_keepdim": (lambda lib, F, a: a.max(dim=0, keepdim=True)[0], [normal(3, 4)]),
    "min_dim": (lambda lib, F, a: a.min(dim=1).values, [normal(3, 4)]),
    "amax": (lambda lib, F, a: a.amax(dim=1), [normal(3, 4)]),
    "var_all": (lambda lib, F, a: a.var(), [normal(3, 4)]),
    "var_dim_keepdim": (lambda lib, F, a: a.var(dim=1, keepdim=True), [normal(3, 4)]),
    "var_biased": (lambda lib, F, a: a.var(dim=0, correction=0), [normal(3, 4)]),
    "std": (lambda lib, F, a: a.std(dim=1), [normal(3, 4)]),
    # shapes
    "reshape": (lambda lib, F, a: a.reshape(4, -1) * 2, [normal(2, 3, 2)]),
    "view": (lambda lib, F, a: a.view(6, 2), [normal(2, 3, 2)]),
    "flatten": (lambda lib, F, a: a.flatten(1), [normal(2, 3, 2)]),
    "unsqueeze_squeeze": (lambda lib, F, a: a.unsqueeze(1).squeeze(0), [normal(1, 3)]),
    "transpose": (lambda lib, F, a: a.transpose(0, 2), [normal(2, 3, 4)]),
    "T": (lambda lib, F, a: a.T, [normal(2, 3)]),
    "permute": (lambda lib, F, a: a.permute(2, 0, 1), [normal(2, 3, 4)]),
    "expand": (lambda lib, F, a: a.expand(2, 3, 4), [normal(3, 1)]),
    "broadcast_to": (lambda lib, F, a: a.broadcast_to((5, 4)), [normal(4)]),
    "getitem_basic": (lambda lib, F, a: a[1:, ::2], [normal(4, 5)]),
    "getitem_int": (lambda lib, F, a: a[2], [normal(4, 5)]),
    "getitem_neg_step": (lambda lib, F, a: a[..., 1], [normal(2, 4, 5)]),
    "getitem_array": (lambda lib, F, a, i: a[i], [normal(5, 3), IDX]),
    "getitem_mixed": (lambda lib, F, a: a[1:, [0, 2, 2]], [normal(4, 3)]),
    "getitem_bool": (lambda lib, F, a: a[a > 0], [normal(4, 3)]),
    "cat": (lambda lib, F, a, b: lib.cat([a, b], dim=1), [normal(2, 3), normal(2, 4)]),
    "cat_one_constant": (lambda lib, F, a, b: lib.cat([a, b.detach()]), [normal(2, 3),
                                                                            normal(1, 3)]),
    "stack": (lambda lib, F, a, b: lib.stack([a, b], dim=1), [normal(2, 3), normal(2, 3)]),
    # linear algebra
    "matmul_2d": (lambda lib, F, a, b: a @ b, [normal(3, 4), normal(4, 5)]),
    "matmul_batched": (lambda lib, F, a, b: a @ b, [normal(2, 3, 4), normal(2, 4, 5)]),
    "matmul_broadcast": (lambda lib, F, a, b: a @ b, [normal(2, 3, 4), normal(4, 5)]),
    "matmul_vec_mat": (lambda lib, F, a, b: a @ b, [normal(4), normal(4, 5)]),
    "matmul_mat_vec": (lambda lib, F, a, b: a @ b, [normal(3, 4), normal(4)]),
    "matmul_vec_vec": (lambda lib, F, a, b: a @ b, [normal(4), normal(4)]),
    "matmul_vec_batched": (lambda lib, F, a, b: a @ b, [normal(4), normal(2, 4, 3)]),
    "linear": (lambda lib, F, x, w, b: F.linear(x, w, b), [normal(5, 3), normal(4, 3),
                                                          normal(4)]),
    "linear_3d_no_bias": (lambda lib, F, x, w: F.linear(x, w), [normal(2, 5, 3), normal(4, 3)]),
    # neural-network ops
    "conv2d": (lambda lib, F, x, w, b: F.conv2d(x, w, b), [normal(2, 3, 6, 6), normal(4, 3, 3, 3),
                                                          normal(4)]),
    "conv2d_stride_pad": (lambda lib, F, x, w, b: F.conv2d(x, w, b, stride=2, padding=1),
                          [normal(2, 3, 7, 7), normal(4, 3, 3, 3), normal(4)]),
    "conv2d_rect": (lambda lib, F, x, w: F.conv2d(x, w, stride=(1, 2), padding=(2, 0)),
                    [normal(1, 2, 5, 8), normal(3, 2, 2, 3)]),
    "max_pool2d": (lambda lib, F, x: F.max_pool2d(x, 2), [normal(2, 3, 6, 6)]),
    "max_pool2d_overlap": (lambda lib, F, x: F.max_pool2d(x, 3, stride=2, padding=1),
                           [normal(2, 3, 7, 7)]),
    "avg_pool2d": (lambda lib, F, x: F.avg_pool2d(x, 2), [normal(2, 3, 6, 6)]),
    "avg_pool2d_pad": (lambda lib, F, x: F.avg_pool2d(x, 3, stride=2, padding=1),
                       [normal(2, 3, 7, 7)]),
    "dropout_eval": (lambda lib, F, x: F.dropout(x, 0.5, training=False), [normal(4, 5)]),
    "dropout_p0": (lambda lib, F, x: F.dropout(x, 0.0, training=True), [normal(4, 5)]),
    "embedding": (lambda lib, F, w, i: F.embedding(i, w), [normal(6, 3), IDX]),
    "layer_norm": (lambda lib, F, x, w, b: F.layer_norm(x, (5,), w, b, eps=1e-5),
                   [normal(3, 5), normal(5), normal(5)]),
    "layer_norm_2d_no_affine": (lambda lib, F, x: F.layer_norm(x, (4, 5)), [normal(2, 4, 5)]),
    "batch_norm_train": (lambda lib, F, x, w, b: F.batch_norm(
        x, None, None, w, b, training=True), [normal(4, 3, 2, 2), normal(3), normal(3)]),
    "batch_norm_train_1d": (lambda lib, F, x, w, b: F.batch_norm(
        x, None, None, w, b, training=True), [normal(6, 3), normal(3), normal(3)]),
    "batch_norm_eval": (lambda lib, F, x, m, v, w, b: F.batch_norm(
        x, m.detach(), v.detach(), w, b, training=False),
        [normal(4, 3, 2, 2), normal(3), positive(3), normal(3), normal(3)]),
    # losses
    "cross_entropy_mean": (lambda lib, F, x, t: F.cross_entropy(x, t), [normal(5, 4), TARGET]),
    "cross_entropy_sum": (lambda lib, F, x, t: F.cross_entropy(x, t, reduction="sum"),
                          [normal(5, 4), TARGET]),
    "cross_entropy_none": (lambda lib, F, x, t: F.cross_entropy(x, t, reduction="none"),
                           [normal(5, 4), TARGET]),
    "cross_entropy_spatial": (lambda lib, F, x, t: F.cross_entropy(x, t),
                              [normal(2, 4, 3), labels(6, 4).reshape(2, 3)]),
    "cross_entropy_smoothing": (lambda lib, F, x, t: F.cross_entropy(x, t, label_smoothing=0.1),
                                [normal(5, 4), TARGET]),
    "cross_entropy_probs": (lambda lib, F, x, p: F.cross_entropy(x, p.softmax(dim=1)),
                            [normal(5, 4), normal(5, 4)]),
    "nll_loss": (lambda lib, F, x, t: F.nll_loss(x.log_softmax(dim=1), t), [normal(5, 4), TARGET]),
    "nll_loss_weight_ignore": (lambda lib, F, x, t, w: F.nll_loss(x, t, weight=w.detach(),
                                                                  ignore_index=1),
                               [normal(5, 4), TARGET, positive(4)]),
    "mse_loss": (lambda lib, F, a, b: F.mse_loss(a, b), [normal(3, 4), normal(3, 4)]),
    "mse_loss_sum": (lambda lib, F, a, b: F.mse_loss(a, b, reduction="sum"), [normal(3, 4),
                                                                             normal(3, 4)]),
    "mse_loss_none": (lambda lib, F, a, b: F.mse_loss(a, b, reduction="none"), [normal(3, 4),
                                                                               normal(3, 4)]),
    # composition: a node used several times, casts inside
    "reuse": (lambda lib, F, a: (a * a.tanh() + a.exp()).sum(dim=0), [normal(3, 4)]),
    "cast_roundtrip": (lambda lib, F, a: (a.double() * 3).float(), [normal(3, 4)]),
}

LOOSE = Tol(1e-5, 1e-5, 1e-4, 1e-4)
TOLERANCES = {"cross_entropy_probs": LOOSE, "conv2d_stride_pad": LOOSE, "conv2d": LOOSE,
              "layer_norm_2d_no_affine": LOOSE, "batch_norm_train": LOOSE,
              "batch_norm_train_1d": LOOSE, "logsumexp": LOOSE, "pow_tensor": LOOSE,
              "rpow_scalar": LOOSE, "gelu": LOOSE}


@pytest.mark.parametrize("device", devices())
@pytest.mark.parametrize("name", sorted(CASES))
def test_op_matches_torch_float32(name, device):
    fn, arrays = CASES[name]
    check_both(fn, arrays, TOLERANCES.get(name, FLOAT32), device=device)


@pytest.mark.parametrize("name", sorted(CASES))
def test_op_matches_torch_float64(name):
    fn, arrays = CASES[name]
    check_both(fn, in_float64(arrays), FLOAT64)


def test_dropout_mask_is_shared_by_forward_and_backward_and_scaled():
    """The engine's mask differs from torch's (other generator), so take the
    engine's mask and check y = x * mask / (1 - p) and its gradient in torch."""

    import chapters.autodiff as ad
    import chapters.autodiff.functional as F
    from chapters.torchcheck import assert_close, to_torch

    ad.manual_seed(0)
    x_np, cot = normal(200, 50), normal(200, 50)
    x = ad.tensor(x_np, requires_grad=True)
    y = F.dropout(x, p=0.3, training=True)
    y.backward(ad.tensor(cot))
    mask = (y.detach().numpy() != 0).astype(np.float32)
    assert abs(mask.mean() - 0.7) < 0.02
    xt = to_torch(x_np, requires_grad=True)
    yt = xt * to_torch(mask) / 0.7
    yt.backward(to_torch(cot))
    assert_close(y, yt, rtol=1e-6, atol=1e-6, what="dropout forward")
    assert_close(x.grad, xt.grad, rtol=1e-6, atol=1e-6, what="dropout gradient")


def test_batch_norm_updates_running_statistics_like_torch():
    import torch
    import torch.nn.functional as TF

    import chapters.autodiff as ad
    import chapters.autodiff.functional as F
    from chapters.torchcheck import assert_close

    x = normal(8, 3, 4, 4) * 2 + 1
    mean_e, var_e = ad.zeros(3), ad.ones(3)
    mean_t, var_t = torch.zeros(3), torch.ones(3)
    for _ in range(3):
        F.batch_norm(ad.tensor(x), mean_e, var_e, training=True, momentum=0.2)
        TF.batch_norm(torch.tensor(x), mean_t, var_t, training=True, momentum=0.2)
    assert_close(mean_e, mean_t, rtol=1e-5, atol=1e-6, what="running_mean")
    assert_close(var_e, var_t, rtol=1e-5, atol=1e-6, what="running_var")
