"""Distances: losses that measure how far the input is from the target
(mse, l1, smooth l1, huber, KL divergence), and the similarity and distance
of vectors. All are compositions of ops with rules: no rule of their own."""

from __future__ import annotations

import numpy as np

from chapters.graph.ops import ShapeError

from .. import dtypes
from ..dispatch import FLOAT32, public
from ..tensor import Tensor
from ._common import _floating_only, _reduce, _tensor, _vector_norm


@public("mse_loss", autocast={"cpu": FLOAT32, "cuda": FLOAT32})
def mse_loss(input: Tensor, target, reduction: str = "mean") -> Tensor:
    """(input - target)^2, averaged (or summed) over all elements. Unlike
    torch, which warns and broadcasts, shapes that differ are refused (with
    torch's exception type for shapes that do not fit, RuntimeError)."""
    _floating_only("mse_loss", input, target)
    target = _tensor(target)
    if input.shape != target.shape:
        raise ShapeError(f"mse_loss: input shape {list(input.shape)} and target shape "
                         f"{list(target.shape)} differ; broadcasting them is almost always a "
                         "bug (torch warns). Reshape one of them.")
    diff = input - target
    return _reduce(diff * diff, reduction)


@public("l1_loss", autocast={"cpu": FLOAT32, "cuda": FLOAT32})
def l1_loss(input: Tensor, target, reduction: str = "mean") -> Tensor:
    """|input - target|, averaged (or summed)."""
    return _reduce((input - _tensor(target)).abs(), reduction)


def _no_legacy_reduction(op: str, size_average, reduce) -> None:
    """torch's deprecated ``size_average``/``reduce`` arguments: refused, with the replacement."""
    if size_average is not None or reduce is not None:
        raise NotImplementedError(f"{op}: size_average and reduce are deprecated (as in torch) "
                                  "and not implemented; pass reduction='mean', 'sum' or 'none'")


@public("smooth_l1_loss", autocast={"cpu": FLOAT32, "cuda": FLOAT32})
def smooth_l1_loss(input: Tensor, target, size_average=None, reduce=None,
                   reduction: str = "mean", beta: float = 1.0) -> Tensor:
    """With d = input - target: 0.5 d^2 / beta where |d| < beta, |d| - 0.5 beta
    elsewhere: quadratic near 0, linear (robust to outliers) beyond beta; the
    two pieces meet with value 0.5 beta and slope +-1 at |d| = beta. beta = 0
    is l1_loss. Shapes broadcast, as torch (which warns)."""
    _no_legacy_reduction("smooth_l1_loss", size_average, reduce)
    if beta < 0:
        raise RuntimeError(f"smooth_l1_loss: beta must be non-negative, got {beta}")
    _floating_only("smooth_l1_loss", input, target)
    diff = input - _tensor(target)
    distance = diff.abs()
    if beta == 0:
        return _reduce(distance, reduction)
    loss = (diff * diff * (0.5 / beta)).where(distance < beta, distance - 0.5 * beta)
    return _reduce(loss, reduction)


@public("huber_loss", autocast={"cpu": FLOAT32})
def huber_loss(input: Tensor, target, reduction: str = "mean", delta: float = 1.0,
               weight=None) -> Tensor:
    """With d = input - target: 0.5 d^2 where |d| < delta, delta (|d| - 0.5 delta)
    elsewhere; that is delta * smooth_l1_loss with beta = delta (the slope
    beyond delta is +-delta instead of +-1)."""
    if weight is not None:
        raise NotImplementedError("huber_loss: weight is not implemented; multiply the "
                                  "reduction='none' loss by your weights")
    if delta <= 0:
        raise RuntimeError(f"huber_loss: delta must be positive, got {delta}")
    _floating_only("huber_loss", input, target)
    diff = input - _tensor(target)
    distance = diff.abs()
    loss = (diff * diff * 0.5).where(distance < delta, (distance - 0.5 * delta) * delta)
    return _reduce(loss, reduction)


def _kl_pointwise(input: Tensor, target: Tensor, log_target: bool) -> Tensor:
    """t (log t - x) with t = target and x = input (log-probabilities); 0 where
    t = 0 (t log t -> 0), NaN where t < 0. With ``log_target`` the target is
    log t: e^t (t - x)."""
    if log_target:
        return target.exp() * (target - input)
    safe = target.where(target != 0, 1.0)  # log(1) = 0, so t = 0 adds 0, with a zero gradient
    return target * safe.log() - target * input


@public("kl_div", autocast={"cpu": FLOAT32, "cuda": FLOAT32})
def kl_div(input: Tensor, target, size_average=None, reduce=None, reduction: str = "mean",
           log_target: bool = False) -> Tensor:
    """The Kullback-Leibler divergence KL(t || p) = sum t (log t - log p), with
    the input holding log p (log-probabilities, e.g. log_softmax's output)
    and the target t probabilities (or log t with ``log_target``). Shapes
    broadcast. ``reduction="batchmean"`` divides the sum by the batch size
    (dim 0), which is the true KL divergence per sample; ``"mean"`` divides
    by the number of elements, as torch (which warns that it is not KL).
    Where t = 0 the target's gradient is -x here; torch's is NaN (its
    t log t is xlogy, whose derivative there is 0 / 0)."""
    _no_legacy_reduction("kl_div", size_average, reduce)
    target = _tensor(target)
    for x in (input, target):
        if not dtypes.is_floating(x.dtype):
            raise RuntimeError(f"kl_div: integer and bool inputs are not supported, got "
                               f"{x.dtype}; convert first, e.g. x.float()")
    loss = _kl_pointwise(input, target, log_target)
    if reduction == "batchmean":
        return loss.sum() / input.shape[0] if input.ndim else loss.sum()
    return _reduce(loss, reduction)


@public("cosine_similarity", autocast={"cuda": FLOAT32})
def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """cos(x1, x2) = sum (x1 / max(||x1||, eps)) (x2 / max(||x2||, eps)) along
    ``dim``, after broadcasting x1 and x2 to one shape (each norm is taken over
    the broadcast shape, as torch). Each vector is scaled to unit length
    before the dot product, as torch does, so large vectors do not overflow."""
    for x in (x1, x2):
        if not dtypes.is_floating(x.dtype):
            raise RuntimeError(f"cosine_similarity: expected floating inputs, got {x.dtype}; "
                               "convert first, e.g. x.float()")
    try:
        shape = np.broadcast_shapes(tuple(x1.shape), tuple(x2.shape))
    except ValueError:
        raise RuntimeError(f"cosine_similarity: shapes {list(x1.shape)} and {list(x2.shape)} "
                           "do not broadcast") from None
    x1, x2 = x1.expand(*shape), x2.expand(*shape)
    unit1 = x1 / _vector_norm(x1, 2, dim, keepdim=True, floor=eps)
    unit2 = x2 / _vector_norm(x2, 2, dim, keepdim=True, floor=eps)
    return (unit1 * unit2).sum(dim)


@public("pairwise_distance")
def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6,
                      keepdim: bool = False) -> Tensor:
    """||x1 - x2 + eps||_p along the last dim (shapes broadcast); the eps keeps
    the norm away from 0, where its gradient is undefined."""
    diff = x1 - x2 + eps
    return _vector_norm(diff, p, -1 if diff.ndim else None, keepdim)


@public("margin_ranking_loss", autocast={"cpu": FLOAT32, "cuda": FLOAT32})
def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        reduction: str = "mean") -> Tensor:
    """max(0, -y (x1 - x2) + margin) with y = +1 where x1 should rank higher,
    -1 where x2 should (shapes broadcast). A composition (sub, mul, clamp_min)."""
    input1, input2, target = _tensor(input1), _tensor(input2), _tensor(target)
    return _reduce((-target * (input1 - input2) + float(margin)).clamp_min(0), reduction)


@public("triplet_margin_loss", autocast={"cpu": FLOAT32, "cuda": FLOAT32})
def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0,
                        p: float = 2, eps: float = 1e-6, swap: bool = False,
                        reduction: str = "mean") -> Tensor:
    """max(0, d(a, pos) - d(a, neg) + margin) with d the pairwise p-distance
    along the last dim: the anchor must be nearer its positive than its
    negative by ``margin``. ``swap``: d(a, neg) replaced by the smaller of it
    and d(pos, neg) (Balntas et al. 2016). A composition of pairwise_distance,
    minimum and clamp_min."""
    if margin <= 0:
        raise ValueError(f"triplet_margin_loss: margin must be greater than 0, got {margin}")
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(f"triplet_margin_loss: anchor, positive and negative must have the "
                           f"same number of dims, got {anchor.ndim}, {positive.ndim} and "
                           f"{negative.ndim}")
    near = pairwise_distance(anchor, positive, p, eps)
    far = pairwise_distance(anchor, negative, p, eps)
    if swap:
        far = far.minimum(pairwise_distance(positive, negative, p, eps))
    return _reduce((near - far + float(margin)).clamp_min(0), reduction)
