"""Questions about tensors and dtypes (数据类型自省), answered as torch answers them.

``numel``, ``is_tensor`` and ``is_floating_point`` read a tensor's metadata;
``finfo`` and ``iinfo`` describe what a dtype can hold (float16 and bfloat16
included, from ``ml_dtypes``); ``result_type``, ``promote_types`` and
``can_cast`` ask the promotion rules of :mod:`.dtypes` (there is one table of
those rules, and this module only reads it).

The engine has one default floating dtype, float32, fixed in its factories:
``get_default_dtype`` reports it, and there is no ``set_default_dtype``.
"""

from __future__ import annotations

import ml_dtypes

from . import dtypes
from .tensor import Tensor


def _require_tensor(op: str, value) -> None:
    if not isinstance(value, Tensor):
        raise TypeError(f"{op}(): argument 'input' must be a Tensor, not "
                        f"{type(value).__name__}; wrap the value first (torch.tensor(value)).")


def numel(input) -> int:
    """torch.numel: the number of elements, the product of the sizes (1 for 0-d)."""
    _require_tensor("numel", input)
    return input.numel()


def is_tensor(obj) -> bool:
    """torch.is_tensor: whether ``obj`` is a Tensor (a numpy array is not)."""
    return isinstance(obj, Tensor)


def is_floating_point(input) -> bool:
    """torch.is_floating_point: whether the dtype is float16/bfloat16/float32/float64."""
    _require_tensor("is_floating_point", input)
    return input.is_floating_point()


def get_default_dtype():
    """torch.get_default_dtype: the dtype a Python float becomes (float32 here, always)."""
    return dtypes.float32


class finfo:
    """torch.finfo: the limits of a floating dtype.

    ``eps`` is the gap between 1 and the next representable number
    (2^-mantissa bits), ``tiny``/``smallest_normal`` the smallest positive
    normal number, ``resolution`` 10^-(decimal digits the dtype keeps)."""

    def __init__(self, type=None):  # noqa: A002  (torch's argument name)
        dtype = dtypes.float32 if type is None else dtypes.as_dtype(type)
        if not dtypes.is_floating(dtype):
            raise TypeError(f"torch.finfo() requires a floating point input type, got {dtype}; "
                            "use torch.iinfo for integer dtypes.")
        info = ml_dtypes.finfo(dtype)
        self.bits = int(info.bits)
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -int(info.precision)
        self.dtype = dtype.name

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.tiny:g}, tiny={self.tiny:g}, "
                f"dtype={self.dtype})")


class iinfo:
    """torch.iinfo: the range of an integer dtype, [min, max], in ``bits`` bits."""

    def __init__(self, type):  # noqa: A002  (torch's argument name)
        dtype = dtypes.as_dtype(type)
        if dtype == dtypes.bool_:
            raise TypeError("torch.bool is not supported by torch.iinfo (a bool holds only "
                            "False and True); use torch.iinfo(torch.uint8) for the "
                            "smallest integer dtype.")
        if dtypes.category(dtype) != 1:
            raise TypeError(f"torch.iinfo() requires an integer input type, got {dtype}; "
                            "use torch.finfo for floating dtypes.")
        info = ml_dtypes.iinfo(dtype)
        self.bits, self.min, self.max = int(info.bits), int(info.min), int(info.max)
        self.dtype = dtype.name

    def __repr__(self) -> str:
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"


def _operand(value):
    """What :func:`dtypes.result_dtype` reads: a tensor's array, or the Python number."""
    if isinstance(value, Tensor):
        return value.data
    if isinstance(value, bool | int | float):
        return value
    raise TypeError(f"result_type(): expected a Tensor or a Python number, got "
                    f"{type(value).__name__}; wrap it first (torch.tensor(value)).")


def result_type(tensor, other):
    """torch.result_type: the dtype an arithmetic op on the two operands
    returns (dimensioned tensors over 0-d tensors over Python numbers, unless
    the weaker operand is of a higher category: bool < integer < floating)."""
    return dtypes.result_dtype([_operand(tensor), _operand(other)])


def _dtype_arg(op: str, name: str, value):
    if isinstance(value, bool | int | float | Tensor):
        raise TypeError(f"{op}(): argument '{name}' must be a dtype, not "
                        f"{type(value).__name__}; pass x.dtype for a tensor x.")
    return dtypes.as_dtype(value)


def promote_types(type1, type2):
    """torch.promote_types: across categories the higher category's dtype
    wins as it is (int64 with float16 is float16); inside one category, the
    smallest dtype that holds both (float16 with bfloat16 is float32)."""
    a = _dtype_arg("promote_types", "type1", type1)
    b = _dtype_arg("promote_types", "type2", type2)
    if dtypes.category(a) != dtypes.category(b):  # int64 with float16 is float16
        return max(a, b, key=dtypes.category)
    return dtypes.promote_types(a, b)


def can_cast(from_, to):
    """torch.can_cast: whether an op may write a ``from_`` result into a
    ``to`` tensor: allowed unless it drops a category (float into an integer,
    an integer into bool); narrowing inside a category is allowed."""
    source = _dtype_arg("can_cast", "from_", from_)
    return dtypes.category(source) <= dtypes.category(_dtype_arg("can_cast", "to", to))
