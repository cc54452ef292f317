"""Helpers shared by the functional modules: argument coercion, torch's
dtype refusals, the batch-of-one trick for unbatched inputs, and the
reduction every loss ends with."""

from __future__ import annotations

from .. import dtypes
from ..tensor import Tensor


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


def _single(value) -> int:
    """``3`` or ``(3,)`` -> 3 (torch's int-or-1-tuple arguments of 1-D ops)."""
    return int(value[0]) if isinstance(value, tuple | list) else int(value)


def _batch_of_one(fn, input: Tensor, *args) -> Tensor:
    """``fn`` on an unbatched image (C, H, W), run as a batch of one, as torch accepts it."""
    out = fn(input.unsqueeze(0), *args)
    if isinstance(out, tuple):
        return tuple(o.squeeze(0) for o in out)
    return out.squeeze(0)


def _reduce(loss: Tensor, reduction: str, weight_sum=None) -> Tensor:
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    if reduction == "mean":
        return loss.sum() / weight_sum if weight_sum is not None else loss.mean()
    raise ValueError(f"reduction must be 'mean', 'sum' or 'none', got {reduction!r}")


def _vector_norm(x: Tensor, p: float, dim, keepdim: bool, floor: float | None = None) -> Tensor:
    """||x||_p = (sum |x_i|^p)^(1/p) along ``dim`` (max |x_i| for p = inf), from
    ops with rules. With a ``floor``, max(||x||_p, floor), clamped before the
    root (max(s, floor^p)^(1/p) is the same number): the root then never sees
    0, whose infinite slope would turn a zero gradient into NaN."""
    if p == float("inf"):
        norm = x.abs().amax(dim, keepdim)
        return norm if floor is None else norm.clamp(min=floor)
    if p <= 0:
        raise NotImplementedError(f"norm: p={p} is not implemented; use a positive p or "
                                  "float('inf')")
    total = (x.abs() ** p).sum(dim, keepdim)
    if floor is not None:
        total = total.clamp(min=floor ** p)
    return total ** (1 / p)
