"""The user-facing value type shared by eager execution and tracing.

A :class:`Value` is an array *in flight*: its ``data`` (a numpy array) and the
graph ``node`` that produced it. Every operator and method on a ``Value``
(``x * y``, ``x.tanh()``, ``x.sum(dim=1)``) goes through :func:`apply`, which
asks the value's :class:`Recorder` to run the op. The recorder decides what
"running" means:

* **eager** (动态图): compute the result now, and append a node to the
  graph of what ran (or record nothing, the plain-numpy baseline);
* **trace** (追踪): the same, but the graph is the product, and every place
  where Python reads the *data* of a value (``if x.sum() > 0:``) is a place
  where the trace silently stops being general, so it warns.

The methods mirror ``torch.Tensor``'s names (``tanh``, ``sum(dim, keepdim)``,
``reshape``, ``transpose``), so one Python function runs on our values, on
``torch.Tensor`` and on ``torch.fx`` proxies alike; the torch.fx comparison
relies on that.

Python scalars combine with a value the way PyTorch's do: they are *weak*,
taking the value's dtype (``float32 * 0.5`` stays float32), where NumPy would
promote to float64.
"""

from __future__ import annotations

import numpy as np

from .ir import Graph, Node
from .ops import TensorMeta, get_op
from .source import user_location


class Recorder:
    """Where values of one run report their ops: a mode and (maybe) a graph."""

    def __init__(self, graph: Graph | None, mode: str = "eager"):
        self.graph = graph
        self.mode = mode  # "eager" or "trace"

    def leaf(self, array, name: str) -> Value:
        """An input of the run: a placeholder node holding ``array``."""
        array = np.asarray(array)
        node = None
        if self.graph is not None:
            node = self.graph.placeholder(name, array.shape, array.dtype)
        return Value(array, node, self)

    def lift(self, constant, like: np.dtype | None) -> Value:
        """A non-value operand (Python scalar or array) becomes a constant."""
        array = weak_scalar(constant, like)
        node = self.graph.constant(array) if self.graph is not None else None
        return Value(array, node, self)

    def apply(self, op: str, inputs: list[Value], attrs: dict) -> Value:
        opdef = get_op(op)
        arrays = [v.data for v in inputs]
        if self.graph is None:
            return Value(opdef(*arrays, **attrs), None, self)
        node = self.graph.call(op, *(v.node for v in inputs), **attrs)  # checks shapes
        if self.mode == "trace":
            node.source = user_location()
        data = opdef.kernel(*arrays, **attrs)
        return Value(data, node, self)


def weak_scalar(constant, like: np.dtype | None) -> np.ndarray:
    """A Python number takes the dtype of the tensor it meets (PyTorch's rule),
    unless that would lose its kind: a float meeting an integer tensor becomes
    float32 (the default dtype), an int meeting a bool tensor int64.

    One difference remains on purpose: ``int64_tensor * 0.5`` is float64 here,
    because the registry's dtype rules are NumPy's (int64 with float32 gives
    float64), where torch gives float32. The course's graphs compute in floats.
    """
    if not isinstance(constant, bool | int | float):
        return np.asarray(constant)
    if like is None or isinstance(constant, bool):
        return np.asarray(constant, np.float32 if isinstance(constant, float) else None)
    if isinstance(constant, float) and not np.issubdtype(like, np.inexact):
        return np.asarray(constant, np.float32)
    if like == np.bool_:
        return np.asarray(constant, np.int64)
    return np.asarray(constant, like)


def apply(op: str, *args, **attrs):
    """Run ``op`` on values (and constants); plain arrays give a plain array."""
    values = [a for a in args if isinstance(a, Value)]
    if not values:
        return get_op(op)(*(np.asarray(a) for a in args), **attrs)
    recorder = values[0].recorder
    if any(v.recorder is not recorder for v in values):
        raise ValueError(
            f"{op}: its inputs come from different runs (two traces or an eager run "
            "and a trace); values of one run cannot be combined with another's."
        )
    like = np.result_type(*(v.dtype for v in values))
    inputs = [a if isinstance(a, Value) else recorder.lift(a, like) for a in args]
    return recorder.apply(op, inputs, attrs)


class TracerWarning(UserWarning):
    """A traced function read a value's data in Python; the graph may not
    generalise to other inputs (the name and meaning follow torch.jit)."""


class Value:
    """An array plus the node that produced it (``node`` is None when the
    run records nothing)."""

    __slots__ = ("data", "node", "recorder")
    __array_ufunc__ = None  # ndarray (op) Value defers to Value's reflected method

    def __init__(self, data: np.ndarray, node: Node | None, recorder: Recorder):
        self.data = data
        self.node = node
        self.recorder = recorder

    # ------------------------------------------------------------ metadata
    @property
    def shape(self) -> tuple[int, ...]:
        return self.data.shape

    @property
    def dtype(self) -> np.dtype:
        return self.data.dtype

    @property
    def ndim(self) -> int:
        return self.data.ndim

    @property
    def meta(self) -> TensorMeta:
        return TensorMeta.of(self.data)

    def __len__(self) -> int:
        return self.shape[0]

    def __repr__(self) -> str:
        where = f", node={self.node.name}" if self.node is not None else ""
        return f"Value({np.array2string(self.data, precision=4, threshold=8)}{where})"

    # ------------------------------------------ leaving the graph: data reads
    def _read(self, what: str):
        if self.recorder.mode == "trace":
            import warnings

            warnings.warn(
                f"Converting a traced value ({self.node.name if self.node else '?'}, "
                f"shape {list(self.shape)}) to {what}. The trace records only the result "
                "for the example input: any Python branch or loop that depends on it is "
                "baked into the graph as a constant, and the graph may be wrong for "
                "other inputs. Express the choice as a graph op instead (e.g. where).",
                TracerWarning, stacklevel=3,
            )
        return self.data

    def __bool__(self) -> bool:
        return bool(self._read("a Python bool"))

    def __float__(self) -> float:
        return float(self._read("a Python float"))

    def __int__(self) -> int:
        return int(self._read("a Python int"))

    def __index__(self) -> int:
        return int(self._read("a Python index"))

    def item(self):
        return self._read("a Python number (.item())").item()

    def numpy(self) -> np.ndarray:
        return self._read("a NumPy array (.numpy())")

    def __array__(self, dtype=None, copy=None):
        data = self._read("a NumPy array")
        return data if dtype is None else data.astype(dtype)

    # ------------------------------------------------------------ arithmetic
    def __add__(self, o): return apply("add", self, o)
    def __radd__(self, o): return apply("add", o, self)
    def __sub__(self, o): return apply("sub", self, o)
    def __rsub__(self, o): return apply("sub", o, self)
    def __mul__(self, o): return apply("mul", self, o)
    def __rmul__(self, o): return apply("mul", o, self)
    def __truediv__(self, o): return apply("div", self, o)
    def __rtruediv__(self, o): return apply("div", o, self)
    def __pow__(self, o): return apply("pow", self, o)
    def __rpow__(self, o): return apply("pow", o, self)
    def __matmul__(self, o): return apply("matmul", self, o)
    def __rmatmul__(self, o): return apply("matmul", o, self)
    def __neg__(self): return apply("neg", self)
    def __abs__(self): return apply("abs", self)
    def __lt__(self, o): return apply("lt", self, o)
    def __le__(self, o): return apply("le", self, o)
    def __gt__(self, o): return apply("gt", self, o)
    def __ge__(self, o): return apply("ge", self, o)
    def __eq__(self, o): return apply("eq", self, o)  # elementwise, as in torch
    def __ne__(self, o): return apply("ne", self, o)
    __hash__ = object.__hash__

    # --------------------------------------------------- torch.Tensor methods
    def add(self, o): return apply("add", self, o)
    def sub(self, o): return apply("sub", self, o)
    def mul(self, o): return apply("mul", self, o)
    def div(self, o): return apply("div", self, o)
    def pow(self, o): return apply("pow", self, o)
    def matmul(self, o): return apply("matmul", self, o)
    def maximum(self, o): return apply("maximum", self, o)
    def minimum(self, o): return apply("minimum", self, o)
    def neg(self): return apply("neg", self)
    def exp(self): return apply("exp", self)
    def log(self): return apply("log", self)
    def sqrt(self): return apply("sqrt", self)
    def abs(self): return apply("abs", self)
    def tanh(self): return apply("tanh", self)
    def relu(self): return apply("relu", self)
    def sigmoid(self): return apply("sigmoid", self)
    def softmax(self, dim=-1): return apply("softmax", self, dim=dim)

    def sum(self, dim=None, keepdim=False):
        return apply("sum", self, dim=dim, keepdim=keepdim)

    def mean(self, dim=None, keepdim=False):
        return apply("mean", self, dim=dim, keepdim=keepdim)

    def reshape(self, *shape):
        shape = tuple(shape[0]) if len(shape) == 1 and not isinstance(shape[0], int) else shape
        return apply("reshape", self, shape=tuple(int(s) for s in shape))

    def transpose(self, dim0, dim1):
        return apply("transpose", self, dim0=dim0, dim1=dim1)

    def permute(self, *dims):
        dims = tuple(dims[0]) if len(dims) == 1 and not isinstance(dims[0], int) else dims
        return apply("permute", self, dims=tuple(dims))

    def broadcast_to(self, shape):
        return apply("broadcast_to", self, shape=tuple(shape))

    def expand(self, *shape):
        return self.broadcast_to(shape)

    @property
    def T(self):  # noqa: N802  (torch's name)
        return self.transpose(-2, -1) if self.ndim >= 2 else self


def where(cond, a, b):
    """``cond ? a : b`` as a graph op (``torch.where``): the traceable way to
    choose per element, instead of a Python ``if`` on data."""
    return apply("where", cond, a, b)


def maximum(a, b):
    """Elementwise max (``torch.maximum``)."""
    return apply("maximum", a, b)


def minimum(a, b):
    """Elementwise min (``torch.minimum``)."""
    return apply("minimum", a, b)
