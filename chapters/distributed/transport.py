"""The transport: how one rank hands bytes to another.

Every algorithm in this chapter (collectives, DDP, tensor/pipeline parallelism,
ZeRO) is written against one small interface, :class:`Group`:

* ``rank`` and ``world_size``;
* ``send(array, dst)`` / ``recv(buffer, src)`` — blocking point-to-point;
* ``isend(array, dst)`` / ``irecv(buffer, src)`` — non-blocking, each returns a
  :class:`Work` whose ``wait()`` blocks until the transfer is done;
* ``bytes_sent`` — how many payload bytes this rank has sent so far.

``recv`` fills a caller-provided numpy buffer in place, exactly like
``torch.distributed.recv`` fills a tensor: the receiver must know the shape
and dtype it expects (that is also how real frameworks work). Messages between
one pair of ranks arrive in the order they were sent.

Two back ends implement it:

* :class:`~.torch_transport.TorchGroup` — ``torch.distributed`` point-to-point
  (gloo on CPU, NCCL on GPU) between real processes, started by
  :func:`chapters.distributed.launcher.launch` on this machine or by ``torchrun``
  across machines (:func:`~.torch_transport.init_from_env`). It lives in its own
  module, the only one here that imports torch, so that this interface, the
  algorithms and the simulated world run on numpy alone.
* :class:`SimGroup` — a simulated world inside one process (one thread per
  rank, one queue per ordered pair of ranks) that records every message in a
  log, so the notebook can draw what each algorithm sends, when, and where.
  See :mod:`chapters.distributed.sim`.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod

import numpy as np


class DistributedError(RuntimeError):
    """A rank failed, timed out, or ranks disagree (e.g. on a buffer's shape)."""


class Work:
    """A handle on a non-blocking transfer (like ``torch.distributed.Work``)."""

    def wait(self) -> None:  # pragma: no cover - overridden by every back end
        raise NotImplementedError


class DoneWork(Work):
    """A transfer that was already complete when it was handed back."""

    def wait(self) -> None:
        return None


def as_bytes(array: np.ndarray) -> np.ndarray:
    """``array``'s memory viewed as a flat ``uint8`` array (no copy).

    Transports move raw bytes, so every dtype — including ``ml_dtypes``'
    bfloat16, which torch cannot import from numpy — travels the same way."""
    if not array.flags.c_contiguous:
        raise DistributedError(
            f"transport: arrays must be C-contiguous to be sent or received in place "
            f"(got shape {array.shape}, strides {array.strides}); pass np.ascontiguousarray(x)")
    return array.reshape(-1).view(np.uint8)


class Group(ABC):
    """A set of ``world_size`` ranks that can exchange numpy arrays."""

    rank: int
    world_size: int
    bytes_sent: int
    #: collectives first check that all ranks pass the same shape and dtype
    check_shapes: bool = True
    #: whether a background thread of this rank may communicate for it
    #: (used by DDP to overlap all-reduce with backward)
    threads_may_communicate: bool = False

    @abstractmethod
    def isend(self, array: np.ndarray, dst: int) -> Work:
        """Start sending ``array`` to rank ``dst``; the array must not be
        modified until the returned work is waited on."""

    @abstractmethod
    def irecv(self, buffer: np.ndarray, src: int) -> Work:
        """Start receiving from rank ``src`` into ``buffer`` (same shape and
        dtype as what the sender sends)."""

    def now(self) -> float:
        """Seconds on this rank's clock: wall time for real processes, the
        model clock in the simulated world (so timing code runs on both)."""
        return time.perf_counter()

    def compute(self, seconds: float) -> None:
        """Account for ``seconds`` of computation just done on this rank. Real
        time passes by itself, so this does nothing here; the simulated world
        advances its model clock (see :func:`timed`)."""
        return None

    def send(self, array: np.ndarray, dst: int) -> None:
        self.isend(array, dst).wait()

    def recv(self, buffer: np.ndarray, src: int) -> np.ndarray:
        self.irecv(buffer, src).wait()
        return buffer

    def _check_peer(self, peer: int, what: str) -> None:
        if not 0 <= peer < self.world_size or peer == self.rank:
            raise DistributedError(
                f"{what}: rank {self.rank} cannot talk to rank {peer} in a world of "
                f"{self.world_size} ranks (peers are 0..{self.world_size - 1}, not itself)")


class timed:
    """``with timed(group) as t: work()`` — measure ``work``'s wall time, tell
    the group (``group.compute``), and leave ``t.start``/``t.end`` on the
    group's clock. In the simulated world, where ranks take turns, this is a
    measurement of each rank's computation placed on the model clock; pass
    ``modelled=seconds`` to charge a fixed modelled cost instead (clean
    schedules on a busy machine)."""

    def __init__(self, group: Group, modelled: float | None = None):
        self.group, self.modelled = group, modelled

    def __enter__(self):
        self.start = self.group.now()
        self._wall = time.perf_counter()
        return self

    def __exit__(self, *exc):
        elapsed = time.perf_counter() - self._wall
        self.group.compute(elapsed if self.modelled is None else self.modelled)
        self.end = self.group.now()
        return False


class SubGroup(Group):
    """Some of a group's ranks, seen as a group of their own (``dist.new_group``).

    ``SubGroup(group, [2, 3])`` on global rank 3 has ``rank == 1`` and
    ``world_size == 2``; its sends and receives go through ``group`` with the
    ranks translated, so every collective works on it unchanged. Hybrid
    parallelism uses one for each tensor-parallel pair and each data-parallel
    set of replicas."""

    def __init__(self, group: Group, ranks):
        self.parent, self.ranks = group, list(ranks)
        if group.rank not in self.ranks:
            raise DistributedError(f"SubGroup: rank {group.rank} is not in {self.ranks}; only "
                                   "members create (and use) a subgroup")
        self.rank, self.world_size = self.ranks.index(group.rank), len(self.ranks)
        self.check_shapes = group.check_shapes
        self.threads_may_communicate = group.threads_may_communicate

    @property
    def bytes_sent(self) -> int:
        return self.parent.bytes_sent

    def isend(self, array: np.ndarray, dst: int) -> Work:
        self._check_peer(dst, "isend")
        return self.parent.isend(array, self.ranks[dst])

    def irecv(self, buffer: np.ndarray, src: int) -> Work:
        self._check_peer(src, "irecv")
        return self.parent.irecv(buffer, self.ranks[src])

    def now(self) -> float:
        return self.parent.now()

    def compute(self, seconds: float) -> None:
        self.parent.compute(seconds)

    def __getattr__(self, name):  # e.g. the simulated world's ``phase`` label
        return getattr(self.parent, name)

    def __setattr__(self, name, value):
        if name == "phase":
            setattr(self.parent, name, value)
        else:
            object.__setattr__(self, name, value)
