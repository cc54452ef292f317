"""Rank programs for test_torch_api.py, started by :func:`.env_ranks.run_ranks`
with torchrun's environment: ``python -m tests.chapters.distributed.torch_api_programs NAME...``.

The world is joined once with ``torch_api.init_process_group`` (``env://``);
each program runs torch_api's call and real ``torch.distributed``'s on the same inputs
(both go through the one gloo world that init made), raises on the first
mismatch, and prints one ``RESULT {json}`` line for the test to read."""

from __future__ import annotations

import json
import sys
import time
import warnings
from datetime import timedelta

import numpy as np
import torch
import torch.distributed as tdist

import chapters.autodiff as engine
import chapters.autodiff.functional as F
from chapters.autodiff import Tensor, optim
from chapters.distributed import torch_api as dist
from chapters.torchcheck import assert_close

from .engine_programs import HIDDEN, IN, OUT, data, make_net, torch_net

OPS = {"SUM": tdist.ReduceOp.SUM, "MAX": tdist.ReduceOp.MAX, "MIN": tdist.ReduceOp.MIN,
       "PRODUCT": tdist.ReduceOp.PRODUCT, "AVG": tdist.ReduceOp.AVG}
SHAPES = ((1,), (7,), (3, 5))
DTYPES = (np.float32, np.float64, np.int64)


def _inputs(rank: int, shape, dtype, salt: int) -> np.ndarray:
    rng = np.random.default_rng(100 * salt + rank)
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-4, 5, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def _tol(dtype) -> dict:
    return {np.float32: dict(rtol=1e-6, atol=1e-7), np.float64: dict(rtol=1e-13, atol=1e-14),
            np.int64: dict(rtol=0, atol=0)}[dtype]


def _both(x: np.ndarray):
    return Tensor(x.copy()), torch.from_numpy(x.copy())


CHECKS = [0]


def _same(mine, theirs, tol: dict, what: str) -> None:
    assert_close(mine.data, theirs.numpy(), **tol, what=what)
    CHECKS[0] += 1


def collectives() -> dict:
    ready = time.perf_counter()
    r, p = dist.get_rank(), dist.get_world_size()
    assert (r, p) == (tdist.get_rank(), tdist.get_world_size())
    for salt, (dtype, shape) in enumerate((d, s) for d in DTYPES for s in SHAPES):
        x, tol = _inputs(r, shape, dtype, salt), _tol(dtype)
        for name, theirs_op in OPS.items():
            if name == "AVG" and dtype == np.int64:
                continue
            mine, theirs = _both(x)
            if name == "SUM":   # async: the Work is waited on before reading
                work = dist.all_reduce(mine, op=getattr(dist.ReduceOp, name), async_op=True)
                assert work.wait() is True and work.is_completed()
            else:
                assert dist.all_reduce(mine, op=getattr(dist.ReduceOp, name)) is None
            tdist.all_reduce(theirs, op=theirs_op)
            _same(mine, theirs, tol, f"all_reduce {name} {dtype.__name__} {shape}")
            assert mine._version == 1
            for root in range(p):
                mine, theirs = _both(x)
                dist.reduce(mine, dst=root, op=getattr(dist.ReduceOp, name))
                tdist.reduce(theirs, dst=root, op=theirs_op)
                if r == root:
                    _same(mine, theirs, tol, f"reduce to {root} {name} {shape}")
            if len(shape) == 1:
                continue
            mine = [Tensor(np.zeros(shape[1:], dtype)) for _ in range(p)]
            theirs = [torch.zeros(shape[1:], dtype=torch.from_numpy(x).dtype) for _ in range(p)]
            big = x[:p]                               # p chunks of one row each
            dist.reduce_scatter(mine[0], [Tensor(big[i].copy()) for i in range(p)],
                                op=getattr(dist.ReduceOp, name))
            tdist.reduce_scatter(theirs[0], [torch.from_numpy(big[i].copy()) for i in range(p)],
                                 op=theirs_op)
            _same(mine[0], theirs[0], tol, f"reduce_scatter {name}")
            out_m, out_t = Tensor(np.zeros(x[:1].shape, dtype)), torch.zeros(x[:1].shape,
                                                                              dtype=theirs[0].dtype)
            dist.reduce_scatter_tensor(out_m, Tensor(x[:p].copy()), op=getattr(dist.ReduceOp, name))
            tdist.reduce_scatter_tensor(out_t, torch.from_numpy(x[:p].copy()), op=theirs_op)
            _same(out_m, out_t, tol, f"reduce_scatter_tensor {name}")
        for root in range(p):
            mine, theirs = _both(x)
            dist.broadcast(mine, src=root)
            tdist.broadcast(theirs, src=root)
            _same(mine, theirs, _tol(np.int64), f"broadcast from {root} {shape}")
        gathered = [Tensor(np.zeros(shape, dtype)) for _ in range(p)]
        want = [torch.zeros(shape, dtype=torch.from_numpy(x).dtype) for _ in range(p)]
        dist.all_gather(gathered, Tensor(x.copy()))
        tdist.all_gather(want, torch.from_numpy(x.copy()))
        for i in range(p):
            _same(gathered[i], want[i], _tol(np.int64), f"all_gather [{i}] {shape}")
        # gloo takes the concatenated layout (p * n0, ...); the stacked one (p, ...)
        # holds the same values in the same order
        joined = (p * shape[0], *shape[1:])
        mine, stacked = Tensor(np.zeros(joined, dtype)), Tensor(np.zeros((p, *shape), dtype))
        theirs = torch.zeros(joined, dtype=want[0].dtype)
        dist.all_gather_into_tensor(mine, Tensor(x.copy()))
        dist.all_gather_into_tensor(stacked, Tensor(x.copy()))
        tdist.all_gather_into_tensor(theirs, torch.from_numpy(x.copy()))
        _same(mine, theirs, _tol(np.int64), f"all_gather_into_tensor {joined}")
        _same(stacked, theirs.reshape(p, *shape), _tol(np.int64), "stacked all_gather_into_tensor")
        chunks = [_inputs(r, shape, dtype, 50 + i) for i in range(p)]
        mine = [Tensor(np.zeros(shape, dtype)) for _ in range(p)]
        theirs = [torch.zeros(shape, dtype=want[0].dtype) for _ in range(p)]
        dist.all_to_all(mine, [Tensor(c) for c in chunks])
        tdist.all_to_all(theirs, [torch.from_numpy(c.copy()) for c in chunks])
        for i in range(p):
            _same(mine[i], theirs[i], _tol(np.int64), f"all_to_all [{i}]")
    _non_contiguous_and_p2p(r, p)
    dist.barrier()
    return {"checks": CHECKS[0],
            "collectives_s": time.perf_counter() - ready}


def _non_contiguous_and_p2p(r: int, p: int) -> None:
    x = _inputs(r, (3, 4), np.float64, 99)
    mine, theirs = Tensor(x.copy()).t(), torch.from_numpy(x.copy()).t()
    dist.all_reduce(mine)
    tdist.all_reduce(theirs)
    _same(mine, theirs.contiguous(), _tol(np.float64), "all_reduce on a transposed view")
    payload = _inputs(0, (5,), np.float32, 7)
    box = Tensor(np.zeros(5, np.float32))
    if r == 0:
        dist.send(Tensor(payload.copy()), dst=1)
    elif r == 1:
        assert dist.recv(box, src=0) == 0
        _same(box, torch.from_numpy(payload), _tol(np.int64), "recv")
    # both directions at once: isend/irecv must not wait for each other
    mine, peer = Tensor(np.zeros(5, np.float32)), 1 - r if r < 2 else None
    if peer is not None:
        works = [dist.isend(Tensor(payload * (r + 1)), dst=peer),
                 dist.irecv(mine, src=peer)]
        assert all(w.wait() for w in works)
        _same(mine, torch.from_numpy(payload * (peer + 1)), _tol(np.int64), "isend/irecv")
    sub = dist.new_group([1])
    if r == 1:
        assert dist.get_world_size(sub) == 1 and dist.get_rank(sub) == 0
        one = Tensor(np.array([2.0]))
        dist.all_reduce(one, group=sub)
        assert one.data[0] == 2.0
    else:
        assert sub is dist.GroupMember.NON_GROUP_MEMBER and dist.get_rank(sub) == -1
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert dist.all_reduce(Tensor(np.ones(1)), group=sub) is None
        assert "does not belong to the given group" in str(caught[0].message)
    pair = dist.new_group([0, 1])
    mine, theirs = _both(_inputs(r, (6,), np.float64, 5))
    dist.broadcast(mine, src=1, group=pair)
    tdist.broadcast(theirs, src=1)
    _same(mine, theirs, _tol(np.int64), "broadcast in new_group([0, 1])")


def misuse() -> dict:
    """Errors a script can hit once the world is up, next to torch's own."""
    found = {}
    for name, ours, theirs in [
        ("twice", lambda: dist.init_process_group("gloo"),
         lambda: tdist.init_process_group("gloo")),
        ("self-send", lambda: dist.send(Tensor(np.ones(1)), dst=dist.get_rank()),
         lambda: tdist.send(torch.ones(1), dst=tdist.get_rank())),
    ]:
        found[name] = [_error(ours), _error(theirs)]
    for name, call in [
        ("BAND", lambda: dist.all_reduce(Tensor(np.ones(1, np.int64)), op=dist.ReduceOp.BAND)),
        ("torch tensor", lambda: dist.all_reduce(torch.ones(1))),
        ("wrong size", lambda: dist.reduce_scatter_tensor(Tensor(np.ones(2)),
                                                          Tensor(np.ones(3)))),
        ("list length", lambda: dist.all_gather([Tensor(np.ones(1))], Tensor(np.ones(1)))),
        ("tag", lambda: dist.send(Tensor(np.ones(1)), dst=1 - dist.get_rank(), tag=3)),
        ("gather", lambda: dist.gather),
        ("unused parameters", lambda: dist.DistributedDataParallel(
            make_net(0), find_unused_parameters=True)),
        ("device_ids", lambda: dist.DistributedDataParallel(make_net(0), device_ids=[0])),
    ]:
        found[name] = [_error(call)]
    return found


def _error(call) -> list[str]:
    try:
        call()
    except Exception as error:  # noqa: BLE001 - the test reads the type and message
        return [type(error).__name__, str(error)]
    return ["no error", ""]


def ddp_accumulation(steps: int = 3, accumulate: int = 3, batch: int = 4) -> dict:
    """torch_api's DDP and torch's DDP, same start and shards, with no_sync.

    Each rank starts from its own init (seed 100 + rank): both DDPs must
    broadcast rank 0's. Every step runs ``accumulate`` micro-batches, all but
    the last under ``no_sync()``; the bytes this rank sends are counted around
    every backward."""
    r, p = dist.get_rank(), dist.get_world_size()
    net = make_net(100 + r)
    reference = torch_net(net)
    model = dist.DistributedDataParallel(net)
    theirs = torch.nn.parallel.DistributedDataParallel(reference)
    opt = optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    topt = torch.optim.SGD(theirs.parameters(), lr=0.05, momentum=0.9)
    x, y = data(p * batch * accumulate * steps)
    link = dist.group.WORLD.engine
    sent_inside, sent_synced, grad_diff, param_diff = [], [], 0.0, 0.0
    started = time.perf_counter()
    for step in range(steps):
        opt.zero_grad()
        topt.zero_grad()
        for a in range(accumulate):
            lo = (step * accumulate * p + a * p + r) * batch
            xs, ys = x[lo:lo + batch], y[lo:lo + batch]
            last = a == accumulate - 1
            before = link.bytes_sent
            if last:
                F.mse_loss(model(Tensor(xs)), Tensor(ys)).backward()
                sent_synced.append(link.bytes_sent - before)
            else:
                with model.no_sync():
                    F.mse_loss(model(Tensor(xs)), Tensor(ys)).backward()
                sent_inside.append(link.bytes_sent - before)
            tctx = theirs.no_sync() if not last else _Null()
            with tctx:
                torch.nn.functional.mse_loss(theirs(torch.from_numpy(xs)),
                                             torch.from_numpy(ys)).backward()
        for (_, ours), (_, ref) in zip(model.module.named_parameters(),
                                       reference.named_parameters(), strict=True):
            grad_diff = max(grad_diff, float(np.max(np.abs(ours.grad.data - ref.grad.numpy()))))
        opt.step()
        topt.step()
        for (_, ours), (_, ref) in zip(model.module.named_parameters(),
                                       reference.named_parameters(), strict=True):
            param_diff = max(param_diff, float(np.max(np.abs(ours.data - ref.detach().numpy()))))
    elapsed = time.perf_counter() - started
    n_params = sum(q.data.size for q in net.parameters())
    buckets = len(model.buckets)
    return {"sent_inside": sent_inside, "sent_synced": sent_synced, "grad_diff": grad_diff,
            "param_diff": param_diff, "n_params": n_params, "buckets": buckets,
            "seconds": elapsed}


class _Null:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def ddp_buffers(steps: int = 3, batch: int = 6) -> dict:
    """Buffers (BatchNorm's running statistics) broadcast from rank 0 before each
    training forward, as torch's DDP does; compared with torch's DDP on every rank."""
    r, p = dist.get_rank(), dist.get_world_size()
    engine.manual_seed(200 + r)
    net = engine.nn.Sequential(engine.nn.Linear(IN, HIDDEN), engine.nn.BatchNorm1d(HIDDEN),
                               engine.nn.Tanh(), engine.nn.Linear(HIDDEN, OUT))
    for b in net.buffers():             # rank-specific buffers: the init sync must fix them
        if b.data.dtype.kind == "f":
            b.data[...] += r + 1
    reference = torch.nn.Sequential(torch.nn.Linear(IN, HIDDEN), torch.nn.BatchNorm1d(HIDDEN),
                                    torch.nn.Tanh(), torch.nn.Linear(HIDDEN, OUT))
    reference.load_state_dict({k: torch.from_numpy(np.array(v.data))
                               for k, v in net.state_dict().items()})
    model = dist.DistributedDataParallel(net)
    theirs = torch.nn.parallel.DistributedDataParallel(reference)
    x, y = data(p * batch * steps, seed=11)
    worst = 0.0
    for step in range(steps):
        lo = (step * p + r) * batch
        xs, ys = x[lo:lo + batch], y[lo:lo + batch]
        F.mse_loss(model(Tensor(xs)), Tensor(ys)).backward()
        torch.nn.functional.mse_loss(theirs(torch.from_numpy(xs)), torch.from_numpy(ys)).backward()
        for name, ours in net.state_dict().items():
            ref = reference.state_dict()[name].numpy()
            worst = max(worst, float(np.max(np.abs(np.asarray(ours.data, np.float64) - ref))))
    return {"worst": worst}


def forgotten() -> dict:
    """Leaves an async all-reduce unwaited, and (being last) the world not
    destroyed: the exit handler must finish both, and the process must exit 0."""
    work = dist.all_reduce(Tensor(np.ones(1000)), async_op=True)
    return {"left": type(work).__name__}


PROGRAMS = {"collectives": collectives, "misuse": misuse, "ddp_accumulation": ddp_accumulation,
            "ddp_buffers": ddp_buffers, "forgotten": forgotten}

if __name__ == "__main__":
    # several programs in one launch (starting interpreters is the slow part), in one
    # world: re-initialising on the same MASTER_PORT could meet the previous world's
    # store while a slower rank still holds it
    started = time.perf_counter()
    dist.init_process_group("gloo", timeout=timedelta(seconds=60))
    results = {"init_s": time.perf_counter() - started}
    results.update({name: PROGRAMS[name]() for name in sys.argv[1:]})
    if "forgotten" not in sys.argv[1:]:
        dist.barrier()
        dist.destroy_process_group()
        assert not dist.is_initialized() and not tdist.is_initialized()
    print("RESULT " + json.dumps(results), flush=True)
