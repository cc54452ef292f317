"""Our collectives and DDP against torch.distributed, measured in one run on this machine.

1. **Ring all-reduce throughput**: our ring (reduce-scatter + all-gather over the
   torch.distributed point-to-point transport, numpy reductions) against
   ``torch.distributed.all_reduce`` on gloo, 4 ranks, float32 buffers from 1 KB
   to 64 MB. Prints the time of each and the throughput ratio ours/gloo
   (1.0 = as fast; the goal is >= 0.7 at 16 MB and above).
2. **Cost model**: alpha and beta fitted from ping-pongs between two ranks,
   then the alpha-beta prediction of our ring, naive and recursive-doubling
   all-reduce against their measured times.
3. **DDP buckets**: one training step (forward, backward with the gradient
   all-reduce, SGD) of a 24-layer MLP on 2 ranks with 25 MB buckets against one
   all-reduce per parameter (``bucket_cap_mb=0``). Prints the ratio per-parameter
   / bucketed (> 1: bucketing wins).

All ranks share this machine's cores, so absolute times mean little; the
ratios compare two implementations under the same conditions, interleaved.

    python bench/distributed_bench.py [--ranks 4] [--max-mb 64] [--repeats 5]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from chapters.distributed import ReduceOp, all_reduce, barrier
from chapters.distributed.cost_model import (
    fit_alpha_beta,
    measure_collective,
    measure_p2p,
    predict,
)
from chapters.distributed.launcher import launch


def ring_vs_gloo(group, sizes, repeats):
    import torch
    import torch.distributed as dist

    group.check_shapes = False     # gloo checks nothing either; a fair comparison
    rows = []
    for nbytes in sizes:
        x = np.random.default_rng(group.rank).standard_normal(nbytes // 4).astype(np.float32)
        t = torch.from_numpy(x.copy())
        ours = theirs = float("inf")
        for _ in range(repeats):   # interleave so that load changes hit both alike
            ours = min(ours, measure_collective(group, lambda x=x: all_reduce(group, x.copy()),
                                                repeats=1))
            theirs = min(theirs, measure_collective(group, lambda t=t: dist.all_reduce(t.clone()),
                                                    repeats=1))
        rows.append((nbytes, ours, theirs))
    return rows


def cost_model_check(group, sizes, repeats):
    group.check_shapes = False
    p2p_sizes = [8, 1 << 12, 1 << 16, 1 << 20, 1 << 22]
    alpha, beta = fit_alpha_beta(p2p_sizes, measure_p2p(group, p2p_sizes, repeats))
    rows = []
    for nbytes in sizes:
        x = np.ones(nbytes // 4, np.float32)
        for algorithm in ("ring", "naive", "recursive_doubling"):
            def run(a=algorithm, x=x):
                all_reduce(group, x.copy(), algorithm=a)

            measured = measure_collective(group, run, repeats)
            rows.append((nbytes, algorithm, measured,
                         predict(algorithm, group.world_size, nbytes, alpha, beta)))
    return alpha, beta, rows


def ddp_buckets(group, steps, width=128, depth=24):
    import chapters.autodiff.functional as F
    from chapters.autodiff import Tensor, manual_seed, nn, optim
    from chapters.distributed.ddp import DistributedDataParallel

    group.check_shapes = False
    x = np.random.default_rng(group.rank).standard_normal((32, width)).astype(np.float32)
    times = {}
    models = {}
    for name, cap in (("bucketed (25 MB)", 25.0), ("per-parameter", 0.0)):
        manual_seed(0)
        net = nn.Sequential(*[nn.Linear(width, width) for _ in range(depth)])
        models[name] = DistributedDataParallel(net, group, bucket_cap_mb=cap)
        times[name] = []
    for _ in range(steps):
        for name, model in models.items():
            opt = optim.SGD(model.parameters(), lr=1e-3)
            barrier(group)
            start = time.perf_counter()
            opt.zero_grad()
            F.mse_loss(model(Tensor(x)), Tensor(np.zeros_like(x))).backward()
            opt.step()
            elapsed = np.array([time.perf_counter() - start])
            all_reduce(group, elapsed, ReduceOp.MAX)
            times[name].append(float(elapsed[0]))
    n_buckets = {name: len(m.buckets) for name, m in models.items()}
    return {name: float(np.median(t)) for name, t in times.items()}, n_buckets


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=4)
    parser.add_argument("--max-mb", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--ddp-steps", type=int, default=8)
    args = parser.parse_args()
    sizes = [1024 * 4 ** k for k in range(20) if 1024 * 4 ** k <= args.max_mb * 2**20]

    print(f"1. Ring all-reduce, ours vs gloo, {args.ranks} ranks (float32, best of "
          f"{args.repeats})")
    print(f"{'bytes':>10} {'ours ms':>10} {'gloo ms':>10} {'ours GB/s':>10} {'ratio':>7}")
    rows = launch(ring_vs_gloo, args.ranks, sizes, args.repeats, timeout=1200)[0]
    p = args.ranks
    for nbytes, ours, theirs in rows:
        bus = 2 * (p - 1) / p * nbytes / ours / 1e9   # "bus bandwidth", as nccl-tests report it
        print(f"{nbytes:>10} {ours * 1e3:>10.3f} {theirs * 1e3:>10.3f} {bus:>10.3f} "
              f"{theirs / ours:>6.2f}x")
    big = [theirs / ours for nbytes, ours, theirs in rows if nbytes >= 16 * 2**20]
    if big:
        print(f"   throughput ratio at >= 16 MB: min {min(big):.2f}x (goal >= 0.70x)")

    print(f"\n2. Alpha-beta model, {args.ranks} ranks")
    alpha, beta, rows = launch(cost_model_check, args.ranks,
                               [s for s in sizes if s <= 4 * 2**20], 3, timeout=1200)[0]
    print(f"   fitted alpha = {alpha * 1e6:.1f} µs, beta = {beta * 1e9:.3f} ns/B "
          f"({1 / beta / 1e9:.2f} GB/s)")
    print(f"{'bytes':>10} {'algorithm':>20} {'measured ms':>12} {'predicted ms':>13} "
          f"{'meas/pred':>10}")
    for nbytes, algorithm, measured, predicted in rows:
        print(f"{nbytes:>10} {algorithm:>20} {measured * 1e3:>12.3f} {predicted * 1e3:>13.3f} "
              f"{measured / predicted:>9.2f}x")

    print("\n3. DDP step, 24 x Linear(128, 128), 2 ranks")
    times, n_buckets = launch(ddp_buckets, 2, args.ddp_steps, timeout=1200)[0]
    for name, t in times.items():
        print(f"   {name:>18}: {n_buckets[name]:>3} all-reduces per step, {t * 1e3:.2f} ms")
    ratio = times["per-parameter"] / times["bucketed (25 MB)"]
    verdict = "bucketing wins" if ratio > 1 else "bucketing LOSES"
    print(f"   per-parameter / bucketed = {ratio:.2f}x ({verdict})")


if __name__ == "__main__":
    main()
