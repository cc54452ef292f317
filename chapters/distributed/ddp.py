"""Data parallelism (数据并行): ``DistributedDataParallel`` for engine modules.

Every rank holds a full replica of the model and a different slice of the
batch. After backward each rank has the gradient of *its* slice's loss; the
average over ranks is exactly the gradient of the mean loss over the whole
batch (the gradient is linear in the per-example losses), so after an
all-reduce (AVG) every replica takes the same optimizer step and the replicas
never drift apart. Four details make it fast, as in ``torch.nn.parallel.DistributedDataParallel``:

1. **Same start.** Rank 0's parameters are broadcast to all ranks at construction.
2. **Buckets (梯度分桶).** One all-reduce per parameter would pay the latency
   ``alpha`` per parameter; instead parameters are packed into buckets of at
   most ``bucket_cap_mb`` (25 MB by default) and each bucket is all-reduced as
   one flat buffer. Parameters go into buckets in *reverse* registration order,
   because backward produces the last layer's gradients first.
3. **Overlap (通信计算重叠).** A hook on every parameter
   (``register_post_accumulate_grad_hook``) counts the gradients that are
   ready; as soon as a bucket is complete its all-reduce starts — on a
   background communication thread, so that backward keeps computing earlier
   layers' gradients meanwhile. Buckets start in bucket order on every rank
   (a collective must be called in the same order everywhere). When the last
   bucket is started, the hook waits for all of them and writes the averaged
   gradients back into ``.grad``: when ``loss.backward()`` returns, the
   gradients are synchronized.
4. **``no_sync()``** skips the all-reduce for gradient accumulation: gradients
   accumulate locally in ``.grad`` and are averaged at the next synchronized backward.

Differences from torch, on purpose: the simulated world runs the all-reduce in
the hook itself (its ranks take turns, so a background thread could not talk
for them), so it shows buckets but not overlap; torch's first bucket is capped
at 1 MiB so that communication starts earlier — here all buckets share one cap
(torch's closing rule otherwise, checked against its own bucket assignment);
and every parameter must get a gradient in every synchronized backward (torch's
``find_unused_parameters=False`` behaviour; an incomplete reduction is reported
at the next forward, as torch does).
"""

from __future__ import annotations

import contextlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from chapters.autodiff import Tensor
from chapters.autodiff.nn import Module

from .collectives import ReduceOp, all_reduce, broadcast
from .transport import DistributedError, Group


@dataclass
class Bucket:
    """Parameters whose gradients are all-reduced together as one flat buffer."""

    params: list
    names: list[str]
    buffer: np.ndarray
    offsets: list[tuple[int, int]] = field(default_factory=list)
    pending: int = 0
    arrived: set[int] = field(default_factory=set)   # indices whose gradient is ready

    @property
    def nbytes(self) -> int:
        return self.buffer.nbytes


@dataclass(frozen=True)
class BucketEvent:
    """When bucket ``index`` was ready and when its all-reduce ran (``group.now()``)."""

    index: int
    nbytes: int
    ready: float
    start: float
    end: float


def build_buckets(named_params, bucket_cap_bytes: float) -> list[Bucket]:
    """Pack parameters into buckets the way torch's DDP does.

    Parameters are taken last registered first (backward produces the last
    layer's gradients first). Each dtype has one open bucket; a parameter joins
    the open bucket of its dtype, and the bucket is closed as soon as it holds
    ``bucket_cap_bytes`` or more, so a bucket overshoots the cap by at most its
    last parameter. Buckets come out in the order of their first parameter. A
    cap of 0 gives one bucket per parameter.
    """
    order = list(reversed(list(named_params)))
    open_buckets: dict[np.dtype, list[int]] = {}
    buckets = []
    for index, (_, p) in enumerate(order):
        members = open_buckets.setdefault(p.data.dtype, [])
        members.append(index)
        if sum(order[i][1].data.nbytes for i in members) >= bucket_cap_bytes:
            buckets.append(open_buckets.pop(p.data.dtype))
    out = []
    for indices in sorted(buckets + list(open_buckets.values())):  # by first parameter
        members = [order[i] for i in indices]
        total = sum(p.data.size for _, p in members)
        bucket = Bucket([p for _, p in members], [n for n, _ in members],
                        np.zeros(total, dtype=members[0][1].data.dtype))
        start = 0
        for _, p in members:
            bucket.offsets.append((start, start + p.data.size))
            start += p.data.size
        out.append(bucket)
    return out


class DistributedDataParallel(Module):
    """Wrap ``module`` so that backward leaves the rank-averaged gradient in every ``.grad``.

    Use it exactly like torch's: ``model = DistributedDataParallel(net, group)``;
    ``loss = loss_fn(model(x_shard), y_shard); loss.backward(); opt.step()``.
    ``overlap`` runs bucket all-reduces on a background thread (real processes only).
    """

    def __init__(self, module: Module, group: Group, bucket_cap_mb: float = 25.0,
                 overlap: bool = True):
        super().__init__()
        self.module = module
        object.__setattr__(self, "group", group)
        named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        for _, p in named:
            p.data = np.ascontiguousarray(p.data)
            broadcast(group, p.data, src=0)
        object.__setattr__(self, "buckets", build_buckets(named, bucket_cap_mb * 2**20))
        object.__setattr__(self, "_bucket_of", {})
        for i, bucket in enumerate(self.buckets):
            for j, p in enumerate(bucket.params):
                self._bucket_of[id(p)] = (i, j)
                p.register_post_accumulate_grad_hook(self._grad_ready)
        use_thread = overlap and group.threads_may_communicate
        object.__setattr__(self, "_executor", ThreadPoolExecutor(1) if use_thread else None)
        object.__setattr__(self, "_sync", True)
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
        return self.module(*args, **kwargs)

    @contextlib.contextmanager
    def no_sync(self):
        """Backward passes inside accumulate ``.grad`` locally, with no communication."""
        previous = self._sync
        object.__setattr__(self, "_sync", False)
        try:
            yield
        finally:
            object.__setattr__(self, "_sync", previous)

    # ------------------------------------------------------------ the hook

    def _grad_ready(self, param: Tensor) -> None:
        if not self._sync:
            return
        object.__setattr__(self, "_started", True)
        i, j = self._bucket_of[id(param)]
        self.buckets[i].arrived.add(j)
        self.buckets[i].pending -= 1
        while self._next < len(self.buckets) and self.buckets[self._next].pending == 0:
            self._start(self._next)
            object.__setattr__(self, "_next", self._next + 1)
        if self._next == len(self.buckets):
            self._finish()

    def _start(self, index: int) -> None:
        bucket = self.buckets[index]
        for p, (a, b) in zip(bucket.params, bucket.offsets, strict=True):
            bucket.buffer[a:b] = p.grad.data.reshape(-1)
        ready = self.group.now()

        def reduce_bucket():
            start = self.group.now()
            if self._comm_hook is None:
                all_reduce(self.group, bucket.buffer, ReduceOp.AVG)
            else:
                bucket.buffer[...] = self._comm_hook(self._comm_state, self.group, bucket.buffer)
            return BucketEvent(index, bucket.nbytes, ready, start, self.group.now())

        if self._executor is None:
            self._futures.append(_Done(reduce_bucket()))
        else:
            self._futures.append(self._executor.submit(reduce_bucket))

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
