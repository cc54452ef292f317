"""Dtypes (数据类型) and PyTorch's type-promotion rules.

The engine's dtypes are numpy dtypes; ``bfloat16`` comes from ``ml_dtypes``
because numpy has none. Promotion follows PyTorch, not numpy, because the two
disagree where it matters for training:

* **categories** order the kinds: bool < integer < floating. The result's
  category is the highest among the operands.
* **Python scalars are weak**: ``half_tensor * 2.0`` stays float16 (numpy
  would also keep it, but ``int_tensor * 2.5`` gives torch's default float32,
  not numpy's float64).
* **zero-dimensional tensors are weak inside their category**: a float64 0-d
  tensor times a float32 matrix is float32.
* float16 with bfloat16 gives float32 (neither holds the other).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

float16 = np.dtype(np.float16)
bfloat16 = np.dtype(ml_dtypes.bfloat16)
float32 = np.dtype(np.float32)
float64 = np.dtype(np.float64)
int8 = np.dtype(np.int8)
int16 = np.dtype(np.int16)
int32 = np.dtype(np.int32)
int64 = np.dtype(np.int64)
uint8 = np.dtype(np.uint8)
bool_ = np.dtype(np.bool_)
# torch's second names for the same dtypes (torch.half is torch.float16, ...)
half, double, short, long = float16, float64, int16, int64
#: torch's names that are also Python builtins: served by the module's
#: ``__getattr__`` so this module's own ``float(...)`` and ``int(...)`` stay builtins
BUILTIN_NAMED = {"float": float32, "int": int32, "bool": bool_}

#: dtypes whose kernels run in float32 and round back, as PyTorch's CPU kernels do
LOW_PRECISION = (float16, bfloat16)
FLOATING = (float16, bfloat16, float32, float64)

_ALIASES = {"float16": float16, "half": float16, "bfloat16": bfloat16, "float32": float32,
            "float": float32, "float64": float64, "double": float64, "int64": int64,
            "long": int64, "int32": int32, "int": int32, "bool": bool_, "uint8": uint8,
            "int16": int16, "short": int16, "int8": int8}

#: torch's legacy type names (``x.type()``)
TYPE_NAMES = {float16: "HalfTensor", bfloat16: "BFloat16Tensor", float32: "FloatTensor",
              float64: "DoubleTensor", int8: "CharTensor", int16: "ShortTensor",
              int32: "IntTensor", int64: "LongTensor", uint8: "ByteTensor", bool_: "BoolTensor"}


def __getattr__(name: str):
    if name in BUILTIN_NAMED:
        return BUILTIN_NAMED[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def as_dtype(dtype) -> np.dtype:
    """A numpy dtype from a dtype, a name ("bfloat16", "half") or a torch dtype."""
    if isinstance(dtype, np.dtype):
        return dtype
    if isinstance(dtype, str):
        key = dtype
    elif type(dtype).__module__ == "torch":
        key = str(dtype).removeprefix("torch.")
    else:
        return np.dtype(dtype)
    try:
        return _ALIASES[key]
    except KeyError:
        raise TypeError(f"unknown dtype {dtype!r}; use one of {sorted(_ALIASES)}") from None


def is_floating(dtype: np.dtype) -> bool:
    return dtype in FLOATING


def category(dtype: np.dtype) -> int:
    """0 bool, 1 integer, 2 floating."""
    if dtype in FLOATING:
        return 2
    return 0 if dtype == bool_ else 1


def check_implemented(op: str, dtype: np.dtype, *, bool_ok: bool = True,
                      integer_ok: bool = True) -> None:
    """Refuse a dtype that torch's CPU kernel for ``op`` does not implement,
    with torch's exception type (NotImplementedError)."""
    if (dtype == bool_ and not bool_ok) or (category(dtype) == 1 and not integer_ok):
        convert = "x.float()" if not integer_ok else "x.long()"
        raise NotImplementedError(f"{op}: not implemented for {dtype} tensors (as in torch); "
                                  f"convert first, e.g. {convert}.")


def check_no_bool_sub(a, b) -> None:
    """torch refuses ``-`` whenever a bool tensor takes part, even with a number."""
    if bool_ in (getattr(a, "dtype", None), getattr(b, "dtype", None)):
        raise RuntimeError("sub: subtraction with a bool tensor is not supported; for two "
                           "masks use a ^ b (logical xor), to invert one use ~mask, or convert "
                           "first (mask.long()).")


def check_castable(op: str, result: np.dtype, target: np.dtype) -> None:
    """An in-place op writes its result into ``target``'s dtype: refused, as
    torch does, when that would drop a category (float into int, int into bool)."""
    if category(result) > category(target):
        raise RuntimeError(f"{op}: result type {result} can't be cast to the desired output "
                           f"type {target}; use the out-of-place op (y = x + z), or convert x "
                           f"first (x = x.to({result})).")


_PAIR_CACHE: dict[tuple[np.dtype, np.dtype], np.dtype] = {}


def promote_types(a: np.dtype, b: np.dtype) -> np.dtype:
    """``torch.promote_types`` for two dtypes of tensors with dimensions."""
    if a is b:
        return a
    key = (a, b)
    out = _PAIR_CACHE.get(key)
    if out is None:
        if {a, b} == {float16, bfloat16}:
            out = float32
        elif bfloat16 in key:
            other = b if a == bfloat16 else a
            out = bfloat16 if category(other) < 2 else (float64 if other == float64 else float32)
        else:
            out = np.promote_types(a, b)
        _PAIR_CACHE[key] = out
    return out


def default_dtype_for(value) -> np.dtype:
    """The dtype a Python scalar gets on its own: bool, int64 or float32."""
    if isinstance(value, bool | np.bool_):
        return bool_
    if isinstance(value, int | np.integer):
        return int64
    return float32


def result_dtype(operands) -> np.dtype:
    """The dtype of an op over ``operands`` (arrays or Python scalars), by
    PyTorch's rules: dimensioned tensors beat 0-d tensors beat Python scalars,
    unless a weaker operand has a higher category."""
    tiers: list[list[np.dtype]] = [[], [], []]  # scalars, 0-d tensors, tensors
    top = 0
    for x in operands:
        dtype = getattr(x, "dtype", None)
        if dtype is None or isinstance(x, np.generic):
            dtype, tier = default_dtype_for(x), 0
        else:
            tier = 2 if x.ndim else 1
        tiers[tier].append(dtype)
        top = max(top, category(dtype))
    for tier in (2, 1):
        candidates = [d for d in tiers[tier] if category(d) == top]
        if candidates:
            out = candidates[0]
            for d in candidates[1:]:
                out = promote_types(out, d)
            return out
    return {0: bool_, 1: int64, 2: float32}[top]
