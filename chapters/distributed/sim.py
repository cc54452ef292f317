"""A simulated world: every rank is a thread of this process, every message is logged.

:func:`run_simulated(fn, world_size)` calls ``fn(group, *args)`` once per rank,
each in its own thread, with a :class:`SimGroup` whose sends go into one queue
per ordered pair of ranks. Nothing crosses a process boundary, so it starts
instantly and every message can be recorded as a :class:`Message` (source,
destination, bytes, and when it travelled).

Two clocks are kept for each message:

* **wall clock** (``wall_start``/``wall_end``, seconds since the world began):
  what really happened in the threads — noisy, dominated by Python;
* **model clock** (``start``/``end``): the time the transfer would take on a
  network described by the alpha-beta model, ``alpha + nbytes * beta`` per
  message. Each rank has its own model clock; sends out of one rank go one
  after another through its outgoing link, receives into one rank through its
  incoming link (both full duplex), and a receive finishes no earlier than the
  receiving rank asked for it. ``group.compute(seconds)`` advances a rank's
  model clock for modelled computation. These rules give the textbook costs:
  ring all-reduce takes exactly ``2(p-1)(alpha + n/p beta)`` here, and
  gathering ``p-1`` buffers at one root takes ``(p-1) n beta`` of root bandwidth.

The ranks take turns (cooperative scheduling): exactly one rank runs at a
time, and it hands over only when it must wait for a message that has not
been sent yet. So a run is deterministic, and a deadlock is detected the
moment every rank is waiting (instead of after a timeout). Each rank is a
thread, and the engine's grad mode is per thread (as torch's), so a rank's
``no_grad`` never leaks into another rank.
"""

from __future__ import annotations

import queue
import threading
import time
import traceback
from dataclasses import dataclass

import numpy as np

from .transport import DistributedError, DoneWork, Group, Work, as_bytes


@dataclass(frozen=True)
class Message:
    """One point-to-point transfer recorded by the simulated world."""

    src: int
    dst: int
    nbytes: int
    start: float        # model clock: transfer begins
    end: float          # model clock: transfer completes at the receiver
    wall_start: float   # wall clock: isend called
    wall_end: float     # wall clock: matching receive completed
    label: str          # what the algorithm was doing (see SimGroup.phase)


class _Envelope:
    def __init__(self, payload, shape, dtype, nbytes, post, wall_start, label):
        self.payload, self.shape, self.dtype, self.nbytes = payload, shape, dtype, nbytes
        self.post, self.wall_start, self.label = post, wall_start, label


class SimWorld:
    """Shared state of one simulated world: queues, model clocks, the log."""

    def __init__(self, world_size: int, alpha: float = 1e-5, beta: float = 1e-9,
                 timeout: float = 30.0):
        if world_size < 1:
            raise ValueError(f"SimWorld: world_size must be >= 1, got {world_size}")
        self.world_size, self.alpha, self.beta, self.timeout = world_size, alpha, beta, timeout
        self.queues = {(s, d): queue.Queue() for s in range(world_size)
                       for d in range(world_size) if s != d}
        self.clock = [0.0] * world_size
        self.out_free = [0.0] * world_size
        self.in_free = [0.0] * world_size
        self.messages: list[Message] = []
        self.lock = threading.Lock()
        self.failed = threading.Event()
        self.t0 = time.perf_counter()
        # cooperative scheduling: who runs, who waits for whom, who is done
        self.turn = threading.Condition()
        self.current = 0
        self.waiting_for: dict[int, int] = {}
        self.finished: set[int] = set()
        self.deadlock = ""

    def hand_over(self, rank: int) -> None:
        """``rank`` stops running (it waits or is done): pick the next rank that
        can make progress, round robin. Call with ``self.turn`` held."""
        p = self.world_size
        for k in range(1, p + 1):
            nxt = (rank + k) % p
            if nxt in self.finished:
                continue
            src = self.waiting_for.get(nxt)
            if src is None or not self.queues[(src, nxt)].empty():
                self.current = nxt
                self.turn.notify_all()
                return
        if len(self.finished) < p and not self.failed.is_set():
            self.deadlock = "; ".join(f"rank {r} waits for a message from rank {s}"
                                      for r, s in sorted(self.waiting_for.items()))
            self.failed.set()
        self.current = -1
        self.turn.notify_all()

    def now(self) -> float:
        return time.perf_counter() - self.t0

    def bytes_sent_per_rank(self) -> list[int]:
        out = [0] * self.world_size
        for m in self.messages:
            out[m.src] += m.nbytes
        return out

    def makespan(self) -> float:
        """Model time when the last rank finished."""
        return max(self.clock)


class _SimRecv(Work):
    def __init__(self, group: SimGroup, buffer: np.ndarray, src: int):
        self.group, self.buffer, self.src = group, buffer, src
        self.post = group.world.clock[group.rank]
        self.done = False

    def wait(self) -> None:
        if self.done:
            return
        g, w = self.group, self.group.world
        q = w.queues[(self.src, g.rank)]
        with w.turn:
            if q.empty():
                w.waiting_for[g.rank] = self.src
                w.hand_over(g.rank)
                if not w.turn.wait_for(lambda: w.current == g.rank or w.failed.is_set(),
                                       timeout=w.timeout):
                    w.failed.set()
                    raise DistributedError(
                        f"rank {g.rank}: no message from rank {self.src} within "
                        f"{w.timeout:.0f} s (another rank is stuck in a long computation?)")
                del w.waiting_for[g.rank]
                if w.current != g.rank:
                    if w.deadlock:
                        raise DistributedError(
                            f"rank {g.rank}: deadlock, every rank is waiting: {w.deadlock} "
                            "(ranks calling different collectives, or all receiving first?)")
                    raise DistributedError(
                        f"rank {g.rank}: stopped waiting for a message from rank {self.src} "
                        "because another rank failed")
            env = q.get_nowait()
        if env.shape != self.buffer.shape or env.dtype != self.buffer.dtype:
            raise DistributedError(
                f"recv on rank {g.rank} from rank {self.src}: expected shape "
                f"{self.buffer.shape} dtype {self.buffer.dtype}, but rank {self.src} sent "
                f"shape {env.shape} dtype {env.dtype}; every rank must pass buffers of the "
                "same shape and dtype to a collective")
        as_bytes(self.buffer)[:] = env.payload
        with w.lock:
            duration = w.alpha + env.nbytes * w.beta
            end = max(env.post + duration, w.in_free[g.rank] + env.nbytes * w.beta)
            w.in_free[g.rank] = end
            w.clock[g.rank] = max(w.clock[g.rank], end)
            w.messages.append(Message(self.src, g.rank, env.nbytes, end - duration, end,
                                      env.wall_start, w.now(), env.label))
        self.done = True


class SimGroup(Group):
    """:class:`Group` for one rank of a :class:`SimWorld`.

    Sends are buffered (an ``isend`` never blocks, like a small message over
    gloo); ``phase`` is a label copied into every message this rank sends, so
    a drawing can say which step of an algorithm a message belongs to."""

    def __init__(self, world: SimWorld, rank: int):
        self.world, self.rank, self.world_size = world, rank, world.world_size
        self.bytes_sent = 0
        self.phase = ""

    def isend(self, array: np.ndarray, dst: int) -> Work:
        self._check_peer(dst, "isend")
        w = self.world
        with w.lock:
            post = max(w.clock[self.rank], w.out_free[self.rank])
            w.out_free[self.rank] = post + w.alpha + array.nbytes * w.beta
        env = _Envelope(as_bytes(array).copy(), array.shape, array.dtype, array.nbytes,
                        post, w.now(), self.phase)
        self.bytes_sent += array.nbytes
        w.queues[(self.rank, dst)].put(env)
        return DoneWork()

    def irecv(self, buffer: np.ndarray, src: int) -> Work:
        self._check_peer(src, "irecv")
        return _SimRecv(self, buffer, src)

    def send(self, array: np.ndarray, dst: int) -> None:
        """Blocking send: the sender's model clock moves to when its link is free."""
        self.isend(array, dst)
        with self.world.lock:
            self.world.clock[self.rank] = max(self.world.clock[self.rank],
                                              self.world.out_free[self.rank])

    def now(self) -> float:
        """This rank's model clock."""
        return self.world.clock[self.rank]

    def compute(self, seconds: float) -> None:
        """Advance this rank's model clock by ``seconds`` of modelled computation."""
        with self.world.lock:
            self.world.clock[self.rank] += seconds


def run_simulated(fn, world_size: int, *args, alpha: float = 1e-5, beta: float = 1e-9,
                  timeout: float = 30.0, **kwargs):
    """Run ``fn(group, *args, **kwargs)`` on ``world_size`` simulated ranks.

    Returns ``(results, world)``: the list of each rank's return value (index =
    rank) and the :class:`SimWorld` holding the message log and model clocks.
    If any rank raises, the others stop waiting and a :class:`DistributedError`
    naming the first failing rank (with its traceback) is raised.
    """
    world = SimWorld(world_size, alpha, beta, timeout)
    results: list = [None] * world_size
    errors: dict[int, str] = {}

    def body(rank):
        try:
            with world.turn:
                world.turn.wait_for(lambda: world.current == rank or world.failed.is_set())
            if world.failed.is_set():
                raise DistributedError(f"rank {rank}: not started because another rank failed")
            results[rank] = fn(SimGroup(world, rank), *args, **kwargs)
        except BaseException:  # reported to the caller below, with the traceback
            errors[rank] = traceback.format_exc()
            world.failed.set()
        finally:
            with world.turn:
                world.finished.add(rank)
                if world.current == rank:
                    world.hand_over(rank)

    threads = [threading.Thread(target=body, args=(r,), name=f"sim-rank-{r}", daemon=True)
               for r in range(world_size)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        # The first rank to fail is the cause; the others only report it.
        cause = min(errors, key=lambda r: ("another rank failed" in errors[r], r))
        if world.deadlock and all("another rank failed" in e for e in errors.values()):
            cause = min(errors)
        raise DistributedError(f"rank {cause} of {world_size} failed:\n{errors[cause]}")
    return results, world
