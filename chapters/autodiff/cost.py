"""Why training uses reverse mode: the measured cost of a full gradient.

For a scalar loss of n inputs, forward mode needs one JVP per input
direction (n passes, one Jacobian column each) while reverse mode gets every
entry from one backward pass. :func:`jvp_vs_vjp_cost` times both on the same
function as n grows and checks that they agree.
"""

from __future__ import annotations

import time

import numpy as np

from .engine import grad
from .forward_mode import jvp
from .tensor import Tensor


def _loss(x: Tensor) -> Tensor:
    """A small scalar function of a vector: sum(tanh(x) * x) / n."""
    return (x.tanh() * x).sum() / x.shape[0]


def gradient_by_jvps(f, x: np.ndarray) -> np.ndarray:
    """The gradient of scalar ``f`` at ``x`` by n JVPs (one per basis vector)."""
    out = np.zeros(x.shape, dtype=x.dtype)
    flat = out.reshape(-1)
    for j in range(x.size):
        e = np.zeros(x.shape, dtype=x.dtype)
        e.reshape(-1)[j] = 1
        flat[j] = jvp(f, (Tensor(x),), (Tensor(e),))[1].item()
    return out


def gradient_by_vjp(f, x: np.ndarray) -> np.ndarray:
    """The gradient of scalar ``f`` at ``x`` by one reverse pass."""
    leaf = Tensor(x, requires_grad=True)
    return grad(f(leaf), leaf)[0].data


def jvp_vs_vjp_cost(sizes=(1, 4, 16, 64, 256), repeats: int = 3, f=_loss, seed: int = 0):
    """For each n in ``sizes``: seconds for the full gradient by n JVPs and by
    one VJP (best of ``repeats``), their ratio, and the largest difference
    between the two gradients. Returns a list of dicts, one per n."""
    rng = np.random.default_rng(seed)
    rows = []
    for n in sizes:
        x = rng.standard_normal(n)
        timings = {}
        results = {}
        for name, method in (("jvp", gradient_by_jvps), ("vjp", gradient_by_vjp)):
            best = float("inf")
            for _ in range(repeats):
                start = time.perf_counter()
                results[name] = method(f, x)
                best = min(best, time.perf_counter() - start)
            timings[name] = best
        rows.append({"n": int(n), "jvp_seconds": timings["jvp"], "vjp_seconds": timings["vjp"],
                     "ratio": timings["jvp"] / timings["vjp"],
                     "max_difference": float(np.max(np.abs(results["jvp"] - results["vjp"])))})
    return rows
