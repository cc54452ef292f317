"""Floating-point formats (浮点格式) from their bit layout.

A binary floating-point format is three bit fields: 1 sign bit, ``E`` exponent
bits and ``M`` mantissa (fraction) bits. With ``bias = 2**(E-1) - 1``, a bit
pattern with exponent field ``e`` and fraction field ``f`` means

* ``0 < e < e_top``  (normal):    ``(-1)**s * 2**(e - bias) * (1 + f / 2**M)``
* ``e == 0``         (subnormal): ``(-1)**s * 2**(1 - bias) * (f / 2**M)``
* ``e == e_top``     (special):   IEEE formats use it for inf (``f == 0``) and NaN.

Everything a learner needs follows from ``E`` and ``M``:

* machine epsilon (the gap after 1.0) ``= 2**-M``;
* smallest normal ``= 2**(1 - bias)``; smallest subnormal ``= 2**(1 - bias - M)``;
* largest finite ``= 2**(e_max - bias) * (2 - 2**-M)`` with ``e_max = 2**E - 2``.

``float8_e4m3fn`` ("fn" = finite, NaN only) breaks the IEEE rule: it has no
infinities, the all-ones exponent holds ordinary numbers, and only the single
pattern ``S.1111.111`` is NaN. So its largest value is
``2**(15 - 7) * (1 + 6/8) = 448`` rather than ``2**7 * 1.875 = 240``.

The properties below are computed by this module's own arithmetic; the tests
check them against ``numpy.finfo`` / ``ml_dtypes.finfo`` and check
:func:`decode` against the hardware/library cast for every 8- and 16-bit pattern.
"""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np

from chapters.language import language


@dataclass(frozen=True)
class FloatFormat:
    """One binary floating-point format, described by its bit layout."""

    name: str
    exponent_bits: int
    mantissa_bits: int
    dtype: np.dtype
    ieee_specials: bool = True  # False: no inf, only all-ones pattern is NaN (the "fn" formats)

    @property
    def bits(self) -> int:
        return 1 + self.exponent_bits + self.mantissa_bits

    @property
    def bias(self) -> int:
        return 2 ** (self.exponent_bits - 1) - 1

    @property
    def has_inf(self) -> bool:
        return self.ieee_specials

    @property
    def eps(self) -> float:
        """Gap between 1.0 and the next representable number: ``2**-M``."""
        return 2.0 ** -self.mantissa_bits

    @property
    def smallest_normal(self) -> float:
        return 2.0 ** (1 - self.bias)

    @property
    def smallest_subnormal(self) -> float:
        return 2.0 ** (1 - self.bias - self.mantissa_bits)

    @property
    def max(self) -> float:
        """Largest finite value. IEEE: top exponent reserved, all fraction bits set.
        fn formats: top exponent usable, but the all-ones fraction there is NaN."""
        m = self.mantissa_bits
        top = 2**self.exponent_bits - 1
        if self.ieee_specials:
            return 2.0 ** (top - 1 - self.bias) * (2 - 2.0**-m)
        return 2.0 ** (top - self.bias) * (1 + (2**m - 2) / 2**m)

    @property
    def layout(self) -> str:
        return f"1 sign | {self.exponent_bits} exponent | {self.mantissa_bits} mantissa"


FORMATS: dict[str, FloatFormat] = {
    "float32": FloatFormat("float32", 8, 23, np.dtype(np.float32)),
    "float16": FloatFormat("float16", 5, 10, np.dtype(np.float16)),
    "bfloat16": FloatFormat("bfloat16", 8, 7, np.dtype(ml_dtypes.bfloat16)),
    "float8_e4m3fn": FloatFormat("float8_e4m3fn", 4, 3, np.dtype(ml_dtypes.float8_e4m3fn),
                                 ieee_specials=False),
    "float8_e5m2": FloatFormat("float8_e5m2", 5, 2, np.dtype(ml_dtypes.float8_e5m2)),
}

_ALIASES = {"fp32": "float32", "float": "float32", "single": "float32",
            "fp16": "float16", "half": "float16", "bf16": "bfloat16",
            "e4m3": "float8_e4m3fn", "e4m3fn": "float8_e4m3fn", "fp8_e4m3": "float8_e4m3fn",
            "e5m2": "float8_e5m2", "fp8_e5m2": "float8_e5m2"}


def get_format(spec) -> FloatFormat:
    """A :class:`FloatFormat` from a name (``"fp16"``, ``"bfloat16"``, ``"e4m3"``...),
    a numpy/ml_dtypes dtype, a torch dtype, or a FloatFormat."""
    if isinstance(spec, FloatFormat):
        return spec
    name = str(spec).removeprefix("torch.") if not isinstance(spec, str) else spec
    try:
        name = np.dtype(spec).name if not isinstance(spec, str) else name
    except TypeError:
        pass
    key = _ALIASES.get(name.lower(), name.lower())
    if key not in FORMATS:
        raise ValueError(
            f"unsupported floating-point format {spec!r}. Supported: "
            f"{', '.join(FORMATS)} (aliases: {', '.join(sorted(_ALIASES))})."
        )
    return FORMATS[key]


# ------------------------------------------------------------------ bit patterns


def _uint_dtype(fmt: FloatFormat):
    return {8: np.uint8, 16: np.uint16, 32: np.uint32}[fmt.bits]


@dataclass(frozen=True)
class Encoding:
    """How one value is stored in a format: its bit fields and what they mean."""

    format: str
    value: float          # the value asked for
    stored: float         # the nearest representable value (round to nearest even)
    sign: int
    exponent: int         # raw exponent field
    mantissa: int         # raw fraction field
    bit_string: str       # "s|eeeee|mmmmmmmmmm"
    kind: str             # "zero", "subnormal", "normal", "inf", "nan"

    @property
    def abs_error(self) -> float:
        return abs(self.stored - self.value)

    @property
    def rel_error(self) -> float:
        return self.abs_error / abs(self.value) if self.value else 0.0


def fields(bits: int, fmt) -> tuple[int, int, int]:
    """Split an integer bit pattern into (sign, exponent field, fraction field)."""
    fmt = get_format(fmt)
    m, e = fmt.mantissa_bits, fmt.exponent_bits
    return (bits >> (e + m)) & 1, (bits >> m) & (2**e - 1), bits & (2**m - 1)


def classify(bits: int, fmt) -> str:
    """``"zero"``, ``"subnormal"``, ``"normal"``, ``"inf"`` or ``"nan"`` from the fields."""
    fmt = get_format(fmt)
    _, exp, frac = fields(bits, fmt)
    top = 2**fmt.exponent_bits - 1
    if exp == 0:
        return "zero" if frac == 0 else "subnormal"
    if exp == top:
        if fmt.ieee_specials:
            return "inf" if frac == 0 else "nan"
        if frac == 2**fmt.mantissa_bits - 1:
            return "nan"
    return "normal"


def decode(bits: int, fmt) -> float:
    """The value a bit pattern stands for, by the formula in the module docstring."""
    fmt = get_format(fmt)
    sign, exp, frac = fields(bits, fmt)
    s = -1.0 if sign else 1.0
    kind = classify(bits, fmt)
    m = fmt.mantissa_bits
    if kind == "nan":
        return float("nan")
    if kind == "inf":
        return s * float("inf")
    if kind in ("zero", "subnormal"):
        return s * 2.0 ** (1 - fmt.bias) * (frac / 2**m)
    return s * 2.0 ** (exp - fmt.bias) * (1 + frac / 2**m)


def to_bits(value, fmt) -> int:
    """The bit pattern of ``value`` rounded (to nearest, ties to even) into ``fmt``."""
    fmt = get_format(fmt)
    stored = np.asarray(value, dtype=np.float64).astype(np.float32).astype(fmt.dtype) \
        if fmt.name != "float32" else np.asarray(value, dtype=np.float32)
    return int(stored.reshape(()).view(_uint_dtype(fmt)))


def encode(value: float, fmt) -> Encoding:
    """Round ``value`` into ``fmt`` and describe the stored bits.

    Rounding goes float64 -> float32 -> format, as a framework's cast from a
    float32 tensor does (double rounding can differ from a direct float64
    rounding only in the last bit of near-ties; tensors in this course start as
    float32).
    """
    fmt = get_format(fmt)
    with np.errstate(over="ignore"):
        bits = to_bits(value, fmt)
    sign, exp, frac = fields(bits, fmt)
    e, m = fmt.exponent_bits, fmt.mantissa_bits
    bit_string = f"{sign}|{exp:0{e}b}|{frac:0{m}b}"
    return Encoding(fmt.name, float(value), decode(bits, fmt), sign, exp, frac, bit_string,
                    classify(bits, fmt))


def all_values(fmt) -> np.ndarray:
    """Every value an 8- or 16-bit format can hold, decoded by the library's cast
    (one entry per bit pattern, as float64; NaNs included)."""
    fmt = get_format(fmt)
    if fmt.bits > 16:
        raise ValueError(f"all_values: {fmt.name} has 2**{fmt.bits} patterns; "
                         "only 8- and 16-bit formats can be enumerated")
    patterns = np.arange(2**fmt.bits, dtype=np.uint32).astype(_uint_dtype(fmt))
    with np.errstate(invalid="ignore"):
        return patterns.view(fmt.dtype).astype(np.float64)


# ------------------------------------------------------------------ quantization


# QuantizeReport's sentence in each language the course speaks (chapters.language picks one)
REPORT_TEXT = {
    "en": "{format}: overflow {overflow:.2%}, underflow to zero {underflow:.2%}, subnormal "
          "{subnormal:.2%}, max relative error (normal values) {max_rel_error:.3g}",
    "zh": "{format}：溢出 {overflow:.2%}，下溢为零 {underflow:.2%}，非规格化数 {subnormal:.2%}，"
          "最大相对误差（规格化数）{max_rel_error:.3g}",
}


@dataclass(frozen=True)
class QuantizeReport:
    """What happened to an array cast into a format.

    Fractions are over the finite, non-zero inputs: ``overflow`` became inf
    (NaN for e4m3fn, which has no inf), ``underflow`` became zero, ``subnormal``
    landed below the smallest normal (kept, with fewer significant bits)."""

    format: str
    values: np.ndarray
    overflow: float
    underflow: float
    subnormal: float
    max_rel_error: float   # over the elements that stayed normal and finite

    def __str__(self) -> str:
        """The four fractions and the error in one line, in the course's language."""
        return REPORT_TEXT[language()].format(
            format=self.format, overflow=self.overflow, underflow=self.underflow,
            subnormal=self.subnormal, max_rel_error=self.max_rel_error)


def quantize(array, fmt) -> QuantizeReport:
    """Cast ``array`` to ``fmt`` (round to nearest even) and report overflow,
    underflow and subnormal fractions. NaN inputs are rejected: a NaN cannot
    overflow or underflow, and it would hide the numbers that did."""
    fmt = get_format(fmt)
    x = np.asarray(array, dtype=np.float32)
    if np.isnan(x).any():
        raise ValueError(f"quantize to {fmt.name}: the input holds {int(np.isnan(x).sum())} "
                         "NaN value(s); find where they come from (torch.isnan / "
                         "np.isnan) before studying rounding")
    with np.errstate(over="ignore", invalid="ignore"):
        q = x.astype(fmt.dtype)
    q64, x64 = q.astype(np.float64), x.astype(np.float64)
    considered = np.isfinite(x64) & (x64 != 0)
    n = max(int(considered.sum()), 1)
    overflow = considered & ~np.isfinite(q64)
    underflow = considered & (q64 == 0)
    subnormal = considered & np.isfinite(q64) & (q64 != 0) & (np.abs(q64) < fmt.smallest_normal)
    normal = considered & np.isfinite(q64) & (np.abs(q64) >= fmt.smallest_normal)
    rel = np.abs(q64[normal] - x64[normal]) / np.abs(x64[normal])
    return QuantizeReport(fmt.name, q, overflow.sum() / n, underflow.sum() / n,
                          subnormal.sum() / n, float(rel.max()) if rel.size else 0.0)


def sum_repeatedly(value: float, count: int, addend_dtype, accumulate_dtype) -> float:
    """Add ``value`` (rounded to ``addend_dtype``) ``count`` times into an
    accumulator of ``accumulate_dtype``, rounding after every addition, as a
    sequential loop on hardware would. Returns the final sum as a float."""
    addend = np.asarray(value, np.float32).astype(get_format(addend_dtype).dtype)
    acc_type = get_format(accumulate_dtype).dtype
    addend = addend.astype(acc_type)
    total = np.zeros((), acc_type)
    for _ in range(count):
        total = (total + addend).astype(acc_type)
    return float(total)
