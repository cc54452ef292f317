"""Rank programs for the parallel-training tests (engine modules). Each returns
plain numpy results; the test process builds the single-process baselines
(engine and torch) and compares, so a rank program never checks itself."""

from __future__ import annotations

import numpy as np
import torch

import chapters.autodiff.functional as F
from chapters.autodiff import Tensor, manual_seed, nn, optim
from chapters.distributed.ddp import DistributedDataParallel
from chapters.distributed.pipeline import run_pipeline, split_sequential
from chapters.distributed.tensor_parallel import ParallelMLP
from chapters.distributed.zero import ZeroAdam

IN, HIDDEN, OUT = 8, 16, 3
TP_HIDDEN = 24       # splits evenly over 2, 3 and 4 ranks


def make_net(seed: int) -> nn.Sequential:
    manual_seed(seed)
    return nn.Sequential(nn.Linear(IN, HIDDEN), nn.Tanh(), nn.Linear(HIDDEN, HIDDEN), nn.ReLU(),
                         nn.Linear(HIDDEN, OUT))


def torch_net(engine_net: nn.Sequential) -> torch.nn.Sequential:
    net = torch.nn.Sequential(torch.nn.Linear(IN, HIDDEN), torch.nn.Tanh(),
                              torch.nn.Linear(HIDDEN, HIDDEN), torch.nn.ReLU(),
                              torch.nn.Linear(HIDDEN, OUT))
    with torch.no_grad():
        for (_, theirs), (_, ours) in zip(net.named_parameters(), engine_net.named_parameters(),
                                          strict=True):
            theirs.copy_(torch.from_numpy(np.array(ours.data)))
    return net


def data(n: int, seed: int = 7):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((n, IN)).astype(np.float32),
            rng.standard_normal((n, OUT)).astype(np.float32))


def params(net) -> dict[str, np.ndarray]:
    return {name: np.array(p.data) for name, p in net.named_parameters()}


# ---------------------------------------------------------------- data parallel

def ddp_training(group, steps: int, batch: int, bucket_cap_mb: float, accumulate: int = 1):
    """``steps`` SGD steps of our DDP and of torch's DDP on the same shards.

    Each rank starts from a *different* initialisation (seed + rank): DDP's
    broadcast must make them equal. With ``accumulate > 1`` each step runs
    ``accumulate`` micro-batches, all but the last under ``no_sync()``."""
    r, p = group.rank, group.world_size
    net = make_net(100 + r)
    model = DistributedDataParallel(net, group, bucket_cap_mb=bucket_cap_mb)
    start = params(net)
    opt = optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    reference = torch_net(net)
    theirs = torch.nn.parallel.DistributedDataParallel(reference)
    topt = torch.optim.SGD(theirs.parameters(), lr=0.05, momentum=0.9)
    x, y = data(p * batch * accumulate * steps)
    per_step = p * batch * accumulate
    for step in range(steps):
        opt.zero_grad()
        topt.zero_grad()
        for a in range(accumulate):
            lo = step * per_step + (a * p + r) * batch
            xs, ys = x[lo:lo + batch], y[lo:lo + batch]
            last = a == accumulate - 1
            ctx, tctx = (_null(), _null()) if last else (model.no_sync(), theirs.no_sync())
            with ctx:
                (F.mse_loss(model(Tensor(xs)), Tensor(ys)) * (1.0 / accumulate)).backward()
            with tctx:
                (torch.nn.functional.mse_loss(theirs(torch.from_numpy(xs)),
                                              torch.from_numpy(ys)) / accumulate).backward()
        opt.step()
        topt.step()
    return {"start": start, "ours": params(net),
            "torch": {n: t.detach().numpy().copy() for n, t in reference.named_parameters()},
            "buckets": [b.names for b in model.buckets]}


class _null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def single_process_training(start: dict, steps: int, global_batch: int, accumulate: int = 1):
    """The baseline: one process, the whole batch of every step at once."""
    net = make_net(0)
    net.load_state_dict({k: Tensor(v) for k, v in start.items()})
    opt = optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    per_step = global_batch * accumulate
    x, y = data(per_step * steps)
    for step in range(steps):
        opt.zero_grad()
        xs, ys = x[step * per_step:(step + 1) * per_step], y[step * per_step:(step + 1) * per_step]
        F.mse_loss(net(Tensor(xs)), Tensor(ys)).backward()
        opt.step()
    return params(net)


# ---------------------------------------------------------------- tensor parallel

def tensor_parallel_mlp(group, seed: int = 3):
    manual_seed(seed)
    fc1, fc2 = nn.Linear(IN, TP_HIDDEN), nn.Linear(TP_HIDDEN, IN)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((5, IN)).astype(np.float32)
    cotangent = rng.standard_normal((5, IN)).astype(np.float32)
    mlp = ParallelMLP.from_layers(fc1, nn.GELU(), fc2, group)
    xt = Tensor(x, requires_grad=True)
    out = mlp(xt)
    out.backward(Tensor(cotangent))
    return {"out": np.array(out.data), "x.grad": np.array(xt.grad.data),
            **{f"grad {n}": np.array(p.grad.data) for n, p in mlp.named_parameters()},
            "full": {n: np.array(p.data) for n, p in (("fc1.weight", fc1.weight),
                                                      ("fc1.bias", fc1.bias),
                                                      ("fc2.weight", fc2.weight),
                                                      ("fc2.bias", fc2.bias))},
            "x": x, "cotangent": cotangent}


# ---------------------------------------------------------------- pipeline

def deep_net(seed: int = 11, depth: int = 4) -> nn.Sequential:
    manual_seed(seed)
    layers = []
    for _ in range(depth):
        layers += [nn.Linear(IN, IN), nn.Tanh()]
    return nn.Sequential(*layers)


def pipeline_step(group, schedule: str, micro_batches: int, batch: int = 12,
                  modelled_cost=None):
    full = deep_net()
    stage = split_sequential(full, group.world_size)[group.rank]
    x, _ = data(batch, seed=5)
    target = np.random.default_rng(6).standard_normal((batch, IN)).astype(np.float32)
    xs, ts = np.array_split(x, micro_batches), np.array_split(target, micro_batches)
    last = group.rank == group.world_size - 1
    result = run_pipeline(stage, group, schedule, micro_batches,
                          inputs=xs if group.rank == 0 else None,
                          targets=ts if last else None, loss_fn=F.mse_loss if last else None,
                          modelled_cost=modelled_cost)
    names = [n for n, _ in full.named_parameters()]
    ids = {id(p): n for n, p in zip(names, full.parameters(), strict=True)}
    grads = {ids[id(p)]: np.array(p.grad.data) for p in stage.parameters()}
    return {"grads": grads, "losses": result.losses, "peak": result.peak_in_flight,
            "intervals": result.intervals, "x": x, "target": target}


# ---------------------------------------------------------------- ZeRO

def zero_training(group, stage: int, steps: int = 3, batch: int = 4, half: bool = False):
    r, p = group.rank, group.world_size
    net = make_net(200 + r)
    if half:
        net = net.half()
    zero = ZeroAdam(net, group, stage, lr=1e-2)
    start = zero.full_parameters()
    x, y = data(p * batch * steps)
    if half:
        x, y = x.astype(np.float16), y.astype(np.float16)
    for step in range(steps):
        lo = (step * p + r) * batch
        zero.zero_grad()
        F.mse_loss(zero(Tensor(x[lo:lo + batch])), Tensor(y[lo:lo + batch])).backward()
        zero.step()
    return {"start": start, "params": zero.full_parameters(), "bytes": zero.bytes_per_rank(),
            "numel": zero.numel}


def engine_suite(group):
    """Everything that needs real processes, in one launch."""
    out = {"ddp": ddp_training(group, steps=3, batch=4, bucket_cap_mb=0.001),
           "ddp_accumulate": ddp_training(group, steps=2, batch=3, bucket_cap_mb=25.0,
                                          accumulate=2)}
    out["tp"] = tensor_parallel_mlp(group)
    out["zero"] = {s: zero_training(group, s) for s in (0, 1, 2, 3)}
    out["pipeline"] = {s: pipeline_step(group, s, micro_batches=4) for s in ("gpipe", "1f1b")}
    return out
