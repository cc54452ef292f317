"""The capstone loop runs under torchrun (2 processes, gloo): the engine's and
PyTorch's global-batch loss curves agree, as in the notebook."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.notebooks.harness import ROOT


@pytest.mark.slow
def test_capstone_loop_under_torchrun():
    done = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
         "-m", "chapters.capstone.torchrun_loop", "--steps", "5"],
        cwd=ROOT, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    assert "2 ranks, float16, sync=ddp" in done.stdout
    found = re.search(r"largest relative difference: (\S+)", done.stdout)
    assert found, done.stdout
    assert float(found.group(1)) < 1e-3
    assert re.search(r"test accuracy: engine \d\.\d+, torch \d\.\d+", done.stdout), done.stdout
