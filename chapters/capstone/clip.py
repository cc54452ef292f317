"""``clip_grad_norm_`` for engine parameters, as ``torch.nn.utils.clip_grad_norm_``.

With ``g`` all gradients stacked into one vector, ``total = ||g||_2`` and, if
``total > max_norm``, every gradient is multiplied by ``max_norm / (total + 1e-6)``.
Under a :class:`~chapters.amp.scaler.GradScaler` the gradients must be
*unscaled* first (``scaler.unscale_(optimizer)``), or ``max_norm`` would be
compared with ``S * ||g||``; and in data-parallel training they must be
*synchronised* first, so every rank clips the same global gradient.
"""

from __future__ import annotations

import numpy as np


def clip_grad_norm_(parameters, max_norm: float) -> float:
    """Scale the ``.grad`` of ``parameters`` in place so their joint 2-norm is at most
    ``max_norm``; return the norm before clipping (inf/NaN if a gradient holds one)."""
    grads = [p.grad.data for p in parameters if p.grad is not None]
    if not grads:
        return 0.0
    total = float(np.sqrt(sum(np.sum(np.square(g.astype(np.float32))) for g in grads)))
    coef = max_norm / (total + 1e-6)
    if coef < 1.0:
        for g in grads:
            g *= np.asarray(coef, dtype=np.float32).astype(g.dtype)
    return total
