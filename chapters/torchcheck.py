"""The one place that converts engine values to PyTorch and compares them.

Every chapter checks its reference engine against real PyTorch. These helpers
do the conversions (engine tensor / numpy array <-> ``torch.Tensor``, on
``"cpu"`` or ``"cuda"``) and the comparison, with messages that say *where*
two results differ and by how much, not only that they do.
"""

from __future__ import annotations

import contextlib
import weakref

import ml_dtypes
import numpy as np
import torch
import torch.distributed as dist
from torch.utils._python_dispatch import TorchDispatchMode

from chapters.amp.autocast import Cast
from chapters.autodiff.interop import to_numpy as engine_to_numpy

_TORCH_TO_NUMPY_LOW = {torch.bfloat16: "bfloat16", torch.float8_e4m3fn: "float8_e4m3fn",
                       torch.float8_e5m2: "float8_e5m2"}


def available_devices() -> list[str]:
    """``["cpu"]``, plus ``"cuda"`` where a GPU is visible to torch."""
    return ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


def check_device(device: str) -> torch.device:
    """A torch device, or a clear error when CUDA is asked for but absent."""
    dev = torch.device(device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise RuntimeError(
            f"device {device!r} was requested but torch sees no CUDA GPU "
            f"(torch {torch.__version__}, CUDA build: {torch.version.cuda or 'no'}). "
            "Run on device='cpu', or install a CUDA build of torch on a GPU machine."
        )
    return dev


def to_numpy(value) -> np.ndarray:
    """An ndarray from a torch tensor, an engine tensor, an array or a Python number
    (:func:`chapters.autodiff.interop.to_numpy`). Low-precision torch dtypes come back
    as the matching ``ml_dtypes`` type, bit for bit (NaN payloads included)."""
    if isinstance(value, torch.Tensor) and value.dtype in _TORCH_TO_NUMPY_LOW:
        value = value.detach().cpu()
        bits = value.view(torch.uint8 if value.element_size() == 1 else torch.int16)
        return bits.numpy().view(getattr(ml_dtypes, _TORCH_TO_NUMPY_LOW[value.dtype]))
    return engine_to_numpy(value)


def to_torch(value, device: str = "cpu", requires_grad: bool = False) -> torch.Tensor:
    """A fresh torch tensor with the same values and dtype (a leaf)."""
    array = to_numpy(value)
    name = array.dtype.name
    if name in _TORCH_TO_NUMPY_LOW.values():
        torch_dtype = next(t for t, n in _TORCH_TO_NUMPY_LOW.items() if n == name)
        bits = array.view(np.uint8 if array.dtype.itemsize == 1 else np.int16)
        out = torch.from_numpy(bits.copy()).view(torch_dtype)
    else:
        out = torch.from_numpy(np.array(array, copy=True))
    out = out.to(check_device(device))
    return out.requires_grad_(requires_grad)


def assert_close(actual, expected, *, rtol: float, atol: float, what: str = "value",
                 check_dtype: bool = True) -> None:
    """Assert ``|actual - expected| <= atol + rtol * |expected|`` everywhere,
    shapes (and dtypes) equal; NaNs must sit in the same places.

    On failure the message names ``what`` was compared, the worst element's
    index, both values there, and how many elements are out of tolerance.
    """
    a, e = to_numpy(actual), to_numpy(expected)
    if a.shape != e.shape:
        raise AssertionError(f"{what}: shape {a.shape} != expected {e.shape}")
    if check_dtype and a.dtype != e.dtype:
        raise AssertionError(f"{what}: dtype {a.dtype} != expected {e.dtype}")
    a64, e64 = a.astype(np.float64), e.astype(np.float64)
    if not np.array_equal(np.isnan(a64), np.isnan(e64)):
        where = np.argwhere(np.isnan(a64) != np.isnan(e64))[0]
        raise AssertionError(f"{what}: NaN mismatch at index {tuple(where)}: "
                             f"{a64[tuple(where)]} vs expected {e64[tuple(where)]}")
    with np.errstate(invalid="ignore"):
        same_inf = (a64 == e64)
        err = np.where(same_inf | np.isnan(e64), 0.0, np.abs(a64 - e64))
        bad = err > atol + rtol * np.abs(e64)
    if bad.any():
        worst = np.unravel_index(np.argmax(np.where(bad, err, -1)), a.shape) if a.ndim else ()
        raise AssertionError(
            f"{what}: {int(bad.sum())} of {a.size} elements differ beyond rtol={rtol}, "
            f"atol={atol}; worst at index {tuple(int(i) for i in worst)}: got "
            f"{a64[worst]!r}, expected {e64[worst]!r} (|diff| = {err[worst]:.3g})"
        )


class _CastRecorder(TorchDispatchMode):
    """Sees every aten op below autocast and keeps the dtype conversions."""

    def __init__(self, casts: list) -> None:
        super().__init__()
        self.casts = casts

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        source = args[0] if args else None
        if (func is torch.ops.aten._to_copy.default and isinstance(source, torch.Tensor)
                and source.dtype != out.dtype):
            self.casts.append(Cast("aten::_to_copy", str(source.dtype).removeprefix("torch."),
                                   str(out.dtype).removeprefix("torch."), source.numel()))
        return out


@contextlib.contextmanager
def record_torch_casts():
    """``with record_torch_casts() as casts:`` collects every dtype conversion torch
    runs inside (autocast's included), as :class:`chapters.amp.autocast.Cast` records
    comparable with an engine ``autocast`` region's ``casts``."""
    casts: list = []
    with _CastRecorder(casts):
        yield casts


class _SavedBox:
    """What torch's graph stores instead of a saved tensor while the hooks are on:
    the box dies exactly when the graph lets go of the saved value."""

    __slots__ = ("tensor", "__weakref__")

    def __init__(self, tensor: torch.Tensor) -> None:
        self.tensor = tensor


class TorchSavedBytes(torch.autograd.graph.saved_tensors_hooks):
    """``with TorchSavedBytes():`` counts, in ``TorchSavedBytes.live[0]``, the bytes that
    torch's live graphs hold for backward, each saved reference counted once (as the
    engine's ``saved_tensor_bytes()`` counts them).

    torch calls ``pack`` when an op saves a tensor for its backward and keeps whatever
    ``pack`` returns in the graph; here that is a box whose finalizer subtracts the
    bytes again when the graph frees it (after ``backward()``, or when the last
    reference to the output goes)."""

    live = [0]

    def __init__(self) -> None:
        super().__init__(self.pack, self.unpack)

    @staticmethod
    def pack(t: torch.Tensor) -> _SavedBox:
        # detach(): the box must not point back at the graph (an output's grad_fn holds it)
        box = _SavedBox(t.detach())
        nbytes = t.numel() * t.element_size()
        TorchSavedBytes.live[0] += nbytes
        weakref.finalize(box, TorchSavedBytes.release, TorchSavedBytes.live, nbytes).atexit = False
        return box

    @staticmethod
    def unpack(box: _SavedBox) -> torch.Tensor:
        return box.tensor

    @staticmethod
    def release(live: list, nbytes: int) -> None:
        live[0] -= nbytes


def torch_ddp_buckets(named_params, size_limits: list[int]) -> list[list[str]]:
    """torch's own DDP bucket assignment for engine parameters, as names per bucket.

    ``named_params`` are (name, parameter) pairs in registration order; they
    are handed to ``torch.distributed._compute_bucket_assignment_by_size`` in
    the order backward produces their gradients (last registered first), with
    ``size_limits`` in bytes: ``[cap]``, or ``[first_bucket_cap, cap]`` as torch's
    DDP passes them when ``bucket_cap_mb`` is left at its default.
    """
    order = list(reversed(list(named_params)))
    tensors = [torch.empty(p.data.shape, dtype=getattr(torch, p.data.dtype.name))
               for _, p in order]
    buckets, _ = dist._compute_bucket_assignment_by_size(tensors, list(size_limits),
                                                         [False] * len(tensors))
    return [[order[i][0] for i in bucket] for bucket in buckets]
