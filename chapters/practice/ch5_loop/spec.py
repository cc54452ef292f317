"""Chapter 5's self-checked practice (ungraded; every case is public).

Three pieces of the training loop that sit next to the chapter's experiments:
averaging each parameter's gradient over the ranks (the fixed form of the
source's ``all_reduce`` line), clipping gradients by their joint norm as
``torch.nn.utils.clip_grad_norm_`` does, and finding ranks whose weights have
drifted from rank 0's (the last step of the NaN checklist).

References: numpy's ``mean`` over a stacked axis, torch's own
``clip_grad_norm_``, and a byte-level checksum (``hashlib``) of each rank's
weights.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import torch

from autograder.spec import Case, Exercise, LabSpec


def ref_average_gradients(rank_grads):
    """Stack the ranks' copies of each parameter's gradient and take the mean."""
    per_param = zip(*rank_grads, strict=True)
    return [np.mean(np.stack([np.asarray(g, np.float32) for g in copies]), axis=0)
            for copies in per_param]


def ref_clip_gradients(grads, max_norm):
    """torch's ``clip_grad_norm_`` on float32 tensors holding the gradients."""
    params = [torch.nn.Parameter(torch.zeros(np.shape(g))) for g in grads]
    for p, g in zip(params, grads, strict=True):
        p.grad = torch.tensor(np.asarray(g, np.float32))
    torch.nn.utils.clip_grad_norm_(params, max_norm)
    return [p.grad.numpy() for p in params]


def _checksum(weights: dict) -> str:
    digest = hashlib.sha256()
    for name in sorted(weights):
        digest.update(name.encode())
        digest.update(np.ascontiguousarray(weights[name], dtype=np.float32).tobytes())
    return digest.hexdigest()


def ref_diverged_ranks(rank_weights):
    """Ranks whose checksum differs from rank 0's."""
    first = _checksum(rank_weights[0])
    return [r for r, w in enumerate(rank_weights) if _checksum(w) != first]


def _f32(*values):
    return np.array(values, dtype=np.float32)


AVERAGE = (
    Case("two_ranks_by_hand", ([[_f32(1.0, 2.0)], [_f32(3.0, 6.0)]],)),
    Case("two_params", ([[_f32(1.0), _f32(0.0, 4.0)], [_f32(-1.0), _f32(2.0, 0.0)]],)),
    Case("four_ranks", ([[_f32(float(r), 2.0 * r).reshape(1, 2)] for r in range(4)],)),
    Case("matrix", ([[np.arange(6, dtype=np.float32).reshape(2, 3)],
                     [np.ones((2, 3), np.float32)], [np.full((2, 3), -2, np.float32)]],)),
)

CLIP = (
    Case("norm_5_clipped_to_1_by_hand", ([_f32(3.0, 4.0)], 1.0)),
    Case("below_the_limit_unchanged", ([_f32(0.3), _f32(0.4)], 1.0)),
    Case("joint_norm_of_two", ([_f32(6.0, 0.0), _f32(0.0, 8.0)], 5.0)),
    Case("matrix_and_vector", ([np.arange(6, dtype=np.float32).reshape(2, 3), _f32(-1.0, 2.0)],
                               0.5)),
)

_w = {"0.weight": np.array([[0.5, -1.0]], np.float32), "0.bias": _f32(0.25)}
_drifted = {"0.weight": np.array([[0.5, -1.0 + 2.0**-20]], np.float32), "0.bias": _f32(0.25)}
DIVERGED = (
    Case("two_ranks_by_hand", ([{"w": _f32(1.0)}, {"w": _f32(1.5)}],)),
    Case("all_agree", ([_w, dict(_w), dict(_w)],)),
    Case("one_tiny_drift", ([_w, dict(_w), _drifted, dict(_w)],)),
    Case("bias_differs", ([_w, {**_w, "0.bias": _f32(-0.25)}, _drifted],)),
)

LAB = LabSpec(
    id="ch5_loop",
    title="Chapter 5 practice — gradients across ranks, clipping, drift",
    source=Path(__file__).resolve().parents[2] / "05_training_loop.ipynb",
    exercises=(
        Exercise("ch5_average_gradients", "average_gradients", AVERAGE, ref_average_gradients,
                 hints=(
                     "Each parameter is averaged on its own, over the ranks.",
                     "rank_grads[r][i] is rank r's gradient of parameter i: for every i, add "
                     "the ranks' arrays and divide by the number of ranks.",
                     "[sum(grads[i] for grads in rank_grads) / len(rank_grads) for i in "
                     "range(len(rank_grads[0]))]"),
                 hints_zh=(
                     "每个参数各自在所有 rank 上取平均。",
                     "rank_grads[r][i] 是 rank r 上参数 i 的梯度：对每个 i，把各 rank "
                     "的数组相加，再除以 rank 数。",
                     "也就是 [sum(grads[i] for grads in rank_grads) / len(rank_grads) for i "
                     "in range(len(rank_grads[0]))]")),
        Exercise("ch5_clip_gradients", "clip_gradients", CLIP, ref_clip_gradients, rtol=1e-6,
                 atol=1e-7, hints=(
                     "The norm is the 2-norm of all gradients together, as one long vector.",
                     "total = sqrt(sum of every squared element of every gradient); when total "
                     "exceeds max_norm every gradient is multiplied by max_norm / (total + "
                     "1e-6); otherwise they stay as they are.",
                     "factor = min(1.0, max_norm / (total + 1e-6)); return [np.asarray(g, "
                     "np.float32) * np.float32(factor) for g in grads]."),
                 hints_zh=(
                     "范数是把所有梯度连成一个长向量之后的 2-范数。",
                     "total = sqrt(所有梯度中每个元素的平方之和)；total 超过 max_norm 时，"
                     "每个梯度都乘以 max_norm / (total + 1e-6)；否则保持原样。",
                     "factor = min(1.0, max_norm / (total + 1e-6))；返回 [np.asarray(g, "
                     "np.float32) * np.float32(factor) for g in grads]。")),
        Exercise("ch5_diverged_ranks", "diverged_ranks", DIVERGED, ref_diverged_ranks,
                 compare="equal", hints=(
                     "Synchronised replicas are bit-identical: any difference at all counts.",
                     "Compare every rank's weights, name by name, with rank 0's; collect the "
                     "ranks where some array differs.",
                     "[r for r, w in enumerate(rank_weights) if any(not np.array_equal(w[k], "
                     "rank_weights[0][k]) for k in rank_weights[0])]"),
                 hints_zh=(
                     "同步的各个副本应当逐位相同：哪怕只差一点也算。",
                     "把每个 rank 的权重按名字逐个与 rank 0 的比较；收集有数组不相同的那些 "
                     "rank。",
                     "也就是 [r for r, w in enumerate(rank_weights) if any(not "
                     "np.array_equal(w[k], rank_weights[0][k]) for k in rank_weights[0])]")),
    ),
)
