"""Lab 4's exercises: float16 rounding, loss scaling, master weights, autocast.

References run in the trusted grading process and come from PyTorch itself:
the float16 cast, ``torch._amp_foreach_non_finite_check_and_unscale_`` and
``torch._amp_update_scale_`` (the kernels behind ``torch.amp.GradScaler``),
``torch.optim.SGD``. The autocast reference applies torch's casting rule to the
chapter engine's policy tables (:mod:`chapters.amp.policies`);
``tests/labs/test_lab4_autocast.py`` checks it against real ``torch.autocast``
for every case (on CPU, and on CUDA where there is a GPU).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from autograder.spec import Case, Exercise, LabSpec
from chapters.amp.policies import FLOAT32, LOWER, PROMOTE, policy_of

FP16_SMALLEST_NORMAL = 2.0 ** -14



# ------------------------------------------------------------------ references


def _fp16(values) -> torch.Tensor:
    return torch.from_numpy(np.asarray(values, dtype=np.float32)).to(torch.float16)


def ref_round_to_fp16(values):
    return _fp16(values).to(torch.float64).numpy()


def ref_classify_fp16(values):
    flat = np.asarray(values, dtype=np.float32).ravel()
    rounded = ref_round_to_fp16(flat)
    labels = []
    for x, r in zip(flat, rounded, strict=True):
        if x == 0:
            labels.append("zero")
        elif np.isinf(r):
            labels.append("overflow")
        elif r == 0:
            labels.append("underflow")
        elif abs(r) < FP16_SMALLEST_NORMAL:
            labels.append("subnormal")
        else:
            labels.append("normal")
    return labels


def ref_unscale_grads(grads, inv_scale):
    tensors = [torch.tensor(np.asarray(g, dtype=np.float32)) for g in grads]
    found = torch.zeros(1)
    torch._amp_foreach_non_finite_check_and_unscale_(tensors, found,
                                                     torch.tensor([inv_scale], dtype=torch.float32))
    return {"grads": [t.numpy() for t in tensors], "found_inf": bool(found.item())}


def ref_update_scale(scale, growth_tracker, found_inf, growth_factor=2.0, backoff_factor=0.5,
                     growth_interval=2000):
    s = torch.tensor([scale], dtype=torch.float32)
    tracker = torch.tensor([growth_tracker], dtype=torch.int32)
    torch._amp_update_scale_(s, tracker, torch.tensor([float(found_inf)]), growth_factor,
                             backoff_factor, growth_interval)
    return [float(s.item()), int(tracker.item())]


def ref_master_weight_step(master, scaled_grad_fp16, lr, scale, weight_decay=0.0):
    param = torch.nn.Parameter(torch.tensor(np.asarray(master, dtype=np.float32)))
    grad = torch.tensor(np.asarray(scaled_grad_fp16, dtype=np.float16)).to(torch.float32)
    found = torch.zeros(1)
    inv_scale = torch.tensor([scale], dtype=torch.float64).reciprocal().to(torch.float32)
    torch._amp_foreach_non_finite_check_and_unscale_([grad], found, inv_scale)
    skipped = bool(found.item())
    if not skipped:
        param.grad = grad
        torch.optim.SGD([param], lr=lr, weight_decay=weight_decay).step()
    new = param.detach()
    return {"master": new.numpy().copy(), "model": new.to(torch.float16).numpy(),
            "skipped": skipped}


_ELIGIBLE = ("float16", "bfloat16", "float32")


def _promote(dtypes):
    out = getattr(torch, dtypes[0])
    for d in dtypes[1:]:
        out = torch.promote_types(out, getattr(torch, d))
    return str(out).removeprefix("torch.")


def ref_autocast_dtype(op, input_dtypes, device_type="cuda", dtype="float16"):
    policy = policy_of(device_type, op)
    if policy == LOWER:
        target = dtype
    elif policy == FLOAT32:
        target = "float32"
    elif policy == PROMOTE:
        target = _promote([dtype] + [d for d in input_dtypes if d in _ELIGIBLE])
    else:
        return _promote(list(input_dtypes))
    return _promote([target if d in _ELIGIBLE else d for d in input_dtypes])


# ------------------------------------------------------------------ comparisons


def compare_master_step(expected, got):
    """Masters to float32 rounding (SGD's fused multiply-add may differ by an ulp), the
    float16 copy to one float16 step, ``skipped`` exactly."""
    try:
        master = np.asarray(got["master"], dtype=np.float64)
        model = np.asarray(got["model"], dtype=np.float64)
        skipped = got["skipped"]
    except (TypeError, KeyError, ValueError):
        return False, "expected a dict with 'master', 'model' and 'skipped'"
    if not isinstance(skipped, bool) or skipped != expected["skipped"]:
        return False, f"skipped = {skipped!r}, expected {expected['skipped']}"
    want_master = np.asarray(expected["master"], dtype=np.float64)
    want_model = np.asarray(expected["model"], dtype=np.float64)
    if master.shape != want_master.shape or not np.allclose(master, want_master, rtol=1e-6,
                                                            atol=1e-6):
        return False, f"master = {master.tolist()}, expected {want_master.tolist()}"
    if model.shape != want_model.shape or not np.allclose(model, want_model, rtol=1e-3,
                                                          atol=6e-8):
        return False, f"model = {model.tolist()}, expected {want_model.tolist()}"
    return True, "ok"


# ------------------------------------------------------------------ cases

_rng = np.random.default_rng(4)
_spread = (np.exp(_rng.uniform(-20, 11.5, 400)) * _rng.choice([-1, 1], 400)).astype(np.float32)
# exact float16 ties: a value halfway between two neighbours goes to the even one
_ties = np.array([1 + 2 ** -11, 1 + 3 * 2 ** -11, 2048 + 1, 2048 + 3, 2 ** -24 * 0.5,
                  2 ** -24 * 1.5, 2 ** -24 * 2.5, -(1 + 2 ** -11)], dtype=np.float32)
_edges = np.array([65504, 65519, 65520, 70000, -65520, 2 ** -14, 2 ** -14 * (1 - 2 ** -11),
                   2 ** -25, 2 ** -25 * (1 + 2 ** -10), 3e-8, 1e-9, 0.0], dtype=np.float32)

def _f32(*values):
    """A float32 array written out by hand (the small first case of an exercise)."""
    return np.array(values, dtype=np.float32)


ROUND = (
    Case("four_values_by_hand", (_f32(1.0, -2.5, 2049.0, 70000.0),)),
    Case("simple_values", (np.array([1.0, 0.1, -2.5, 1000.3, 3.14159], dtype=np.float32),)),
    Case("overflow_and_underflow", (np.array([1e5, -1e5, 1e-9, 6e-5], dtype=np.float32),)),
    Case("ties_go_to_even", (_ties,), hidden=True),
    Case("range_edges", (_edges,), hidden=True),
    Case("400_values_over_the_whole_range", (_spread,), hidden=True, points=2.0),
    Case("keeps_the_shape", (_spread[:12].reshape(3, 4),), hidden=True),
)

CLASSIFY = (
    Case("four_values_by_hand", (_f32(0.0, 1.5, 1e-9, 1e6),)),
    Case("one_of_each", (np.array([0.0, 1.5, 1e-6, 1e-9, 1e6], dtype=np.float32),)),
    Case("gradients", (np.array([3e-4, -7e-5, 5e-5, 2e-8, -4e-8], dtype=np.float32),)),
    Case("boundaries", (_edges,), hidden=True),
    Case("matrix_is_flattened", (_spread[:20].reshape(4, 5),), hidden=True),
    Case("many_values", (_spread,), hidden=True),
)

_g = [_rng.normal(size=(3, 4)).astype(np.float32) * 1024,
      _rng.normal(size=5).astype(np.float32) * 1024]

UNSCALE = (
    Case("two_small_grads", ([_f32(2.0, -4.0), _f32(8.0)], 0.5)),
    Case("finite", (_g, 1 / 1024)),
    Case("one_inf", ([np.array([1.0, np.inf], dtype=np.float32), _g[1]], 0.5)),
    Case("odd_inverse_scale", (_g, 1 / 3)),
    Case("neg_inf_in_second_grad", ([_g[0], np.array([-np.inf, 2.0], dtype=np.float32)], 0.25),
         hidden=True),
    Case("large_scale", ([_g[0] * 60000], 2.0 ** -24), hidden=True),
)

UPDATE = (
    Case("found_inf_backs_off", (65536.0, 17, True)),
    Case("success_counts", (65536.0, 17, False)),
    Case("grows_after_interval", (1024.0, 1999, False)),
    Case("custom_factors_backoff", (1000.0, 5, True), {"growth_factor": 4.0,
                                                        "backoff_factor": 0.25,
                                                        "growth_interval": 3}, hidden=True),
    Case("custom_factors_grow", (1000.0, 2, False), {"growth_factor": 4.0,
                                                      "backoff_factor": 0.25,
                                                      "growth_interval": 3}, hidden=True),
    Case("growth_that_would_overflow_is_refused", (3e38, 1, False),
         {"growth_interval": 2}, hidden=True),
    Case("backoff_in_float32", (1.0e-30, 0, True), {"backoff_factor": 0.3}, hidden=True),
    Case("interval_of_one", (8.0, 0, False), {"growth_interval": 1}, hidden=True),
)

_master = _rng.normal(size=6).astype(np.float32)
_scaled = (_rng.normal(size=6) * 2.0 ** 10).astype(np.float16)

MASTER = (
    Case("two_weights_by_hand", (_f32(1.0, -0.5), np.array([512.0, 1024.0], dtype=np.float16),
                                 0.5, 1024.0)),
    Case("plain_step", (_master, _scaled, 0.01, 1024.0)),
    Case("inf_skips_the_step", (_master, np.array([1, 2, np.inf, 0, 0, 0], dtype=np.float16),
                                0.01, 1024.0)),
    Case("decayed_step", (_master, _scaled, 0.1, 1024.0), {"weight_decay": 0.01}, hidden=True),
    Case("tiny_update_survives_in_the_master",
         (np.ones(4, dtype=np.float32), np.full(4, 1.0, dtype=np.float16), 1e-4, 1.0),
         hidden=True),
    Case("nan_skips_the_step", (_master, np.array([np.nan, 0, 0, 0, 0, 0], dtype=np.float16),
                                0.1, 8.0), hidden=True),
    Case("non_power_of_two_scale", (_master, _scaled, 0.05, 1000.0), hidden=True),
)

AUTOCAST = (
    Case("matmul_fp32_inputs", ("matmul", ["float32", "float32"])),
    Case("softmax_on_cuda", ("softmax", ["float16"])),
    Case("softmax_on_cpu", ("softmax", ["float16"]), {"device_type": "cpu"}),
    Case("relu_is_not_listed", ("relu", ["float32"])),
    Case("cat_promotes", ("cat", ["float16", "float32"]), {"device_type": "cpu"}),
    Case("linear_bfloat16", ("linear", ["float32", "float32", "float32"]),
         {"dtype": "bfloat16"}, hidden=True),
    Case("float64_is_never_cast", ("mm", ["float64", "float64"]), hidden=True),
    Case("mse_loss_fp16_inputs_cpu", ("mse_loss", ["float16", "float16"]),
         {"device_type": "cpu"}, hidden=True),
    Case("add_mixed_no_cast", ("add", ["float16", "float32"]), hidden=True),
    Case("add_int_and_half", ("mul", ["int64", "float16"]), hidden=True),
    Case("cat_all_half_stays_half", ("cat", ["float16", "float16"]), {"device_type": "cpu"},
         hidden=True),
    Case("exp_of_half_on_cuda", ("exp", ["float16"]), hidden=True),
    Case("addcmul_promotes_on_cuda", ("addcmul", ["float32", "float16", "float16"]),
         hidden=True),
    Case("layer_norm_bfloat16_on_cuda", ("layer_norm", ["bfloat16"]), {"dtype": "bfloat16"},
         hidden=True),
    Case("mm_mixed_inputs_cpu", ("mm", ["float32", "float16"]), {"device_type": "cpu"},
         hidden=True),
)

FROM_SCRATCH = ("torch", "ml_dtypes")
"""Modules the learner's code may not import: the lesson is writing this by hand."""

LAB = LabSpec(
    id="lab4_amp",
    title="Lab 4 — Mixed precision: float16 from the bits up",
    title_zh="实验 4 · 混合精度：从比特开始理解 float16",
    source=Path(__file__).with_name("source.ipynb"),
    exercises=(
        Exercise("round_to_fp16", "round_to_fp16", ROUND, ref_round_to_fp16, rtol=0.0,
                 atol=0.0, forbid_imports=FROM_SCRATCH, hints=(
                     "float16 values are evenly spaced between consecutive powers of two: find "
                     "the spacing around x, then round x to a whole number of spacings.",
                     "For |x| of at least 2**-14 the spacing is 2**(e - 10), where 2**e <= |x| "
                     "< 2**(e + 1); below 2**-14 it is 2**-24. From 65520 up the result is "
                     "infinity. Keep the sign; zeros and NaN stay as they are.",
                     "Get e from math.frexp(|x|) (its exponent minus 1), or use -14 for tiny "
                     "values; spacing = 2.0 ** (e - 10); the answer is round(|x| / spacing) * "
                     "spacing with x's sign (math.copysign). Python's round sends ties to the "
                     "even neighbour."),
                 hints_zh=(
                     "在相邻两个 2 的幂之间，float16 的值是等间距分布的：先求出 x "
                     "附近的间距，再把 x 舍入到间距的整数倍。",
                     "|x| 不小于 2**-14 时，间距是 2**(e - 10)，其中 2**e <= |x| < 2**(e + "
                     "1)；小于 2**-14 时间距是 2**-24。从 65520 起结果是无穷大。保留符号；"
                     "零和 NaN 保持不变。",
                     "用 math.frexp(|x|) 求 e（它返回的指数减 1），很小的值则取 -14；spacing "
                     "= 2.0 ** (e - 10)；答案是 round(|x| / spacing) * spacing，再带上 x "
                     "的符号（math.copysign）。Python 的 round 遇到正好一半时取偶数。")),
        Exercise("classify_fp16", "classify_fp16", CLASSIFY, ref_classify_fp16, compare="equal",
                 forbid_imports=FROM_SCRATCH, hints=(
                     "Decide from the value after rounding to float16, not from the input.",
                     "Round every value with your round_to_fp16. Then: an input of 0 is zero; a "
                     "rounded infinity is overflow; a nonzero input that rounds to 0 is "
                     "underflow; a rounded magnitude below 2**-14 is subnormal; anything else "
                     "is normal.",
                     "Flatten the input, pair each value with its rounded value and test in "
                     "this order: zero, overflow (math.isinf), underflow (rounded == 0), "
                     "subnormal (abs(rounded) < FP16_SMALLEST_NORMAL), else normal. Return a "
                     "plain list of labels."),
                 hints_zh=(
                     "要根据舍入到 float16 之后的值来判断，而不是根据输入。",
                     "用你的 round_to_fp16 舍入每个值。然后：输入为 0 的是 zero；"
                     "舍入后是无穷大的是 overflow（溢出）；非零输入舍入成 0 的是 "
                     "underflow（下溢）；舍入后绝对值小于 2**-14 的是 subnormal（次正规数）；"
                     "其余是 normal。",
                     "把输入展平，让每个值和它舍入后的值配对，按这个顺序判断：zero、"
                     "overflow（溢出，math.isinf）、underflow（下溢，rounded == 0）、"
                     "subnormal（abs(rounded) < FP16_SMALLEST_NORMAL），否则为 normal。"
                     "返回一个普通的标签列表。")),
        Exercise("unscale_grads", "unscale_grads", UNSCALE, ref_unscale_grads, rtol=0.0,
                 atol=0.0, forbid_imports=FROM_SCRATCH, hints=(
                     "Unscaling is one multiplication per gradient, but PyTorch does it in "
                     "float32, and it must also notice gradients that overflowed.",
                     "Convert inv_scale to float32 first and multiply each gradient (as a "
                     "float32 array) by it. found_inf is True if any element of any gradient "
                     "is inf or NaN; inf times inv_scale is still inf.",
                     "Convert once with np.float32, then build new arrays np.asarray(g, "
                     "dtype=np.float32) times that factor (never modify the inputs); found_inf "
                     "says whether some gradient is not entirely finite (np.isfinite)."),
                 hints_zh=(
                     "反缩放就是每个梯度做一次乘法，但 PyTorch 是在 float32 中做的，"
                     "而且还得发现已经溢出的梯度。",
                     "先把 inv_scale 转成 float32，再用它去乘每个梯度（当作 float32 数组）。"
                     "只要任何一个梯度的任何一个元素是 inf 或 NaN，found_inf 就为 True；inf "
                     "乘以 inv_scale 仍然是 inf。",
                     "用 np.float32 转换一次，然后新建数组 np.asarray(g, dtype=np.float32) "
                     "乘以这个因子（绝不修改输入）；found_inf 表示是否有某个梯度不全是有限值"
                     "（np.isfinite）。")),
        Exercise("update_scale", "update_scale", UPDATE, ref_update_scale, compare="equal",
                 forbid_imports=FROM_SCRATCH, hints=(
                     "A step with inf or NaN shrinks the scale at once; a long enough run of "
                     "good steps earns a bigger scale, unless the bigger scale would overflow.",
                     "On found_inf: scale times backoff_factor and the tracker back to 0. "
                     "Otherwise the tracker counts one more success; when it reaches "
                     "growth_interval the scale grows by growth_factor and the tracker resets, "
                     "but the old scale stays if the grown one is not finite.",
                     "Compute with np.float32 values (wrap the growth in np.errstate("
                     "over='ignore')), and return [float(new scale), new tracker]. The tracker "
                     "resets to 0 whether or not the grown scale was kept."),
                 hints_zh=(
                     "出现 inf 或 NaN 的一步会立刻缩小缩放因子；连续足够多的正常步之后，"
                     "缩放因子可以增大，除非增大后会溢出。",
                     "found_inf 时：缩放因子乘以 backoff_factor，计数器归 0。"
                     "否则计数器再记一次成功；达到 growth_interval 时，缩放因子乘以 "
                     "growth_factor 并重置计数器，但如果增大后的值不是有限数，"
                     "就保留原来的缩放因子。",
                     "用 np.float32 的值计算（增大的那一步包在 np.errstate(over='ignore') "
                     "里），返回 [float(新的缩放因子), 新的计数器]。"
                     "不论增大后的缩放因子是否被采用，计数器都重置为 0。")),
        Exercise("master_weight_step", "master_weight_step", MASTER, ref_master_weight_step,
                 compare=compare_master_step,
                 forbid_imports=FROM_SCRATCH, hints=(
                     "The float16 gradient is unscaled, checked and applied to the float32 "
                     "copy; the model only gets a float16 copy of the result at the very end.",
                     "grad = float32(scaled gradient) * float32(1 / scale). If any element is "
                     "inf or NaN, skip: the master stays as it is and skipped is True. "
                     "Otherwise add weight_decay * master to grad, then subtract lr * grad, "
                     "everything in float32.",
                     "Use np.float32 for lr, weight_decay and 1 / scale so that nothing turns "
                     "into float64; the new master is master - np.float32(lr) * grad and the "
                     "model is its .astype(np.float16). Return master, model and skipped in a "
                     "dict."),
                 hints_zh=(
                     "float16 的梯度先反缩放、再检查，然后应用到 float32 副本上；"
                     "模型直到最后才拿到结果的一份 float16 副本。",
                     "grad = float32(缩放后的梯度) * float32(1 / scale)。只要有一个元素是 "
                     "inf 或 NaN 就跳过：master 保持不变，skipped 为 True。否则给 grad 加上 "
                     "weight_decay * master，再从 master 中减去 lr * grad，全部在 float32 "
                     "中进行。",
                     "lr、weight_decay 和 1 / scale 都用 np.float32，免得有值变成 float64；"
                     "新的 master 是 master - np.float32(lr) * grad，模型是它的 "
                     ".astype(np.float16)。把 master、model 和 skipped 放在一个字典里返回。")),
        Exercise("autocast_dtype", "autocast_dtype", AUTOCAST, ref_autocast_dtype,
                 compare="equal",
                 forbid_imports=FROM_SCRATCH, hints=(
                     "First find which of the three lists the op is in for this device: that "
                     "decides what the eligible inputs are cast to before the op runs.",
                     "Eligible inputs are float16, bfloat16 and float32 (never float64 or "
                     "integers). lower_precision casts them to dtype, float32 to float32, "
                     "promote to the widest of dtype and the eligible inputs; an op in no list "
                     "is not cast at all.",
                     "Pick the target (dtype, \"float32\", or result_type of [dtype] plus the "
                     "eligible inputs), replace every eligible input dtype by it, leave the "
                     "others, and return result_type of that list. For an unlisted op return "
                     "result_type of the inputs as they are."),
                 hints_zh=(
                     "先找出这个算子在该设备上属于三个列表中的哪一个：这决定了算子运行前，"
                     "符合条件的输入要转换成什么类型。",
                     "符合条件的输入是 float16、bfloat16 和 float32（float64 "
                     "和整数永远不算）。lower_precision 把它们转成 dtype，float32 把它们转成 "
                     "float32，promote 转成 dtype 和这些输入中最宽的类型；"
                     "不在任何列表中的算子完全不做转换。",
                     '选出目标类型（dtype、"float32"，或 [dtype] 加上符合条件的输入的 '
                     "result_type），把每个符合条件的输入 dtype 换成它，其余不变，"
                     "返回这个列表的 result_type。不在列表中的算子，直接返回输入原样的 "
                     "result_type。")),
    ),
)
