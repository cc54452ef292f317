"""One rank of the same loop in PyTorch: DDP on gloo, ``torch.autocast`` and
``torch.amp.GradScaler`` on CPU (the current API; ``torch.cuda.amp.*`` is
deprecated and, on a machine without CUDA, silently turns itself off)."""

from __future__ import annotations

from .recipe import LoopConfig, batch_for, torch_model


def sync_gradients(params, world_size: int) -> None:
    """The source loop's ``dist.all_reduce(model.parameters().grad)``, fixed."""
    import torch.distributed as dist

    for p in params:
        if p.grad is not None:
            dist.all_reduce(p.grad, op=dist.ReduceOp.SUM)
            p.grad /= world_size


def train(group, config: LoopConfig, data, device: str = "cpu") -> dict:
    """As :func:`chapters.capstone.engine_loop.train`; ``group`` gives rank and
    world size (the default ``torch.distributed`` group is already initialised)."""
    import torch
    from torch.nn.parallel import DistributedDataParallel

    net = torch_model(config).to(device)
    params = list(net.parameters())
    model = (DistributedDataParallel(net) if config.sync == "ddp" and group.world_size > 1
             else net)
    optimizer = torch.optim.SGD(params, lr=config.lr)
    device_type = device.split(":")[0]
    scaler = torch.amp.GradScaler(device_type, init_scale=config.init_scale,
                                  growth_interval=config.growth_interval, enabled=config.mixed)
    amp_dtype = getattr(torch, config.amp_dtype)
    losses, scales, skipped = [], [], []
    for step in range(config.steps):
        xb, yb = batch_for(config, data, step, group.rank, group.world_size)
        x, y = torch.from_numpy(xb).to(device), torch.from_numpy(yb).to(device)
        scale = scaler.get_scale() if config.mixed else 1.0
        scales.append(scale)
        with torch.autocast(device_type, dtype=amp_dtype, enabled=config.mixed):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        if config.sync == "manual":
            sync_gradients(params, group.world_size)
        if config.clip_norm is not None:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(params, config.clip_norm)
        scaler.step(optimizer)
        if config.sync == "after_step":
            sync_gradients(params, group.world_size)
        scaler.update()
        skipped.append(config.mixed and scaler.get_scale() < scale)
        optimizer.zero_grad()
        losses.append(float(loss.item()))
    return {"loss": losses, "scale": scales, "skipped": skipped,
            "weights": {k: v.detach().cpu().numpy().copy() for k, v in net.state_dict().items()}}
