"""Our ring all-reduce over NCCL point-to-point vs ``torch.distributed.all_reduce`` on NCCL.

Run on a machine with two or more GPUs: ``python bench/distributed_cuda_check.py``.
One rank per GPU (``launch(..., backend="nccl")``); for each buffer size it
checks that our ring's result equals NCCL's all-reduce, then prints both times
and the throughput ratio ours/NCCL. Our transport stages every message through
host memory (numpy buffers, copied to and from the GPU), so expect NCCL — which
reduces on the GPU and moves data GPU to GPU — to win by a wide margin: the
ratio measures the cost of that staging, not of the ring algorithm.

With fewer than two GPUs NCCL cannot form a multi-rank world on this machine:
the script says so and exits 0.
"""

from __future__ import annotations

import sys
import time

import numpy as np
import torch

SIZES = [2**k for k in (10, 14, 18, 20, 22, 24, 26)]   # 1 KB .. 64 MB


def ring_vs_nccl(group, sizes, repeats):
    import torch.distributed as dist

    from chapters.distributed import ReduceOp, all_reduce

    group.check_shapes = False
    device = torch.device(group.device)
    rows = []
    for nbytes in sizes:
        x = np.random.default_rng(group.rank).standard_normal(nbytes // 4).astype(np.float32)
        ours_result = all_reduce(group, x.copy())
        t = torch.from_numpy(x.copy()).to(device)
        dist.all_reduce(t)
        ok = bool(np.allclose(ours_result, t.cpu().numpy(), rtol=1e-5, atol=1e-5))
        ours = theirs = float("inf")
        for _ in range(repeats):
            dist.barrier()
            start = time.perf_counter()
            all_reduce(group, x.copy())
            elapsed = np.array([time.perf_counter() - start])
            all_reduce(group, elapsed, ReduceOp.MAX)
            ours = min(ours, float(elapsed[0]))
            dist.barrier()
            torch.cuda.synchronize(device)
            start = time.perf_counter()
            dist.all_reduce(t)
            torch.cuda.synchronize(device)
            elapsed = torch.tensor([time.perf_counter() - start], device=device)
            dist.all_reduce(elapsed, op=dist.ReduceOp.MAX)
            theirs = min(theirs, float(elapsed.item()))
        rows.append((nbytes, ok, ours, theirs))
    return rows


def main() -> int:
    if not torch.cuda.is_available():
        print("No CUDA GPU visible to torch: nothing to compare here (exit 0).")
        return 0
    gpus = torch.cuda.device_count()
    names = ", ".join(torch.cuda.get_device_name(i) for i in range(gpus))
    if gpus < 2:
        print(f"1 GPU ({names}): NCCL needs one GPU per rank, so a multi-rank NCCL world "
              "cannot be formed here. Run on a machine with 2+ GPUs (exit 0).")
        return 0
    from chapters.distributed.launcher import launch

    print(f"{gpus} GPUs ({names}); our ring over NCCL p2p vs dist.all_reduce, best of 5")
    rows = launch(ring_vs_nccl, gpus, SIZES, 5, backend="nccl", timeout=600)[0]
    print(f"{'bytes':>10} {'equal':>6} {'ours ms':>10} {'nccl ms':>10} {'ratio':>7}")
    for nbytes, ok, ours, theirs in rows:
        print(f"{nbytes:>10} {str(ok):>6} {ours * 1e3:>10.3f} {theirs * 1e3:>10.3f} "
              f"{theirs / ours:>6.3f}x")
    return 0 if all(ok for _, ok, _, _ in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
