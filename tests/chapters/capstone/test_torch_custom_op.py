"""Pitfall 4 in PyTorch: a custom function under bfloat16 autocast receives
bfloat16 (no fallback), ``custom_fwd(cast_inputs=float32)`` makes it float32 at
the price of casts that :class:`CastCounter` counts."""

from __future__ import annotations

import torch

from chapters.capstone.torch_custom_op import CastCounter, count_casts


def test_autocast_passes_a_custom_function_the_low_dtype_and_custom_fwd_casts_to_float32():
    out = count_casts(hidden=16, batch_size=8)
    plain, fixed, fp32 = out.values()
    assert (plain["received"], plain["output"]) == ("bfloat16", "bfloat16")
    assert (fixed["received"], fixed["output"]) == ("float32", "float32")
    assert fp32["casts"] == 0 and fp32["bytes"] == 0
    # the activation (8 x 16) is cast up and back down, in forward and in backward
    assert fixed["casts"] - plain["casts"] == 4
    assert fixed["bytes"] - plain["bytes"] == 4 * 8 * 16 * (2 + 4)


def test_cast_counter_counts_bytes_read_and_written():
    with CastCounter() as counter:
        torch.ones(3, 5).to(torch.bfloat16)
        torch.ones(2).to(torch.float32)            # no conversion: not a cast
    assert counter.casts == [("torch.float32", "torch.bfloat16", 15 * (4 + 2))]
