"""Autocast is per thread, as torch's: a region entered in one thread (or one
simulated rank) leaves the ops of every other thread in their own dtypes."""

import threading

import numpy as np
import pytest
import torch

import chapters.amp
import chapters.autodiff as ad
from chapters.amp.autocast import autocast
from chapters.amp.scaler import GradScaler
from chapters.distributed.sim import run_simulated

LIBS = {
    "engine": (ad, lambda: autocast("cpu", dtype=ad.bfloat16)),
    "torch": (torch, lambda: torch.autocast("cpu", dtype=torch.bfloat16)),
}


@pytest.mark.parametrize("name", LIBS)
def test_a_thread_inside_autocast_leaves_another_threads_matmul_in_float32(name):
    lib, region = LIBS[name]
    inside, release, seen = threading.Event(), threading.Event(), {}

    def hold():
        with region():
            x = lib.ones(4, 4)
            seen["inside"] = (x @ x).dtype
            inside.set()
            release.wait(10)

    thread = threading.Thread(target=hold)
    thread.start()
    assert inside.wait(10)
    try:
        x = lib.ones(4, 4)
        seen["other thread"] = (x @ x).dtype
    finally:
        release.set()
        thread.join(10)
    assert seen == {"inside": lib.bfloat16, "other thread": lib.float32}


def test_a_simulated_rank_under_autocast_leaves_the_other_rank_in_float32():
    """Rank 0 enters autocast and waits for rank 1's message; the scheduler runs
    rank 1 meanwhile, so rank 1's matmul runs while rank 0 is inside the region."""

    log = []

    def rank(group):
        x = ad.ones(4, 4)
        if group.rank == 0:
            with autocast("cpu", dtype=ad.bfloat16):
                log.append("rank 0 enters autocast")
                group.recv(np.zeros(1, np.float32), 1)
                dtype = (x @ x).dtype
            log.append("rank 0 leaves autocast")
            return dtype
        dtype = (x @ x).dtype
        log.append(f"rank 1 computes {dtype.name}")
        group.send(np.zeros(1, np.float32), 0)
        return dtype

    (zero, one), _world = run_simulated(rank, 2)
    assert log == ["rank 0 enters autocast", "rank 1 computes float32", "rank 0 leaves autocast"]
    assert (zero, one) == (ad.bfloat16, ad.float32)


def test_the_package_exports_the_classes_as_torch_amp_does():
    """``from chapters.amp import GradScaler, autocast`` gives the classes (not the
    module), while the module's other names stay importable from its path."""
    from chapters.amp import GradScaler as exported_scaler
    from chapters.amp import autocast as exported_autocast
    from chapters.amp.autocast import get_policy

    assert exported_autocast is autocast and isinstance(exported_autocast, type)
    assert exported_scaler is GradScaler
    assert {"GradScaler", "autocast"} <= set(chapters.amp.__all__)
    assert get_policy("cpu", "matmul") == "lower_precision"
    with exported_autocast("cpu", dtype=ad.bfloat16):
        x = ad.ones(2, 2)
        assert (x @ x).dtype == ad.bfloat16
