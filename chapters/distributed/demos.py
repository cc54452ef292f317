"""Rank programs the chapter's notebook runs (importable, so that real
processes can run them too): each returns plain numbers and arrays."""

from __future__ import annotations

import numpy as np

import chapters.autodiff.functional as F
from chapters.autodiff import Tensor, manual_seed, nn, optim

from .cost_model import fit_alpha_beta, measure_p2p
from .ddp import DistributedDataParallel
from .hybrid import mesh_groups
from .tensor_parallel import ParallelMLP
from .transport import Group

P2P_SIZES = (8, 1 << 12, 1 << 16, 1 << 19, 1 << 21)


def regression_data(n: int, features: int, outputs: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, features)).astype(np.float32)
    w = rng.standard_normal((features, outputs)).astype(np.float32)
    return x, np.tanh(x @ w).astype(np.float32)


def mlp(features: int, hidden: int, outputs: int, seed: int = 0,
        hidden_layers: int = 1) -> nn.Sequential:
    """Linear, GELU, then ``hidden_layers - 1`` more (Linear, GELU) pairs, then the
    output Linear: parameters ``0.*``, ``2.*``, ... ``{2 * hidden_layers}.*``."""
    manual_seed(seed)
    layers = [nn.Linear(features, hidden), nn.GELU()]
    for _ in range(hidden_layers - 1):
        layers += [nn.Linear(hidden, hidden), nn.GELU()]
    return nn.Sequential(*layers, nn.Linear(hidden, outputs))


def train_single(model, x, y, steps: int, lr: float = 0.1) -> list[float]:
    """The baseline: one process, the whole batch each step (SGD, MSE)."""
    opt = optim.SGD(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.mse_loss(model(Tensor(x)), Tensor(y))
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def ddp_training(group: Group, x, y, steps: int, hidden: int = 32, bucket_cap_mb=None,
                 lr: float = 0.1, hidden_layers: int = 1):
    """Data parallel: rank ``r`` trains on the ``r``-th slice of each batch.
    Returns its parameters, bucket names, the timing of every bucket and each
    step's ``loss.backward()`` interval (which includes DDP's final wait)."""
    net = mlp(x.shape[1], hidden, y.shape[1], hidden_layers=hidden_layers)
    model = DistributedDataParallel(net, group, bucket_cap_mb=bucket_cap_mb)
    opt = optim.SGD(model.parameters(), lr=lr)
    shard = np.array_split(np.arange(len(x)), group.world_size)[group.rank]
    backward = []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.mse_loss(model(Tensor(x[shard])), Tensor(y[shard]))
        start = group.now()
        loss.backward()
        backward.append((start, group.now()))
        opt.step()
    return {"params": {n: np.array(p.data) for n, p in net.named_parameters()},
            "buckets": [b.names for b in model.buckets], "events": model.events,
            "backward": backward}


def hybrid_training(group: Group, x, y, steps: int, tp: int, hidden: int = 32,
                    lr: float = 0.1):
    """Data x tensor parallel: each row of the mesh splits the MLP over ``tp``
    ranks; each column averages its shard's gradients with DDP. Returns this
    rank's shards (to be reassembled and compared with one process)."""
    tp_group, dp_group = mesh_groups(group, tp)
    full = mlp(x.shape[1], hidden, y.shape[1])
    split = ParallelMLP.from_layers(full[0], nn.GELU(), full[2], tp_group)
    model = DistributedDataParallel(split, dp_group)
    opt = optim.SGD(model.parameters(), lr=lr)
    shard = np.array_split(np.arange(len(x)), dp_group.world_size)[dp_group.rank]
    for _ in range(steps):
        opt.zero_grad()
        F.mse_loss(model(Tensor(x[shard])), Tensor(y[shard])).backward()
        opt.step()
    return {"tp_rank": tp_group.rank, "dp_rank": dp_group.rank,
            "params": {n: np.array(p.data) for n, p in split.named_parameters()}}


def assemble_tensor_parallel(shards: list[dict]) -> dict[str, np.ndarray]:
    """The unsplit MLP's parameters from the tensor-parallel shards of one mesh
    row (``shards[i]`` from tensor-parallel rank ``i``)."""
    ordered = sorted(shards, key=lambda s: s["tp_rank"])
    p = [s["params"] for s in ordered]
    return {"0.weight": np.concatenate([s["fc1.weight"] for s in p], axis=0),
            "0.bias": np.concatenate([s["fc1.bias"] for s in p]),
            "2.weight": np.concatenate([s["fc2.weight"] for s in p], axis=1),
            "2.bias": p[0]["fc2.bias"]}


def link_and_ddp(group: Group, x, y, steps: int, hidden: int = 256, hidden_layers: int = 3,
                 bucket_cap_mb: float = 0.004):
    """The notebook's one real multi-process run: fit alpha and beta from
    ping-pongs, then train a deep MLP with DDP. A 4 KiB cap closes a bucket at
    every weight, so each Linear layer is one bucket and the later layers'
    buckets are all-reduced while backward still computes the earlier ones."""
    group.check_shapes = False
    times = measure_p2p(group, P2P_SIZES, repeats=5)
    alpha, beta = fit_alpha_beta(P2P_SIZES, times)
    out = ddp_training(group, x, y, steps, hidden=hidden, bucket_cap_mb=bucket_cap_mb,
                       hidden_layers=hidden_layers)
    out.update(alpha=alpha, beta=beta, p2p=list(zip(P2P_SIZES, times, strict=True)))
    return out


def tensor_parallel_step(group: Group, batch: int, features: int, hidden: int, seed: int = 3):
    """One forward and backward of the Megatron-split MLP against a random
    cotangent. Returns the output, the input's gradient, this rank's shard
    gradients, the unsplit weights and the inputs (for the one-process check)."""
    group.check_shapes = False
    full = mlp(features, hidden, features, seed)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, features)).astype(np.float32)
    cotangent = rng.standard_normal((batch, features)).astype(np.float32)
    split = ParallelMLP.from_layers(full[0], nn.GELU(), full[2], group)
    xt = Tensor(x, requires_grad=True)
    out = split(xt)
    out.backward(Tensor(cotangent))
    return {"out": np.array(out.data), "x.grad": np.array(xt.grad.data), "x": x,
            "cotangent": cotangent, "tp_rank": group.rank,
            "params": {n: np.array(p.grad.data) for n, p in split.named_parameters()},
            "bytes_sent": group.bytes_sent}
