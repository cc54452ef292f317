"""Starting real ranks on this machine: :func:`launch`.

``launch(fn, world_size, *args)`` starts ``world_size`` fresh processes, joins
them into one ``torch.distributed`` world over TCP on 127.0.0.1 (a free port),
calls ``fn(group, *args)`` in each with a :class:`~.torch_transport.TorchGroup`, and
returns the list of their return values (index = rank).

It always finishes: if a rank raises, dies (killed, segfault, ``os._exit``),
or the whole run passes ``timeout`` seconds, the remaining ranks are killed
and a :class:`~.transport.DistributedError` says which rank failed and shows
its traceback. (A bare ``torch.multiprocessing.spawn`` would leave the other
ranks blocked in a receive until gloo's own 30-minute timeout.)

Processes come from a ``forkserver`` that imported torch once: each rank is a
fork of that clean, single-threaded server, which is several times faster than
a full ``spawn`` (a fresh interpreter importing torch) and equally safe.
``fn`` and its arguments are pickled, so ``fn`` must be importable (a
module-level function, not a lambda or a notebook-defined function). As with
any ``multiprocessing`` start method but ``fork``, a script that calls
``launch`` must do so under ``if __name__ == "__main__":`` (each rank imports
the script's main module first; notebooks need nothing).

Across machines, start the same function under ``torchrun`` instead and get the
group from :func:`~.torch_transport.init_from_env`. Both need torch, so this
module imports it (through :mod:`.torch_transport`); ``chapters.distributed``
itself does not.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import queue
import socket
import sys
import time
import traceback

from .torch_transport import join_local_world, leave_world
from .transport import DistributedError

_FORKSERVER = None
#: imported once by the fork server, so that no rank pays for them again
PRELOAD = ["numpy", "ml_dtypes", "torch", "torch.distributed", "torch.nn.parallel",
           "chapters.autodiff", "chapters.distributed", "chapters.distributed.launcher"]


def _context(start_method: str):
    global _FORKSERVER
    if start_method != "forkserver":
        return mp.get_context(start_method)
    if _FORKSERVER is None:
        _FORKSERVER = mp.get_context("forkserver")
        _FORKSERVER.set_forkserver_preload(PRELOAD)
    return _FORKSERVER


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _rank_main(fn, rank, world_size, port, backend, timeout, threads, args, kwargs, results):
    # A rank forked from a Jupyter kernel inherits the kernel's stdout/stderr objects,
    # which talk to the notebook over sockets that must not be shared: use the
    # process's own streams instead.
    for name in ("stdout", "stderr"):
        original = getattr(sys, f"__{name}__")
        if original is not None:
            setattr(sys, name, original)
    try:
        group = join_local_world(rank, world_size, port, backend, timeout, threads)
        value = fn(group, *args, **kwargs)
        results.put((rank, "ok", value))
        leave_world()
    except BaseException:
        results.put((rank, "error", traceback.format_exc()))
        results.close()
        results.join_thread()
        os._exit(1)


def launch(fn, world_size: int, *args, backend: str = "gloo", timeout: float = 60.0,
           threads_per_rank: int = 1, start_method: str = "forkserver", **kwargs) -> list:
    """Run ``fn(group, *args, **kwargs)`` on ``world_size`` real processes.

    ``backend`` is ``"gloo"`` (CPU) or ``"nccl"`` (one GPU per rank).
    ``timeout`` bounds the whole run, start-up included. Each rank's torch and
    numpy BLAS use ``threads_per_rank`` threads (1 by default: ranks share the cores).
    ``start_method="fork"`` copies the calling process instead (no imports at
    all: the fastest start, for a notebook whose kernel has not yet run torch
    operations — forking after torch started its thread pools can hang);
    ``"spawn"`` starts fresh interpreters (the slowest, the most isolated).
    """
    if world_size < 1:
        raise ValueError(f"launch: world_size must be >= 1, got {world_size}")
    ctx = _context(start_method)
    results = ctx.Queue()
    port = free_port()
    procs = [ctx.Process(target=_rank_main, name=f"rank-{r}", daemon=True,
                         args=(fn, r, world_size, port, backend, timeout, threads_per_rank,
                               args, kwargs, results))
             for r in range(world_size)]
    for p in procs:
        p.start()
    values: dict[int, object] = {}
    errors: dict[int, str] = {}
    deadline = time.monotonic() + timeout
    try:
        while len(values) < world_size:
            _drain(results, values, errors, wait=0.1)
            dead = [r for r, p in enumerate(procs)
                    if r not in values and r not in errors and p.exitcode not in (None, 0)]
            if errors or dead:
                raise DistributedError(_failure_report(procs, results, values, errors))
            if time.monotonic() > deadline:
                missing = [r for r in range(world_size) if r not in values]
                raise DistributedError(
                    f"launch: ranks {missing} of {world_size} did not finish within "
                    f"{timeout:.0f} s (a deadlock, or ranks calling different collectives?)")
        for p in procs:
            p.join(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        for p in procs:
            if p.is_alive():
                p.kill()
        for p in procs:
            p.join(timeout=5)
        results.close()
    return [values[r] for r in range(world_size)]


def _drain(results, values, errors, wait: float) -> None:
    try:
        rank, status, value = results.get(timeout=wait)
    except queue.Empty:
        return
    (values if status == "ok" else errors)[rank] = value
    while True:  # whatever else is already there
        try:
            rank, status, value = results.get_nowait()
        except queue.Empty:
            return
        (values if status == "ok" else errors)[rank] = value


# Errors a rank raises only because a *peer* went away: symptoms, not causes.
_PEER_SYMPTOMS = ("Connection reset by peer", "Connection closed by peer", "Broken pipe",
                  "another rank failed", "Read error", "Socket Timeout")


def _failure_report(procs, results, values, errors) -> str:
    """Name the rank that caused a failure, with its traceback.

    When one rank dies, its peers fail too a moment later ("connection reset").
    So wait briefly for every report, then blame, in order: a rank that raised
    an error of its own; a rank that died without a word (killed, crashed,
    ``os._exit``); otherwise the first rank that reported."""
    time.sleep(0.5)
    _drain(results, values, errors, wait=0.2)
    n = len(procs)
    own = {r: tb for r, tb in errors.items() if not any(s in tb for s in _PEER_SYMPTOMS)}
    silent = [r for r, p in enumerate(procs)
              if r not in values and r not in errors and p.exitcode not in (None, 0)]
    followers = sorted(set(errors) - set(own))
    tail = (f"\n(ranks {followers} then failed because they lost their connection to it)"
            if followers and (own or silent) else "")
    if own:
        rank = min(own)
        return f"rank {rank} of {n} failed:\n{own[rank]}{tail}"
    if silent:
        rank = silent[0]
        code = procs[rank].exitcode
        how = f"was killed by signal {-code}" if code < 0 else f"exited with code {code}"
        last = (f"\nrank {followers[0]} saw:\n{errors[followers[0]]}" if followers else "")
        return (f"rank {rank} of {n} {how} without a Python traceback (it died outside "
                f"Python, was killed, or called os._exit){tail}{last}")
    rank = min(errors)
    return f"rank {rank} of {n} failed:\n{errors[rank]}"
