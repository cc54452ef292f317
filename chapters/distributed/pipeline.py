"""Pipeline parallelism (流水线并行): stages over ranks, micro-batches, schedules.

The model's layers are cut into ``p`` consecutive **stages**, stage ``s`` on
rank ``s``. Activations travel forward from stage to stage, their gradients
travel back: the only communication is at stage boundaries. To keep every
stage busy the batch is cut into ``m`` **micro-batches** (微批次). A stage
can only start micro-batch 0 after all earlier stages have; the idle time at
the start and end of a step is the **bubble** (气泡). With every stage taking
the same time per micro-batch, the fraction of time idle is

    bubble = (p - 1) / (m + p - 1)

for both schedules below: more micro-batches, smaller bubble.

* **GPipe**: all ``m`` forwards, then all ``m`` backwards. A stage holds the
  activations of all ``m`` micro-batches at once.
* **1F1B** (PipeDream-Flush): ``p - 1 - s`` warm-up forwards, then alternate
  one forward and one backward, then the remaining backwards. Same bubble, but
  stage ``s`` never holds more than ``p - s`` micro-batches' activations —
  at most ``p``, independent of ``m``.

Each micro-batch's loss is divided by ``m``, so the accumulated gradients are
those of the mean loss over the whole batch: the same as one process running
the whole model on the whole batch.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from chapters.autodiff import Tensor
from chapters.autodiff.nn import Module, Sequential

from .transport import DistributedError, Group, Work, timed

_DTYPES = [np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.float16)]


def gpipe_schedule(p: int, m: int, stage: int) -> list[tuple[str, int]]:
    """All forwards, then all backwards: ``[("F", 0), ..., ("B", 0), ...]``."""
    return [("F", i) for i in range(m)] + [("B", i) for i in range(m)]


def one_f_one_b_schedule(p: int, m: int, stage: int) -> list[tuple[str, int]]:
    """Warm up with ``p - 1 - stage`` forwards, then one forward / one backward,
    then drain the remaining backwards."""
    warmup = min(p - 1 - stage, m)
    actions = [("F", i) for i in range(warmup)]
    for i in range(m - warmup):
        actions += [("F", warmup + i), ("B", i)]
    return actions + [("B", i) for i in range(m - warmup, m)]


SCHEDULES = {"gpipe": gpipe_schedule, "1f1b": one_f_one_b_schedule}


def peak_in_flight(actions: list[tuple[str, int]]) -> int:
    """The most micro-batches whose activations a stage holds at once under its
    schedule: a forward stores one, the matching backward frees it. GPipe holds
    all ``m``; 1F1B at most ``p - stage``."""
    held = peak = 0
    for kind, _ in actions:
        held += 1 if kind == "F" else -1
        peak = max(peak, held)
    return peak


def split_sequential(model: Sequential, p: int) -> list[Sequential]:
    """Cut ``model``'s layers into ``p`` consecutive stages of near-equal length
    (the layers are shared, not copied)."""
    layers = list(model.children())
    if len(layers) < p:
        raise DistributedError(f"split_sequential: {len(layers)} layers cannot fill {p} stages")
    bounds = np.array_split(np.arange(len(layers)), p)
    return [Sequential(*[layers[i] for i in chunk]) for chunk in bounds]


@dataclass(frozen=True)
class Interval:
    """One forward or backward of one micro-batch on one stage (group clock)."""

    stage: int
    kind: str      # "F" or "B"
    micro_batch: int
    start: float
    end: float


@dataclass
class PipelineResult:
    losses: list[float]          # per micro-batch, last stage only (already divided by m)
    intervals: list[Interval]
    peak_in_flight: int          # most micro-batches whose activations this stage held


def _send(group: Group, array: np.ndarray, dst: int, pending: list[Work]) -> None:
    array = np.ascontiguousarray(array)
    header = np.zeros(8, np.int64)
    header[0], header[1] = _DTYPES.index(array.dtype), array.ndim
    header[2:2 + array.ndim] = array.shape
    pending += [group.isend(header, dst), group.isend(array, dst)]


def _recv(group: Group, src: int) -> np.ndarray:
    header = group.recv(np.empty(8, np.int64), src)
    shape = tuple(int(d) for d in header[2:2 + int(header[1])])
    return group.recv(np.empty(shape, _DTYPES[int(header[0])]), src)


def run_pipeline(stage: Module, group: Group, schedule: str, micro_batches: int,
                 inputs=None, targets=None, loss_fn=None,
                 modelled_cost: dict | None = None) -> PipelineResult:
    """Run one training step's forward and backward of a pipeline.

    Every rank calls this with its own ``stage``. Rank 0 passes ``inputs`` (a
    list of ``micro_batches`` arrays); the last rank passes ``targets`` (same
    length) and ``loss_fn(output, target) -> scalar Tensor``. Gradients are
    accumulated into the stage's parameters' ``.grad``; call the optimizer after.
    ``modelled_cost={"F": seconds, "B": seconds}`` charges fixed compute times to
    the group's clock instead of the measured ones (see :class:`~.transport.timed`).
    """
    p, s, m = group.world_size, group.rank, micro_batches
    first, last = s == 0, s == p - 1
    if first and (inputs is None or len(inputs) != m):
        raise DistributedError(f"run_pipeline: rank 0 needs {m} input micro-batches")
    if last and (targets is None or loss_fn is None or len(targets) != m):
        raise DistributedError(f"run_pipeline: the last rank needs {m} targets and a loss_fn")
    held: dict[int, tuple[Tensor, Tensor]] = {}
    result = PipelineResult([], [], 0)
    pending: list[Work] = []
    cost = modelled_cost or {"F": None, "B": None}
    for kind, i in SCHEDULES[schedule](p, m, s):
        if kind == "F":
            x = (Tensor(np.asarray(inputs[i])) if first
                 else Tensor(_recv(group, s - 1), requires_grad=True))
            with timed(group, cost["F"]) as t:
                out = stage(x)
                if last:
                    out = loss_fn(out, Tensor(np.asarray(targets[i]))) * (1.0 / m)
            held[i] = (x, out)
            result.peak_in_flight = max(result.peak_in_flight, len(held))
            if last:
                result.losses.append(out.item())
            else:
                _send(group, out.data, s + 1, pending)
        else:
            x, out = held.pop(i)
            grad = None if last else Tensor(_recv(group, s + 1))
            with timed(group, cost["B"]) as t:
                out.backward(grad)
            if not first:
                _send(group, x.grad.data, s - 1, pending)
        result.intervals.append(Interval(s, kind, i, t.start, t.end))
    for work in pending:
        work.wait()
    return result


def bubble_fraction(intervals: list[Interval], p: int) -> float:
    """Measured idle fraction: 1 - (busy time of all stages) / (p x makespan)."""
    start = min(iv.start for iv in intervals)
    end = max(iv.end for iv in intervals)
    busy = sum(iv.end - iv.start for iv in intervals)
    return 1.0 - busy / (p * (end - start))


def ideal_bubble_fraction(p: int, m: int) -> float:
    """``(p - 1) / (m + p - 1)``: equal stage times, free communication."""
    return (p - 1) / (m + p - 1)
