"""Losses over classes and probabilities: nll_loss, cross_entropy, the binary
cross entropies, and one_hot. All are compositions (``cross_entropy`` is
``log_softmax`` then ``nll_loss``, itself a ``gather``), with no rule of their own."""

from __future__ import annotations

import numpy as np

from .. import dtypes
from ..dispatch import FLOAT32, public
from ..tensor import Tensor, apply
from ._common import _floating_only, _reduce, _tensor


def _unbatched(loss_fn, input: Tensor, target, reduction: str, **kwargs) -> Tensor:
    """A loss of one sample, input (C,): computed as a batch of one, as torch
    accepts it (its ``none`` reduction is then 0-d)."""
    t = target if isinstance(target, Tensor) else Tensor(np.asarray(target))
    loss = loss_fn(input.unsqueeze(0), t.unsqueeze(0), reduction=reduction, **kwargs)
    return loss.squeeze(0) if reduction == "none" else loss


def _class_target(op: str, input: Tensor, target) -> np.ndarray:
    """Class-index targets: integers of shape (N, ...) for an input (N, C, ...)."""
    t = target.data if isinstance(target, Tensor) else np.asarray(target)
    if dtypes.category(t.dtype) != 1:
        raise RuntimeError(f"{op}: expected integer class indices as target, got {t.dtype}; "
                           "use target.long(), or float class probabilities of the input's "
                           "shape with cross_entropy.")
    if t.ndim != input.ndim - 1:
        raise RuntimeError(f"{op}: input of shape {list(input.shape)} (N, C, ...) needs a target "
                           f"of shape (N, ...) with {input.ndim - 1} dims, got {list(t.shape)}")
    if t.shape[:1] != input.shape[:1]:  # torch's type for a batch size mismatch
        raise ValueError(f"{op}: input batch size {input.shape[0]} does not match the target's "
                         f"{t.shape[0]} (input {list(input.shape)}, target {list(t.shape)})")
    if t.shape != input.shape[:1] + input.shape[2:]:
        raise RuntimeError(f"{op}: input of shape {list(input.shape)} (N, C, ...) needs a target "
                         f"of shape (N, ...), got {list(t.shape)}")
    return t


@public("nll_loss", autocast={"cpu": FLOAT32, "cuda": FLOAT32})
def nll_loss(input: Tensor, target, weight: Tensor | None = None, ignore_index: int = -100,
             reduction: str = "mean") -> Tensor:
    """-input[n, target[n]] (log-probabilities in, class indices as targets),
    weighted per class; ``mean`` divides by the total weight of the counted
    targets, as torch. An input of shape (C,) is one sample."""
    _floating_only("nll_loss", input, weight)
    if input.ndim == 1:
        return _unbatched(nll_loss, input, target, reduction, weight=weight,
                          ignore_index=ignore_index)
    t = _class_target("nll_loss", input, target)
    keep = t != ignore_index
    safe = np.where(keep, t, 0)
    if (safe < 0).any() or (safe >= input.shape[1]).any():
        raise IndexError(f"nll_loss: target values must be in [0, {input.shape[1] - 1}] "
                         f"(or ignore_index), got min {t.min()} max {t.max()}")
    picked = apply("gather", (input,), {"dim": 1, "index": np.expand_dims(safe, 1)}).squeeze(1)
    if weight is None and keep.all():  # the common case: every target counts once
        return _reduce(-picked, reduction)
    w = keep.astype(input.dtype)
    if weight is not None:
        w = w * weight.data[safe].astype(input.dtype)
    loss = -(picked * w)
    total = None
    if reduction == "mean":
        total = np.asarray(w.sum(), dtype=input.dtype)
    return _reduce(loss, reduction, total)


@public("cross_entropy", autocast={"cpu": FLOAT32, "cuda": FLOAT32})
def cross_entropy(input: Tensor, target, weight: Tensor | None = None, ignore_index: int = -100,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """nll_loss(log_softmax(input, dim=1), target); ``target`` may also hold
    class probabilities (a float tensor of the input's shape). An input of
    shape (C,) is one sample.

    Label smoothing (标签平滑) with ``eps = label_smoothing`` trains against
    ``(1 - eps) * onehot(target) + eps / C``, so the loss is
    ``(1 - eps) * nll + eps / C * sum_c w_c (-log p_c)``; with class indices
    the smoothing term skips ``ignore_index`` targets and its mean divides by
    the same total weight as nll_loss's."""
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"cross_entropy: label_smoothing must be between 0.0 and 1.0, got "
                           f"{label_smoothing}")
    if input.ndim == 1:
        return _unbatched(cross_entropy, input, target, reduction, weight=weight,
                          ignore_index=ignore_index, label_smoothing=label_smoothing)
    t = target.data if isinstance(target, Tensor) else np.asarray(target)
    if dtypes.is_floating(t.dtype):
        if t.shape != input.shape:
            raise RuntimeError(
                f"cross_entropy: a float target holds class probabilities and must have the "
                f"input's shape {list(input.shape)}, got {list(t.shape)}; for class indices "
                "pass an integer tensor of shape (N, ...).")
        logp = apply("log_softmax", (input,), {"dim": 1})
        return _soft_target_cross_entropy(logp, _tensor(target), weight, reduction,
                                          label_smoothing)
    _class_target("cross_entropy", input, t)
    logp = apply("log_softmax", (input,), {"dim": 1})
    loss = nll_loss(logp, target, weight, ignore_index, reduction)
    if not label_smoothing:
        return loss
    keep = t != ignore_index
    smooth = -_class_weighted(logp, weight).sum(1) * keep.astype(logp.dtype)
    if reduction == "mean":
        w = np.ones(input.shape[1]) if weight is None else weight.data
        smooth = smooth.sum() / np.asarray(w[t[keep]].sum(), logp.dtype)
    else:
        smooth = _reduce(smooth, reduction)
    return loss * (1 - label_smoothing) + smooth * (label_smoothing / input.shape[1])


def _class_weighted(logp: Tensor, weight: Tensor | None) -> Tensor:
    """``logp`` with class c (dim 1) scaled by ``weight[c]`` (unchanged without weights)."""
    if weight is None:
        return logp
    return logp * weight.reshape((1, -1) + (1,) * (logp.ndim - 2)).to(logp.dtype)


def _soft_target_cross_entropy(logp: Tensor, probs: Tensor, weight: Tensor | None,
                               reduction: str, label_smoothing: float) -> Tensor:
    """-sum_c w_c q_c log p_c for target probabilities q (smoothed toward 1/C);
    the mean is over the batch elements, as torch."""
    if label_smoothing:
        probs = probs * (1 - label_smoothing) + label_smoothing / logp.shape[1]
    return _reduce(-(_class_weighted(logp, weight) * probs).sum(1), reduction)


@public("one_hot")
def one_hot(tensor, num_classes: int = -1) -> Tensor:
    """Class indices (int64) -> int64 rows with a 1 at the class: shape
    ``tensor.shape + (num_classes,)``; ``num_classes=-1`` takes max + 1."""
    t = tensor.data if isinstance(tensor, Tensor) else np.asarray(tensor)
    if t.dtype != np.int64:
        raise RuntimeError(f"one_hot: expected an index tensor of dtype int64, got {t.dtype}; "
                           "convert it with .long()")
    if num_classes < 0 and t.size == 0:
        raise RuntimeError("one_hot: can not infer the number of classes from an empty tensor; "
                           "pass num_classes")
    if t.size and t.min() < 0:
        raise RuntimeError(f"one_hot: class values must be non-negative, got {t.min()}")
    n = int(t.max()) + 1 if num_classes < 0 else num_classes
    if t.size and t.max() >= n:
        raise RuntimeError(f"one_hot: class values must be smaller than num_classes={n}, "
                           f"got {t.max()}")
    return Tensor((t[..., None] == np.arange(n)).astype(np.int64))


def _same_shape(op: str, input: Tensor, target: Tensor) -> None:
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"{op}: target of shape {list(target.shape)} must have the input's "
                         f"shape {list(input.shape)}; broadcasting them is almost always a "
                         "bug. Reshape one of them.")


@public("binary_cross_entropy", autocast={"cpu": FLOAT32})
def binary_cross_entropy(input: Tensor, target, weight: Tensor | None = None,
                         size_average=None, reduce=None, reduction: str = "mean") -> Tensor:
    """-w (t log x + (1 - t) log(1 - x)) for probabilities x in [0, 1]; each
    log is clamped at -100 as torch does, so x = 0 or 1 gives a finite loss.
    The gradient is w (x - t) / (x (1 - x)): it explodes near 0 and 1, which
    is why ``binary_cross_entropy_with_logits`` exists. CPU autocast runs it
    in float32; torch's CUDA autocast refuses it (use the logits version
    there), where this engine's runs it unchanged."""
    _floating_only("binary_cross_entropy", input)
    target = _tensor(target)
    _same_shape("binary_cross_entropy", input, target)
    if target.dtype != input.dtype:
        raise RuntimeError(f"binary_cross_entropy: target dtype {target.dtype} must be the "
                           f"input's {input.dtype}; convert it with .to(input.dtype)")
    if input.numel() and (np.any(input.data < 0) or np.any(input.data > 1)):
        raise RuntimeError("binary_cross_entropy: all elements of input should be between 0 "
                           "and 1 (probabilities); for logits use "
                           "binary_cross_entropy_with_logits")
    log_x = input.log().clamp(min=-100)
    log_1mx = (1 - input).log().clamp(min=-100)
    loss = -(target * log_x + (1 - target) * log_1mx)
    return _reduce(loss if weight is None else loss * weight, reduction)


@public("binary_cross_entropy_with_logits", autocast={"cpu": FLOAT32, "cuda": FLOAT32})
def binary_cross_entropy_with_logits(input: Tensor, target, weight: Tensor | None = None,
                                     size_average=None, reduce=None, reduction: str = "mean",
                                     pos_weight: Tensor | None = None) -> Tensor:
    """binary_cross_entropy(sigmoid(x), t) without forming sigmoid(x):
    -log sigmoid(x) = softplus(-x) = log(e^0 + e^-x), a logsumexp, so
    loss = (1 - t) x + (1 + (pos_weight - 1) t) softplus(-x), finite for any
    x, with gradient sigmoid(x) - t (unweighted).

    The loss has the target's dtype, whatever the input's: torch computes it
    in place in 1 - t, so each step rounds to t's dtype; float32 logits with
    a float64 target give a float64 loss, float64 logits with a float16 target
    a float16 one. An integer target is refused, as torch refuses it."""
    _floating_only("binary_cross_entropy_with_logits", input)
    target = _tensor(target)
    _same_shape("binary_cross_entropy_with_logits", input, target)
    if not dtypes.is_floating(target.dtype):
        raise RuntimeError(f"binary_cross_entropy_with_logits: the target holds probabilities, "
                           f"so it must be floating, got {target.dtype}; convert it with "
                           f".to(input.dtype)")
    from_negative = apply("stack", (np.zeros(input.shape, input.dtype), -input), {"dim": 0})
    softplus_neg = from_negative.logsumexp(0)
    log_weight = 1 if pos_weight is None else (pos_weight - 1) * target + 1
    loss = ((1 - target) * input).to(target.dtype)
    loss = (loss + log_weight * softplus_neg).to(target.dtype)
    return _reduce(loss if weight is None else (loss * weight).to(target.dtype), reduction)
