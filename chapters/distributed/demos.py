"""The experiments of chapter 3's notebook, so that its cells stay one idea each.

Rank programs (``group`` first) are importable, so that real processes can run
them too, and return plain numbers and arrays; the other functions run a
program on a simulated world, or compare its results with one process."""

from __future__ import annotations

import time

import numpy as np

import chapters.autodiff.functional as F
from chapters.autodiff import Tensor, manual_seed, nn, optim

from .collectives import all_reduce
from .cost_model import fit_alpha_beta, measure_p2p
from .ddp import DistributedDataParallel
from .hybrid import mesh_groups
from .pipeline import bubble_fraction, run_pipeline, split_sequential
from .sim import run_simulated
from .tensor_parallel import ParallelMLP
from .transport import Group
from .zero import ZeroAdam

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


def _shard(group: Group, rows: int) -> np.ndarray:
    """The rows of a batch this rank trains on: the ``rank``-th of equal slices."""
    return np.array_split(np.arange(rows), group.world_size)[group.rank]


def ddp_training(group: Group, x, y, steps: int, hidden: int = 32, bucket_cap_mb=None,
                 lr: float = 0.1, hidden_layers: int = 1):
    """Data parallel: rank ``r`` trains on the ``r``-th slice of each batch.
    Returns its parameters, bucket names, the timing of every bucket, each
    step's ``loss.backward()`` interval (which includes DDP's final wait) and
    the CPU seconds the calling thread spent in it (``backward_cpu``)."""
    net = mlp(x.shape[1], hidden, y.shape[1], hidden_layers=hidden_layers)
    model = DistributedDataParallel(net, group, bucket_cap_mb=bucket_cap_mb)
    opt = optim.SGD(model.parameters(), lr=lr)
    shard = _shard(group, len(x))
    backward, backward_cpu = [], []
    for _ in range(steps):
        opt.zero_grad()
        loss = F.mse_loss(model(Tensor(x[shard])), Tensor(y[shard]))
        start, cpu = group.now(), time.thread_time()
        loss.backward()
        backward.append((start, group.now()))
        backward_cpu.append(time.thread_time() - cpu)
        opt.step()
    return {"params": {n: np.array(p.data) for n, p in net.named_parameters()},
            "buckets": [b.names for b in model.buckets], "events": model.events,
            "backward": backward, "backward_cpu": backward_cpu}


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
    shard = _shard(dp_group, len(x))
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
    buckets are all-reduced while backward still computes the earlier ones.
    ``plain_backward``: (wall, CPU) seconds of each step's backward of the same
    MLP without DDP, on the same ranks, for comparison."""
    group.check_shapes = False
    times = measure_p2p(group, P2P_SIZES, repeats=5)
    alpha, beta = fit_alpha_beta(P2P_SIZES, times)
    out = ddp_training(group, x, y, steps, hidden=hidden, bucket_cap_mb=bucket_cap_mb,
                       hidden_layers=hidden_layers)
    net = mlp(x.shape[1], hidden, y.shape[1], hidden_layers=hidden_layers)
    shard = _shard(group, len(x))
    plain = []
    for _ in range(steps):
        loss = F.mse_loss(net(Tensor(x[shard])), Tensor(y[shard]))
        start, cpu = group.now(), time.thread_time()
        loss.backward()
        plain.append((group.now() - start, time.thread_time() - cpu))
    out.update(alpha=alpha, beta=beta, p2p=list(zip(P2P_SIZES, times, strict=True)),
               plain_backward=plain)
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


def ring_traffic(p: int, floats: int, alpha: float, beta: float) -> dict:
    """All-reduce ``floats`` float32 ones over ``p`` simulated ranks with the ring
    and with the naive algorithm: the ring's bytes sent by each rank and its
    modelled time, and the bytes the naive algorithm's root (rank 0) sends."""
    def program(group: Group, algorithm: str):
        group.check_shapes = False      # count only the algorithm's own messages
        all_reduce(group, np.ones(floats, np.float32), algorithm=algorithm)

    _, ring = run_simulated(program, p, "ring", alpha=alpha, beta=beta)
    _, naive = run_simulated(program, p, "naive", alpha=alpha, beta=beta)
    return {"sent": ring.bytes_sent_per_rank(), "makespan": ring.makespan(),
            "naive_root": naive.bytes_sent_per_rank()[0]}


def max_difference(got: dict, expected: dict) -> float:
    """The largest absolute difference between same-named arrays of two dicts."""
    return max(float(np.abs(np.asarray(got[k]) - np.asarray(expected[k])).max())
               for k in expected)


def tensor_parallel_vs_unsplit(runs: list[dict], features: int, hidden: int,
                               seed: int = 3) -> float:
    """Largest difference between the split MLP's outputs and gradients (from
    :func:`tensor_parallel_step` on every rank) and the unsplit MLP's, run once
    in this process on the same input and cotangent."""
    unsplit = mlp(features, hidden, features, seed)
    x = Tensor(runs[0]["x"], requires_grad=True)
    out = unsplit(x)
    out.backward(Tensor(runs[0]["cotangent"]))
    grads = {k: p.grad.data for k, p in unsplit.named_parameters()}
    errors = [float(np.abs(r["out"] - out.data).max()) for r in runs]
    errors.append(float(np.abs(runs[0]["x.grad"] - x.grad.data).max()))
    return max([*errors, max_difference(assemble_tensor_parallel(runs), grads)])


def pipeline_program(group: Group, schedule: str, m: int, modelled: bool = True):
    """One step of a pipeline of ``world_size`` stages, each ``Linear(8, 8), Tanh``,
    on ``m`` micro-batches of 4 examples. With ``modelled`` a forward costs 1 ms
    and a backward 2 ms of model clock (equal stages); otherwise the stages'
    real compute times are charged."""
    manual_seed(11)
    layers = []
    for _ in range(group.world_size):
        layers += [nn.Linear(8, 8), nn.Tanh()]
    stage = split_sequential(nn.Sequential(*layers), group.world_size)[group.rank]
    rng = np.random.default_rng(0)
    xs = np.array_split(rng.standard_normal((4 * m, 8)).astype(np.float32), m)
    ts = np.array_split(rng.standard_normal((4 * m, 8)).astype(np.float32), m)
    first, last = group.rank == 0, group.rank == group.world_size - 1
    return run_pipeline(stage, group, schedule, m, inputs=xs if first else None,
                        targets=ts if last else None, loss_fn=F.mse_loss if last else None,
                        modelled_cost={"F": 1e-3, "B": 2e-3} if modelled else None)


def measured_bubbles(p: int, micro_batches: list[int]) -> tuple[list[float], list[float]]:
    """1F1B on ``p`` stages with their real compute times, for each ``m`` in
    ``micro_batches``: the bubble fraction of each run, and each stage's mean
    compute per micro-batch (ms, forward + backward) in the last run."""
    bubbles, stage_ms = [], []
    for m in micro_batches:
        runs, _ = run_simulated(pipeline_program, p, "1f1b", m, False, alpha=0, beta=0)
        intervals = [iv for r in runs for iv in r.intervals]
        bubbles.append(bubble_fraction(intervals, p))
        stage_ms = [1e3 * sum(iv.end - iv.start for iv in intervals if iv.stage == s) / m
                    for s in range(p)]
    return bubbles, stage_ms


def zero_training(group: Group, stage: int, steps: int):
    """Train a small fp16 MLP with :class:`ZeroAdam` at ``stage``, 8 examples per
    rank. Returns the bytes this rank holds by kind, the number of parameters,
    and the full parameter vector after training."""
    manual_seed(1)
    net = nn.Sequential(nn.Linear(32, 64), nn.Tanh(), nn.Linear(64, 8)).half()
    zero = ZeroAdam(net, group, stage, lr=1e-2)
    x, y = regression_data(8 * group.world_size, 32, 8)
    shard = slice(8 * group.rank, 8 * (group.rank + 1))
    x16, y16 = Tensor(x[shard].astype(np.float16)), Tensor(y[shard].astype(np.float16))
    for _ in range(steps):
        zero.zero_grad()
        F.mse_loss(zero(x16), y16).backward()
        zero.step()
    return zero.bytes_per_rank(), zero.numel, zero.full_parameters()


def compressed_training(group: Group, hook=None, state=None, steps: int = 40):
    """Two-rank DDP linear regression on 200 features, five of them 20 times
    larger than the rest, with an optional comm hook. Returns the last loss
    and the bytes this rank sent."""
    group.check_shapes = False
    manual_seed(0)
    rng = np.random.default_rng(0)
    w = rng.standard_normal(200).astype(np.float32) * 0.3
    w[:5] *= 20
    x = rng.standard_normal((256, 200)).astype(np.float32)
    y = (x @ w)[:, None]
    model = DistributedDataParallel(nn.Linear(200, 1, bias=False), group)
    if hook is not None:
        model.register_comm_hook(state, hook)
    group.bytes_sent = 0
    opt = optim.SGD(model.parameters(), lr=0.05)
    shard = slice(128 * group.rank, 128 * (group.rank + 1))
    for _ in range(steps):
        opt.zero_grad()
        loss = F.mse_loss(model(Tensor(x[shard])), Tensor(y[shard]))
        loss.backward()
        opt.step()
    return loss.item(), group.bytes_sent
