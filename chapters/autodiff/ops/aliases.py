"""torch's other names for ops the engine already has, and the top-level
forms of the comparison methods.

Each alias is the same function under a second name: ``torch.multiply`` is
``torch.mul``, ``x.greater(y)`` is ``x.gt(y)``, so values, dtypes, gradients
and errors are those of the op it names (and its autocast row, since the
call goes through that op's public door). No kernel and no rule here.
"""

from __future__ import annotations

from ..tensor import Tensor

#: alias -> the Tensor method it names
METHOD_ALIASES = {
    "multiply": "mul", "subtract": "sub", "divide": "div", "absolute": "abs",
    "negative": "neg", "greater": "gt", "less": "lt", "greater_equal": "ge",
    "less_equal": "le", "not_equal": "ne",
}


def _function(name: str, method: str):
    """``torch.<name>(input, ...)``: ``input.<method>(...)`` as a function."""

    def fn(input, *args, **kwargs):
        return getattr(input, method)(*args, **kwargs)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"torch.{name}: ``input.{method}(...)`` as a function."
    return fn


def true_divide(input, other):
    """torch.true_divide: ``input / other`` (div without a rounding mode)."""
    return input.div(other)


def _attach_aliases() -> None:
    """Give Tensor each alias of :data:`METHOD_ALIASES`, and ``true_divide``
    (a name Tensor has already is refused)."""
    for alias, method in {**METHOD_ALIASES, "true_divide": None}.items():
        if alias in vars(Tensor):
            raise ValueError(f"Tensor.{alias} is already defined; drop it from METHOD_ALIASES")
        setattr(Tensor, alias, true_divide if method is None else getattr(Tensor, method))


_attach_aliases()

multiply, subtract, divide, absolute, negative = (
    _function(n, METHOD_ALIASES[n]) for n in ("multiply", "subtract", "divide", "absolute",
                                              "negative"))
greater, less, greater_equal, less_equal, not_equal = (
    _function(n, METHOD_ALIASES[n]) for n in ("greater", "less", "greater_equal", "less_equal",
                                              "not_equal"))
eq, ne, lt, le, gt, ge = (_function(n, n) for n in ("eq", "ne", "lt", "le", "gt", "ge"))
