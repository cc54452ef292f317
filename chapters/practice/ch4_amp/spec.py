"""Chapter 4's self-checked practice (ungraded; every case is public).

Neighbours of the chapter's builds, never lab 4's graded exercises: decoding a
*bfloat16* bit pattern (the chapter builds float16's), finding which float16
weights an SGD update leaves unchanged (why master weights exist), and the
largest power-of-two loss scale that keeps given gradients finite in float16.

The references use other means than the solutions a learner writes: numpy and
ml_dtypes casts and a brute-force search over powers of two.
"""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np

from autograder.spec import Case, Exercise, LabSpec

FLOAT16_MAX = 65504.0


def ref_decode_bfloat16(bits):
    """Reinterpret each 16-bit pattern as a bfloat16 (ml_dtypes) and widen it."""
    patterns = np.asarray(bits, dtype=np.uint16)
    return patterns.view(ml_dtypes.bfloat16).astype(np.float64).tolist()


def ref_lost_updates(weights, update):
    """Float16 arithmetic as a framework does it: round ``w + update`` to float16."""
    w = np.asarray(weights, dtype=np.float16)
    after = (w.astype(np.float32) + np.float32(update)).astype(np.float16)
    return (after == w).tolist()


def ref_max_safe_scale(grads):
    """Try every power of two from 2**60 down; the first that keeps ``max|g| * S``
    at or below float16's largest value wins."""
    peak = float(np.max(np.abs(np.asarray(grads, dtype=np.float64))))
    for k in range(60, -61, -1):
        if peak * 2.0**k <= FLOAT16_MAX:
            return 2.0**k
    return 2.0**-60


def _bits(*patterns):
    return [int(p) for p in patterns]


DECODE = (
    Case("one_and_minus_two_by_hand", (_bits(0x3F80, 0xC000),)),
    Case("fractions", (_bits(0x3FC0, 0x3E80, 0x4049),)),
    Case("zero_subnormal_and_inf", (_bits(0x0000, 0x0001, 0x7F80, 0xFF80),)),
    Case("largest_and_smallest_normal", (_bits(0x7F7F, 0x0080),)),
)

LOST = (
    Case("one_weight_by_hand", ([1.0], 1e-4)),
    Case("grows_with_the_weight", ([0.001, 0.1, 1.0, 10.0], 1e-4)),
    Case("negative_update", ([1.0, 0.5, 0.25, -0.25], -2e-4)),
    Case("big_weights", ([256.0, 1000.0, 2048.0], 0.5)),
)

SCALE = (
    Case("one_gradient_by_hand", ([1.0],)),
    Case("small_gradients", ([1e-4, -3e-3, 2e-5],)),
    Case("already_large", ([-40000.0, 3.0],)),
    Case("exactly_at_the_edge", ([0.5, 65504.0 / 1024],)),
)

LAB = LabSpec(
    id="ch4_amp",
    title="Chapter 4 practice — bits, lost updates, loss scales",
    source=Path(__file__).resolve().parents[2] / "04_mixed_precision.ipynb",
    exercises=(
        Exercise("ch4_decode_bfloat16", "decode_bfloat16", DECODE, ref_decode_bfloat16,
                 rtol=0.0, atol=0.0, hints=(
                     "bfloat16 is float32's top 16 bits: 1 sign bit, 8 exponent bits, 7 "
                     "mantissa bits, bias 127.",
                     "Split each pattern: sign = bits >> 15, exponent = (bits >> 7) & 0xFF, "
                     "fraction = bits & 0x7F. Exponent 0 is zero or subnormal, 255 is inf "
                     "(fraction 0) or NaN.",
                     "normal: (-1)**s * 2**(e - 127) * (1 + f / 128); subnormal: (-1)**s * "
                     "2**-126 * (f / 128); e == 255 and f == 0: a signed float('inf')."),
                 hints_zh=(
                     "bfloat16 就是 float32 的高 16 位：1 位符号、8 位指数、7 位尾数，偏置为 "
                     "127。",
                     "把每个位模式拆开：sign = bits >> 15，exponent = (bits >> 7) & 0xFF，"
                     "fraction = bits & 0x7F。指数为 0 表示零或次正规数；为 255 时，fraction "
                     "为 0 是 inf，否则是 NaN。",
                     "正规数：(-1)**s * 2**(e - 127) * (1 + f / 128)；次正规数：(-1)**s * "
                     "2**-126 * (f / 128)；e == 255 且 f == 0：带符号的 float('inf')。")),
        Exercise("ch4_lost_updates", "lost_updates", LOST, ref_lost_updates, compare="equal",
                 hints=(
                     "An update is lost when the float16 sum rounds back to the weight.",
                     "Round each weight to float16, add the update in float32, round the sum "
                     "to float16, and compare with the weight.",
                     "np.asarray(weights, np.float16); after = (w.astype(np.float32) + "
                     "np.float32(update)).astype(np.float16); return (after == w).tolist()."),
                 hints_zh=(
                     "如果 float16 的和舍入后又回到了原来的权重，这次更新就丢了。",
                     "把每个权重舍入到 float16，在 float32 中加上更新量，再把和舍入到 "
                     "float16，然后与原权重比较。",
                     "w = np.asarray(weights, np.float16)；after = (w.astype(np.float32) + "
                     "np.float32(update)).astype(np.float16)；返回 (after == w).tolist()。")),
        Exercise("ch4_max_safe_scale", "max_safe_scale", SCALE, ref_max_safe_scale,
                 rtol=0.0, atol=0.0, hints=(
                     "Only the largest gradient magnitude matters.",
                     "You want the largest power of two S with max|g| * S <= 65504.",
                     "S = 2.0 ** floor(log2(65504 / max|g|)); check the edge where the ratio "
                     "is itself a power of two (math.frexp avoids log rounding)."),
                 hints_zh=(
                     "只有绝对值最大的那个梯度起作用。",
                     "要找的是满足 max|g| * S <= 65504 的最大的 2 的幂 S。",
                     "S = 2.0 ** floor(log2(65504 / max|g|))；留意比值本身恰好是 2 "
                     "的幂的边界情况（用 math.frexp 可以避开 log 的舍入误差）。")),
    ),
)
