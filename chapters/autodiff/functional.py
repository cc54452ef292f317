"""``torch.nn.functional``'s names on the engine (``import ... as F``).

Some functions are single ops with their own derivative rule (``linear``,
``conv2d``, ``layer_norm``, ...); others are compositions, exactly as in
PyTorch: ``cross_entropy`` is ``log_softmax`` followed by ``nll_loss``, and
its gradient comes from theirs. Every function is one public op for the
autocast hook, whatever it does inside.
"""

from __future__ import annotations

import numpy as np

from chapters.graph.ops import ShapeError

from . import dtypes
from .dispatch import FLOAT32, LOWER_PRECISION, public
from .grad_mode import no_grad
from .ops.conv import pair
from .random import default_generator
from .tensor import Tensor, apply


def _tensor(x) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


# ------------------------------------------------------------- activations


@public("relu")
def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(x, 0)."""
    return apply("relu", (input,))


@public("leaky_relu")
def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """x if x > 0 else negative_slope * x."""
    return apply("leaky_relu", (input,), {"negative_slope": negative_slope})


@public("gelu")
def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """x * Phi(x) (``approximate="tanh"``: the tanh formula)."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    return apply("gelu", (input,), {"approximate": approximate})


@public("sigmoid")
def sigmoid(input: Tensor) -> Tensor:
    return apply("sigmoid", (input,))


@public("tanh")
def tanh(input: Tensor) -> Tensor:
    return apply("tanh", (input,))


@public("silu")
def silu(input: Tensor) -> Tensor:
    """x * sigmoid(x)."""
    return input * apply("sigmoid", (input,))


@public("softmax")
def softmax(input: Tensor, dim: int, dtype=None) -> Tensor:
    x = input if dtype is None else input.to(dtype)
    return apply("softmax", (x,), {"dim": dim})


@public("log_softmax")
def log_softmax(input: Tensor, dim: int, dtype=None) -> Tensor:
    x = input if dtype is None else input.to(dtype)
    return apply("log_softmax", (x,), {"dim": dim})


# ------------------------------------------------------------------ layers


@public("linear", autocast={"cpu": LOWER_PRECISION, "cuda": LOWER_PRECISION})
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """y = x W^T + b, W of shape (out_features, in_features)."""
    inputs = (input, weight) if bias is None else (input, weight, bias)
    return apply("linear", inputs)


@public("conv2d", autocast={"cpu": LOWER_PRECISION, "cuda": LOWER_PRECISION})
def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1) -> Tensor:
    """2-D convolution (cross-correlation, as torch) with stride and zero padding.
    Dilation and groups other than 1 are not implemented. An input (C, H, W)
    is one unbatched image."""
    if input.ndim == 3:
        return _batch_of_one(conv2d, input, weight, bias, stride, padding, dilation, groups)
    if pair(dilation) != (1, 1) or groups != 1:
        raise NotImplementedError("conv2d: only dilation=1 and groups=1 are implemented")
    if isinstance(padding, str):
        raise NotImplementedError("conv2d: give padding as numbers ('same'/'valid' strings "
                                  "are not implemented)")
    inputs = (input, weight) if bias is None else (input, weight, bias)
    return apply("conv2d", inputs, {"stride": pair(stride), "padding": pair(padding)})


def _batch_of_one(fn, input: Tensor, *args) -> Tensor:
    """``fn`` on an unbatched image (C, H, W), run as a batch of one, as torch accepts it."""
    return fn(input.unsqueeze(0), *args).squeeze(0)


def _pool_attrs(kernel_size, stride, padding) -> dict:
    kernel = pair(kernel_size)
    return {"kernel_size": kernel, "stride": kernel if stride is None else pair(stride),
            "padding": pair(padding)}


@public("max_pool2d")
def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0) -> Tensor:
    """The maximum of each window (stride defaults to the kernel size); an
    input (C, H, W) is one unbatched image."""
    if input.ndim == 3:
        return _batch_of_one(max_pool2d, input, kernel_size, stride, padding)
    return apply("max_pool2d", (input,), _pool_attrs(kernel_size, stride, padding))


@public("avg_pool2d")
def avg_pool2d(input: Tensor, kernel_size, stride=None, padding=0) -> Tensor:
    """The mean of each window, zero padding counted (torch's count_include_pad=True);
    an input (C, H, W) is one unbatched image."""
    if input.ndim == 3:
        return _batch_of_one(avg_pool2d, input, kernel_size, stride, padding)
    return apply("avg_pool2d", (input,), _pool_attrs(kernel_size, stride, padding))


@public("dropout")
def dropout(input: Tensor, p: float = 0.5, training: bool = True, inplace: bool = False,
            generator=None) -> Tensor:
    """Zero each element with probability p and scale the rest by 1/(1-p), so
    the expected value is unchanged; identity when not training. The mask is
    drawn from the engine's generator (a different stream from torch's)."""
    if not 0 <= p <= 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0:
        return input
    rng = generator or default_generator()
    keep = rng.random(input.shape) >= p
    scale = keep.astype(input.dtype) * np.asarray(1.0 / (1.0 - p) if p < 1 else 0.0,
                                                  dtype=input.dtype)
    return apply("dropout", (input, scale))


@public("embedding")
def embedding(input, weight: Tensor) -> Tensor:
    """Rows of ``weight`` picked by the integer tensor ``input``."""
    indices = input.data if isinstance(input, Tensor) else np.asarray(input)
    if dtypes.category(indices.dtype) != 1:
        raise RuntimeError(f"embedding: indices must be an integer tensor, got {indices.dtype}; "
                           "convert them with .long().")
    if weight.ndim != 2:
        raise ShapeError(f"embedding: the weight must be 2-D (num_embeddings, embedding_dim), "
                         f"got shape {list(weight.shape)}")
    return apply("embedding", (weight, indices))


@public("layer_norm", autocast={"cuda": FLOAT32})
def layer_norm(input: Tensor, normalized_shape, weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalize over the last ``len(normalized_shape)`` dims, then w * x_hat + b
    (floating inputs only, as torch)."""
    if not dtypes.is_floating(input.dtype):
        raise NotImplementedError(f"layer_norm: expected a floating point input, got "
                                  f"{input.dtype}; convert first, e.g. x.float()")
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if tuple(input.shape[input.ndim - len(shape):]) != shape:
        raise RuntimeError(f"layer_norm: normalized_shape {list(shape)} does not match the last "
                           f"dims of the input of shape {list(input.shape)}")
    for what, param in (("weight", weight), ("bias", bias)):
        if param is not None and tuple(param.shape) != shape:
            raise RuntimeError(f"layer_norm: {what} of shape {list(param.shape)} must have the "
                               f"normalized_shape {list(shape)}")
    dims = tuple(range(input.ndim - len(shape), input.ndim))
    return apply("layer_norm", (input, weight, bias), {"dims": dims, "eps": eps})


@public("batch_norm")
def batch_norm(input: Tensor, running_mean: Tensor | None, running_var: Tensor | None,
               weight: Tensor | None = None, bias: Tensor | None = None,
               training: bool = False, momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Per-channel (dim 1) normalization. Training: batch statistics, and the
    running ones move toward them in place:
    ``running = (1 - momentum) running + momentum * batch`` (the variance with
    Bessel's correction, as torch). Eval: the running statistics."""
    dims = (0,) + tuple(range(2, input.ndim))
    shape = (1, input.shape[1]) + (1,) * (input.ndim - 2)
    if training:
        n = input.numel() // input.shape[1]
        if n <= 1:
            raise ValueError(f"batch_norm: expected more than 1 value per channel when "
                             f"training, got input of shape {list(input.shape)}")
        if running_mean is not None or running_var is not None:
            with no_grad():
                x = input.data.astype(np.float32) if input.dtype in dtypes.LOW_PRECISION \
                    else input.data
                if running_mean is not None:
                    running_mean.mul_(1 - momentum).add_(x.mean(axis=dims) * momentum)
                if running_var is not None:
                    running_var.mul_(1 - momentum).add_(x.var(axis=dims, ddof=1) * momentum)
        return apply("batch_norm", (input, weight, bias), {"dims": dims, "eps": eps})
    if running_mean is None or running_var is None:
        raise RuntimeError("batch_norm: running_mean and running_var are needed when not "
                           "training (evaluation mode normalizes with them)")
    mean = running_mean.data.reshape(shape)
    rstd = (1.0 / np.sqrt(running_var.data + eps)).reshape(shape).astype(input.dtype)
    out = (input - mean.astype(input.dtype)) * rstd
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out


# ------------------------------------------------------------------ losses


def _reduce(loss: Tensor, reduction: str, weight_sum=None) -> Tensor:
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.sum() / weight_sum if weight_sum is not None else loss.mean()
    raise ValueError(f"reduction must be 'mean', 'sum' or 'none', got {reduction!r}")


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
    shape (C,) is one sample."""
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
        probs = _tensor(target)
        if label_smoothing:
            probs = probs * (1 - label_smoothing) + label_smoothing / input.shape[1]
        return _reduce(-(logp * probs).sum(1), reduction)
    _class_target("cross_entropy", input, t)
    logp = apply("log_softmax", (input,), {"dim": 1})
    loss = nll_loss(logp, target, weight, ignore_index, reduction)
    if label_smoothing:
        if weight is not None:
            raise NotImplementedError("cross_entropy: label_smoothing with class weights")
        smooth = _reduce(-logp.mean(1) * (t != ignore_index).astype(logp.dtype), reduction)
        if reduction == "mean":
            smooth = smooth * (t.size / max(int((t != ignore_index).sum()), 1))
        loss = loss * (1 - label_smoothing) + smooth * label_smoothing
    return loss


@public("mse_loss", autocast={"cpu": FLOAT32, "cuda": FLOAT32})
def mse_loss(input: Tensor, target, reduction: str = "mean") -> Tensor:
    """(input - target)^2, averaged (or summed) over all elements. Unlike
    torch, which warns and broadcasts, shapes that differ are refused (with
    torch's exception type for shapes that do not fit, RuntimeError)."""
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


def one_hot(tensor, num_classes: int = -1) -> Tensor:
    """Integer classes -> int64 one-hot rows (no gradient)."""
    t = tensor.data if isinstance(tensor, Tensor) else np.asarray(tensor)
    n = int(t.max()) + 1 if num_classes < 0 else num_classes
    return Tensor((t[..., None] == np.arange(n)).astype(np.int64))
