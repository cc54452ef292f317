"""``Unfold`` and ``Fold``: the sliding-block functions
(:mod:`chapters.autodiff.functional.folding`) with their options stored."""

from __future__ import annotations

from ..functional.folding import fold, unfold
from ..tensor import Tensor
from .module import Module


class Unfold(Module):
    """(N, C, H, W) -> (N, C kh kw, L): every window as a column."""

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size, self.dilation = kernel_size, dilation
        self.padding, self.stride = padding, stride

    def forward(self, x: Tensor) -> Tensor:
        return unfold(x, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self) -> str:
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class Fold(Unfold):
    """(N, C kh kw, L) -> (N, C, H, W): columns summed back onto their windows."""

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__(kernel_size, dilation, padding, stride)
        self.output_size = output_size

    def forward(self, x: Tensor) -> Tensor:
        return fold(x, self.output_size, self.kernel_size, self.dilation, self.padding,
                    self.stride)

    def extra_repr(self) -> str:
        return f"output_size={self.output_size}, {super().extra_repr()}"
