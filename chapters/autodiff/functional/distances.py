"""Losses that measure how far the input is from the target, elementwise."""

from __future__ import annotations

from chapters.graph.ops import ShapeError

from ..dispatch import FLOAT32, public
from ..tensor import Tensor
from ._common import _floating_only, _reduce, _tensor


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
