"""Devices: ``torch.device``, ``Tensor.device``, ``Tensor.is_cuda``.

This engine computes with numpy, so every tensor lives on the CPU. Torch code
is still written for any device (``device = "cuda" if torch.cuda.is_available()
else "cpu"``, ``x.to(device)``, ``zeros(3, device=x.device)``); these names let
such code run unchanged here, where the answer is always "cpu".

A :class:`device` is parsed as torch parses it: ``"cpu"``, ``"cuda:1"``,
``device("cuda", 1)``, or another device. Deliberate difference: it *is* its
name, a ``str`` subclass, so it also compares equal to that string
(``device("cpu") == "cpu"`` is False in torch) and every engine function that
takes a device name takes a device too.
"""

from __future__ import annotations

from .tensor import Tensor

#: the device types torch's parser knows; only "cpu" holds tensors here
DEVICE_TYPES = ("cpu", "cuda", "mps", "xpu", "meta", "hip", "xla")


class device(str):  # noqa: N801  (torch's name)
    """A device: ``type`` ("cpu", "cuda", ...) and ``index`` (None, or which one)."""

    type: str
    index: int | None

    def __new__(cls, type, index: int | None = None):  # noqa: A002  (torch's keyword)
        if isinstance(type, device):
            return type
        if not isinstance(type, str):
            raise RuntimeError(f"device({type!r}): expected a device name such as "
                               "'cpu' or 'cuda:0' (this engine has no accelerator to number)")
        kind, _, number = type.partition(":")
        if kind not in DEVICE_TYPES:
            raise RuntimeError(f"device({type!r}): unknown device type {kind!r}; "
                               f"expected one of {', '.join(DEVICE_TYPES)}")
        if number:
            if index is not None or not number.isdigit():
                raise RuntimeError(f"Invalid device string: {type!r}; write "
                                   "'type' or 'type:index', e.g. 'cuda:0'")
            index = int(number)
        if index is not None and index < 0:
            raise RuntimeError(f"Device index must not be negative, got {index}")
        self = super().__new__(cls, kind if index is None else f"{kind}:{index}")
        self.type, self.index = kind, index
        return self

    def __repr__(self) -> str:
        index = "" if self.index is None else f", index={self.index}"
        return f"device(type={self.type!r}{index})"

    __hash__ = str.__hash__

    def __enter__(self) -> device:
        """``with device("cpu"):`` makes factories default to this device; the
        CPU is already the default here, and any other device is refused."""
        check_cpu("with device", self)
        return self

    def __exit__(self, *exc) -> bool:
        return False


CPU = device("cpu")


def check_cpu(op: str, where) -> None:
    """Refuse a device other than the CPU, saying what to do instead."""
    if where is not None and device(where).type != "cpu":
        raise RuntimeError(
            f"{op}(device={str(where)!r}): this engine computes with numpy on the CPU only; "
            "use device='cpu' (or torch.cuda.is_available() to choose it), and compare with "
            "torch on the GPU through chapters.torchcheck.to_torch(x, 'cuda').")


def _tensor_device(self: Tensor) -> device:
    """Where the tensor's values live: always the CPU here."""
    return CPU


def _is_cuda(self: Tensor) -> bool:
    return False


def _is_cpu(self: Tensor) -> bool:
    return True


def _cuda(self: Tensor, device=None) -> Tensor:
    """``x.cuda()``: refused, with what to do instead (this engine has no GPU)."""
    check_cpu("Tensor.cuda", device or "cuda")
    return self


Tensor.device = property(_tensor_device)
Tensor.cuda = _cuda
Tensor.is_cuda = property(_is_cuda)
Tensor.is_cpu = property(_is_cpu)
