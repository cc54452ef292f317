"""Float32 master weights (FP32 主权重) for a float16 / bfloat16 model.

Mixed precision is not half precision (the source text's first pitfall, 误区一):
the forward and backward passes run in float16, but the optimizer updates a
float32 copy of every parameter. The reason is the size of an update relative
to its weight. Adding ``u`` to ``w`` in a format with ``M`` mantissa bits
changes ``w`` only if ``|u|`` exceeds half the gap between ``w`` and its
neighbour, between ``|w| * 2**-(M+2)`` and ``|w| * 2**-(M+1)`` depending on
where ``w`` sits between two powers of two: for float16 (``M = 10``) an update
with ``|u / w| < 2**-12`` is always rounded away, one below ``2**-11`` (about
4.9e-4) for most weights — every step, forever. Typical learning rates times gradients
are far smaller than that. In float32 the threshold is ``2**-24``.

The loop with masters (``MasterWeights``)::

    loss = model(x)                        # float16 parameters, float16 compute
    scaler.scale(loss).backward()          # float16 gradients, scaled
    masters.copy_grads_to_masters()        # float32 .grad on each master
    scaler.step(optimizer_on_masters)      # unscale in float32, skip on inf/NaN
    masters.copy_masters_to_model()        # round the updated masters to float16
    scaler.update()

With ``torch.autocast`` (and this engine's :class:`~chapters.amp.autocast.autocast`)
the model's parameters *are* float32 and only the op inputs are cast, so the
parameters themselves already play the master role; this class is the explicit
form used by "pure float16" models (and by the original mixed precision recipe).
"""

from __future__ import annotations

import numpy as np

from chapters.amp.formats import get_format
from chapters.autodiff import tensor


class MasterWeights:
    """Float32 copies of ``params`` (low-precision engine Parameters).

    Give :meth:`parameters` to the optimizer. The masters are fresh leaves with
    ``requires_grad=True``; their ``.grad`` is filled by
    :meth:`copy_grads_to_masters`."""

    def __init__(self, params, master_dtype=np.float32):
        self.model_params = list(params)
        if not self.model_params:
            raise ValueError("MasterWeights: no parameters were given")
        self.masters = [tensor(p.data.astype(master_dtype), requires_grad=True)
                        for p in self.model_params]

    def parameters(self) -> list:
        return list(self.masters)

    def copy_grads_to_masters(self) -> None:
        """``master.grad = float32(model.grad)``; a model parameter without a
        gradient leaves its master's ``.grad`` as None (so the scaler and the
        optimizer skip it, as torch's do)."""
        for p, m in zip(self.model_params, self.masters, strict=True):
            m.grad = None if p.grad is None else tensor(p.grad.data.astype(m.dtype))

    def copy_masters_to_model(self) -> None:
        """Round each updated master into its model parameter's dtype, in place."""
        for p, m in zip(self.model_params, self.masters, strict=True):
            p.data[...] = m.data.astype(p.dtype)

    def zero_grad(self) -> None:
        """Drop the gradients of both copies."""
        for p, m in zip(self.model_params, self.masters, strict=True):
            p.grad = None
            m.grad = None


def lost_update_fraction(ratio: float, dtype, count: int = 4096, seed: int = 0) -> float:
    """Fraction of weights ``w`` (log-uniform magnitudes in [2**-8, 2**8), random
    sign) for which ``w + ratio * |w|`` rounds back to ``w`` in ``dtype`` — the
    update was lost. Near 1 below ``ratio = 2**-(M+2)``, near 0 above ``2**-M``."""
    fmt = get_format(dtype)
    rng = np.random.default_rng(seed)
    w = (2.0 ** rng.uniform(-8, 8, count) * rng.choice([-1.0, 1.0], count))
    w = w.astype(np.float32).astype(fmt.dtype)
    update = (np.abs(w.astype(np.float64)) * ratio).astype(np.float32).astype(fmt.dtype)
    after = (w.astype(np.float32) + update.astype(np.float32)).astype(fmt.dtype)
    return float(np.mean(after == w))


def repeated_update(weight: float, update: float, steps: int, dtype) -> float:
    """``w <- round(w + update)`` ``steps`` times in ``dtype``: the weight a
    plain low-precision optimizer ends with."""
    fmt = get_format(dtype)
    w = np.asarray(weight, np.float32).astype(fmt.dtype)
    u = np.asarray(update, np.float32).astype(fmt.dtype).astype(np.float32)
    for _ in range(steps):
        w = (w.astype(np.float32) + u).astype(fmt.dtype)
    return float(w)
