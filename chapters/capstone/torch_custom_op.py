"""Pitfall 4 in PyTorch: what ``torch.autocast`` does with a custom function.

Autocast casts the inputs of the ops on its lists (``linear`` to the low dtype,
``cross_entropy`` to float32). A ``torch.autograd.Function`` of your own is on
no list, so it receives whatever dtype reaches it — under
``torch.autocast("cpu", dtype=torch.bfloat16)``, the bfloat16 output of the
``linear`` before it. Nothing falls back and nothing warns; if the function's
kernel has no low-precision version, it raises (the "not implemented for
'Half'" class of error). The fix is to say which dtype it needs:
``torch.amp.custom_fwd(device_type=..., cast_inputs=torch.float32)`` casts its
floating inputs to float32 and runs its forward with autocast off, and
``torch.amp.custom_bwd`` runs its backward under the same autocast state.

:func:`count_casts` measures the price of that fix in casts and bytes moved
(``aten._to_copy`` calls seen by a dispatch mode), not in CPU time.
"""

from __future__ import annotations

import torch
from torch.utils._python_dispatch import TorchDispatchMode


class DtypeLog:
    """Where a custom function writes the dtype of each input it receives (an
    object, not a list, so ``custom_fwd``'s casting of inputs passes it through)."""

    def __init__(self):
        self.seen: list[str] = []


def _swish_forward(ctx, x, log):
    log.seen.append(str(x.dtype).removeprefix("torch."))
    ctx.save_for_backward(x)
    return x * torch.sigmoid(x)


def _swish_backward(ctx, grad):
    (x,) = ctx.saved_tensors
    s = torch.sigmoid(x)
    return grad * s * (1 + x * (1 - s)), None


class Swish(torch.autograd.Function):
    """``x * sigmoid(x)`` as a plain custom function: autocast does not touch it."""

    forward = staticmethod(_swish_forward)
    backward = staticmethod(_swish_backward)


class Float32Swish(torch.autograd.Function):
    """The same function, declared float32-only: the fix for pitfall 4."""

    @staticmethod
    @torch.amp.custom_fwd(device_type="cpu", cast_inputs=torch.float32)
    def forward(ctx, x, log):
        return _swish_forward(ctx, x, log)

    @staticmethod
    @torch.amp.custom_bwd(device_type="cpu")
    def backward(ctx, grad):
        return _swish_backward(ctx, grad)


class CastCounter(TorchDispatchMode):
    """Records every dtype conversion (``aten._to_copy``) run inside it as
    ``(from, to, bytes read + bytes written)``."""

    def __init__(self):
        super().__init__()
        self.casts: list[tuple[str, str, int]] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func is torch.ops.aten._to_copy.default and out.dtype != args[0].dtype:
            moved = args[0].numel() * (args[0].element_size() + out.element_size())
            self.casts.append((str(args[0].dtype), str(out.dtype), moved))
        return out


CASES = (("plain custom Function", Swish, True),
         ("custom_fwd(cast_inputs=float32)", Float32Swish, True),
         ("no autocast (float32)", Swish, False))


def count_casts(hidden: int = 128, batch_size: int = 128, seed: int = 0) -> dict:
    """One forward (under bfloat16 autocast, or without it) and backward of
    ``Linear(64, hidden) -> swish -> Linear(hidden, 10)`` and cross-entropy for
    each of :data:`CASES`: the dtype swish received, its output's dtype, and the
    number of casts and bytes they moved, forward and backward together."""
    torch.manual_seed(seed)
    first, second = torch.nn.Linear(64, hidden), torch.nn.Linear(hidden, 10)
    x, y = torch.randn(batch_size, 64), torch.randint(0, 10, (batch_size,))
    out = {}
    for label, function, enabled in CASES:
        log, counter = DtypeLog(), CastCounter()
        with counter:
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=enabled):
                hidden_out = function.apply(first(x), log)
                loss = torch.nn.functional.cross_entropy(second(hidden_out), y)
            loss.backward()
        out[label] = {"received": log.seen[0],
                      "output": str(hidden_out.dtype).removeprefix("torch."),
                      "casts": len(counter.casts), "bytes": sum(c[2] for c in counter.casts)}
    return out
