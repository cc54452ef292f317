"""Lab 3's exercises: ring all-reduce, DDP buckets, 1F1B, pipeline timing, column parallelism.

References run in the trusted grading process:

* ring all-reduce: the chapter engine's ring (:func:`chapters.distributed.collectives.all_reduce`
  on its simulated world); the expected traffic is read from that world's message log;
* buckets: PyTorch's own ``torch.distributed._compute_bucket_assignment_by_size``, reversed
  as ``DistributedDataParallel`` does;
* 1F1B: :func:`chapters.distributed.pipeline.one_f_one_b_schedule`;
* the pipeline timeline: an event simulation written here (the tests also check it against
  the closed form ``(p-1)/(m+p-1)``);
* column-parallel linear: ``torch.nn.functional.linear`` and autograd on the full layer,
  cut into the ranks' shards.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist

from autograder.spec import Case, Exercise, LabSpec
from chapters.distributed.collectives import all_reduce
from chapters.distributed.pipeline import gpipe_schedule, one_f_one_b_schedule, peak_in_flight
from chapters.distributed.sim import run_simulated

_TORCH_DTYPES = {"float32": torch.float32, "float16": torch.float16,
                 "bfloat16": torch.bfloat16, "float64": torch.float64}


def _engine_ring(group, buffers):
    group.check_shapes = False          # the shape handshake is not part of the ring
    mine = np.array(buffers[group.rank], dtype=np.float64)
    all_reduce(group, mine, algorithm="ring")
    return mine


def ref_all_reduce_report(buffers):
    p = len(buffers)
    results, world = run_simulated(_engine_ring, p, [np.asarray(b) for b in buffers])
    messages, elements, peers = [0] * p, [0] * p, [set() for _ in range(p)]
    for m in world.messages:
        messages[m.src] += 1
        elements[m.src] += m.nbytes // 8
        peers[m.src].add(m.dst)
    return {"results": results, "messages": messages, "elements": elements,
            "peers": [sorted(s) for s in peers]}


def ref_assign_buckets(numels, bucket_cap_bytes, first_bucket_cap_bytes, dtypes=None):
    dtypes = dtypes or ["float32"] * len(numels)
    tensors = [torch.empty(n, dtype=_TORCH_DTYPES[d]) for n, d in zip(numels, dtypes,
                                                                      strict=True)]
    buckets, _ = dist._compute_bucket_assignment_by_size(
        tensors, [first_bucket_cap_bytes, bucket_cap_bytes], [False] * len(tensors))
    return [list(b) for b in reversed(buckets)]


def ref_one_f_one_b(num_stages, num_microbatches):
    return [[[op, mb] for op, mb in one_f_one_b_schedule(num_stages, num_microbatches, s)]
            for s in range(num_stages)]


def ref_pipeline_timeline(schedules, t_forward, t_backward):
    """Event simulation: a stage's k-th action starts at max(its (k-1)-th action's end,
    its dependency's end); dependencies resolved by repeated sweeps."""
    p = len(schedules)
    end: dict[tuple[str, int, int], float] = {}
    for _ in range(sum(len(s) for s in schedules)):
        for s, actions in enumerate(schedules):
            clock = 0.0
            for op, mb in actions:
                dep = ("F", s - 1, mb) if op == "F" and s > 0 else \
                    ("B", s + 1, mb) if op == "B" and s < p - 1 else None
                if dep is not None and dep not in end:
                    break
                clock = max(clock, end[dep] if dep else 0.0) + (t_forward if op == "F"
                                                                 else t_backward)
                end[(op, s, mb)] = clock
    makespan = max(end.values())
    busy = sum(t_forward if op == "F" else t_backward for a in schedules for op, _ in a)
    peaks = [peak_in_flight([tuple(a) for a in actions]) for actions in schedules]
    return {"makespan": makespan, "bubble_fraction": 1 - busy / (p * makespan),
            "peak_in_flight": peaks}


def _t(array, grad=False):
    return torch.tensor(np.asarray(array, dtype=np.float64), requires_grad=grad)


def ref_column_parallel_forward(x, weight, bias, world_size):
    y = torch.nn.functional.linear(_t(x), _t(weight), _t(bias)).numpy()
    return {"shards": np.split(y, world_size, axis=-1), "output": y}


def ref_column_parallel_backward(x, weight, grad_output, world_size):
    xt, wt = _t(x, grad=True), _t(weight, grad=True)
    bt = torch.zeros(wt.shape[0], dtype=torch.float64, requires_grad=True)
    torch.nn.functional.linear(xt, wt, bt).backward(_t(grad_output))
    g = _t(grad_output)
    partials = [(gr @ w).numpy() for gr, w in zip(torch.chunk(g, world_size, dim=-1),
                                                  torch.chunk(_t(weight), world_size, dim=0),
                                                  strict=True)]
    return {"grad_weight": np.split(wt.grad.numpy(), world_size),
            "grad_bias": np.split(bt.grad.numpy(), world_size),
            "grad_input_partials": partials, "grad_input": xt.grad.numpy()}


# ------------------------------------------------------------------ cases

_rng = np.random.default_rng(3)


def _buffers(p, n):
    return [_rng.normal(size=n) for _ in range(p)]


RING = (
    Case("four_ranks_even_chunks", (_buffers(4, 12),)),
    Case("three_ranks_uneven_chunks", (_buffers(3, 10),)),
    Case("pair_of_ranks", (_buffers(2, 7),), hidden=True),
    Case("eight_ranks", (_buffers(8, 101),), hidden=True, points=2.0),
    Case("one_element_per_rank", (_buffers(5, 5),), hidden=True),
)

_MB = 2 ** 20
_resnet_like = [864, 32, 32, 18432, 64, 64, 73728, 128, 128, 294912, 256, 256, 1179648, 512,
                512, 2359296, 512, 512, 5120, 10]
BUCKETS = (
    Case("small_caps", ([10, 10, 10, 10, 10], 80, 40)),
    Case("exact_fill_closes_the_bucket", ([5, 5, 10, 10, 20], 40, 40)),
    Case("big_parameter_gets_its_own_bucket", ([100, 5, 5, 100, 5], 80, 40), hidden=True),
    Case("ddp_defaults_resnet_like", (_resnet_like, 25 * _MB, 1 * _MB), hidden=True),
    Case("mixed_dtypes_bucket_separately",
         ([10, 10, 10, 10, 10, 10], 80, 40,
          ["float32", "float16", "float32", "float16", "float32", "float32"]), hidden=True),
    Case("one_bucket_for_everything", ([3, 4, 5], 10 ** 9, 10 ** 9), hidden=True),
)

ONE_F_ONE_B = (
    Case("four_stages_eight_microbatches", (4, 8)),
    Case("two_stages_two_microbatches", (2, 2)),
    Case("more_stages_than_microbatches", (6, 3), hidden=True),
    Case("one_stage", (1, 4), hidden=True),
    Case("eight_stages_sixteen_microbatches", (8, 16), hidden=True),
)


def _plain_schedule(fn, p, m):
    return [[[op, mb] for op, mb in fn(p, m, s)] for s in range(p)]


TIMELINE = (
    Case("gpipe_equal_times", (_plain_schedule(gpipe_schedule, 4, 8), 1.0, 1.0)),
    Case("one_f_one_b_equal_times", (_plain_schedule(one_f_one_b_schedule, 4, 8), 1.0, 1.0)),
    Case("backward_twice_as_long", (_plain_schedule(one_f_one_b_schedule, 4, 6), 1.0, 2.0),
         hidden=True),
    Case("gpipe_memory", (_plain_schedule(gpipe_schedule, 3, 5), 0.5, 1.5), hidden=True),
    Case("few_microbatches", (_plain_schedule(one_f_one_b_schedule, 5, 2), 1.0, 1.0),
         hidden=True),
    Case("single_stage", (_plain_schedule(one_f_one_b_schedule, 1, 3), 2.0, 3.0), hidden=True),
)


def _linear(batch_shape, d_in, d_out):
    return (_rng.normal(size=(*batch_shape, d_in)), _rng.normal(size=(d_out, d_in)),
            _rng.normal(size=d_out))


_fx, _fw, _fb = _linear((3,), 5, 8)
_bx, _bw, _bb = _linear((2, 3), 4, 6)
COLUMN_FORWARD = (
    Case("two_ranks", (_fx, _fw, _fb, 2)),
    Case("four_ranks", (_fx, _fw, _fb, 4)),
    Case("one_rank_is_the_plain_layer", (_fx, _fw, _fb, 1), hidden=True),
    Case("batched_input_three_ranks", (_bx, _bw, _bb, 3), hidden=True),
)
COLUMN_BACKWARD = (
    Case("two_ranks", (_fx, _fw, _rng.normal(size=(3, 8)), 2)),
    Case("four_way_split", (_fx, _fw, _rng.normal(size=(3, 8)), 4), hidden=True),
    Case("batched_input_three_ranks", (_bx, _bw, _rng.normal(size=(2, 3, 6)), 3),
         hidden=True, points=2.0),
)

FROM_SCRATCH = ("torch",)
"""Modules the learner's code may not import: the lesson is writing this by hand."""

LAB = LabSpec(
    id="lab3_distributed",
    title="Lab 3 — Distributed training: the algorithms under the API",
    source=Path(__file__).with_name("source.ipynb"),
    exercises=(
        Exercise("ring_all_reduce", "all_reduce_report", RING, ref_all_reduce_report,
                 rtol=1e-12, atol=1e-12,
                 forbid_imports=FROM_SCRATCH,
                 hint="Reduce-scatter: send chunk (r-s-1)%p, add chunk (r-s-2)%p; all-gather: "
                      "send chunk (r-s)%p, overwrite chunk (r-s-1)%p."),
        Exercise("assign_buckets", "assign_buckets", BUCKETS, ref_assign_buckets,
                 forbid_imports=FROM_SCRATCH,
                 hint="Close a bucket when its size is >= its limit (not >); one open bucket "
                      "per dtype; reverse at the end."),
        Exercise("one_f_one_b", "one_f_one_b", ONE_F_ONE_B, ref_one_f_one_b,
                 forbid_imports=FROM_SCRATCH,
                 hint="warm-up = min(p - 1 - stage, m) forwards."),
        Exercise("pipeline_timeline", "pipeline_timeline", TIMELINE, ref_pipeline_timeline,
                 rtol=1e-9, atol=1e-12,
                 forbid_imports=FROM_SCRATCH,
                 hint="Keep per stage the time it is free and per action its end time; an "
                      "action starts at the max of the two."),
        Exercise("column_parallel_forward", "column_parallel_forward", COLUMN_FORWARD,
                 ref_column_parallel_forward, rtol=1e-10, atol=1e-12,
                 forbid_imports=FROM_SCRATCH,
                 hint="np.split(weight, p) splits the output features (rows of W)."),
        Exercise("column_parallel_backward", "column_parallel_backward", COLUMN_BACKWARD,
                 ref_column_parallel_backward, rtol=1e-10, atol=1e-12,
                 forbid_imports=FROM_SCRATCH,
                 hint="Flatten the leading dims of x and g; grad_input is the SUM of the "
                      "partials."),
    ),
)
