"""The source text's four pitfalls (3.6, 常见误区), each as a measurement.

1. :func:`half_precision_runs` — "mixed precision is half precision": train with
   float16 weights and no float32 masters, and count the updates float16 rounds away.
2. :func:`graph_lifetime` — a graph kept alive by a loop (inference without
   ``no_grad``): the bytes held by saved tensors, iteration by iteration.
3. :func:`scaling_curve` — data parallelism past the point where the gradient
   all-reduce costs more than the (shrinking) compute per rank.
4. :func:`engine_fallback` — a custom op without a low-precision kernel under the
   engine's autocast runs in float32 and warns (the engine's teaching aid; torch's
   real behaviour is in :mod:`.torch_custom_op`).
"""

from __future__ import annotations

import logging
import time
import warnings

import numpy as np

from .recipe import LoopConfig, batch_for, engine_model

# ---------------------------------------------------------------- 1. masters

HALF_MODES = ("float32", "float16 weights, no masters", "float16 + float32 masters")


def half_precision_runs(data, steps: int = 120, lr: float = 1e-4, hidden: int = 32,
                        batch_size: int = 64, optimizer: str = "Adam", seed: int = 0) -> dict:
    """Train the capstone model three ways (see ``HALF_MODES``), one process.

    Returns ``{mode: {"loss": [...], "lost": [...]}}``; ``lost`` is, per step, the
    fraction of weight elements with a non-zero gradient whose value did not change
    (the update was below half the spacing of the weight's format at that weight)."""
    config = LoopConfig(steps=steps, batch_size=batch_size, hidden=hidden, lr=lr, seed=seed)
    # float16 Adam divides by sqrt(v) + eps with both rounded to 0: the inf/NaN that
    # follows is what is being measured, so numpy's warnings about it are muted.
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return {mode: _train_low_precision(config, data, mode, optimizer) for mode in HALF_MODES}


def _train_low_precision(config: LoopConfig, data, mode: str, optimizer: str) -> dict:
    import chapters.autodiff.functional as F
    from chapters.amp.master import MasterWeights
    from chapters.amp.scaler import GradScaler
    from chapters.autodiff import optim, tensor

    model = engine_model(config)
    if mode != "float32":
        model.half()
    params = list(model.parameters())
    masters = MasterWeights(params) if mode == HALF_MODES[2] else None
    updated = masters.parameters() if masters else params
    opt = getattr(optim, optimizer)(updated, lr=config.lr)
    scaler = GradScaler("cpu", init_scale=2.0**10, enabled=masters is not None)
    losses, lost = [], []
    for step in range(config.steps):
        xb, yb = batch_for(config, data, step, 0, 1)
        loss = F.cross_entropy(model(tensor(xb.astype(params[0].dtype))), tensor(yb))
        scaler.scale(loss).backward()
        if masters is not None:
            masters.copy_grads_to_masters()
        before = [p.data.copy() for p in updated]
        pushed = [p.grad is not None and p.grad.data != 0 for p in updated]
        if masters is not None:
            scaler.step(opt)                  # unscale in float32, step the masters
            masters.copy_masters_to_model()   # round them into the float16 model
            scaler.update()
            masters.zero_grad()
        else:
            opt.step()
        stuck = sum(int(np.count_nonzero((p.data == b) & g))
                    for p, b, g in zip(updated, before, pushed, strict=True))
        lost.append(stuck / max(1, sum(int(np.count_nonzero(g)) for g in pushed)))
        opt.zero_grad()
        model.zero_grad()
        losses.append(float(loss.item()))
    return {"loss": losses, "lost": lost}


# ---------------------------------------------------------- 2. graph lifetime

LIFETIME_MODES = ("eval, no no_grad, total = total + loss", "eval under no_grad",
                  "train: backward, then total += loss.item()")


def graph_lifetime(data, iterations: int = 30, hidden: int = 32, batch_size: int = 64,
                   seed: int = 0) -> dict:
    """``{mode: [bytes held by saved tensors after each iteration]}`` for three loops,
    counted from what was held when the call began (graphs alive elsewhere in the
    process, such as an earlier cell's un-backpropagated loss, are not the loop's)."""
    import chapters.autodiff.functional as F
    from chapters.autodiff import no_grad, saved_tensor_bytes, tensor

    config = LoopConfig(batch_size=batch_size, hidden=hidden, seed=seed)
    model = engine_model(config)
    already_held = saved_tensor_bytes()
    out = {}
    for mode in LIFETIME_MODES:
        held, total = [], 0.0
        for step in range(iterations):
            xb, yb = batch_for(config, data, step, 0, 1)
            if mode.startswith("eval under"):
                with no_grad():
                    total = total + F.cross_entropy(model(tensor(xb)), tensor(yb))
            elif mode.startswith("eval"):
                total = total + F.cross_entropy(model(tensor(xb)), tensor(yb))
            else:
                loss = F.cross_entropy(model(tensor(xb)), tensor(yb))
                loss.backward()
                model.zero_grad()
                total += loss.item()
            held.append(saved_tensor_bytes() - already_held)
        out[mode] = held
        del total
    return out


# ------------------------------------------------------------ 3. scaling


def scaling_curve(step_seconds: float, grad_bytes: float, alpha: float, beta: float,
                  ranks) -> dict:
    """Strong scaling of data parallelism under the alpha-beta model.

    A global batch takes ``step_seconds`` of compute on one process. On ``p``
    ranks each computes ``step_seconds / p`` and then all-reduces ``grad_bytes``
    with the ring algorithm: ``2 (p-1) (alpha + grad_bytes / p * beta)``
    (no overlap with backward: the worst case). Efficiency is
    ``speed-up / p = step_seconds / (p (compute + comm))``."""
    from chapters.distributed.cost_model import predict

    p = np.asarray(list(ranks), dtype=np.int64)
    compute = step_seconds / p
    comm = np.array([predict("ring", int(k), grad_bytes, alpha, beta) for k in p])
    efficiency = step_seconds / (p * (compute + comm))
    crossing = p[comm >= compute]
    return {"ranks": p, "compute": compute, "comm": comm, "efficiency": efficiency,
            "speedup": efficiency * p,
            "comm_exceeds_compute_at": int(crossing[0]) if crossing.size else None}


def engine_step_seconds(data, hidden: int, batch_size: int, repeats: int = 5,
                        seed: int = 0) -> tuple[float, int]:
    """Best-of-``repeats`` seconds of one engine forward+backward at ``batch_size``,
    and the gradient bytes (float32) an all-reduce would carry."""
    import chapters.autodiff.functional as F
    from chapters.autodiff import tensor

    config = LoopConfig(batch_size=batch_size, hidden=hidden, seed=seed)
    model = engine_model(config)
    xb, yb = batch_for(config, data, 0, 0, 1)
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        F.cross_entropy(model(tensor(xb)), tensor(yb)).backward()
        best = min(best, time.perf_counter() - start)
        model.zero_grad()
    return float(best), int(sum(p.data.size for p in model.parameters()) * 4)


# -------------------------------------------------- 4. low-precision fallback

CUSTOM_OP = "capstone_swish"


def swish(x):
    """A "custom op": ``x * sigmoid(x)``, exposed to autocast as ``capstone_swish``."""
    return x * x.sigmoid()


def engine_fallback(data, hidden: int = 128, batch_size: int = 128, seed: int = 0) -> dict:
    """One forward+backward of ``Linear -> swish -> Linear`` under the engine's
    float16 autocast when the custom op (a) has a float16 kernel, (b) has only a
    float32 one, and (c) without autocast: the dtype swish's output had, which ops
    fell back to float32 and the warnings raised.

    Case (b) is this engine's teaching aid, not torch's behaviour: the engine lets
    an op declare its kernel's dtypes and then runs it in float32 with a warning;
    torch has no such declaration for autocast and passes the op whatever dtype
    reaches it (:mod:`chapters.capstone.torch_custom_op`)."""
    import chapters.autodiff.functional as F
    from chapters.amp.autocast import LOWER, autocast, register_op_policy, unregister_op_policy
    from chapters.autodiff import dispatch, nn, tensor

    custom = dispatch.public(CUSTOM_OP)(swish)
    config = LoopConfig(batch_size=batch_size, hidden=hidden, seed=seed)
    first, second = nn.Linear(64, hidden), nn.Linear(hidden, 10)
    xb, yb = batch_for(config, data, 0, 0, 1)
    cases = {"float16 kernel": ("float16", "float32"), "float32-only kernel": ("float32",),
             "no autocast (float32)": None}
    out = {}
    log = logging.getLogger("chapters.amp.autocast")
    level = log.level
    log.setLevel(logging.ERROR)      # the warning is captured and returned instead
    try:
        for label, kernels in cases.items():
            if kernels is not None:
                register_op_policy(CUSTOM_OP, LOWER, kernel_dtypes=kernels)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                with autocast("cpu", dtype="float16", enabled=kernels is not None) as ac:
                    hidden_out = custom(first(tensor(xb)))
                    loss = F.cross_entropy(second(hidden_out), tensor(yb))
                loss.backward()
            out[label] = {"fallbacks": list(ac.fallbacks), "dtype": str(hidden_out.dtype),
                          "warnings": sorted({str(w.message) for w in caught})}
    finally:
        unregister_op_policy(CUSTOM_OP)
        log.setLevel(level)
    return out
