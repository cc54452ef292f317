"""The small integer dtypes (int8, int16, uint8), ``Tensor.type`` and
``.to(dtype)`` against torch: promotion, wrap-around, casts, and the new ops
on small integers. One lambda per case drives both engines."""

import numpy as np
import pytest
import torch

import chapters.autodiff as ad

from .parity import FLOAT32, check_both

rng = np.random.default_rng(8)
SMALL = rng.integers(-100, 100, (3, 4))
BYTES = rng.integers(0, 250, (3, 4))

CASES = {
    "int8_add_uint8_is_int16": (lambda L, F, a, b: a.to(L.int8) + b.to(L.uint8), [SMALL, BYTES]),
    "int16_mul_int8": (lambda L, F, a: a.to(L.int16) * a.to(L.int8), [SMALL]),
    "int8_wraps_around": (lambda L, F, a: a.to(L.int8) + 100, [SMALL]),
    "uint8_wraps_below_zero": (lambda L, F, a: a.to(L.uint8) - 200, [BYTES]),
    "int8_times_float_scalar": (lambda L, F, a: a.to(L.int8) * 1.5, [SMALL]),
    "int16_with_bool": (lambda L, F, a: a.to(L.int16) + (a > 0), [SMALL]),
    "float_to_int8_truncates": (lambda L, F, a: (a * 0.37).to(L.int8), [SMALL.astype(np.float32)]),
    "to_dtype_keyword": (lambda L, F, a: a.to(dtype=L.int16), [SMALL]),
    "to_other_tensor": (lambda L, F, a, b: a.to(b.to(L.uint8)), [SMALL, BYTES]),
    "to_device_and_dtype": (lambda L, F, a: a.to("cpu", L.int8), [SMALL]),
    "short_char_byte": (lambda L, F, a: (a.short(), a.char(), a.abs().byte()), [SMALL]),
    "type_cast": (lambda L, F, a: a.type(L.int16), [SMALL]),
    "type_name_cast": (lambda L, F, a: a.type("torch.DoubleTensor"), [SMALL]),
    "int8_cumsum_is_int64": (lambda L, F, a: a.to(L.int8).cumsum(1), [SMALL]),
    "int16_prod_is_int64": (lambda L, F, a: (a.to(L.int16) % 3).prod(0), [SMALL]),
    "uint8_sort": (lambda L, F, a: a.to(L.uint8).sort(stable=True), [BYTES]),
    "int8_floor_divide": (lambda L, F, a: a.to(L.int8) // 7, [SMALL]),
    "int8_remainder_negative": (lambda L, F, a: a.to(L.int8) % -7, [SMALL]),
    "uint8_flip_roll": (lambda L, F, a: a.to(L.uint8).flip(0).roll(1), [BYTES]),
    "int16_sin_is_float32": (lambda L, F, a: a.to(L.int16).sin(), [SMALL]),
    "uint8_all_is_uint8": (lambda L, F, a: a.to(L.uint8).all(1), [BYTES]),
    "int8_gather": (lambda L, F, a: a.to(L.int8).gather(1, L.tensor([[0, 3]] * 3)), [SMALL]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_small_integer_results_match_torch(name):
    fn, arrays = CASES[name]
    check_both(fn, arrays, FLOAT32, grad_mask=[False] * len(arrays))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "int8", "int16",
                                   "int32", "int64", "uint8", "bool"])
def test_type_names_match_torch(dtype):
    x = ad.zeros(2).to(getattr(ad, dtype if dtype != "bool" else "bool_"))
    y = torch.zeros(2).to(getattr(torch, dtype))
    assert x.type() == y.type()
    assert x.type(y.type()).dtype == x.dtype  # a name casts back to the same dtype


@pytest.mark.parametrize("name", ["int8", "int16", "uint8", "short"])
def test_dtype_names_are_accepted_wherever_torch_takes_them(name):
    expected = str(getattr(torch, name)).removeprefix("torch.")
    assert str(ad.zeros(2, dtype=name).dtype) == expected
    assert str(ad.tensor([1, 2]).to(getattr(torch, name)).dtype) == expected


def test_an_integer_tensor_cannot_require_grad_whatever_its_width():
    for dtype in (ad.int8, ad.int16, ad.uint8):
        with pytest.raises(RuntimeError, match="floating point"):
            ad.tensor([1, 2], dtype=dtype).requires_grad_()
