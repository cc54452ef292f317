"""Start ``world_size`` fresh interpreters the way torchrun does (``RANK``,
``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR=127.0.0.1``, a free
``MASTER_PORT``) and always finish: when one rank fails or the deadline
passes, the others are killed and the failure is reported with every rank's
output."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from chapters.distributed.launcher import free_port
from tests.notebooks.harness import ROOT


def run_ranks(argv: list[str], world_size: int = 2, timeout: float = 120.0) -> list[str]:
    """Run ``python *argv`` as ranks 0..world_size-1; return each rank's stdout."""
    port = free_port()
    procs = []
    for rank in range(world_size):
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world_size),
                   LOCAL_WORLD_SIZE=str(world_size), MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=str(port), OMP_NUM_THREADS="1", PYTHONPATH=str(ROOT))
        procs.append(subprocess.Popen([sys.executable, *argv], cwd=ROOT, env=env, text=True,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    deadline = time.monotonic() + timeout
    late = False
    try:
        while any(p.poll() is None for p in procs):
            failed = [r for r, p in enumerate(procs) if p.poll() not in (None, 0)]
            late = time.monotonic() > deadline
            if failed or late:
                break
            time.sleep(0.1)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
        outputs = [p.communicate(timeout=30) for p in procs]
    codes = [p.returncode for p in procs]
    if any(c != 0 for c in codes):
        report = "\n".join(f"--- rank {r} exit {c}\n{out[-2000:]}\n{err[-4000:]}"
                           for r, (c, (out, err)) in enumerate(zip(codes, outputs, strict=True)))
        why = f"did not finish within {timeout:.0f} s" if late else f"failed (exit codes {codes})"
        raise AssertionError(f"{' '.join(argv)} {why}:\n{report}")
    return [out for out, _ in outputs]
