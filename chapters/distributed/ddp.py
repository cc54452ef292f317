"""Data parallelism (数据并行): ``DistributedDataParallel`` for engine modules.

Every rank holds a full replica of the model and a different slice of the
batch. After backward each rank has the gradient of *its* slice's loss; the
average over ranks is exactly the gradient of the mean loss over the whole
batch (the gradient is linear in the per-example losses), so after an
all-reduce (AVG) every replica takes the same optimizer step and the replicas
never drift apart. Four details make it fast, as in ``torch.nn.parallel.DistributedDataParallel``:

1. **Same start.** Rank 0's parameters and buffers are broadcast to all ranks at
   construction.
2. **Buckets (梯度分桶).** One all-reduce per parameter would pay the latency
   ``alpha`` per parameter; instead parameters are packed into buckets of at
   most ``bucket_cap_mb`` (25 MiB by default) and each bucket is all-reduced as
   one flat buffer. Parameters go into buckets in *reverse* registration order,
   because backward produces the last layer's gradients first.
3. **Overlap (通信计算重叠).** A hook on every parameter
   (``register_post_accumulate_grad_hook``) counts the gradients that are
   ready; as soon as a bucket is complete its all-reduce starts — on a
   background communication thread, so that backward keeps computing earlier
   layers' gradients meanwhile. Python's GIL stands between the two threads:
   left alone, the interpreter hands the GIL to the waiting thread only every
   5 ms (``sys.getswitchinterval()``), longer than this small backward takes,
   so the hook waits until an idle communication thread has begun (its
   all-reduce then blocks on sockets, which releases the GIL). torch's
   reducer is C++ and needs no such hand-over. Buckets start in bucket order on every rank
   (a collective must be called in the same order everywhere). When the last
   bucket is started, the hook waits for all of them and writes the averaged
   gradients back into ``.grad``: when ``loss.backward()`` returns, the
   gradients are synchronized.
4. **``no_sync()``** skips the all-reduce for gradient accumulation: gradients
   accumulate locally in ``.grad`` and are averaged at the next synchronized backward.
   As in torch, the *forward* decides: the backward of a forward run inside
   ``no_sync()`` stays local, one whose forward ran outside synchronizes.

Bucket sizes follow torch: ``bucket_cap_mb`` (25 MiB when left at ``None``)
caps every bucket, and when the cap is left at its default the *first*
bucket of each dtype is capped at ``FIRST_BUCKET_BYTES`` (1 MiB, torch's
``dist._DEFAULT_FIRST_BUCKET_BYTES``), so the last gradients that backward
computes do not wait in a large bucket; an explicit ``bucket_cap_mb`` applies
to the first bucket too (torch 2.13's ``_BucketCapacityConfig``). Both are
checked against torch's own ``_compute_bucket_assignment_by_size``.

Differences from torch, on purpose: torch (with ``find_unused_parameters=False``)
reduces the first iteration in one bucket and then *rebuilds* its buckets in the
order gradients actually arrived; here buckets are assigned once, in reverse
registration order, which is the arrival order for a ``Sequential``. The
simulated world runs the all-reduce in the hook itself (its ranks take turns,
so a background thread could not talk for them), so it shows buckets but not
overlap. And every parameter must get a gradient in every synchronized
backward (torch's ``find_unused_parameters=False`` behaviour; an incomplete
reduction is reported at the next forward, as torch does).
"""

from __future__ import annotations

import contextlib
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from chapters.autodiff import Tensor
from chapters.autodiff.nn import Module

from .collectives import ReduceOp, all_reduce, broadcast
from .transport import DistributedError, Group

DEFAULT_BUCKET_CAP_MB = 25.0
FIRST_BUCKET_BYTES = 2**20  # torch's dist._DEFAULT_FIRST_BUCKET_BYTES


@dataclass
class Bucket:
    """Parameters whose gradients are all-reduced together as one flat buffer."""

    params: list
    names: list[str]
    buffer: np.ndarray
    offsets: list[tuple[int, int]] = field(default_factory=list)
    pending: int = 0
    arrived: set[int] = field(default_factory=set)   # indices whose gradient is ready
    ready: float = 0.0   # group.now() when its last gradient arrived

    @property
    def nbytes(self) -> int:
        return self.buffer.nbytes


@dataclass(frozen=True)
class BucketEvent:
    """When bucket ``index``'s last gradient arrived (``ready``) and when its
    all-reduce ran (``start`` -> ``end``), all in ``group.now()`` seconds."""

    index: int
    nbytes: int
    ready: float
    start: float
    end: float


def build_buckets(named_params, bucket_cap_bytes: float,
                  first_bucket_cap_bytes: float | None = None) -> list[Bucket]:
    """Pack parameters into buckets the way torch's DDP does.

    Parameters are taken last registered first (backward produces the last
    layer's gradients first). Each dtype has one open bucket; a parameter joins
    the open bucket of its dtype, and the bucket is closed as soon as it holds
    its limit or more, so a bucket overshoots by at most its last parameter.
    The limit is ``first_bucket_cap_bytes`` for the first bucket of each dtype
    (when given) and ``bucket_cap_bytes`` for the others. Buckets come out in
    the order of their first parameter. A cap of 0 gives one bucket per parameter.
    """
    order = list(reversed(list(named_params)))
    open_buckets: dict[np.dtype, list[int]] = {}
    closed_per_dtype: dict[np.dtype, int] = {}
    buckets = []
    for index, (_, p) in enumerate(order):
        dtype = p.data.dtype
        members = open_buckets.setdefault(dtype, [])
        members.append(index)
        first = closed_per_dtype.get(dtype, 0) == 0 and first_bucket_cap_bytes is not None
        limit = first_bucket_cap_bytes if first else bucket_cap_bytes
        if sum(order[i][1].data.nbytes for i in members) >= limit:
            buckets.append(open_buckets.pop(dtype))
            closed_per_dtype[dtype] = closed_per_dtype.get(dtype, 0) + 1
    return [_flat_bucket([order[i] for i in indices])   # by first parameter
            for indices in sorted(buckets + list(open_buckets.values()))]


def _flat_bucket(members) -> Bucket:
    """A bucket over ``members`` (name, parameter) with one flat zero buffer."""
    bucket = Bucket([p for _, p in members], [n for n, _ in members],
                    np.zeros(sum(p.data.size for _, p in members), dtype=members[0][1].data.dtype))
    start = 0
    for _, p in members:
        bucket.offsets.append((start, start + p.data.size))
        start += p.data.size
    return bucket


class DistributedDataParallel(Module):
    """Wrap ``module`` so that backward leaves the rank-averaged gradient in every ``.grad``.

    Use it exactly like torch's: ``model = DistributedDataParallel(net, group)``;
    ``loss = loss_fn(model(x_shard), y_shard); loss.backward(); opt.step()``.
    ``overlap`` runs bucket all-reduces on a background thread (real processes only).
    ``bucket_cap_mb=None`` means 25 MiB with a 1 MiB first bucket, as in torch.
    ``init_sync=False`` skips the broadcast of rank 0's parameters (and, with
    ``sync_buffers``, buffers) at construction. ``executor`` is the one thread
    that talks for ``group`` (shared with other users of the group so that
    their messages keep one order); by default DDP starts its own.
    """

    def __init__(self, module: Module, group: Group, bucket_cap_mb: float | None = None,
                 overlap: bool = True, init_sync: bool = True, sync_buffers: bool = True,
                 executor=None):
        super().__init__()
        self.module = module
        object.__setattr__(self, "group", group)
        named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        synced = [p for _, p in named] + (list(module.buffers()) if sync_buffers else [])
        for t in synced if init_sync else ():
            t.data = np.ascontiguousarray(t.data)
            broadcast(group, t.data, src=0)
        cap = (DEFAULT_BUCKET_CAP_MB if bucket_cap_mb is None else bucket_cap_mb) * 2**20
        first = FIRST_BUCKET_BYTES if bucket_cap_mb is None else None
        object.__setattr__(self, "buckets", build_buckets(named, cap, first))
        object.__setattr__(self, "_bucket_of", {})
        for i, bucket in enumerate(self.buckets):
            for j, p in enumerate(bucket.params):
                self._bucket_of[id(p)] = (i, j)
                p.register_post_accumulate_grad_hook(self._grad_ready)
        use_thread = overlap and group.threads_may_communicate
        if use_thread and executor is None:
            executor = ThreadPoolExecutor(1)
        object.__setattr__(self, "_executor", executor if use_thread else None)
        object.__setattr__(self, "_sync", True)
        object.__setattr__(self, "_sync_backward", True)   # what the last forward decided
        object.__setattr__(self, "events", [])
        object.__setattr__(self, "_comm_hook", None)
        object.__setattr__(self, "_comm_state", None)
        self._reset()

    def register_comm_hook(self, state, hook) -> None:
        """Replace the bucket all-reduce by ``hook(state, group, buffer) -> averaged
        buffer`` (torch's ``register_comm_hook``; see :mod:`.compression`)."""
        object.__setattr__(self, "_comm_state", state)
        object.__setattr__(self, "_comm_hook", hook)

    # ------------------------------------------------------------ per iteration

    def _reset(self) -> None:
        for bucket in self.buckets:
            bucket.pending = len(bucket.params)
            bucket.arrived.clear()
        object.__setattr__(self, "_next", 0)       # next bucket to start, in order
        object.__setattr__(self, "_futures", [])
        object.__setattr__(self, "_started", False)

    def forward(self, *args, **kwargs):
        if self._started:
            waiting = sorted(n for b in self.buckets for j, n in enumerate(b.names)
                             if j not in b.arrived)
            raise DistributedError(
                "DistributedDataParallel: expected to have finished the gradient reduction "
                "of the previous iteration before starting a new one; these parameters got "
                f"no gradient in the last backward: {waiting[:5]}. Every parameter must take "
                "part in the loss (or be frozen with requires_grad=False).")
        object.__setattr__(self, "_sync_backward", self._sync)
        return self.module(*args, **kwargs)

    @contextlib.contextmanager
    def no_sync(self):
        """Forwards run inside (and their backwards) accumulate ``.grad`` locally, with
        no communication."""
        previous = self._sync
        object.__setattr__(self, "_sync", False)
        try:
            yield
        finally:
            object.__setattr__(self, "_sync", previous)

    # ------------------------------------------------------------ the hook

    def _grad_ready(self, param: Tensor) -> None:
        if not self._sync_backward:
            return
        object.__setattr__(self, "_started", True)
        i, j = self._bucket_of[id(param)]
        self.buckets[i].arrived.add(j)
        self.buckets[i].pending -= 1
        if self.buckets[i].pending == 0:
            self.buckets[i].ready = self.group.now()
        while self._next < len(self.buckets) and self.buckets[self._next].pending == 0:
            self._start(self._next)
            object.__setattr__(self, "_next", self._next + 1)
        if self._next == len(self.buckets):
            self._finish()

    def _start(self, index: int) -> None:
        bucket = self.buckets[index]
        for p, (a, b) in zip(bucket.params, bucket.offsets, strict=True):
            bucket.buffer[a:b] = p.grad.data.reshape(-1)
        ready = bucket.ready
        begun = threading.Event()

        def reduce_bucket():
            start = self.group.now()
            begun.set()
            if self._comm_hook is None:
                all_reduce(self.group, bucket.buffer, ReduceOp.AVG)
            else:
                bucket.buffer[...] = self._comm_hook(self._comm_state, self.group, bucket.buffer)
            return BucketEvent(index, bucket.nbytes, ready, start, self.group.now())

        if self._executor is None:
            self._futures.append(_Done(reduce_bucket()))
            return
        idle = all(f.done() for f in self._futures)
        self._futures.append(self._executor.submit(reduce_bucket))
        if idle:  # hand the GIL over until it has begun (see the module docstring, 3.)
            begun.wait()

    def _finish(self) -> None:
        self.events.extend(f.result() for f in self._futures)
        for bucket in self.buckets:
            for p, (a, b) in zip(bucket.params, bucket.offsets, strict=True):
                p.grad.data[...] = bucket.buffer[a:b].reshape(p.grad.data.shape)
        self._reset()


class _Done:
    def __init__(self, value):
        self.value = value

    def result(self):
        return self.value
