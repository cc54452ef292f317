"""Engine autocast vs torch.autocast: output dtypes (and values) op by op.

The expected dtypes are not copied from a list: each case runs the same lambda
under ``torch.autocast`` and under the engine's ``autocast`` and compares.
"""

import warnings

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import chapters.autodiff.functional as F
from chapters import autodiff as ad
from chapters.amp.autocast import (
    AutocastFallbackWarning,
    autocast,
    get_policy,
    is_autocast_enabled,
    register_op_policy,
    unregister_op_policy,
)
from chapters.amp.formats import sum_repeatedly
from chapters.amp.policies import engine_ops
from chapters.autodiff import dispatch
from chapters.torchcheck import assert_close, available_devices, to_numpy

LIBS = {"engine": (ad, F), "torch": (torch, TF)}

# op name -> (lambda over (library, functional, *float inputs), number of float inputs).
# Inputs are (4, 4) tensors with values in [0.5, 2) unless the op needs other shapes.
OPS = {
    "add": (lambda L, F, a, b: a + b, 2),
    "sub": (lambda L, F, a, b: a - b, 2),
    "mul": (lambda L, F, a, b: a * b, 2),
    "div": (lambda L, F, a, b: a / b, 2),
    "pow": (lambda L, F, a, b: a ** b, 2),
    "neg": (lambda L, F, a: -a, 1),
    "matmul": (lambda L, F, a, b: a @ b, 2),
    "maximum": (lambda L, F, a, b: L.maximum(a, b), 2),
    "minimum": (lambda L, F, a, b: L.minimum(a, b), 2),
    "where": (lambda L, F, a, b: L.where(a > 1.0, a, b), 2),
    "eq": (lambda L, F, a, b: a == b, 2),
    "ne": (lambda L, F, a, b: a != b, 2),
    "lt": (lambda L, F, a, b: a < b, 2),
    "le": (lambda L, F, a, b: a <= b, 2),
    "gt": (lambda L, F, a, b: a > b, 2),
    "ge": (lambda L, F, a, b: a >= b, 2),
    "exp": (lambda L, F, a: a.exp(), 1),
    "log": (lambda L, F, a: a.log(), 1),
    "sqrt": (lambda L, F, a: a.sqrt(), 1),
    "rsqrt": (lambda L, F, a: a.rsqrt(), 1),
    "abs": (lambda L, F, a: a.abs(), 1),
    "tanh": (lambda L, F, a: a.tanh(), 1),
    "sigmoid": (lambda L, F, a: a.sigmoid(), 1),
    "relu": (lambda L, F, a: F.relu(a), 1),
    "gelu": (lambda L, F, a: F.gelu(a), 1),
    "silu": (lambda L, F, a: F.silu(a), 1),
    "leaky_relu": (lambda L, F, a: F.leaky_relu(a, 0.1), 1),
    "square": (lambda L, F, a: a.square(), 1),
    "sign": (lambda L, F, a: a.sign(), 1),
    "clamp": (lambda L, F, a: a.clamp(0.7, 1.5), 1),
    "softmax": (lambda L, F, a: a.softmax(-1), 1),
    "log_softmax": (lambda L, F, a: F.log_softmax(a, -1), 1),
    "logsumexp": (lambda L, F, a: a.logsumexp(-1), 1),
    "sum": (lambda L, F, a: a.sum(), 1),
    "mean": (lambda L, F, a: a.mean(0), 1),
    "max": (lambda L, F, a: a.max(), 1),
    "min": (lambda L, F, a: a.min(), 1),
    "amax": (lambda L, F, a: a.amax(-1), 1),
    "amin": (lambda L, F, a: a.amin(-1), 1),
    "bitwise_and": (lambda L, F, a: (a * 4).long() & 3, 1),
    "bitwise_or": (lambda L, F, a: (a * 4).long() | 8, 1),
    "bitwise_xor": (lambda L, F, a: (a * 4).long() ^ 5, 1),
    "bitwise_not": (lambda L, F, a: ~(a > 1), 1),
    "bitwise_left_shift": (lambda L, F, a: (a * 4).long() << 2, 1),
    "bitwise_right_shift": (lambda L, F, a: (a * 4).long() >> 1, 1),
    "var": (lambda L, F, a: a.var(), 1),
    "std": (lambda L, F, a: a.std(0), 1),
    "view": (lambda L, F, a: a.view(16), 1),
    "reshape": (lambda L, F, a: a.reshape(2, 8), 1),
    "unsqueeze": (lambda L, F, a: a.unsqueeze(0), 1),
    "squeeze": (lambda L, F, a: a.reshape(1, 16).squeeze(0), 1),
    "transpose": (lambda L, F, a: a.transpose(0, 1), 1),
    "permute": (lambda L, F, a: a.permute(1, 0), 1),
    "flatten": (lambda L, F, a: a.flatten(), 1),
    "expand": (lambda L, F, a: a.unsqueeze(0).expand(3, 4, 4), 1),
    "getitem": (lambda L, F, a: a[1:3], 1),
    "clone": (lambda L, F, a: a.clone(), 1),
    "to": (lambda L, F, a: a.to(L.float64), 1),
    "cat": (lambda L, F, a, b: L.cat([a, b]), 2),
    "stack": (lambda L, F, a, b: L.stack([a, b]), 2),
    "linear": (lambda L, F, a, b, c: F.linear(a, b, c[0]), 3),
    "conv2d": (lambda L, F, a, b, c: F.conv2d(a.reshape(1, 1, 4, 4), b.reshape(4, 1, 2, 2),
                                              c[0]), 3),
    "max_pool2d": (lambda L, F, a: F.max_pool2d(a.reshape(1, 1, 4, 4), 2), 1),
    "avg_pool2d": (lambda L, F, a: F.avg_pool2d(a.reshape(1, 1, 4, 4), 2), 1),
    "layer_norm": (lambda L, F, a, b, c: F.layer_norm(a, (4,), b[0], c[0]), 3),
    "batch_norm": (lambda L, F, a: F.batch_norm(a, None, None, training=True), 1),
    "embedding": (lambda L, F, a: F.embedding(L.tensor([0, 3, 1]), a), 1),
    "dropout": (lambda L, F, a: F.dropout(a, 0.5, training=False), 1),
    "mse_loss": (lambda L, F, a, b: F.mse_loss(a, b), 2),
    "l1_loss": (lambda L, F, a, b: F.l1_loss(a, b), 2),
    "nll_loss": (lambda L, F, a: F.nll_loss(a, L.tensor([0, 1, 2, 3])), 1),
    "cross_entropy": (lambda L, F, a: F.cross_entropy(a, L.tensor([0, 1, 2, 3])), 1),
    # the op library's further tensor ops (chapters/autodiff/ops: elementwise, rounding,
    # scan, rearrange, select, sorting, contract)
    **{name: (lambda L, F, a, name=name: getattr(a, name)(), 1) for name in (
        "sin", "cos", "tan", "atan", "erf", "expm1", "log10", "log1p", "log2", "floor",
        "ceil", "trunc", "round", "frac", "isnan", "isinf", "isfinite", "all", "any", "prod",
        "argsort", "msort", "nonzero", "unique", "diag", "tril", "triu")},
    "asin": (lambda L, F, a: (a * 0.4).asin(), 1),
    "acos": (lambda L, F, a: L.acos(a * 0.4), 1),
    "remainder": (lambda L, F, a, b: a % b, 2),
    "fmod": (lambda L, F, a, b: L.fmod(a, b), 2),
    "floor_divide": (lambda L, F, a, b: a // b, 2),
    "copysign": (lambda L, F, a, b: L.copysign(a, -b), 2),
    "isclose": (lambda L, F, a, b: L.isclose(a, b, atol=0.3), 2),
    "lerp": (lambda L, F, a, b: L.lerp(a, b, 0.3), 2),
    "cumsum": (lambda L, F, a: a.cumsum(0), 1),
    "cumprod": (lambda L, F, a: L.cumprod(a, 1), 1),
    "cummax": (lambda L, F, a: a.cummax(0).values, 1),
    "cummin": (lambda L, F, a: a.cummin(1).values, 1),
    "flip": (lambda L, F, a: a.flip(0), 1),
    "roll": (lambda L, F, a: a.roll(1, 1), 1),
    "repeat": (lambda L, F, a: a.repeat(2, 1), 1),
    "tile": (lambda L, F, a: a.tile((2,)), 1),
    "gather": (lambda L, F, a: a.gather(1, L.tensor([[0, 1]] * 4)), 1),
    "index_select": (lambda L, F, a: a.index_select(0, L.tensor([2, 0])), 1),
    "masked_fill": (lambda L, F, a: a.masked_fill(a > 1, 0.5), 1),
    "scatter": (lambda L, F, a, b: a.scatter(1, L.tensor([[0], [1], [2], [3]]), b[:, :1]), 2),
    "scatter_add": (lambda L, F, a, b: a.scatter_add(1, L.tensor([[3], [2], [1], [0]]),
                                                     b[:, :1]), 2),
    "scatter_reduce": (lambda L, F, a, b: a.scatter_reduce(0, L.tensor([[1] * 4]), b[:1],
                                                           "amax"), 2),
    "sort": (lambda L, F, a: a.sort().values, 1),
    "topk": (lambda L, F, a: a.topk(2).values, 1),
    "einsum": (lambda L, F, a, b: L.einsum("ij,jk->ik", a, b), 2),
    "dot": (lambda L, F, a, b: L.dot(a[0], b[0]), 2),
    "outer": (lambda L, F, a, b: L.outer(a[0], b[0]), 2),
    "bmm": (lambda L, F, a, b: L.bmm(a.reshape(2, 2, 4), b.reshape(2, 4, 2)), 2),
    "baddbmm": (lambda L, F, a, b, c: L.baddbmm(a.reshape(1, 4, 4), b.reshape(1, 4, 4),
                                                c.reshape(1, 4, 4)), 3),
    "mm": (lambda L, F, a, b: L.mm(a, b), 2),
    "addmm": (lambda L, F, a, b, c: L.addmm(a, b, c, beta=0.5), 3),
    "mv": (lambda L, F, a, b: L.mv(a, b[0]), 2),
    "addmv": (lambda L, F, a, b, c: L.addmv(a[0], b, c[0], alpha=2), 3),
    "addcmul": (lambda L, F, a, b, c: L.addcmul(a, b, c, value=0.5), 3),
    "addcdiv": (lambda L, F, a, b, c: L.addcdiv(a, b, c, value=0.5), 3),
    "allclose": (lambda L, F, a, b: L.tensor(L.allclose(a, b, atol=2.0)), 2),
    "equal": (lambda L, F, a, b: L.tensor(L.equal(a, b)), 2),
    "clamp_min": (lambda L, F, a: a.clamp_min(0.7), 1),
    "clamp_max": (lambda L, F, a: a.clamp_max(1.5), 1),
    "norm": (lambda L, F, a: a.norm(dim=1), 1),
    "dist": (lambda L, F, a, b: L.dist(a, b, 3), 2),
    "linalg_vector_norm": (lambda L, F, a: L.linalg.vector_norm(a, 3, dim=1), 1),
    "linalg_matrix_norm": (lambda L, F, a: L.linalg.matrix_norm(a, 1), 1),
    "linalg_norm": (lambda L, F, a: L.linalg.norm(a, dim=0), 1),
    # the functional ops that are compositions inside (one public op each)
    "conv1d": (lambda L, F, a, b: F.conv1d(a.reshape(1, 2, 8), b.reshape(4, 2, 2)), 2),
    "conv_transpose2d": (lambda L, F, a, b: F.conv_transpose2d(a.reshape(1, 1, 4, 4),
                                                               b.reshape(1, 4, 2, 2)), 2),
    "scaled_dot_product_attention": (lambda L, F, a, b, c: F.scaled_dot_product_attention(
        a.reshape(2, 2, 4), b.reshape(2, 2, 4), c.reshape(2, 2, 4)), 3),
    "binary_cross_entropy": (lambda L, F, a, b: F.binary_cross_entropy(a / 2, b / 2), 2),
    # input and target from one tensor: outside autocast the loss takes the target's dtype
    "binary_cross_entropy_with_logits": (
        lambda L, F, a: F.binary_cross_entropy_with_logits(a - 1, a / 2), 1),
    "one_hot": (lambda L, F, a: F.one_hot((a * 2).long()), 1),
    "interpolate": (lambda L, F, a: F.interpolate(a.reshape(1, 2, 8), scale_factor=2,
                                                  mode="linear"), 1),
    # F.pad runs one op per mode and padded dims, named as torch's
    "constant_pad_nd": (lambda L, F, a: F.pad(a, (1, 2), value=0.5), 1),
    "_pad_circular": (lambda L, F, a: F.pad(a.reshape(1, 1, 4, 4), (1, 1, 2, 0),
                                            mode="circular"), 1),
    **{f"{op}_pad{dims}d": (lambda L, F, a, mode=mode, dims=dims: F.pad(
        a.reshape((1, 1, 16) if dims == 1 else (1, 1, 4, 4) if dims == 2 else (1, 2, 2, 4)),
        (1, 1, 1, 0, 0, 1)[:2 * dims], mode=mode), 1)
       for op, mode in (("reflection", "reflect"), ("replication", "replicate"))
       for dims in (1, 2, 3)},
    # the functional additions (activations, norms, distances, pools)
    **{name: (lambda L, F, a, name=name: getattr(F, name)(a - 1), 1) for name in (
        "softplus", "elu", "selu", "celu", "mish", "hardtanh", "relu6", "logsigmoid",
        "hardsigmoid", "hardswish", "normalize")},
    "group_norm": (lambda L, F, a: F.group_norm(a.reshape(1, 4, 4), 2), 1),
    # more activations (softmin runs in float32 on CUDA, prelu in lower precision)
    **{name: (lambda L, F, a, name=name: getattr(F, name)(a - 1), 1) for name in (
        "softsign", "tanhshrink", "glu")},
    "softmin": (lambda L, F, a: F.softmin(a, 1), 1),
    "threshold": (lambda L, F, a: F.threshold(a, 1.0, -2.0), 1),
    "prelu": (lambda L, F, a, b: F.prelu(a - 1, b[0]), 2),
    "dropout1d": (lambda L, F, a: F.dropout1d(a.reshape(1, 4, 4), 0.5, training=False), 1),
    "dropout2d": (lambda L, F, a: F.dropout2d(a.reshape(1, 1, 4, 4), 0.0), 1),
    "instance_norm": (lambda L, F, a: F.instance_norm(a.reshape(1, 4, 4)), 1),
    "pixel_shuffle": (lambda L, F, a: F.pixel_shuffle(a.reshape(4, 2, 2), 2), 1),
    "pixel_unshuffle": (lambda L, F, a: F.pixel_unshuffle(a.reshape(1, 4, 4), 2), 1),
    "margin_ranking_loss": (lambda L, F, a, b: F.margin_ranking_loss(a, b, (a - b).sign()), 2),
    "triplet_margin_loss": (lambda L, F, a, b, c: F.triplet_margin_loss(a, b, c), 3),
    "bilinear": (lambda L, F, a, b, c: F.bilinear(a, b, c.reshape(1, 4, 4)), 3),
    "unfold": (lambda L, F, a: F.unfold(a.reshape(1, 1, 4, 4), 2), 1),
    "fold": (lambda L, F, a: F.fold(a.reshape(1, 4, 4), (3, 3), 2), 1),
    "cosine_similarity": (lambda L, F, a, b: F.cosine_similarity(a, b), 2),
    "pairwise_distance": (lambda L, F, a, b: F.pairwise_distance(a, b), 2),
    "smooth_l1_loss": (lambda L, F, a, b: F.smooth_l1_loss(a, b), 2),
    "huber_loss": (lambda L, F, a, b: F.huber_loss(a, b), 2),
    "kl_div": (lambda L, F, a, b: F.kl_div(a.log(), b, reduction="batchmean"), 2),
    "adaptive_avg_pool2d": (lambda L, F, a: F.adaptive_avg_pool2d(a.reshape(1, 1, 4, 4), 3), 1),
    "adaptive_max_pool2d": (lambda L, F, a: F.adaptive_max_pool2d(a.reshape(1, 1, 4, 4), 3), 1),
    "max_pool1d": (lambda L, F, a: F.max_pool1d(a.reshape(1, 4, 4), 2), 1),
    "avg_pool1d": (lambda L, F, a: F.avg_pool1d(a.reshape(1, 4, 4), 2), 1),
    # cutting into views, counting and repeating (ops.split, ops.count)
    "chunk": (lambda L, F, a: a.chunk(2, 1)[0], 1),
    "split": (lambda L, F, a: a.split([1, 3], 0)[1], 1),
    "tensor_split": (lambda L, F, a: L.tensor_split(a, 3, dim=1)[0], 1),
    "unbind": (lambda L, F, a: a.unbind(0)[1], 1),
    "narrow": (lambda L, F, a: a.narrow(1, 1, 2), 1),
    "unflatten": (lambda L, F, a: a.unflatten(1, (2, 2)), 1),
    "movedim": (lambda L, F, a: L.movedim(a.reshape(2, 2, 4), 0, 2), 1),
    "masked_select": (lambda L, F, a: a.masked_select(a > 1), 1),
    "argwhere": (lambda L, F, a: L.argwhere(a > 1), 1),
    "count_nonzero": (lambda L, F, a: L.count_nonzero(a > 1, dim=0), 1),
    "bincount": (lambda L, F, a: L.bincount(L.tensor([0, 1, 1, 3]), weights=a[0]), 1),
    "diff": (lambda L, F, a: a.diff(dim=1), 1),
    "repeat_interleave": (lambda L, F, a: a.repeat_interleave(2, dim=0), 1),
    # grids, blocks, reading and writing by position, searching (ops.grids, blocks,
    # take_put, search)
    "meshgrid": (lambda L, F, a, b: L.meshgrid(a[0], b[0], indexing="ij")[1], 2),
    "broadcast_tensors": (lambda L, F, a, b: L.broadcast_tensors(a[:1], b)[0], 2),
    "broadcast_shapes": (lambda L, F, a: a[0].expand(L.broadcast_shapes((4,), (2, 1))), 1),
    "cartesian_prod": (lambda L, F, a, b: L.cartesian_prod(a[0], b[0]), 2),
    "combinations": (lambda L, F, a: L.combinations(a[0], 3), 1),
    "tril_indices": (lambda L, F, a: a[tuple(L.tril_indices(4, 4))], 1),
    "triu_indices": (lambda L, F, a: a[tuple(L.triu_indices(4, 4, 1))], 1),
    "block_diag": (lambda L, F, a, b: L.block_diag(a, b[:2]), 2),
    "kron": (lambda L, F, a, b: L.kron(a[:2, :2], b[:2]), 2),
    "trace": (lambda L, F, a: L.trace(a), 1),
    "cdist": (lambda L, F, a, b: L.cdist(a, b[:3].to(a.dtype)), 2),  # torch: float32/64 only
    "take": (lambda L, F, a: a.take(L.tensor([0, 5, 15])), 1),
    "take_along_dim": (lambda L, F, a: a.take_along_dim(L.tensor([[1], [0], [3], [2]]), 1), 1),
    "index_add": (lambda L, F, a, b: a.index_add(0, L.tensor([2, 0]), b[:2], alpha=2), 2),
    "index_copy": (lambda L, F, a, b: a.index_copy(0, L.tensor([2, 0]), b[:2]), 2),
    "index_fill": (lambda L, F, a: a.index_fill(1, L.tensor([1, 3]), -0.5), 1),
    "index_put": (lambda L, F, a, b: a.index_put((L.tensor([1, 1]),), b[0], accumulate=True),
                  2),
    "isin": (lambda L, F, a, b: L.isin(a, b[0]), 2),
    "searchsorted": (lambda L, F, a, b: L.searchsorted(a[0].sort().values, b), 2),
    "bucketize": (lambda L, F, a, b: L.bucketize(b, a[0].sort().values), 2),
    "histc": (lambda L, F, a: a.histc(bins=5, min=0.5, max=2), 1),
    # more elementwise math (ops.transcendental, ops.binary_math)
    **{name: (lambda L, F, a, name=name: getattr(L, name)(a), 1) for name in (
        "reciprocal", "exp2", "sinh", "cosh", "asinh", "acosh", "sinc", "deg2rad", "rad2deg",
        "nan_to_num", "logical_not")},
    "atanh": (lambda L, F, a: L.atanh(a - 1.5), 1),
    **{name: (lambda L, F, a, b, name=name: getattr(L, name)(a, b), 2) for name in (
        "atan2", "hypot", "fmax", "fmin", "xlogy", "logaddexp", "float_power", "logical_and",
        "logical_or", "logical_xor")},
    # random draws taking a tensor (sampling.py), made certain: p 0, std 0, every category
    "bernoulli": (lambda L, F, a: L.bernoulli(a * 0), 1),
    "normal": (lambda L, F, a: L.normal(a, 0.0), 1),
    "multinomial": (lambda L, F, a: a.multinomial(4).sort(dim=-1).values, 1),
    # stacks and turns, order statistics (ops.stacking, ops.stats)
    **{name: (lambda L, F, a, b, name=name: getattr(L, name)([a, b]), 2) for name in (
        "hstack", "vstack", "row_stack", "dstack", "column_stack")},
    **{name: (lambda L, F, a, name=name: getattr(L, name)(a[0, 0]), 1) for name in (
        "atleast_1d", "atleast_2d", "atleast_3d")},
    **{name: (lambda L, F, a, name=name: getattr(a, name)(), 1) for name in (
        "fliplr", "flipud", "rot90", "median")},
    "var_mean": (lambda L, F, a: L.var_mean(a, 1)[0], 1),
    "std_mean": (lambda L, F, a: L.std_mean(a, 0)[1], 1),
    "aminmax": (lambda L, F, a: a.aminmax(dim=0).max, 1),
    "kthvalue": (lambda L, F, a: a.kthvalue(2).values, 1),
    "mode": (lambda L, F, a: a.mode(0).values, 1),
    "logcumsumexp": (lambda L, F, a: a.logcumsumexp(1), 1),
    "quantile": (lambda L, F, a: a.quantile(0.3, dim=1), 1),
    "nanquantile": (lambda L, F, a: L.nanquantile(a, 0.8), 1),
}

# ops whose backward we also compare (gradient dtypes and values)
GRAD_OPS = ["matmul", "linear", "conv2d", "softmax", "log_softmax", "layer_norm", "sum",
            "exp", "cross_entropy", "mse_loss", "add", "cat", "tanh", "conv_transpose2d",
            "scaled_dot_product_attention", "binary_cross_entropy_with_logits",
            "reflection_pad2d"]

LOW = {"bfloat16": (ad.bfloat16, torch.bfloat16), "float16": (ad.float16, torch.float16)}


def public_op_names() -> set[str]:
    """Every public op of the engine (as the autocast hook names it)."""
    return set(engine_ops().values())


def test_every_public_engine_op_is_checked():
    missing = public_op_names() - set(OPS)
    assert not missing, f"public engine ops without an autocast dtype check: {sorted(missing)}"


def inputs(count: int, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.uniform(0.5, 2.0, (4, 4)).astype(np.float32) for _ in range(count)]


def make(lib: str, array: np.ndarray, dtype_name: str, requires_grad=False, device="cpu"):
    """The array as an engine or torch tensor of ``dtype_name`` (a leaf); torch
    tensors go to ``device`` (the engine has no devices)."""
    if lib == "engine":
        t = ad.tensor(array).to(getattr(ad, dtype_name)).detach()
        return t.requires_grad_(requires_grad)
    t = torch.from_numpy(array).to(device=device, dtype=getattr(torch, dtype_name))
    return t.requires_grad_(requires_grad)


def patterns(count: int, low: str) -> list[tuple[str, ...]]:
    """Input dtype patterns: all float32, all low, first low, first float32, one float64."""
    out = {("float32",) * count, (low,) * count, (low,) + ("float32",) * (count - 1),
           ("float32",) + (low,) * (count - 1), ("float64",) + ("float32",) * (count - 1)}
    return sorted(out)


def run(lib, name, arrays, dtype_names, device_type, low, requires_grad=False):
    """``OPS[name]`` under autocast(device_type, low) in ``lib``; torch runs on
    ``device_type`` (index tensors made inside the lambdas land there too)."""
    L, Fn = LIBS[lib]
    fn, _ = OPS[name]
    device = device_type if lib == "torch" else "cpu"
    xs = [make(lib, a, d, requires_grad, device) for a, d in zip(arrays, dtype_names,
                                                                 strict=True)]
    if lib == "torch":
        with torch.device(device_type), torch.autocast(device_type, dtype=LOW[low][1]):
            return fn(L, Fn, *xs), xs
    with autocast(device_type, dtype=low):
        return fn(L, Fn, *xs), xs


def torch_accepts_without_autocast(name, arrays, pattern, device) -> bool:
    try:
        with torch.device(device):
            OPS[name][0](torch, TF, *[make("torch", a, d, device=device)
                                      for a, d in zip(arrays, pattern, strict=True)])
    except RuntimeError:
        return False
    return True


def hook_dtypes(name, arrays, pattern, device_type, low) -> set[str]:
    """The dtypes of the floating tensors the autocast hook passes on for ``name``."""
    seen = []
    with autocast(device_type, dtype=low) as region:
        def recording_hook(op, args):
            out = region.hook(op, args)
            if op == name:
                seen.append({dtype_name(a) for a in _tensors(out) if a.dtype != ad.int64})
            return out

        dispatch.set_autocast_hook(recording_hook)
        try:
            OPS[name][0](ad, F, *[make("engine", a, d) for a, d in zip(arrays, pattern,
                                                                         strict=True)])
        except (TypeError, ValueError):
            pass
    return seen[0]


def _tensors(args):
    for a in args:
        if isinstance(a, list | tuple):
            yield from _tensors(a)
        elif isinstance(a, ad.Tensor):
            yield a


def dtype_name(t) -> str:
    return str(t.dtype).removeprefix("torch.") if isinstance(t, torch.Tensor) else t.dtype.name


def compare_output_dtypes(name: str, low: str, device_type: str) -> None:
    """For each input-dtype pattern, the engine's output dtype (and values)
    under autocast(device_type, low) equal torch's on that device."""
    _, count = OPS[name]
    arrays = inputs(count)
    checked = 0
    for pattern in patterns(count, low):
        what = f"{name}{pattern} under autocast({device_type!r}, {low})"
        if not torch_accepts_without_autocast(name, arrays, pattern, device_type):
            continue  # a dtype mix torch refuses anyway: not an autocast question
        try:
            expected, _ = run("torch", name, arrays, pattern, device_type, low)
        except RuntimeError as err:
            # float64 is never cast, the float32 inputs are: torch's kernel then sees
            # float64 with bfloat16/float16 and refuses. Check that our hook hands the
            # engine's op exactly that mix (the engine's op may accept or refuse it).
            assert "float64" in pattern and "double" in str(err).lower()
            assert hook_dtypes(name, arrays, pattern, device_type, low) == \
                {"float64", low}, f"{what}: hook casts differ from torch's"
            continue
        got, _ = run("engine", name, arrays, pattern, device_type, low)
        assert dtype_name(got) == dtype_name(expected), \
            f"{what}: engine gives {dtype_name(got)}, torch gives {dtype_name(expected)}"
        tol = 0 if dtype_name(expected) == "bool" else 2e-2
        assert_close(got, expected, rtol=tol, atol=tol, what=what)
        checked += 1
    assert checked >= 2, f"{name}: only {checked} dtype patterns could be compared"


@pytest.mark.parametrize("low", list(LOW))
@pytest.mark.parametrize("name", list(OPS))
def test_cpu_output_dtype_matches_torch_autocast(name, low):
    compare_output_dtypes(name, low, "cpu")


@pytest.mark.cuda
@pytest.mark.parametrize("low", list(LOW))
@pytest.mark.parametrize("name", list(OPS))
def test_cuda_output_dtype_matches_torch_autocast(name, low):
    """The engine's cuda policy table against torch.autocast('cuda') on a GPU."""
    assert "cuda" in available_devices()
    compare_output_dtypes(name, low, "cuda")


@pytest.mark.parametrize("low", list(LOW))
@pytest.mark.parametrize("name", GRAD_OPS)
def test_gradients_under_autocast_match_torch(name, low):
    """float32 leaves get float32 gradients even where the op ran in low precision."""
    _, count = OPS[name]
    arrays = inputs(count, seed=1)
    results = {}
    for lib in LIBS:
        out, xs = run(lib, name, arrays, ("float32",) * count, "cpu", low, requires_grad=True)
        cotangent = np.random.default_rng(2).standard_normal(tuple(out.shape))
        cot = make(lib, cotangent.astype(np.float32), dtype_name(out))
        out.backward(cot)
        results[lib] = [x.grad for x in xs]
    for i, (g, h) in enumerate(zip(results["engine"], results["torch"], strict=True)):
        assert dtype_name(g) == dtype_name(h) == "float32"
        assert_close(g, h, rtol=5e-2, atol=5e-2, what=f"{name} under autocast: grad of input {i}")


def test_devices_differ_where_torch_says_they_do():
    cpu_only_unchanged = ["softmax", "log_softmax", "layer_norm", "sum", "exp"]
    for op in cpu_only_unchanged:
        assert get_policy("cpu", op) is None and get_policy("cuda", op) == "float32"
    x = ad.tensor(inputs(1)[0]).to(ad.bfloat16)
    with autocast("cpu", dtype="bfloat16"):
        assert x.softmax(-1).dtype == ad.bfloat16
    with autocast("cuda", dtype="bfloat16"):
        assert x.softmax(-1).dtype == ad.float32


def test_context_nests_restores_and_decorates():
    a = ad.tensor(inputs(1)[0])
    assert dispatch.get_autocast_hook() is None and not is_autocast_enabled()
    with autocast("cpu"):
        assert is_autocast_enabled()
        assert (a @ a).dtype == ad.bfloat16
        with autocast("cpu", enabled=False):
            assert (a @ a).dtype == ad.float32
        with autocast("cpu", dtype=ad.float16):
            assert (a @ a).dtype == ad.float16
        assert (a @ a).dtype == ad.bfloat16
    assert dispatch.get_autocast_hook() is None

    @autocast("cuda")
    def forward(x):
        return x @ x

    assert forward(a).dtype == ad.float16 and dispatch.get_autocast_hook() is None


def test_bad_arguments_are_clear_errors():
    with pytest.raises(ValueError, match="unknown dtype 'float12'"):
        autocast("cpu", dtype="float12")
    with pytest.raises(ValueError, match="dtype float32 is not supported; cpu autocast runs "
                                         "ops in one of bfloat16, float16"):
        autocast("cpu", dtype="float32")
    with pytest.raises(ValueError, match="unsupported device_type 'tpu'"):
        autocast("tpu")
    with pytest.raises(ValueError, match="unknown policy 'fast'"):
        register_op_policy("my_op", "fast")


def test_nan_inputs_flow_through_autocast_like_torch():
    x = np.array([[1.0, np.nan], [2.0, 3.0]], np.float32)
    ours = run("engine", "matmul", [x, x], ("float32",) * 2, "cpu", "bfloat16")[0]
    theirs = run("torch", "matmul", [x, x], ("float32",) * 2, "cpu", "bfloat16")[0]
    assert_close(ours, theirs, rtol=2e-2, atol=2e-2, what="matmul with a NaN input")


def test_op_without_low_precision_kernel_falls_back_visibly():
    @dispatch.public("my_scaled_tanh")
    def my_scaled_tanh(x):
        return x.tanh() * 2.0

    register_op_policy("my_scaled_tanh", "lower_precision", kernel_dtypes=["float32"])
    try:
        x = ad.tensor(inputs(1)[0])
        with autocast("cpu", dtype="float16") as region:
            with pytest.warns(AutocastFallbackWarning, match="'my_scaled_tanh' .* float32"):
                y = my_scaled_tanh(x.half())
            with warnings.catch_warnings():
                warnings.simplefilter("error")  # warned once per region, not per call
                my_scaled_tanh(x.half())
        assert y.dtype == ad.float32
        assert region.fallbacks == [("my_scaled_tanh", "float16")]
    finally:
        unregister_op_policy("my_scaled_tanh")


def test_torch_autocast_leaves_an_unknown_custom_op_in_its_input_dtype():
    """Evidence for correcting the source's fourth pitfall: torch does not move an
    op it has no policy for to float32; it runs in whatever dtype arrives."""
    @torch.library.custom_op("amp_course::scaled_tanh", mutates_args=())
    def scaled_tanh(x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(x) * 2

    x = torch.rand(4, 4)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert scaled_tanh(x).dtype == torch.float32          # float32 in, float32 out
        assert scaled_tanh(x @ x).dtype == torch.bfloat16    # bfloat16 in, bfloat16 out
    assert to_numpy(scaled_tanh(x)).dtype == np.float32


@pytest.mark.parametrize("low", list(LOW))
def test_low_precision_matmul_and_sum_accumulate_in_float32_like_torch(low):
    """A 1000-term dot product of 0.01s: an accumulator in the low dtype would
    drift (9.953125 in float16, see formats.sum_repeatedly); engine and torch
    both accumulate in float32 and round once."""
    a = np.full((1, 1000), 0.01, np.float32)
    b = np.ones((1000, 1), np.float32)
    results = {}
    for lib in LIBS:
        x, y = make(lib, a, low), make(lib, b, low)
        results[lib] = (x @ y, x.sum())
    for ours, theirs in zip(results["engine"], results["torch"], strict=True):
        assert_close(ours, theirs, rtol=0, atol=0, what=f"{low} accumulation")
        assert float(to_numpy(ours).astype(np.float32).ravel()[0]) == 10.0
    assert sum_repeatedly(0.01, 1000, low, low) != 10.0


def test_autocast_region_counts_the_same_casts_as_torch():
    """A matmul -> tanh -> matmul block: the engine's recorded casts match torch's."""
    from chapters.torchcheck import record_torch_casts

    rng = np.random.default_rng(0)
    x, w1, w2 = (rng.standard_normal((8, 8)).astype(np.float32) for _ in range(3))
    with autocast("cpu", dtype="bfloat16") as region:
        ad.tensor(x) @ ad.tensor(w1) @ ad.tensor(w2)
    with record_torch_casts() as casts, torch.autocast("cpu", dtype=torch.bfloat16):
        torch.from_numpy(x) @ torch.from_numpy(w1) @ torch.from_numpy(w2)
    assert [(c.source, c.target) for c in region.casts] == [(c.source, c.target) for c in casts]
    assert region.casts[0].bytes_moved == 64 * (4 + 2)
    assert sum(c.bytes_moved for c in region.casts) == sum(c.bytes_moved for c in casts)
