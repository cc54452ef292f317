"""``torch.nn.functional``'s names on the engine (``import ... as F``).

Some functions are single ops with their own derivative rule (``linear``,
``conv2d``, ``layer_norm``, ...); others are compositions, exactly as in
PyTorch: ``cross_entropy`` is ``log_softmax`` followed by ``nll_loss``, and
its gradient comes from theirs. Every function is one public op for the
autocast hook, whatever it does inside (``pad``, as torch's, picks one of
several by mode: :data:`PADDING_OPS`).
"""

from __future__ import annotations

import math

import numpy as np

from chapters.graph.ops import ShapeError

from . import dtypes
from .dispatch import FLOAT32, LOWER_PRECISION, public
from .grad_mode import no_grad
from .ops.conv import pair
from .ops.pad import MODES as PAD_MODES
from .ops.pool import max_pool2d_indices
from .ops.resample import resize_matrix
from .random import default_generator
from .tensor import Tensor, apply


def _tensor(x) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


def _floating_only(op: str, *tensors) -> None:
    """Refuse integer and bool inputs where torch's CPU kernel is floating-only."""
    for x in tensors:
        if isinstance(x, Tensor):
            dtypes.check_implemented(op, x.dtype, bool_ok=False, integer_ok=False)


def _no_bool(op: str, *tensors) -> None:
    """Refuse bool inputs where torch's CPU kernel has no bool version."""
    for x in tensors:
        if isinstance(x, Tensor):
            dtypes.check_implemented(op, x.dtype, bool_ok=False)


# ------------------------------------------------------------- activations


@public("relu")
def relu(input: Tensor, inplace: bool = False) -> Tensor:
    """max(x, 0)."""
    return _tensor(input).relu()


@public("leaky_relu")
def leaky_relu(input: Tensor, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """x if x > 0 else negative_slope * x."""
    _floating_only("leaky_relu", input)
    return apply("leaky_relu", (input,), {"negative_slope": negative_slope})


@public("gelu")
def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """x * Phi(x) (``approximate="tanh"``: the tanh formula)."""
    if approximate not in ("none", "tanh"):
        raise RuntimeError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    _floating_only("gelu", input)
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
    _floating_only("silu", input)
    return input * apply("sigmoid", (input,))


@public("softmax")
def softmax(input: Tensor, dim: int, dtype=None) -> Tensor:
    x = input if dtype is None else input.to(dtype)
    return x.softmax(dim)


@public("log_softmax")
def log_softmax(input: Tensor, dim: int, dtype=None) -> Tensor:
    x = input if dtype is None else input.to(dtype)
    return x.log_softmax(dim)


# ------------------------------------------------------------------ layers


@public("linear", autocast={"cpu": LOWER_PRECISION, "cuda": LOWER_PRECISION})
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """y = x W^T + b, W of shape (out_features, in_features)."""
    inputs = (input, weight) if bias is None else (input, weight, bias)
    _no_bool("linear", *inputs)
    return apply("linear", inputs)


@public("conv2d", autocast={"cpu": LOWER_PRECISION, "cuda": LOWER_PRECISION})
def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1) -> Tensor:
    """2-D convolution (cross-correlation, as torch) with stride, zero padding,
    dilation (kernel taps ``dilation`` apart) and groups (input and output
    channels split into ``groups`` independent convolutions; the weight is
    (out_channels, in_channels / groups, kh, kw)). An input (C, H, W) is one
    unbatched image."""
    if input.ndim == 3:
        return _batch_of_one(conv2d, input, weight, bias, stride, padding, dilation, groups)
    _no_bool("conv2d", input, weight)
    if isinstance(padding, str):
        raise NotImplementedError("conv2d: give padding as numbers ('same'/'valid' strings "
                                  "are not implemented)")
    if groups < 1 or input.ndim < 2 or input.shape[1] % groups or weight.shape[0] % groups:
        raise RuntimeError(f"conv2d: groups={groups} must be positive and divide both the "
                           f"input channels ({input.shape[1] if input.ndim > 1 else '?'}) and "
                           f"the output channels ({weight.shape[0]})")
    inputs = (input, weight) if bias is None else (input, weight, bias)
    return apply("conv2d", inputs, {"stride": pair(stride), "padding": pair(padding),
                                    "dilation": pair(dilation), "groups": groups})


def _single(value) -> int:
    """``3`` or ``(3,)`` -> 3 (torch's int-or-1-tuple arguments of 1-D ops)."""
    return int(value[0]) if isinstance(value, tuple | list) else int(value)


@public("conv1d", autocast={"cpu": LOWER_PRECISION, "cuda": LOWER_PRECISION})
def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1, padding=0,
           dilation=1, groups: int = 1) -> Tensor:
    """1-D convolution of an (N, C, L) input with an (O, C / groups, k) weight:
    conv2d on a height of 1, so it shares conv2d's kernel and rules."""
    if input.ndim != 3 or weight.ndim != 3:
        raise RuntimeError(f"conv1d: expected a 3-D input (N, C, L) and a 3-D weight "
                           f"(O, C / groups, k), got {list(input.shape)} and "
                           f"{list(weight.shape)}")
    out = conv2d(input.unsqueeze(2), weight.unsqueeze(2), bias, stride=(1, _single(stride)),
                 padding=(0, _single(padding)), dilation=(1, _single(dilation)), groups=groups)
    return out.squeeze(2)


@public("conv_transpose2d", autocast={"cpu": LOWER_PRECISION, "cuda": LOWER_PRECISION})
def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None, stride=1,
                     padding=0, output_padding=0, groups: int = 1, dilation=1) -> Tensor:
    """Transposed convolution, the adjoint of conv2d's input map (see
    :mod:`.ops.conv_transpose`); weight (in_channels, out_channels / groups,
    kh, kw). ``output_padding`` adds rows/columns at the bottom/right to pick
    one of the input sizes a strided conv2d maps to the same output size; it
    must be smaller than the stride (torch also allows up to the dilation)."""
    _no_bool("conv_transpose2d", input, weight)
    output_padding = pair(output_padding)
    if any(op >= s for op, s in zip(output_padding, pair(stride), strict=True)):
        raise RuntimeError(f"conv_transpose2d: output_padding {output_padding} must be smaller "
                           f"than the stride {pair(stride)}")
    if groups < 1 or input.ndim != 4 or input.shape[1] % groups:
        raise RuntimeError(f"conv_transpose2d: expected a 4-D input whose channels groups="
                           f"{groups} divides, got shape {list(input.shape)}")
    inputs = (input, weight) if bias is None else (input, weight, bias)
    return apply("conv_transpose2d", inputs, {
        "stride": pair(stride), "padding": pair(padding), "output_padding": output_padding,
        "dilation": pair(dilation), "groups": groups})


def _batch_of_one(fn, input: Tensor, *args) -> Tensor:
    """``fn`` on an unbatched image (C, H, W), run as a batch of one, as torch accepts it."""
    out = fn(input.unsqueeze(0), *args)
    if isinstance(out, tuple):
        return tuple(o.squeeze(0) for o in out)
    return out.squeeze(0)


def _pool_attrs(op: str, kernel_size, stride, padding) -> dict:
    kernel, padding = pair(kernel_size), pair(padding)
    stride = kernel if stride is None or stride == [] else pair(stride)
    if any(2 * p > k for k, p in zip(kernel, padding, strict=True)):
        raise RuntimeError(f"{op}: padding {padding} should be at most half of the kernel size "
                           f"{kernel}, so that no window lies in the padding alone")
    return {"kernel_size": kernel, "stride": stride, "padding": padding}


@public("max_pool2d")
def max_pool2d(input: Tensor, kernel_size, stride=None, padding=0, dilation=1,
               ceil_mode: bool = False, return_indices: bool = False):
    """The maximum of each window (stride defaults to the kernel size);
    ``dilation`` spaces the window's taps, ``ceil_mode`` keeps a last partial
    window, ``return_indices`` also returns where each maximum is (a flat
    index into its channel's H x W plane, as torch). An input (C, H, W) is one
    unbatched image."""
    _no_bool("max_pool2d", input)
    if input.ndim == 3:
        return _batch_of_one(max_pool2d, input, kernel_size, stride, padding, dilation,
                             ceil_mode, return_indices)
    attrs = _pool_attrs("max_pool2d", kernel_size, stride, padding)
    attrs.update(dilation=pair(dilation), ceil_mode=bool(ceil_mode))
    out = apply("max_pool2d", (input,), attrs)
    if not return_indices:
        return out
    return out, Tensor(max_pool2d_indices(input.data, attrs))


@public("avg_pool2d")
def avg_pool2d(input: Tensor, kernel_size, stride=None, padding=0, ceil_mode: bool = False,
               count_include_pad: bool = True, divisor_override: int | None = None) -> Tensor:
    """The mean of each window; zero padding counts toward the divisor unless
    ``count_include_pad=False``; ``divisor_override`` replaces the divisor. An
    input (C, H, W) is one unbatched image."""
    _no_bool("avg_pool2d", input)
    if input.ndim == 3:
        return _batch_of_one(avg_pool2d, input, kernel_size, stride, padding, ceil_mode,
                             count_include_pad, divisor_override)
    attrs = _pool_attrs("avg_pool2d", kernel_size, stride, padding)
    if divisor_override is not None and divisor_override <= 0:
        raise RuntimeError(f"avg_pool2d: divisor_override must be positive, got "
                           f"{divisor_override}")
    attrs.update(ceil_mode=bool(ceil_mode), count_include_pad=bool(count_include_pad),
                 divisor_override=divisor_override)
    return apply("avg_pool2d", (input,), attrs)


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
def embedding(input, weight: Tensor, padding_idx: int | None = None) -> Tensor:
    """Rows of ``weight`` picked by the integer tensor ``input``. Lookups of
    row ``padding_idx`` give that row but send it no gradient (torch's
    padding row stays as initialised)."""
    indices = input.data if isinstance(input, Tensor) else np.asarray(input)
    if dtypes.category(indices.dtype) != 1:
        raise RuntimeError(f"embedding: indices must be an integer tensor, got {indices.dtype}; "
                           "convert them with .long().")
    if weight.ndim != 2:
        raise ShapeError(f"embedding: the weight must be 2-D (num_embeddings, embedding_dim), "
                         f"got shape {list(weight.shape)}")
    rows = apply("embedding", (weight, indices))
    if padding_idx is None:
        return rows
    padding = (indices == padding_idx % weight.shape[0])[..., None]
    return apply("where", (padding, rows.detach(), rows))


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
    _floating_only("batch_norm", input)
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




# --------------------------------------------- more losses, and one_hot


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


# --------------------------------------------------------------- attention


def attention_bias(attn_mask, is_causal: bool, query_len: int, key_len: int, dtype):
    """The additive mask of ``scaled_dot_product_attention`` (or None): a bool
    mask becomes 0 where attending is allowed (True) and -inf elsewhere; a
    float mask is added as it is; ``is_causal`` allows key j for query i only
    when j <= i (the lower triangle)."""
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError("scaled_dot_product_attention: give either attn_mask or "
                               "is_causal=True, not both (fold the causal triangle into "
                               "your mask)")
        attn_mask = np.tril(np.ones((query_len, key_len), dtype=bool))
    if attn_mask is None:
        return None
    mask = attn_mask.data if isinstance(attn_mask, Tensor) else np.asarray(attn_mask)
    if mask.dtype == np.bool_:
        return np.where(mask, 0.0, -np.inf).astype(dtype)
    return attn_mask if isinstance(attn_mask, Tensor) else mask.astype(dtype)


def _share_heads(query: Tensor, kv: Tensor) -> Tensor:
    """Grouped-query attention: each of the Hkv key/value heads (dim -3) serves
    Hq / Hkv consecutive query heads, so it is repeated that many times."""
    heads, kv_heads = query.shape[-3], kv.shape[-3]
    if heads % kv_heads:
        raise RuntimeError(f"scaled_dot_product_attention: the {kv_heads} key/value heads must "
                           f"divide the {heads} query heads (enable_gqa=True)")
    shape = tuple(kv.shape)
    repeated = kv.unsqueeze(-3).expand(*shape[:-2], heads // kv_heads, *shape[-2:])
    return repeated.reshape(*shape[:-3], heads, *shape[-2:])


@public("scaled_dot_product_attention",
        autocast={"cpu": LOWER_PRECISION, "cuda": LOWER_PRECISION})
def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask=None,
                                 dropout_p: float = 0.0, is_causal: bool = False,
                                 scale: float | None = None, enable_gqa: bool = False) -> Tensor:
    """Attention (注意力): softmax(Q K^T * scale + M) V over the last two dims,
    ``scale = 1/sqrt(E)`` by default. Q is (..., L, E), K (..., S, E), V
    (..., S, Ev); M is :func:`attention_bias`. ``enable_gqa`` lets K and V
    have fewer heads (dim -3) than Q. Each query's weights over the
    S keys sum to 1; the gradient flows through matmul, softmax and matmul.
    A row with every key masked gives NaN, as torch."""
    if enable_gqa:
        key, value = _share_heads(query, key), _share_heads(query, value)
    if query.shape[-1] != key.shape[-1] or key.shape[-2] != value.shape[-2]:
        raise RuntimeError(f"scaled_dot_product_attention: query {list(query.shape)}, key "
                           f"{list(key.shape)} and value {list(value.shape)} do not fit: query "
                           "and key need the same last dim, key and value the same length")
    scale = 1 / math.sqrt(query.shape[-1]) if scale is None else scale
    scores = (query @ key.mT) * scale
    bias = attention_bias(attn_mask, is_causal, query.shape[-2], key.shape[-2], scores.dtype)
    if bias is not None:
        scores = scores + bias
    weights = scores.softmax(-1)
    if dropout_p > 0:
        weights = dropout(weights, dropout_p)
    return weights @ value


# ----------------------------------------------------------------- padding


def _padded(input: Tensor, pad: tuple, mode: str, value: float) -> Tensor:
    """The one pad kernel, whichever mode (:mod:`.ops.pad`)."""
    return apply("pad", (input,), {"pad": pad, "mode": mode, "value": value})


#: the op ``F.pad`` runs, named as torch's for each mode and number of padded
#: dims; the name carries the autocast category (torch's CPU autocast computes
#: 1-D and 2-D reflect and every replicate padding in float32)
PADDING_OPS = {name: public(name, autocast=category)(_padded) for name, category in (
    ("constant_pad_nd", None), ("_pad_circular", None),
    ("reflection_pad1d", {"cpu": FLOAT32}), ("reflection_pad2d", {"cpu": FLOAT32}),
    ("reflection_pad3d", None), ("replication_pad1d", {"cpu": FLOAT32}),
    ("replication_pad2d", {"cpu": FLOAT32}), ("replication_pad3d", {"cpu": FLOAT32}))}


def _padding_op(mode: str, dims: int) -> str:
    """torch's name for the op that pads ``dims`` dims in ``mode``."""
    if mode == "constant":
        return "constant_pad_nd"
    if mode == "circular":
        return "_pad_circular"
    return f"{'reflection' if mode == 'reflect' else 'replication'}_pad{dims}d"


def pad(input: Tensor, pad, mode: str = "constant", value: float | None = None) -> Tensor:
    """Pad the last ``len(pad) // 2`` dims; ``pad`` lists (before, after) per
    dim starting from the last, as torch: ``(left, right, top, bottom)``.
    Modes constant (fill ``value``, default 0), reflect, replicate, circular
    (see :mod:`.ops.pad`). As torch, the non-constant modes pad the last 1, 2
    or 3 dims of an input with one or two more dims than that (a batch and a
    channel dim). As torch, it runs one public op per mode and number of
    padded dims (:data:`PADDING_OPS`), each with its autocast category."""
    pad = tuple(int(p) for p in pad)
    if len(pad) % 2:
        raise RuntimeError(f"pad: padding length must be divisible by 2 (a before and an after "
                           f"per dim), got {len(pad)} values")
    if len(pad) > 2 * input.ndim:
        raise RuntimeError(f"pad: {len(pad)} padding values pad {len(pad) // 2} dims, but the "
                           f"input has only {input.ndim}")
    if mode not in PAD_MODES:
        raise NotImplementedError(f"pad: mode {mode!r} is not one of {list(PAD_MODES)}")
    if mode != "constant":
        _no_bool(f"pad(mode={mode!r})", input)
        if value not in (None, 0):
            raise RuntimeError(f"pad: mode {mode!r} takes its values from the input; the fill "
                               "value is only for mode='constant'")
        dims = len(pad) // 2
        if dims > 3:
            raise NotImplementedError(
                f"pad: {mode} padding pads the last 1, 2 or 3 dims, as torch's; got {dims} "
                f"(a pad of {len(pad)} values); pad the remaining dims in a second call")
        if input.ndim not in (dims + 1, dims + 2):
            raise NotImplementedError(
                f"pad: {mode} padding of {dims} dims needs a {dims + 1}-D or {dims + 2}-D input "
                f"(batch and channel dims first), got {input.ndim}-D; unsqueeze it first")
    return PADDING_OPS[_padding_op(mode, len(pad) // 2)](input, pad, mode, value or 0.0)


# ---------------------------------------------------------- interpolation

#: mode -> the number of spatial dims it resizes (torch's input is N, C, *spatial)
INTERPOLATE_MODES = {"nearest": None, "linear": 1, "bilinear": 2}


def _output_sizes(input: Tensor, size, scale_factor) -> tuple[tuple, tuple]:
    """The spatial output sizes and the scale (input / output) per spatial dim."""
    spatial = tuple(input.shape[2:])
    if (size is None) == (scale_factor is None):
        raise ValueError("interpolate: give exactly one of size or scale_factor")
    if size is not None:
        sizes = (size,) * len(spatial) if isinstance(size, int) else tuple(size)
        if len(sizes) != len(spatial):
            raise ValueError(f"interpolate: size {size} must give one size per spatial dim of "
                             f"the input of shape {list(input.shape)}")
        return sizes, tuple(n / m for n, m in zip(spatial, sizes, strict=True))
    factors = ((scale_factor,) * len(spatial) if isinstance(scale_factor, int | float)
               else tuple(scale_factor))
    sizes = tuple(int(np.floor(n * f)) for n, f in zip(spatial, factors, strict=True))
    return sizes, tuple(1 / f for f in factors)


@public("interpolate")
def interpolate(input: Tensor, size=None, scale_factor=None, mode: str = "nearest",
                align_corners: bool | None = None, recompute_scale_factor=None,
                antialias: bool = False) -> Tensor:
    """Resize the spatial dims of an (N, C, W) or (N, C, H, W) input:
    ``y = R_h x R_w^T`` with one resize matrix per dim (:mod:`.ops.resample`),
    so the gradient comes from matmul's. Modes nearest, linear (3-D input)
    and bilinear (4-D), with torch's ``align_corners``."""
    if mode not in INTERPOLATE_MODES:
        raise NotImplementedError(f"interpolate: mode {mode!r} is not implemented; use one of "
                                  f"{list(INTERPOLATE_MODES)}")
    if align_corners is not None and mode == "nearest":
        raise ValueError("interpolate: align_corners can only be set with the interpolating "
                         "modes linear and bilinear")
    if recompute_scale_factor or antialias:
        raise NotImplementedError("interpolate: recompute_scale_factor and antialias are not "
                                  "implemented")
    dims = INTERPOLATE_MODES[mode]
    if input.ndim not in (3, 4) or (dims is not None and input.ndim != dims + 2):
        raise NotImplementedError(f"interpolate: got a {input.ndim}-D input; mode {mode!r} "
                                  f"needs {'3-D or 4-D' if dims is None else f'{dims + 2}-D'} "
                                  "(N, C, spatial...)")
    if dims is not None:
        _floating_only(f"interpolate(mode={mode!r})", input)
    elif input.dtype != dtypes.uint8:  # torch's nearest has image (uint8) kernels, no others
        _floating_only("interpolate(mode='nearest')", input)
    sizes, scales = _output_sizes(input, size, scale_factor)
    matrices = [resize_matrix(m, n, mode, scale, bool(align_corners), input.dtype)
                for m, n, scale in zip(sizes, input.shape[2:], scales, strict=True)]
    out = input @ matrices[-1].T
    return matrices[0] @ out if len(matrices) == 2 else out
