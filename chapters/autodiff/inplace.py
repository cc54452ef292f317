"""In-place twins: ``x.exp_()`` for ``x.exp()``, made in one place.

torch gives most value-computing Tensor methods a twin with a trailing
underscore that overwrites x instead of returning a new tensor. Here each
twin is built from its out-of-place method by one recipe (``add_`` and ``+=``
included), the same one the hand-written writes of :mod:`.tensor` follow
(``fill_``, ``copy_``):

1. refuse what the engine's in-place ops refuse (``Tensor._check_inplace``:
   a leaf that requires grad under grad mode, or any operand in the history,
   since in-place updates are not recorded here);
2. compute the out-of-place result on x's values (outside autocast, which
   torch does not apply to in-place ops);
3. refuse a result whose shape is not x's (the other operand broadcast x to
   a larger shape) or whose dtype x cannot hold (a float result into an
   integer x), with torch's RuntimeError;
4. write it into x's array, in x's dtype, and bump x's version counter.

Left out: the twins that change x's shape rather than its values
(``squeeze_``, ``unsqueeze_``, ``t_``, ``transpose_``): this engine's tensors
hold their shape in their numpy array, so those would replace the array,
not write into it, and views of x would no longer see x.
"""

from __future__ import annotations

from . import dtypes
from .dispatch import suppress_hook
from .ops import (  # noqa: F401  (these op families attach methods twinned here)
    bitwise,
    comparison,
    contract,
    elementwise,
    products,
    rearrange,
    rounding,
    scan,
    scatter_reduce,
    select,
    take_put,
)
from .tensor import Tensor

#: out-of-place methods whose torch in-place twin is ``name + "_"``
TWINS = (
    "add", "sub", "mul", "div", "clamp",
    "abs", "neg", "sign", "relu", "sigmoid", "tanh", "exp", "expm1", "log", "log2", "log10",
    "log1p", "sqrt", "rsqrt", "square", "erf", "sin", "cos", "tan", "asin", "acos", "atan",
    "arcsin", "arccos", "arctan", "floor", "ceil", "round", "trunc", "fix", "frac",
    "pow", "remainder", "fmod", "floor_divide", "copysign",
    "clip", "clamp_min", "clamp_max",
    "eq", "ne", "lt", "le", "gt", "ge",
    "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift",
    "bitwise_right_shift",
    "cumsum", "cumprod", "tril", "triu", "masked_fill", "scatter", "scatter_add",
    "scatter_reduce", "addmm", "addmv", "baddbmm",
    "index_add", "index_copy", "index_fill", "index_put",
    "reciprocal", "exp2", "sinh", "cosh", "asinh", "acosh", "atanh", "arcsinh", "arccosh",
    "arctanh", "sinc", "deg2rad", "rad2deg", "nan_to_num", "logical_not",
    "atan2", "arctan2", "hypot", "xlogy", "logical_and", "logical_or", "logical_xor",
    "multiply", "subtract", "divide", "true_divide", "absolute", "negative",
    "greater", "less", "greater_equal", "less_equal", "not_equal",
)

#: twins torch computes in x's own dtype, where its kernels have no bool version
#: (the out-of-place scans accumulate bools as int64 instead)
NO_BOOL = ("cumsum", "cumprod")


def _check_operands(x: Tensor, op: str, operands: tuple) -> None:
    """Step 1 of the recipe, for x and every tensor operand."""
    others = [o for o in operands if isinstance(o, Tensor)] or [None]
    for other in others:
        x._check_inplace(op, other)


def _write_back(x: Tensor, op: str, result: Tensor) -> Tensor:
    """Steps 3 and 4: the result must fit x's shape and dtype."""
    if result.shape != x.shape:
        raise RuntimeError(f"{op}: output with shape {list(x.shape)} doesn't match the "
                           f"broadcast shape {list(result.shape)}; an in-place op cannot "
                           "grow its tensor, use the out-of-place form.")
    dtypes.check_castable(op, result.dtype, x.dtype)
    x.data[...] = result.data
    x._vbox[0] += 1
    return x


def inplace_twin(name: str):
    """``Tensor.<name>_``: ``Tensor.<name>`` written back into the tensor."""
    out_of_place = getattr(Tensor, name)
    op = f"{name}_"

    def twin(self, *args, **kwargs):
        _check_operands(self, op, (*args, *kwargs.values()))
        if name in NO_BOOL:
            dtypes.check_implemented(op, self.data.dtype, bool_ok=False)
        with suppress_hook():  # torch's autocast leaves in-place ops alone
            result = out_of_place(self.detach(), *args, **kwargs)
        return _write_back(self, op, result)

    twin.__name__ = twin.__qualname__ = op
    twin.__doc__ = f"``{name}``, written into this tensor (its dtype must hold the result)."
    return twin


def attach_twins() -> None:
    """Give Tensor every twin in :data:`TWINS` (a name it has is refused)."""
    for name in TWINS:
        if f"{name}_" in vars(Tensor):
            raise ValueError(f"Tensor.{name}_ is already defined; drop {name!r} from TWINS")
        setattr(Tensor, f"{name}_", inplace_twin(name))


attach_twins()
