"""The op registry (算子注册表): every primitive the course's engines know.

An op is three things, and nothing more:

* a **name** (``"add"``, ``"matmul"``, ...), the key every engine uses;
* a **kernel**: a numpy function ``kernel(*arrays, **attrs) -> ndarray`` that
  computes the result;
* a **meta rule** ``infer(*metas, **attrs) -> TensorMeta`` that says what
  shape and dtype the result will have *without running the kernel*.

The meta rule is what lets a tracer build a whole graph from shapes alone, lets
a memory planner size buffers before anything runs, and lets shape errors
surface at the line that caused them rather than deep inside numpy.

Later chapters extend this table through :func:`register_op`: chapter 2 adds
neural-network ops (conv2d, layer_norm, ...) and attaches derivative rules to
every op by name; chapter 4 adds casts. Argument names follow PyTorch
(``dim``, ``keepdim``) so a node reads like the torch call it stands for.

An op's registration may also say how ``torch.fx`` names the same node
(``fx_targets``, read by :mod:`.fx_compare`): ``"operator.mul"`` for a Python
operator (``x * y``), ``"torch.mul"`` or ``"torch.nn.functional.relu"`` for a
function, ``"Tensor.mul"`` for a method call (``x.mul(y)``, a ``call_method``
node). They are strings so that this numpy module does not import torch.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

Shape = tuple[int, ...]


class ShapeError(RuntimeError):
    """An op was given inputs whose shapes do not fit together.

    A ``RuntimeError``, the type PyTorch raises for the same mistake, so code
    written to catch torch's errors catches ours (with a clearer message)."""


class DimError(ShapeError, IndexError):
    """A ``dim`` argument outside ``[-ndim, ndim - 1]``: an ``IndexError``, as
    in PyTorch, and a :class:`ShapeError`."""


class UnknownOpError(KeyError):
    """An op name that is not in the registry."""

    def __str__(self) -> str:  # KeyError would otherwise print the repr
        return str(self.args[0])


@dataclass(frozen=True)
class TensorMeta:
    """What a tensor *is* without its values: its shape and its dtype."""

    shape: Shape
    dtype: np.dtype

    def __post_init__(self):
        object.__setattr__(self, "shape", tuple(int(s) for s in self.shape))
        object.__setattr__(self, "dtype", np.dtype(self.dtype))

    @property
    def numel(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def nbytes(self) -> int:
        return self.numel * self.dtype.itemsize

    @staticmethod
    def of(array) -> TensorMeta:
        array = np.asarray(array)
        return TensorMeta(array.shape, array.dtype)


@dataclass(frozen=True)
class OpDef:
    """One registry entry. ``elementwise`` ops may be fused into one kernel;
    ``fx_targets`` are torch.fx's names for the op (see the module docstring)."""

    name: str
    kernel: Callable[..., np.ndarray]
    infer: Callable[..., TensorMeta]
    elementwise: bool = False
    doc: str = ""
    fx_targets: tuple[str, ...] = ()

    def __call__(self, *arrays, **attrs) -> np.ndarray:
        """Run the op eagerly: check shapes with the meta rule, then compute."""
        self.infer(*(TensorMeta.of(a) for a in arrays), **attrs)
        return self.kernel(*arrays, **attrs)


REGISTRY: dict[str, OpDef] = {}


def register_op(name: str, infer: Callable[..., TensorMeta], *, elementwise: bool = False,
                fx_targets: tuple[str, ...] = ()):
    """Decorator: register ``kernel`` under ``name`` with its meta rule (and,
    optionally, torch.fx's names for it)."""

    def decorate(kernel):
        if name in REGISTRY:
            raise ValueError(f"op {name!r} is already registered; pick another name")
        REGISTRY[name] = OpDef(name, kernel, infer, elementwise, (kernel.__doc__ or "").strip(),
                               tuple(fx_targets))
        return kernel

    return decorate


def get_op(name: str) -> OpDef:
    """Look an op up by name, suggesting the closest names when it is missing."""
    try:
        return REGISTRY[name]
    except KeyError:
        close = difflib.get_close_matches(name, REGISTRY, n=3)
        hint = f" Did you mean {', '.join(map(repr, close))}?" if close else ""
        raise UnknownOpError(
            f"unknown op {name!r}: it is not in the op registry.{hint} "
            f"Known ops: {', '.join(sorted(REGISTRY))}. "
            "New ops are added with chapters.graph.register_op."
        ) from None


# ---------------------------------------------------------------- shape rules


def broadcast_shapes(op: str, *shapes: Shape) -> Shape:
    """NumPy/PyTorch broadcasting: align shapes on the right; each dimension
    pair must be equal or contain a 1, and the result takes the larger size.

    ``(8, 1, 3) , (4, 1) -> (8, 4, 3)``.
    """
    ndim = max((len(s) for s in shapes), default=0)
    padded = [(1,) * (ndim - len(s)) + tuple(s) for s in shapes]
    out = []
    for axis in range(ndim):
        sizes = {p[axis] for p in padded} - {1}
        if len(sizes) > 1:
            listed = " and ".join(str(tuple(s)) for s in shapes)
            raise ShapeError(
                f"{op}: shapes {listed} cannot be broadcast together: dimension "
                f"{axis - ndim} has sizes {sorted(sizes)}. Broadcasting needs each "
                "dimension (aligned from the right) to be equal or 1; reshape or "
                "unsqueeze one input so they line up."
            )
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def check_dim(op: str, dim: int, ndim: int) -> int:
    """``dim`` as a non-negative axis of a tensor with ``ndim`` dimensions, or
    :class:`DimError` when it is outside ``[-ndim, ndim - 1]`` (never wrapped
    around). A 0-d tensor accepts 0 and -1, as in PyTorch."""
    size = max(ndim, 1)
    if not -size <= dim < size:
        raise DimError(
            f"{op}: dim {dim} is out of range for a tensor with {ndim} dimensions "
            f"(valid: {-size} to {size - 1}).")
    return int(dim) % size


def normalize_dims(op: str, dim, ndim: int) -> tuple[int, ...]:
    """``dim`` as a sorted tuple of non-negative axes (``None`` means all)."""
    if dim is None:
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, int | np.integer) else tuple(dim)
    out = [check_dim(op, d, ndim) for d in dims]
    if len(set(out)) != len(out):
        raise ShapeError(f"{op}: dim {dim} names the same dimension twice.")
    return tuple(sorted(out))


def float_dtype(dtype: np.dtype) -> np.dtype:
    """Transcendental ops on integers give float32, as in PyTorch."""
    dtype = np.dtype(dtype)
    return dtype if np.issubdtype(dtype, np.inexact) else np.dtype(np.float32)


def same_meta(x: TensorMeta, **_) -> TensorMeta:
    """Meta rule of an op whose result is shaped and typed like its input."""
    return x


def floating_meta(x: TensorMeta, **_) -> TensorMeta:
    """Meta rule of a transcendental op: the input's shape, a floating dtype."""
    return TensorMeta(x.shape, float_dtype(x.dtype))


def _binary(op: str):
    def infer(a: TensorMeta, b: TensorMeta, **_) -> TensorMeta:
        return TensorMeta(broadcast_shapes(op, a.shape, b.shape), np.result_type(a.dtype, b.dtype))

    return infer


def _binary_float(op: str):
    def infer(a: TensorMeta, b: TensorMeta, **_) -> TensorMeta:
        shape = broadcast_shapes(op, a.shape, b.shape)
        return TensorMeta(shape, float_dtype(np.result_type(a.dtype, b.dtype)))

    return infer


def _compare(op: str):
    def infer(a: TensorMeta, b: TensorMeta, **_) -> TensorMeta:
        return TensorMeta(broadcast_shapes(op, a.shape, b.shape), np.bool_)

    return infer


def reduced_shape(op: str, shape: Shape, dim, keepdim: bool) -> Shape:
    dims = normalize_dims(op, dim, len(shape))
    if keepdim:
        return tuple(1 if i in dims else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in dims)


def _reduction(op: str, *, floating: bool):
    def infer(x: TensorMeta, dim=None, keepdim=False, **_) -> TensorMeta:
        dtype = float_dtype(x.dtype) if floating else sum_dtype(x.dtype)
        return TensorMeta(reduced_shape(op, x.shape, dim, keepdim), dtype)

    return infer


def axes(dim, ndim):
    """``dim`` as numpy's ``axis``: None (every axis) or a tuple of axes. A 0-d
    tensor has no axis to reduce: its dim 0 (or -1) is the empty tuple."""
    if dim is None:
        return None
    dims = normalize_dims("", dim, ndim)
    return dims if ndim else ()


# ---------------------------------------------------- sources: data entering


def _constant_meta(*, value, **_) -> TensorMeta:
    return TensorMeta.of(value)


@register_op("constant", _constant_meta)
def constant(*, value):
    """A value baked into the graph (a weight, a literal)."""
    return np.asarray(value)


def _placeholder_meta(*, shape, dtype, name=None) -> TensorMeta:
    return TensorMeta(shape, dtype)


@register_op("placeholder", _placeholder_meta)
def placeholder(*, shape, dtype, name=None):
    """An input of the graph; its value is supplied when the graph runs."""
    raise RuntimeError(
        f"placeholder {name!r} has no value: pass it when running the graph, "
        "e.g. run(graph, x=array)."
    )


# ------------------------------------------------------ elementwise: binary


@register_op("add", _binary("add"), elementwise=True,
             fx_targets=("operator.add", "torch.add", "Tensor.add"))
def add(a, b):
    """a + b."""
    return np.add(a, b)


@register_op("sub", _binary("sub"), elementwise=True,
             fx_targets=("operator.sub", "torch.sub", "Tensor.sub"))
def sub(a, b):
    """a - b (refused for two bools, as torch: use ^ or logical_xor)."""
    try:
        return np.subtract(a, b)
    except TypeError:
        if np.result_type(a, b) != np.bool_:
            raise
        raise RuntimeError("subtracting two bool tensors is not supported; use a ^ b "
                           "(logical xor) or a & ~b instead.") from None


@register_op("mul", _binary("mul"), elementwise=True,
             fx_targets=("operator.mul", "torch.mul", "Tensor.mul"))
def mul(a, b):
    """a * b."""
    return np.multiply(a, b)


@register_op("div", _binary_float("div"), elementwise=True,
             fx_targets=("operator.truediv", "torch.div", "Tensor.div"))
def div(a, b):
    """a / b (true division: integers give float32, as torch.div)."""
    out_dtype = float_dtype(np.result_type(a, b))
    return np.true_divide(a, b).astype(out_dtype, copy=False)


@register_op("pow", _binary("pow"), elementwise=True,
             fx_targets=("operator.pow", "torch.pow", "Tensor.pow"))
def pow_(a, b):
    """a ** b (integers to negative integer powers: see integer_power)."""
    try:
        return np.power(a, b)
    except ValueError:  # numpy refuses integers to negative integer powers
        return integer_power(a, b)


def integer_power(a, b):
    """a ** b on integers where some b < 0, as torch computes it: the integer
    part of a^b, so 1 for a = 1, 1 or -1 for a = -1 (by the parity of b), 0
    for any other a."""
    a, b = np.broadcast_arrays(a, b)
    nonnegative = np.power(a, np.maximum(b, 0))
    sign = np.where(b % 2 == 0, 1, -1)
    negative = np.where(a == 1, 1, np.where(a == -1, sign, 0)).astype(nonnegative.dtype)
    return np.where(b < 0, negative, nonnegative)


@register_op("maximum", _binary("maximum"), elementwise=True,
             fx_targets=("torch.maximum", "Tensor.maximum"))
def maximum(a, b):
    """max(a, b) elementwise."""
    return np.maximum(a, b)


@register_op("minimum", _binary("minimum"), elementwise=True,
             fx_targets=("torch.minimum", "Tensor.minimum"))
def minimum(a, b):
    """min(a, b) elementwise."""
    return np.minimum(a, b)


for _name, _ufunc in {
    "eq": np.equal,
    "ne": np.not_equal,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
}.items():
    register_op(_name, _compare(_name), elementwise=True,
                fx_targets=(f"operator.{_name}", f"torch.{_name}", f"Tensor.{_name}"))(
        lambda a, b, _f=_ufunc: _f(a, b)
    )


def _where_meta(cond: TensorMeta, a: TensorMeta, b: TensorMeta, **_) -> TensorMeta:
    shape = broadcast_shapes("where", cond.shape, a.shape, b.shape)
    return TensorMeta(shape, np.result_type(a.dtype, b.dtype))


@register_op("where", _where_meta, elementwise=True, fx_targets=("torch.where", "Tensor.where"))
def where(cond, a, b):
    """cond ? a : b, elementwise with broadcasting."""
    return np.where(cond, a, b)


# ------------------------------------------------------- elementwise: unary


@register_op("neg", same_meta, elementwise=True,
             fx_targets=("operator.neg", "torch.neg", "Tensor.neg"))
def neg(x):
    """-x (refused for bools, as torch: use ~x to invert a mask)."""
    if x.dtype == np.bool_:
        raise RuntimeError("negating a bool tensor is not supported; use ~x (logical not) "
                           "to invert a mask.")
    return np.negative(x)


@register_op("exp", floating_meta, elementwise=True, fx_targets=("torch.exp", "Tensor.exp"))
def exp(x):
    """e ** x."""
    return np.exp(x, dtype=float_dtype(x.dtype))


@register_op("log", floating_meta, elementwise=True, fx_targets=("torch.log", "Tensor.log"))
def log(x):
    """Natural logarithm."""
    return np.log(x, dtype=float_dtype(x.dtype))


@register_op("sqrt", floating_meta, elementwise=True, fx_targets=("torch.sqrt", "Tensor.sqrt"))
def sqrt(x):
    """Square root."""
    return np.sqrt(x, dtype=float_dtype(x.dtype))


@register_op("abs", same_meta, elementwise=True,
             fx_targets=("operator.abs", "torch.abs", "Tensor.abs"))
def abs_(x):
    """|x|."""
    return np.abs(x)


@register_op("tanh", floating_meta, elementwise=True, fx_targets=("torch.tanh", "Tensor.tanh"))
def tanh(x):
    """tanh(x) = (e^x - e^-x) / (e^x + e^-x)."""
    return np.tanh(x, dtype=float_dtype(x.dtype))


@register_op("relu", same_meta, elementwise=True,
             fx_targets=("torch.relu", "torch.nn.functional.relu", "Tensor.relu"))
def relu(x):
    """max(x, 0)."""
    return np.maximum(x, np.zeros((), dtype=x.dtype))


@register_op("sigmoid", floating_meta, elementwise=True,
             fx_targets=("torch.sigmoid", "Tensor.sigmoid"))
def sigmoid(x):
    """1 / (1 + e^-x), computed without overflow for large |x|."""
    x = np.asarray(x, dtype=float_dtype(x.dtype))
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)


# --------------------------------------------------------------- reductions


def sum_dtype(dtype: np.dtype) -> np.dtype:
    """Bool and integer sums accumulate in int64, as torch's (no int32 overflow)."""
    return np.dtype(np.int64) if np.dtype(dtype).kind in "biu" else np.dtype(dtype)


@register_op("sum", _reduction("sum", floating=False), fx_targets=("torch.sum", "Tensor.sum"))
def sum_(x, dim=None, keepdim=False):
    """Sum over ``dim`` (all dims when None)."""
    return np.sum(x, axis=axes(dim, x.ndim), keepdims=keepdim, dtype=sum_dtype(x.dtype))


@register_op("mean", _reduction("mean", floating=True), fx_targets=("torch.mean", "Tensor.mean"))
def mean(x, dim=None, keepdim=False):
    """Mean over ``dim`` (all dims when None)."""
    return np.mean(x, axis=axes(dim, x.ndim), keepdims=keepdim, dtype=float_dtype(x.dtype))


def _softmax_meta(x: TensorMeta, dim=-1, **_) -> TensorMeta:
    normalize_dims("softmax", dim, len(x.shape))
    return floating_meta(x)


@register_op("softmax", _softmax_meta,
             fx_targets=("torch.softmax", "torch.nn.functional.softmax", "Tensor.softmax"))
def softmax(x, dim=-1):
    """exp(x_i - max x) / sum_j exp(x_j - max x) along ``dim``; subtracting the
    max changes nothing mathematically and keeps exp from overflowing."""
    x = np.asarray(x, dtype=float_dtype(x.dtype))
    dims = axes(dim, x.ndim)
    shifted = x - np.max(x, axis=dims, keepdims=True, initial=-np.inf)  # initial: empty dims
    e = np.exp(shifted)
    return e / np.sum(e, axis=dims, keepdims=True)


# --------------------------------------------------------------- linear algebra


def matmul_shape(a: Shape, b: Shape) -> Shape:
    """torch.matmul's shape rule: 1-D operands gain then lose a dimension,
    batch dimensions broadcast, inner sizes must agree."""
    if len(a) == 0 or len(b) == 0:
        raise ShapeError(
            f"matmul: both operands need at least 1 dimension, got {a} and {b}; "
            "use mul for scalars."
        )
    a2 = (1,) + a if len(a) == 1 else a
    b2 = b + (1,) if len(b) == 1 else b
    if a2[-1] != b2[-2]:
        raise ShapeError(
            f"matmul: shapes {a} and {b} do not fit: the last dimension of the "
            f"first ({a2[-1]}) must equal the second-to-last of the second ({b2[-2]}). "
            "Transpose one operand or check the layer sizes."
        )
    batch = broadcast_shapes("matmul", a2[:-2], b2[:-2])
    out = batch + (a2[-2], b2[-1])
    if len(a) == 1:
        out = out[:-2] + out[-1:]
    if len(b) == 1:
        out = out[:-1]
    return out


def _matmul_meta(a: TensorMeta, b: TensorMeta, **_) -> TensorMeta:
    return TensorMeta(matmul_shape(a.shape, b.shape), np.result_type(a.dtype, b.dtype))


@register_op("matmul", _matmul_meta,
             fx_targets=("operator.matmul", "torch.matmul", "Tensor.matmul"))
def matmul(a, b):
    """Matrix product, with batching and 1-D cases as torch.matmul."""
    return np.matmul(a, b)


# ---------------------------------------------------------------- shape ops


def reshape_shape(op: str, shape: Shape, new: Sequence[int]) -> Shape:
    """Resolve one ``-1`` in ``new`` and check the element count is kept."""
    new = tuple(int(s) for s in new)
    numel = int(np.prod(shape, dtype=np.int64))
    if new.count(-1) > 1:
        raise ShapeError(f"{op}: only one dimension can be -1, got {new}.")
    if -1 in new:
        known = int(np.prod([s for s in new if s != -1], dtype=np.int64))
        if known == 0 or numel % known:
            raise ShapeError(f"{op}: cannot reshape {shape} ({numel} elements) into {new}.")
        new = tuple(numel // known if s == -1 else s for s in new)
    if int(np.prod(new, dtype=np.int64)) != numel:
        raise ShapeError(
            f"{op}: cannot reshape {shape} ({numel} elements) into {new} "
            f"({int(np.prod(new, dtype=np.int64))} elements); the number of elements must stay."
        )
    return new


def _reshape_meta(x: TensorMeta, shape, **_) -> TensorMeta:
    return TensorMeta(reshape_shape("reshape", x.shape, shape), x.dtype)


@register_op("reshape", _reshape_meta, fx_targets=("torch.reshape", "Tensor.reshape"))
def reshape(x, shape):
    """The same elements, read in row-major order into a new shape."""
    return np.reshape(x, shape)


def _transpose_meta(x: TensorMeta, dim0, dim1, **_) -> TensorMeta:
    shape = list(x.shape)
    d0, d1 = (check_dim("transpose", d, len(shape)) for d in (dim0, dim1))
    if shape:  # a 0-d tensor accepts dims 0 and -1 and stays as it is
        shape[d0], shape[d1] = shape[d1], shape[d0]
    return TensorMeta(tuple(shape), x.dtype)


@register_op("transpose", _transpose_meta, fx_targets=("torch.transpose", "Tensor.transpose"))
def transpose(x, dim0, dim1):
    """Swap two dimensions (torch.transpose)."""
    return np.swapaxes(x, dim0, dim1) if x.ndim else x


def _permute_meta(x: TensorMeta, dims, **_) -> TensorMeta:
    dims = tuple(dims)
    ndim = len(x.shape)
    if len(dims) != ndim:
        raise ShapeError(
            f"permute: dims {dims} name {len(dims)} dimensions but the tensor has {ndim}; "
            "give each dimension exactly once.")
    axes_ = [check_dim("permute", d, ndim) for d in dims]
    if len(set(axes_)) != ndim:
        raise ShapeError(f"permute: dims {dims} repeat a dimension; give each of the {ndim} "
                         "dimensions exactly once.")
    return TensorMeta(tuple(x.shape[d] for d in axes_), x.dtype)


@register_op("permute", _permute_meta, fx_targets=("torch.permute", "Tensor.permute"))
def permute(x, dims):
    """Reorder all dimensions (torch.permute)."""
    return np.transpose(x, dims)


def _broadcast_to_meta(x: TensorMeta, shape, **_) -> TensorMeta:
    shape = tuple(shape)
    if len(shape) < len(x.shape) or broadcast_shapes("broadcast_to", x.shape, shape) != shape:
        raise ShapeError(
            f"broadcast_to: a tensor of shape {x.shape} cannot be expanded to {shape}; "
            "only dimensions of size 1 (or new leading ones) can grow."
        )
    return TensorMeta(shape, x.dtype)


@register_op("broadcast_to", _broadcast_to_meta,
             fx_targets=("torch.broadcast_to", "Tensor.broadcast_to", "Tensor.expand"))
def broadcast_to(x, shape):
    """Repeat size-1 dimensions (and add leading ones) to reach ``shape``."""
    return np.broadcast_to(x, shape)
