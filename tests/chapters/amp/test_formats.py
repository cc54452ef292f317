"""Number formats: properties from the bit layout vs numpy/ml_dtypes finfo,
bit decoding vs the library cast for every pattern, quantization reports."""

import math

import ml_dtypes
import numpy as np
import pytest
import torch

from chapters.amp import formats
from chapters.amp.formats import FORMATS, decode, encode, get_format, quantize, sum_repeatedly

NAMES = list(FORMATS)


@pytest.mark.parametrize("name", NAMES)
def test_properties_match_finfo(name):
    fmt = FORMATS[name]
    info = ml_dtypes.finfo(fmt.dtype)
    assert fmt.bits == info.bits
    assert fmt.eps == float(info.eps)
    assert fmt.max == float(info.max)
    assert fmt.smallest_normal == float(info.smallest_normal)
    assert fmt.smallest_subnormal == float(info.smallest_subnormal)
    assert fmt.mantissa_bits == info.nmant
    assert fmt.exponent_bits == info.nexp


@pytest.mark.parametrize("name", ["float32", "float16"])
def test_numpy_finfo_agrees_for_numpy_types(name):
    fmt, info = FORMATS[name], np.finfo(FORMATS[name].dtype)
    assert (fmt.eps, fmt.max, fmt.smallest_normal) == \
        (float(info.eps), float(info.max), float(info.smallest_normal))


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float8_e4m3fn", "float8_e5m2"])
def test_decode_matches_library_for_every_bit_pattern(name):
    fmt = FORMATS[name]
    library = formats.all_values(fmt)
    ours = np.array([decode(b, fmt) for b in range(2**fmt.bits)])
    np.testing.assert_array_equal(ours, library)  # NaNs in the same places


def test_e4m3fn_has_no_inf_and_one_nan_pattern_per_sign():
    values = formats.all_values("e4m3")
    assert not np.isinf(values).any()
    assert np.isnan(values).sum() == 2  # 0.1111.111 and 1.1111.111
    assert formats.classify(0b0_1111_111, "e4m3") == "nan"
    assert formats.classify(0b0_1111_110, "e4m3") == "normal"
    assert decode(0b0_1111_110, "e4m3") == 448.0
    # e5m2 is IEEE-like: inf at exponent all ones, fraction zero
    assert formats.classify(0b0_11111_00, "e5m2") == "inf"


def test_float32_decode_on_sampled_patterns():
    rng = np.random.default_rng(0)
    patterns = rng.integers(0, 2**32, size=2000, dtype=np.uint64).astype(np.uint32)
    with np.errstate(invalid="ignore"):
        library = patterns.view(np.float32).astype(np.float64)
    ours = np.array([decode(int(b), "float32") for b in patterns])
    np.testing.assert_array_equal(ours, library)


def test_encode_round_trip_and_fields():
    enc = encode(0.1, "float16")
    assert enc.bit_string == "0|01011|1001100110"
    assert enc.stored == float(np.float16(0.1))
    assert enc.kind == "normal" and math.isclose(enc.rel_error, abs(enc.stored - 0.1) / 0.1)
    assert encode(1e-7, "float16").kind == "subnormal"
    assert encode(1e-9, "float16").kind == "zero"
    assert encode(1e5, "float16").kind == "inf"
    assert encode(1e5, "bfloat16").kind == "normal"
    assert encode(500.0, "e4m3").kind == "nan"  # ml_dtypes: out of range -> NaN (no inf)
    assert encode(-2.0, "float32").bit_string == "1|10000000|" + "0" * 23


def test_torch_bits_agree_with_ours():
    x = torch.tensor([0.1, -3.5, 1e-6, 60000.0])
    for name, tdt in [("float16", torch.float16), ("bfloat16", torch.bfloat16)]:
        bits = x.to(tdt).view(torch.int16).numpy().view(np.uint16)
        ours = [formats.to_bits(float(v), name) for v in x]
        assert list(bits) == ours


def test_quantize_reports_fractions():
    x = np.array([1e5, 7e4, 1.0, 1e-6, 1e-9, 0.0, -2e-8], np.float32)
    rep = quantize(x, "fp16")
    # non-zero finite inputs: 6; overflow 2 (1e5, 7e4 > 65504); underflow 2 (1e-9 and
    # -2e-8 are below half the smallest subnormal 2**-24 / 2 = 2.98e-8); subnormal 1 (1e-6)
    assert rep.overflow == pytest.approx(2 / 6)
    assert rep.underflow == pytest.approx(2 / 6)
    assert rep.subnormal == pytest.approx(1 / 6)
    assert rep.max_rel_error == 0.0  # 1.0 is exact
    bf = quantize(x, "bf16")
    assert bf.overflow == 0 and bf.underflow == 0 and bf.subnormal == 0
    assert bf.max_rel_error <= FORMATS["bfloat16"].eps / 2
    assert "overflow" in str(rep)


def test_quantize_relative_error_bounded_by_half_eps():
    x = np.random.default_rng(1).uniform(0.5, 100, 5000).astype(np.float32)
    for name in ["float16", "bfloat16", "float8_e4m3fn", "float8_e5m2"]:
        assert quantize(x, name).max_rel_error <= FORMATS[name].eps / 2


def test_bad_inputs():
    with pytest.raises(ValueError, match="unsupported floating-point format 'float12'"):
        get_format("float12")
    with pytest.raises(ValueError, match="Supported: float32, float16"):
        get_format("int8")
    with pytest.raises(ValueError, match="NaN"):
        quantize(np.array([1.0, np.nan]), "float16")
    with pytest.raises(ValueError, match="2\\*\\*32"):
        formats.all_values("float32")


def test_get_format_accepts_aliases_and_dtypes():
    assert get_format("half") is FORMATS["float16"]
    assert get_format(np.float16) is FORMATS["float16"]
    assert get_format(ml_dtypes.bfloat16) is FORMATS["bfloat16"]
    assert get_format(torch.bfloat16) is FORMATS["bfloat16"]
    assert get_format(torch.float8_e5m2) is FORMATS["float8_e5m2"]


def test_summing_a_hundredth_a_thousand_times():
    fp16 = sum_repeatedly(0.01, 1000, "float16", "float16")
    fp32 = sum_repeatedly(0.01, 1000, "float32", "float32")
    mixed = sum_repeatedly(0.01, 1000, "float16", "float32")
    # independent check: the same loops written with torch scalars
    def torch_loop(addend_dtype, acc_dtype):
        addend = torch.tensor(0.01).to(addend_dtype).to(acc_dtype)
        total = torch.zeros((), dtype=acc_dtype)
        for _ in range(1000):
            total = total + addend
        return float(total)
    assert fp16 == torch_loop(torch.float16, torch.float16) == 9.953125
    assert fp32 == torch_loop(torch.float32, torch.float32)
    assert mixed == torch_loop(torch.float16, torch.float32)
    assert abs(fp32 - 10.0001) < 1e-4
    assert abs(mixed - 10.002) < 2e-4
    # the float16-accumulator loss: once the sum passes 8, the gap between float16
    # numbers is 2**-7 = 0.0078, and 0.01 rounds to 0.0078125 when added
    assert np.float16(8.0) + np.float16(0.01) == np.float16(8.0078125)
