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


def _a(*rows):
    """A float64 array written out by hand (the small first case of an exercise)."""
    return np.array(rows, dtype=np.float64)


RING = (
    Case("three_ranks_three_numbers", ([_a(1, 2, 3), _a(10, 20, 30), _a(100, 200, 300)],)),
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
    Case("four_equal_parameters", ([10, 10, 10, 10], 80, 40)),
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
    Case("two_stages_two_microbatches", (2, 2)),
    Case("four_stages_eight_microbatches", (4, 8)),
    Case("more_stages_than_microbatches", (6, 3), hidden=True),
    Case("one_stage", (1, 4), hidden=True),
    Case("eight_stages_sixteen_microbatches", (8, 16), hidden=True),
)


def _plain_schedule(fn, p, m):
    return [[[op, mb] for op, mb in fn(p, m, s)] for s in range(p)]


TIMELINE = (
    Case("two_stages_two_microbatches",
         (_plain_schedule(one_f_one_b_schedule, 2, 2), 1.0, 2.0)),
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
_small_x, _small_w = _a([1, 2]), _a([1, 1], [2, -1])
COLUMN_FORWARD = (
    Case("two_features_two_ranks", (_small_x, _small_w, _a(0.5, -1), 2)),
    Case("two_ranks", (_fx, _fw, _fb, 2)),
    Case("four_ranks", (_fx, _fw, _fb, 4)),
    Case("one_rank_is_the_plain_layer", (_fx, _fw, _fb, 1), hidden=True),
    Case("batched_input_three_ranks", (_bx, _bw, _bb, 3), hidden=True),
)
COLUMN_BACKWARD = (
    Case("two_features_two_ranks", (_small_x, _small_w, _a([1, 0.5]), 2)),
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
    title_zh="实验 3 · 分布式训练：API 底下的算法",
    source=Path(__file__).with_name("source.ipynb"),
    exercises=(
        Exercise("ring_all_reduce", "all_reduce_report", RING, ref_all_reduce_report,
                 rtol=1e-12, atol=1e-12,
                 forbid_imports=FROM_SCRATCH, hints=(
                     "Each rank only ever talks to its right-hand neighbour. In the first half "
                     "every chunk is summed as it travels round the ring; in the second half "
                     "the finished chunks travel round once more.",
                     "Copy the buffers, cut them with chunk_bounds, then run p - 1 "
                     "reduce-scatter steps followed by p - 1 all-gather steps. In every step "
                     "first let all ranks send to (r + 1) % p, then let all ranks receive from "
                     "(r - 1) % p.",
                     "Reduce-scatter step s: rank r sends chunk (r - s - 1) % p and adds what it "
                     "receives into chunk (r - s - 2) % p. All-gather step s: rank r sends chunk "
                     "(r - s) % p and overwrites chunk (r - s - 1) % p with what it receives. "
                     "Return the p arrays."),
                 hints_zh=(
                     "每个 rank 只和它右边的邻居通信。前半程，每个分块沿环传递时被逐步求和；"
                     "后半程，求和完毕的分块再沿环传一圈。",
                     "复制缓冲区，用 chunk_bounds 切块，然后先跑 p - 1 步 reduce-scatter，"
                     "再跑 p - 1 步 all-gather。每一步里，先让所有 rank 发送给 (r + 1) % p，"
                     "再让所有 rank 从 (r - 1) % p 接收。",
                     "reduce-scatter 第 s 步：rank r 发送分块 (r - s - 1) % p，"
                     "并把收到的加到分块 (r - s - 2) % p 上。all-gather 第 s 步：rank r "
                     "发送分块 (r - s) % p，并用收到的覆盖分块 (r - s - 1) % p。返回这 p "
                     "个数组。")),
        Exercise("assign_buckets", "assign_buckets", BUCKETS, ref_assign_buckets,
                 forbid_imports=FROM_SCRATCH, hints=(
                     "Picture one open bucket per dtype filling up as you walk the parameters "
                     "in order, and be exact about when a bucket counts as full.",
                     "A bucket closes as soon as its size in bytes is at least its limit (equal "
                     "counts as full). The first bucket of each dtype has the limit "
                     "first_bucket_cap_bytes, later ones bucket_cap_bytes; bytes are numel "
                     "times ELEMENT_BYTES[dtype].",
                     "Keep a dict from dtype to its open bucket (indices and bytes) and count "
                     "the buckets closed per dtype. After adding a parameter, close its bucket "
                     "if bytes >= limit. At the end add the buckets still open, sort all of "
                     "them by their smallest index and reverse the list: DDP all-reduces the "
                     "last layers first."),
                 hints_zh=(
                     "想象每种 dtype 各有一个打开的桶，按顺序遍历参数时逐渐装满；"
                     "要弄准桶什么时候算满。",
                     "桶的字节数一旦达到上限（等于也算满）就关闭。每种 dtype "
                     "的第一个桶上限是 first_bucket_cap_bytes，之后的是 bucket_cap_bytes；"
                     "字节数是 numel 乘以 ELEMENT_BYTES[dtype]。",
                     "用一个字典记下每种 dtype 当前打开的桶（下标和字节数），并统计每种 "
                     "dtype 已关闭的桶数。加入一个参数后，若 bytes >= limit "
                     "就关闭它所在的桶。最后加上仍然打开的桶，把所有桶按最小下标排序后反转："
                     "DDP 先对最后几层做 all-reduce。")),
        Exercise("one_f_one_b", "one_f_one_b", ONE_F_ONE_B, ref_one_f_one_b,
                 forbid_imports=FROM_SCRATCH, hints=(
                     "Each stage fills the pipe with a few forwards, then alternates one "
                     "forward with one backward, then drains; a later stage needs fewer "
                     "forwards before its first backward.",
                     "Stage s runs min(p - 1 - s, m) warm-up forwards, then pairs (the next "
                     "forward, the oldest backward) while forwards remain, then the remaining "
                     "backwards in order.",
                     "With w = min(p - 1 - s, m): forwards 0 to w - 1; then for i from 0 to "
                     "m - w - 1 the pair [\"F\", w + i], [\"B\", i]; then backwards m - w to "
                     "m - 1. One list of such [op, micro_batch] pairs per stage."),
                 hints_zh=(
                     "每个阶段先用几次前向把流水线填满，然后一次前向、一次反向交替进行，"
                     "最后排空；越靠后的阶段，在第一次反向之前需要的前向越少。",
                     "阶段 s 先做 min(p - 1 - s, m) 次预热前向，然后只要还有前向没做，"
                     "就成对执行（下一个前向，最早的那个反向），最后按顺序做完剩下的反向。",
                     "记 w = min(p - 1 - s, m)：先是前向 0 到 w - 1；然后对 i 从 0 到 m - w "
                     '- 1，依次是一对 ["F", w + i]、["B", i]；最后是反向 m - w 到 m - 1。'
                     "每个阶段对应一个由这种 [op, micro_batch] 对组成的列表。")),
        Exercise("pipeline_timeline", "pipeline_timeline", TIMELINE, ref_pipeline_timeline,
                 rtol=1e-9, atol=1e-12,
                 forbid_imports=FROM_SCRATCH, hints=(
                     "An action can start only when its stage has finished its previous "
                     "action and the action it waits for on the neighbouring stage has "
                     "finished.",
                     "Simulate: keep for each stage the time it becomes free and its position "
                     "in its list, and for each finished action its end time. Sweep over the "
                     "stages again and again, running each stage's next action once its "
                     "dependency has finished.",
                     "start = max(time the stage is free, end of the dependency) and the end is "
                     "start plus t_forward or t_backward. A forward of micro-batch i on stage s "
                     "waits for (\"F\", s - 1, i), a backward for (\"B\", s + 1, i). Count "
                     "micro-batches in flight per stage (+1 on F, -1 on B) and keep the peak; "
                     "bubble = 1 - busy / (p * makespan)."),
                 hints_zh=(
                     "一个动作要等两件事都完成才能开始：它所在阶段的上一个动作，"
                     "以及它在相邻阶段上等待的那个动作。",
                     "模拟：为每个阶段记下它空闲下来的时间和它在自己列表中走到的位置，"
                     "为每个完成的动作记下结束时间。一遍又一遍地扫过所有阶段，"
                     "某个阶段下一个动作的依赖一完成，就运行它。",
                     "start = max(该阶段空闲的时间, 依赖的结束时间)，结束时间是 start 加上 "
                     't_forward 或 t_backward。阶段 s 上微批次 i 的前向等待 ("F", s - 1, i)，'
                     '反向等待 ("B", s + 1, i)。统计每个阶段上正在进行的微批次数（F 时 +1，B '
                     "时 -1）并记下峰值；气泡 = 1 - busy / (p * makespan)。")),
        Exercise("column_parallel_forward", "column_parallel_forward", COLUMN_FORWARD,
                 ref_column_parallel_forward, rtol=1e-10, atol=1e-12,
                 forbid_imports=FROM_SCRATCH, hints=(
                     "Each rank owns some of the layer's output features: which rows of the "
                     "weight and which entries of the bias produce them?",
                     "Cut the weight by rows and the bias into world_size equal parts; rank r "
                     "computes x times its weight part transposed, plus its bias part. The "
                     "full output is the parts side by side along the last dimension.",
                     "np.split(weight, world_size) and np.split(bias, world_size) give the "
                     "parts; each shard is x @ w.T + b; np.concatenate(shards, axis=-1) is "
                     "the output."),
                 hints_zh=(
                     "每个 rank 负责这一层的一部分输出特征：是权重的哪些行、"
                     "偏置的哪些元素产生了它们？",
                     "把权重按行、把偏置各切成 world_size 等份；rank r 计算 x "
                     "乘以它那份权重的转置，再加上它那份偏置。完整的输出就是沿最后一维把各份"
                     "并排拼起来。",
                     "np.split(weight, world_size) 和 np.split(bias, world_size) 给出各份；"
                     "每个分片是 x @ w.T + b；np.concatenate(shards, axis=-1) 就是输出。")),
        Exercise("column_parallel_backward", "column_parallel_backward", COLUMN_BACKWARD,
                 ref_column_parallel_backward, rtol=1e-10, atol=1e-12,
                 forbid_imports=FROM_SCRATCH, hints=(
                     "Rank r sees only its own columns of the output gradient. Its weight and "
                     "bias gradients need nothing more, but the input gradient needs every "
                     "rank's share.",
                     "Flatten the leading dimensions of x and of grad_output to 2-D and split "
                     "the gradient's columns into world_size parts g_r: grad_weight_r = g_r.T "
                     "@ x, grad_bias_r = g_r summed over rows, and the partial input gradient "
                     "is g_r @ W_r.",
                     "Reshape each partial input gradient back to x's shape; the true input "
                     "gradient is the SUM of the partials (what the all-reduce computes). "
                     "Return the per-rank lists and that sum under the four keys the notebook "
                     "names."),
                 hints_zh=(
                     "rank r 只看得到输出梯度中属于它的那几列。它的权重梯度和偏置梯度不需要别"
                     "的信息，但输入梯度需要每个 rank 的那一份。",
                     "把 x 和 grad_output 的前导维度展平成二维，把梯度的列切成 world_size 份 "
                     "g_r：grad_weight_r = g_r.T @ x，grad_bias_r = g_r 按行求和，"
                     "部分输入梯度是 g_r @ W_r。",
                     "把每个部分输入梯度 reshape 回 x 的形状；真正的输入梯度是这些部分的和（"
                     "也就是 all-reduce 算出的结果）。按实验里给出的四个键，返回每个 rank "
                     "的列表和这个和。")),
    ),
)
