"""Rank programs for the collective tests: each runs MANY checks in one launch
(starting processes is the slow part), comparing our collectives with
torch.distributed's own on the same data, and raises on the first mismatch."""

from __future__ import annotations

import numpy as np
import torch
import torch.distributed as dist

from chapters.distributed import (
    ALL_REDUCE_ALGORITHMS,
    ReduceOp,
    all_gather,
    all_reduce,
    all_to_all,
    barrier,
    broadcast,
    reduce,
    reduce_scatter,
)
from chapters.torchcheck import assert_close

TORCH_OP = {ReduceOp.SUM: dist.ReduceOp.SUM, ReduceOp.MAX: dist.ReduceOp.MAX,
            ReduceOp.MIN: dist.ReduceOp.MIN, ReduceOp.PRODUCT: dist.ReduceOp.PRODUCT}
SIZES = (1, 2, 7, 13, 1001)          # odd sizes, smaller than and not divisible by p
DTYPES = (np.float32, np.float64)


def _data(rank: int, size: int, dtype, salt: int) -> np.ndarray:
    rng = np.random.default_rng(1000 * salt + rank)
    return rng.standard_normal(size).astype(dtype)


def _tol(dtype):
    return dict(rtol=1e-5, atol=1e-6) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-13)


def _torch_all_reduce(x: np.ndarray, op: ReduceOp, p: int) -> np.ndarray:
    t = torch.from_numpy(x.copy())
    dist.all_reduce(t, op=TORCH_OP.get(op, dist.ReduceOp.SUM))
    return (t / p).numpy() if op is ReduceOp.AVG else t.numpy()


def check_against_torch(group) -> int:
    """Every collective x dtype x size x op against torch on the same inputs."""
    p, r = group.world_size, group.rank
    checks = 0
    for salt, (dtype, size) in enumerate((d, s) for d in DTYPES for s in SIZES):
        x = _data(r, size, dtype, salt)
        tol = _tol(dtype)
        for op in ReduceOp:
            expected = _torch_all_reduce(x, op, p)
            for algorithm in ALL_REDUCE_ALGORITHMS:
                got = all_reduce(group, x.copy(), op, algorithm=algorithm)
                assert_close(got, expected, **tol,
                             what=f"all_reduce {algorithm} {op.name} {dtype.__name__} n={size}")
                checks += 1
            for root in range(p):
                got = reduce(group, x.copy(), dst=root, op=op)
                t = torch.from_numpy(x.copy())
                dist.reduce(t, dst=root, op=TORCH_OP.get(op, dist.ReduceOp.SUM))
                if r == root:
                    want = t.numpy() / p if op is ReduceOp.AVG else t.numpy()
                    assert_close(got, want, **tol, what=f"reduce to {root} {op.name} n={size}")
                checks += 1
            got = reduce_scatter(group, x.copy(), op)
            lo, hi = _chunk(size, p, r)
            assert_close(got, expected[lo:hi], **tol, what=f"reduce_scatter {op.name} n={size}")
            checks += 1
        for root in range(p):
            got = broadcast(group, x.copy(), src=root)
            t = torch.from_numpy(x.copy())
            dist.broadcast(t, src=root)
            assert_close(got, t.numpy(), rtol=0, atol=0, what=f"broadcast from {root} n={size}")
            checks += 1
        gathered = all_gather(group, x.reshape(1, -1))
        want = [torch.empty(1, size, dtype=torch.from_numpy(x).dtype) for _ in range(p)]
        dist.all_gather(want, torch.from_numpy(x.reshape(1, -1).copy()))
        for i in range(p):
            assert_close(gathered[i], want[i].numpy(), rtol=0, atol=0,
                         what=f"all_gather chunk {i} n={size}")
        chunks = [_data(r, size, dtype, 100 + j) for j in range(p)]
        got = all_to_all(group, chunks)
        want = _torch_all_to_all(chunks)
        for i in range(p):
            assert_close(got[i], want[i], rtol=0, atol=0, what=f"all_to_all from {i}")
        checks += 2
    barrier(group)
    return checks


def _torch_all_to_all(chunks):
    """torch's all_to_all_single on the stacked chunks (gloo has no list all_to_all)."""
    send = torch.from_numpy(np.stack(chunks))
    recv = torch.empty_like(send)
    dist.all_to_all_single(recv, send)
    return list(recv.numpy())


def _chunk(size: int, p: int, r: int) -> tuple[int, int]:
    pieces = np.array_split(np.arange(size), p)
    start = sum(len(c) for c in pieces[:r])
    return start, start + len(pieces[r])


def integer_max(group) -> None:
    """SUM, MAX, MIN and PRODUCT on integers are exact: compare bit for bit with torch."""
    x = np.arange(11, dtype=np.int64) * (group.rank + 3) % 7
    for algorithm in ALL_REDUCE_ALGORITHMS:
        for op in (ReduceOp.SUM, ReduceOp.MAX, ReduceOp.MIN, ReduceOp.PRODUCT):
            got = all_reduce(group, x.copy(), op, algorithm=algorithm)
            assert_close(got, _torch_all_reduce(x, op, group.world_size), rtol=0, atol=0,
                         what=f"int64 {algorithm} {op.name}")


def mismatched_shapes(group) -> None:
    all_reduce(group, np.ones(10 + group.rank))


def rank_one_raises(group) -> None:
    if group.rank == 1:
        raise ValueError("rank one gives up")
    all_reduce(group, np.ones(10))


def rank_one_dies(group) -> None:
    import os

    if group.rank == 1:
        os._exit(7)
    all_reduce(group, np.ones(10))


def everyone_waits(group) -> None:
    """A deadlock: every rank receives first."""
    group.recv(np.empty(3), (group.rank + 1) % group.world_size)
