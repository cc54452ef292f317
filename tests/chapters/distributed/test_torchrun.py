"""The same engine code under torchrun (env:// initialisation), as on many machines."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from chapters.distributed.launcher import free_port


@pytest.mark.slow
def test_torchrun_runs_our_collectives_and_ddp():
    port = free_port()
    done = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--nnodes=1", "--nproc_per_node=2",
         "--master_addr=127.0.0.1", f"--master_port={port}",
         "-m", "chapters.distributed.torchrun_demo"],
        capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "rank 0/2: all_reduce of rank+1 -> 3 (expected 3)" in done.stdout
    assert "rank 1/2: all_reduce of rank+1 -> 3 (expected 3)" in done.stdout
    weights = re.findall(r"DDP weights after 5 steps (\[[^\]]*\])", done.stdout)
    assert len(weights) == 2 and weights[0] == weights[1]     # replicas stayed identical
