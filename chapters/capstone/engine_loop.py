"""One rank of the full training loop on the course's engines.

The loop, in the order the source text (3.5) intends — with its two bugs fixed::

    with autocast("cpu", dtype=float16):        # ch. 4: ops pick their precision
        loss = F.cross_entropy(model(x), y)     # ch. 1/2: the forward builds the graph
    scaler.scale(loss).backward()               # ch. 2 + 4: backward on S * loss
                                                # ch. 3: DDP all-reduces (AVG) each
                                                #        bucket of grads during backward
    scaler.unscale_(optimizer)                  # only needed to clip: grads / S
    clip_grad_norm_(params, max_norm)           # on the synchronised, unscaled grads
    scaler.step(optimizer)                      # skipped if any grad is inf/NaN
    scaler.update()                             # grow or back off S
    optimizer.zero_grad()

The parameters stay float32 — autocast casts op *inputs*, so the float32
parameters are the master weights (FP32 主权重) and the optimizer updates them.
"""

from __future__ import annotations

import numpy as np

from .clip import clip_grad_norm_
from .recipe import LoopConfig, batch_for, engine_model


def sync_gradients(group, params) -> None:
    """The source loop's step 3, written correctly: ``model.parameters()`` is a
    generator (it has no ``.grad``), so each parameter's gradient is all-reduced
    on its own, and the sum is divided by the world size to give the mean."""
    from chapters.distributed import ReduceOp, all_reduce

    for p in params:
        if p.grad is not None:
            grad = np.ascontiguousarray(p.grad.data)
            all_reduce(group, grad, ReduceOp.SUM)
            p.grad.data[...] = grad / group.world_size


def train(group, config: LoopConfig, data) -> dict:
    """Run ``config.steps`` steps on this rank; return its local losses, the loss
    scale before each step, which steps the scaler skipped, and the final weights."""
    import chapters.autodiff.functional as F
    from chapters.amp.autocast import autocast
    from chapters.amp.scaler import GradScaler
    from chapters.autodiff import optim, tensor
    from chapters.distributed.ddp import DistributedDataParallel

    net = engine_model(config)
    params = list(net.parameters())
    model = (DistributedDataParallel(net, group) if config.sync == "ddp" and group.world_size > 1
             else net)
    optimizer = optim.SGD(params, lr=config.lr)
    scaler = GradScaler("cpu", init_scale=config.init_scale,
                        growth_interval=config.growth_interval, enabled=config.mixed)
    losses, scales, skipped = [], [], []
    for step in range(config.steps):
        xb, yb = batch_for(config, data, step, group.rank, group.world_size)
        scales.append(scaler.get_scale())
        with autocast("cpu", dtype=config.amp_dtype if config.mixed else None,
                      enabled=config.mixed):
            loss = F.cross_entropy(model(tensor(xb)), tensor(yb))
        scaler.scale(loss).backward()
        if config.sync == "manual":
            sync_gradients(group, params)
        if config.clip_norm is not None:
            scaler.unscale_(optimizer)
            clip_grad_norm_(params, config.clip_norm)
        scaler.step(optimizer)
        skipped.append(bool(scaler.found_inf(optimizer)) if config.mixed else False)
        if config.sync == "after_step":
            sync_gradients(group, params)       # too late: the step already used local grads
        scaler.update()
        optimizer.zero_grad()
        losses.append(float(loss.item()))
    return {"loss": losses, "scale": scales, "skipped": skipped,
            "weights": {k: v.numpy().copy() for k, v in net.state_dict().items()}}
