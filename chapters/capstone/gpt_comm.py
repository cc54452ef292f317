"""Where the all-reduce goes in one GPT step: the same forward and backward timed
four ways on every rank of a ``torch.distributed`` world, round-robin.

- ``local``: backward under ``no_sync()``, so nothing is communicated. It is the
  step's compute alone; the replicas would drift apart if it were trained on.
- ``after``: the same local backward, then one all-reduce of all gradients
  flattened into one buffer (no overlap: every byte waits for the last gradient).
  The all-reduce is also timed on its own (``all_reduce``).
- ``overlap``: DDP as it trains, with torch's default bucket caps (1 MiB for the
  first bucket, 25 MiB for the rest). A model whose gradients fit in 1 MiB has one
  bucket, which is complete only when the last gradient is: nothing can overlap.
- ``small buckets``: DDP with ``bucket_cap_mb=SMALL_BUCKET_MB``, so that the last
  layers' buckets are all-reduced while backward still computes earlier ones.

The all-reduce's share of the step without overlap is ``all_reduce / after``;
with overlap it is what the small-bucket step costs beyond the step without
communication, ``(small buckets - local) / small buckets``. Every rank enters each
timed call together (a barrier first, outside the timing), so one rank's head start
does not count as communication.
"""

from __future__ import annotations

import time
from contextlib import nullcontext

from vizkit.timing import Timing

from . import gpt

MODES = ("local", "after", "overlap", "small buckets")
SMALL_BUCKET_MB = 0.1


def comm_cost(torch, config: gpt.GPTConfig, repeats: int = 5) -> dict[str, Timing]:
    """Median seconds of each of :data:`MODES` and of ``all_reduce`` on this rank, over
    ``repeats`` rounds after one warm-up round."""
    dist = torch.distributed
    world, rank = dist.get_world_size(), dist.get_rank()
    DDP = torch.nn.parallel.DistributedDataParallel
    net, twin = gpt.build(torch, config), gpt.build(torch, config)
    model, small = DDP(net), DDP(twin, bucket_cap_mb=SMALL_BUCKET_MB)
    params = list(net.parameters())
    x, y = (torch.from_numpy(a) for a in gpt.batch_at(config, 0, 0, rank, world))
    amp = gpt.autocast_dtype(torch, config)
    reduce_seconds = []

    def forward_backward(sync: bool, model=model) -> None:
        with nullcontext() if sync else model.no_sync():
            with torch.autocast("cpu", dtype=amp, enabled=amp is not None):
                loss = model(x, y)
            loss.backward()

    def after() -> None:
        forward_backward(sync=False)
        began = time.perf_counter()
        flat = torch.cat([p.grad.reshape(-1) for p in params])
        dist.all_reduce(flat)
        flat /= world
        offset = 0
        for p in params:
            p.grad.copy_(flat[offset:offset + p.numel()].view_as(p.grad))
            offset += p.numel()
        reduce_seconds.append(time.perf_counter() - began)

    steps = {"local": lambda: forward_backward(sync=False), "after": after,
             "overlap": lambda: forward_backward(sync=True),
             "small buckets": lambda: forward_backward(sync=True, model=small)}
    seconds = {name: [] for name in steps}
    for round_ in range(repeats + 1):
        for name, step in steps.items():
            net.zero_grad(set_to_none=True)
            twin.zero_grad(set_to_none=True)
            dist.barrier()
            began = time.perf_counter()
            step()
            if round_:                      # round 0 warms up
                seconds[name].append(time.perf_counter() - began)
    timings = {name: Timing.of(values) for name, values in seconds.items()}
    timings["all_reduce"] = Timing.of(reduce_seconds[1:])
    return timings


def shares(timings: dict[str, Timing]) -> dict[str, float]:
    """The all-reduce's share of the step from :func:`comm_cost`'s medians: without
    overlap (the all-reduce after backward, over that step) and with it (the time the
    small-bucket step takes beyond the step without communication, over that step)."""
    median = {name: t.median for name, t in timings.items()}
    return {"without overlap": median["all_reduce"] / median["after"],
            "with overlap": max(0.0, median["small buckets"] - median["local"])
            / median["small buckets"]}
