"""Bitwise ops: ``&``, ``|``, ``^``, ``~``, ``<<``, ``>>`` and their
``bitwise_*`` names.

On integers they work on the bits of the two's-complement representation
(``-8 & 0x1337 == 4912``); on bool tensors, whose only bit is the value,
they are the logical and, or, xor and not. Floating tensors have no bits to
speak of, so they are refused, as in torch. The results are integers or
bools, which carry no gradient: no derivative rules, and the ops are never
recorded in the history.

Operands are promoted first (:func:`~chapters.autodiff.core.operands`), so
``bool_tensor & 3`` is int64 and ``int32_tensor & int64_tensor`` int64.

The Tensor methods and operators are given to :class:`~..tensor.Tensor`
here, by :func:`_attach`, next to the ops they call.
"""

from __future__ import annotations

import numpy as np

from chapters.graph.ops import TensorMeta, broadcast_shapes, register_op

from ..core import operands
from ..dispatch import public
from ..rules import register
from ..tensor import Tensor, apply


def _bits_meta(op: str, *, bool_ok: bool = True):
    def infer(a: TensorMeta, b: TensorMeta, **_) -> TensorMeta:
        for x in (a, b):
            _check_integral(op, x.dtype, bool_ok)
        return TensorMeta(broadcast_shapes(op, a.shape, b.shape), np.result_type(a.dtype, b.dtype))

    return infer


def _check_integral(op: str, dtype: np.dtype, bool_ok: bool = True) -> None:
    """Bitwise ops need integer (or, where allowed, bool) operands; torch
    raises NotImplementedError for the others, and so do we."""
    kinds = "biu" if bool_ok else "iu"
    if np.dtype(dtype).kind not in kinds:
        allowed = "integer or bool" if bool_ok else "integer"
        raise NotImplementedError(
            f"{op}: expected {allowed} tensors, got {dtype}. Bitwise ops act on the bits of "
            "integers; convert first (x.long()), or compare floats with ==, <, ... instead.")


# ------------------------------------------------------- and, or, xor, not


def _bitwise(op: str, ufunc):
    """Register ``op`` with numpy's ``ufunc`` as its kernel (numpy refuses
    floats; the meta rule then says why)."""

    def kernel(a, b):
        return ufunc(a, b)

    kernel.__name__ = op
    kernel.__doc__ = f"``{ufunc.__name__}`` elementwise: on the bits of integers, logical on bools."
    return register_op(op, _bits_meta(op), elementwise=True)(kernel)


bitwise_and = _bitwise("bitwise_and", np.bitwise_and)
bitwise_or = _bitwise("bitwise_or", np.bitwise_or)
bitwise_xor = _bitwise("bitwise_xor", np.bitwise_xor)


def _not_meta(x: TensorMeta, **_) -> TensorMeta:
    _check_integral("bitwise_not", x.dtype)
    return x


@register_op("bitwise_not", _not_meta, elementwise=True)
def bitwise_not(x):
    """~x: every bit flipped (-x - 1 in two's complement); logical not on bools."""
    return np.invert(x)


# ------------------------------------------------------------------ shifts


def _shift_out_of_range(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Where the shift amount is negative or at least the width in bits:
    C leaves those undefined; torch defines them, and so do we."""
    return (b < 0) | (b >= 8 * a.dtype.itemsize)


@register_op("bitwise_left_shift", _bits_meta("bitwise_left_shift", bool_ok=False),
             elementwise=True)
def bitwise_left_shift(a, b):
    """a << b = a * 2^b, wrapping around the integer's width; 0 when b < 0 or
    b >= the width in bits (torch's choice)."""
    _check_integral("bitwise_left_shift", np.result_type(a, b), bool_ok=False)
    out_of_range = _shift_out_of_range(a, b)
    shifted = np.left_shift(a, np.where(out_of_range, 0, b).astype(b.dtype, copy=False))
    return np.where(out_of_range, np.zeros((), a.dtype), shifted)


@register_op("bitwise_right_shift", _bits_meta("bitwise_right_shift", bool_ok=False),
             elementwise=True)
def bitwise_right_shift(a, b):
    """a >> b = floor(a / 2^b) (an arithmetic shift: the sign is kept); only
    the sign is left (-1 or 0) when b < 0 or b >= the width in bits (torch's choice)."""
    _check_integral("bitwise_right_shift", np.result_type(a, b), bool_ok=False)
    out_of_range = _shift_out_of_range(a, b)
    shifted = np.right_shift(a, np.where(out_of_range, 0, b).astype(b.dtype, copy=False))
    sign_only = np.where(a < 0, -1, 0).astype(a.dtype)
    return np.where(out_of_range, sign_only, shifted)


#: the ops of this family: integer or bool results, so no derivative rules
BITWISE_OPS = ("bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift",
               "bitwise_right_shift")
for _op in BITWISE_OPS:
    register(_op, movement=True)

# ------------------------------------------------------ the Tensor methods


def _binary_method(op: str, reverse: bool = False):
    @public(op)
    def method(self, other):
        a, b = operands(self, other)
        return apply(op, (b, a) if reverse else (a, b))

    method.__name__ = method.__qualname__ = op
    method.__doc__ = f"torch.{op}: see :func:`chapters.autodiff.ops.bitwise.{op}`."
    return method


@public("bitwise_not")
def _bitwise_not_method(self):
    """x.bitwise_not(): bits flipped on integers, logical not on bools."""
    return apply("bitwise_not", (self,))


def _invert(self):
    """~x, as bitwise_not; on a floating tensor torch's operator raises
    TypeError (bitwise_not raises NotImplementedError), and so does this."""
    if self.data.dtype.kind not in "biu":
        raise TypeError(f"~ (bitwise_not) is only implemented on integer and bool tensors, got "
                        f"{self.data.dtype}; for a float mask use x == 0 instead.")
    return _bitwise_not_method(self)


def _attach() -> None:
    """Give :class:`Tensor` the bitwise methods and operators: ``x.bitwise_and(y)``,
    ``x & y``, ``3 & x``, and so on for or, xor, the shifts and not."""
    for op, operator in (("bitwise_and", "and"), ("bitwise_or", "or"), ("bitwise_xor", "xor"),
                         ("bitwise_left_shift", "lshift"), ("bitwise_right_shift", "rshift")):
        forward = _binary_method(op)
        setattr(Tensor, op, forward)
        setattr(Tensor, f"__{operator}__", forward)
        setattr(Tensor, f"__r{operator}__", _binary_method(op, reverse=True))
    Tensor.bitwise_not = _bitwise_not_method
    Tensor.__invert__ = _invert


_attach()
