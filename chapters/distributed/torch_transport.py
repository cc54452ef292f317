"""Real processes: the :class:`~.transport.Group` interface over ``torch.distributed``.

This is the one module of chapter 3's engine that imports torch, and only code
that runs real ranks imports it (:mod:`.launcher` on this machine, or a script
under ``torchrun`` through :func:`init_from_env`); the algorithms and the
simulated world need numpy alone. Point-to-point only: every collective is
still the chapter's own, written against :class:`~.transport.Group`.
"""

from __future__ import annotations

import os
from datetime import timedelta

import numpy as np
import threadpoolctl
import torch
import torch.distributed as dist

from .transport import DistributedError, Group, Work, as_bytes


class _TorchWork(Work):
    def __init__(self, work, on_done=None):
        self._work, self._on_done = work, on_done

    def wait(self) -> None:
        self._work.wait()
        if self._on_done is not None:
            self._on_done()
            self._on_done = None


class TorchGroup(Group):
    """:class:`~.transport.Group` over ``torch.distributed`` point-to-point (the default
    group).

    On CPU (gloo) the bytes of the numpy array are sent in place, with no copy:
    ``torch.from_numpy`` shares the array's memory. With NCCL (``device="cuda"``)
    each message is staged through a GPU buffer, because NCCL only moves GPU memory.
    """

    def __init__(self, device: str = "cpu"):
        if not dist.is_initialized():
            raise DistributedError(
                "TorchGroup: torch.distributed is not initialised; start the ranks with "
                "chapters.distributed.launcher.launch(fn, world_size) or under torchrun with "
                "init_from_env()")
        self.rank, self.world_size = dist.get_rank(), dist.get_world_size()
        self.device = torch.device(device)
        self.bytes_sent = 0
        self.threads_may_communicate = True

    def _wire(self, array: np.ndarray) -> torch.Tensor:
        t = torch.from_numpy(as_bytes(array))
        return t.to(self.device) if self.device.type != "cpu" else t

    def isend(self, array: np.ndarray, dst: int) -> Work:
        self._check_peer(dst, "isend")
        self.bytes_sent += array.nbytes
        return _TorchWork(dist.isend(self._wire(array), dst))

    def irecv(self, buffer: np.ndarray, src: int) -> Work:
        self._check_peer(src, "irecv")
        if self.device.type == "cpu":
            return _TorchWork(dist.irecv(self._wire(buffer), src))
        staging = torch.empty(buffer.nbytes, dtype=torch.uint8, device=self.device)

        def copy_back():
            as_bytes(buffer)[:] = staging.cpu().numpy()

        return _TorchWork(dist.irecv(staging, src), copy_back)


def init_from_env(backend: str | None = None) -> TorchGroup:
    """Join the world described by torchrun's environment variables
    (``RANK``, ``WORLD_SIZE``, ``MASTER_ADDR``, ``MASTER_PORT``; ``env://``).

    ``backend`` defaults to NCCL where a GPU is visible, else gloo. Each rank
    uses GPU ``LOCAL_RANK`` with NCCL."""
    if backend is None:
        backend = "nccl" if torch.cuda.is_available() else "gloo"
    device = "cpu"
    if backend == "nccl":
        local = int(os.environ.get("LOCAL_RANK", "0"))
        torch.cuda.set_device(local)
        device = f"cuda:{local}"
    if not dist.is_initialized():
        dist.init_process_group(backend, init_method="env://")
    return TorchGroup(device)


def join_local_world(rank: int, world_size: int, port: int, backend: str, timeout: float,
                     threads: int) -> TorchGroup:
    """Make this process rank ``rank`` of a world rendezvousing over TCP on
    127.0.0.1:``port`` (what :func:`~.launcher.launch` runs in each rank), with
    ``threads`` intra-op threads and, for NCCL, one GPU per rank."""
    torch.set_num_threads(threads)
    # numpy's BLAS too: the engines' matmuls run there, and two ranks with two spinning
    # BLAS threads each on two cores made chapter 3's 2 ms backward take 10-300 ms
    threadpoolctl.threadpool_limits(threads)
    device = "cpu"
    if backend == "nccl":
        torch.cuda.set_device(rank % torch.cuda.device_count())
        device = f"cuda:{torch.cuda.current_device()}"
    dist.init_process_group(backend, init_method=f"tcp://127.0.0.1:{port}", rank=rank,
                            world_size=world_size, timeout=timedelta(seconds=timeout))
    return TorchGroup(device)


def leave_world() -> None:
    """Wait for every rank (nobody tears the world down while a peer still talks),
    then destroy the process group."""
    dist.barrier()
    dist.destroy_process_group()
