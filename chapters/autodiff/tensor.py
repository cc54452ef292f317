"""``Tensor``: a numpy array that remembers how it was made (自动微分的张量).

Every op goes through :func:`apply`, the dispatch core's door
(:func:`.core.run`): it runs the op's numpy kernel from the chapter 1
registry and, when grad mode is on and an input requires grad, records a
:class:`~.node.BackwardNode` (``grad_fn``) holding what the op's derivative
rule will need. :meth:`Tensor.backward` walks those nodes in reverse
topological order (:mod:`.engine`). The state a tensor carries and the
autograd bookkeeping on it are :class:`~.core.TensorBase`'s; this class adds
the methods users call.

Names and semantics follow PyTorch. Deliberate differences, and why:

* ``.data`` is the numpy array itself (torch returns a tensor sharing storage);
  as in torch, changing it bypasses autograd and the version counter.
* In-place ops (``add_``, ``mul_``, ``copy_``, ...) are not recorded in the
  history: they are meant for optimizer updates under ``no_grad``. With grad
  mode on they are refused when either side requires grad.
* float16/bfloat16 kernels compute in float32 and round the result, as
  PyTorch's CPU kernels do; only the stored values are low precision.
"""

from __future__ import annotations

import functools
from collections import namedtuple

import numpy as np

from chapters.graph.ops import check_dim, normalize_dims

from . import dtypes, engine
from .core import TensorBase, operands, run
from .dispatch import FLOAT32, LOWER_PRECISION, public
from .indexing import torch_index, torch_parts
from .modes import MODES

_LOW = frozenset(dtypes.LOW_PRECISION)


def _binary(op: str, a, b, reverse: bool = False) -> Tensor:
    """``a op b`` (``b op a`` if ``reverse``), promoted to one dtype unless ``b``
    is a tensor of ``a``'s dtype already (the common case)."""
    if not (isinstance(b, TensorBase) and b.data.dtype is a.data.dtype):
        a, b = operands(a, b)
    return apply(op, (b, a) if reverse else (a, b))


def _arrays(value):
    """``value`` with each engine tensor in it, also inside lists and tuples, as its array."""
    if isinstance(value, Tensor):
        return value.data
    return type(value)(map(_arrays, value)) if isinstance(value, list | tuple) else value


def _dims(dims) -> tuple:
    if len(dims) == 1 and isinstance(dims[0], tuple | list):
        return tuple(dims[0])
    return tuple(dims)


class Tensor(TensorBase):
    """A tensor with autograd, mirroring ``torch.Tensor``'s public names."""

    __slots__ = ()
    __array_ufunc__ = None  # numpy defers to Tensor's reflected operators
    __hash__ = object.__hash__

    def backward(self, gradient=None, retain_graph: bool | None = None,
                 create_graph: bool = False, inputs=None) -> None:
        """Accumulate d(self)/d(leaf) into every leaf's ``.grad`` (reverse mode)."""
        engine.backward((self,), None if gradient is None else (gradient,), retain_graph,
                        create_graph, inputs)

    # ---------------------------------------------------------------- reading
    @property
    def shape(self) -> tuple[int, ...]:
        return self.data.shape

    @property
    def dtype(self) -> np.dtype:
        return self.data.dtype

    @property
    def ndim(self) -> int:
        return self.data.ndim

    def dim(self) -> int:
        return self.data.ndim

    def numel(self) -> int:
        return int(self.data.size)

    def size(self, dim: int | None = None):
        if dim is None:
            return self.data.shape
        return self.data.shape[check_dim("size", dim, self.ndim)]

    def element_size(self) -> int:
        return self.data.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return int(self.data.nbytes)

    def is_floating_point(self) -> bool:
        return dtypes.is_floating(self.data.dtype)

    def item(self):
        if self.data.size != 1:
            raise RuntimeError(f"a Tensor with {self.data.size} elements cannot be converted "
                               "to a Python scalar; use .tolist() or index one element first.")
        return self.data.reshape(()).item() if self.data.dtype not in _LOW else float(
            self.data.reshape(()).astype(np.float32))

    def tolist(self):
        return self.data.tolist()

    def numpy(self) -> np.ndarray:
        if self._requires_grad:
            raise RuntimeError("can't call numpy() on a tensor that requires grad; use "
                               "tensor.detach().numpy() instead.")
        return self.data

    def __array__(self, dtype=None, copy=None):
        return self.data if dtype is None else self.data.astype(dtype)

    def __len__(self) -> int:
        if self.data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.data.shape[0]

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __bool__(self) -> bool:
        return bool(self.item())

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __index__(self) -> int:
        if dtypes.category(self.data.dtype) != 1 or self.data.size != 1:
            raise TypeError("only integer tensors of a single element can be used as an index")
        return int(self.item())

    def __repr__(self) -> str:
        values = np.array2string(np.asarray(self.data, dtype=np.float64)
                                 if self.data.dtype in _LOW else self.data,
                                 precision=4, separator=", ", threshold=50)
        extra = ""
        if self.data.dtype not in (dtypes.float32, dtypes.int64, dtypes.bool_):
            extra += f", dtype={self.data.dtype}"
        if self.grad_fn is not None:
            extra += f", grad_fn=<{self.grad_fn.name}>"
        elif self._requires_grad:
            extra += ", requires_grad=True"
        return f"tensor({values}{extra})"

    # ------------------------------------------------------------- arithmetic
    @public("add")
    def add(self, other, alpha=1):
        return _scaled_binary("add", self, other, alpha)

    @public("sub")
    def sub(self, other, alpha=1):
        dtypes.check_no_bool_sub(self, other)
        return _scaled_binary("sub", self, other, alpha)

    @public("mul")
    def mul(self, other):
        return _binary("mul", self, other)

    @public("div")
    def div(self, other, *, rounding_mode=None):
        """True division; ``rounding_mode="floor"`` or ``"trunc"`` rounds the
        quotient (integers stay integers: :mod:`.ops.rounding`)."""
        if rounding_mode is None:
            return _binary("div", self, other)
        return apply("div_rounded", operands(self, other), {"rounding_mode": rounding_mode})

    @public("pow", autocast={"cuda": FLOAT32})
    def pow(self, exponent):
        """``x ** y``. An integer tensor to a negative Python int is refused, as
        in torch; integer tensor exponents follow :func:`chapters.graph.ops.integer_power`."""
        if type(exponent) is int and exponent < 0 and self.data.dtype.kind in "iu":
            raise RuntimeError(
                f"pow: integers to negative integer powers are not allowed ({self.data.dtype} "
                f"** {exponent} is not an integer). Make the base floating first, e.g. "
                f"x.float() ** {exponent}.")
        if isinstance(exponent, Tensor) and exponent.data.dtype == self.data.dtype:
            dtypes.check_implemented("pow", self.data.dtype, bool_ok=False)
        return _binary("pow", self, exponent)

    @public("maximum")
    def maximum(self, other):
        return _binary("maximum", self, other)

    @public("minimum")
    def minimum(self, other):
        return _binary("minimum", self, other)

    @public("matmul", autocast={"cpu": LOWER_PRECISION, "cuda": LOWER_PRECISION})
    def matmul(self, other):
        if not isinstance(other, Tensor):
            other = Tensor(other)
        if self.data.dtype != other.data.dtype:
            raise RuntimeError(
                f"matmul: expected both operands to have the same dtype, got "
                f"{self.data.dtype}{list(self.shape)} and {other.data.dtype}{list(other.shape)}. "
                "Cast one of them first, e.g. b.to(a.dtype).")
        dtypes.check_implemented("matmul", self.data.dtype, bool_ok=False)
        return apply("matmul", (self, other))

    __add__ = add
    __sub__ = sub
    __mul__ = mul
    __truediv__ = div
    __pow__ = pow
    __matmul__ = matmul

    @public("add")
    def __radd__(self, other):
        return _binary("add", self, other, reverse=True)

    @public("sub")
    def __rsub__(self, other):
        dtypes.check_no_bool_sub(self, other)
        return _binary("sub", self, other, reverse=True)

    @public("mul")
    def __rmul__(self, other):
        return _binary("mul", self, other, reverse=True)

    @public("div")
    def __rtruediv__(self, other):
        return _binary("div", self, other, reverse=True)

    @public("pow")
    def __rpow__(self, other):
        return _binary("pow", self, other, reverse=True)

    @public("matmul")
    def __rmatmul__(self, other):
        return (other if isinstance(other, Tensor) else Tensor(other)).matmul(self)

    @public("neg")
    def neg(self):
        return apply("neg", (self,))

    __neg__ = neg

    def __pos__(self):
        return self

    @public("eq")
    def eq(self, other):
        return _binary("eq", self, other)

    @public("ne")
    def ne(self, other):
        return _binary("ne", self, other)

    @public("lt")
    def lt(self, other):
        return _binary("lt", self, other)

    @public("le")
    def le(self, other):
        return _binary("le", self, other)

    @public("gt")
    def gt(self, other):
        return _binary("gt", self, other)

    @public("ge")
    def ge(self, other):
        return _binary("ge", self, other)

    __eq__ = eq
    __ne__ = ne
    __lt__ = lt
    __le__ = le
    __gt__ = gt
    __ge__ = ge

    # &, |, ^, ~, <<, >> and the bitwise_* methods: chapters.autodiff.ops.bitwise

    # ----------------------------------------------------------------- unary
    @public("exp", autocast={"cuda": FLOAT32})
    def exp(self):
        return apply("exp", (self,))

    @public("log", autocast={"cuda": FLOAT32})
    def log(self):
        return apply("log", (self,))

    @public("sqrt")
    def sqrt(self):
        return apply("sqrt", (self,))

    @public("rsqrt", autocast={"cuda": FLOAT32})
    def rsqrt(self):
        return 1.0 / apply("sqrt", (self,))

    @public("abs")
    def abs(self):
        dtypes.check_implemented("abs", self.data.dtype, bool_ok=False)
        return apply("abs", (self,))

    __abs__ = abs

    @public("tanh")
    def tanh(self):
        return apply("tanh", (self,))

    @public("sigmoid")
    def sigmoid(self):
        return apply("sigmoid", (self,))

    @public("relu")
    def relu(self):
        if self.data.dtype == dtypes.bool_:
            raise RuntimeError("relu: bool inputs are not supported (as in torch); a mask is "
                               "already non-negative, or convert first: x.float().relu().")
        return apply("relu", (self,))

    @public("square")
    def square(self):
        """``x * x``; a bool tensor squares as int64, as torch's ``x ** 2``."""
        x = self.long() if self.data.dtype == dtypes.bool_ else self
        return apply("mul", (x, x))

    @public("sign")
    def sign(self):
        return apply("sign", (self,))

    @public("clamp")
    def clamp(self, min=None, max=None):
        """Bounds are Python numbers or tensors; the result's dtype is promoted
        with theirs, so an int tensor clamped at 2.5 is float32, as in torch.
        Unlike torch, tensor bounds are constants here: no gradient flows to them."""
        if min is None and max is None:
            raise RuntimeError("clamp: at least one of min and max must be given (not None)")
        bounds = [b.data if isinstance(b, Tensor) else b for b in (min, max)]
        x = self.to(dtypes.result_dtype([self.data] + [b for b in bounds if b is not None]))
        return apply("clamp", (x,), {"min": bounds[0], "max": bounds[1]})

    clip = clamp

    @public("softmax", autocast={"cuda": FLOAT32})
    def softmax(self, dim: int, dtype=None):
        x = self if dtype is None else self.to(dtype)  # torch casts first, then refuses ints
        dtypes.check_implemented("softmax", x.data.dtype, bool_ok=False, integer_ok=False)
        return apply("softmax", (x,), {"dim": dim})

    @public("log_softmax", autocast={"cuda": FLOAT32})
    def log_softmax(self, dim: int, dtype=None):
        x = self if dtype is None else self.to(dtype)
        dtypes.check_implemented("log_softmax", x.data.dtype, bool_ok=False, integer_ok=False)
        return apply("log_softmax", (x,), {"dim": dim})

    @public("logsumexp")
    def logsumexp(self, dim, keepdim: bool = False):
        return apply("logsumexp", (self,), {"dim": dim, "keepdim": keepdim})

    # ------------------------------------------------------------- reductions
    @public("sum", autocast={"cuda": FLOAT32})
    def sum(self, dim=None, keepdim: bool = False, dtype=None):
        x = self if dtype is None else self.to(dtype)
        return apply("sum", (x,), {"dim": dim, "keepdim": keepdim})

    @public("mean")
    def mean(self, dim=None, keepdim: bool = False, dtype=None):
        x = self if dtype is None else self.to(dtype)
        if not dtypes.is_floating(x.data.dtype):
            raise RuntimeError(
                f"mean(): could not infer output dtype. Input dtype must be either a floating "
                f"point or complex dtype. Got: {x.data.dtype}; use x.float().mean().")
        return apply("mean", (x,), {"dim": dim, "keepdim": keepdim})

    @public("var")
    def var(self, dim=None, keepdim: bool = False, *, correction: int = 1, unbiased=None):
        correction = correction if unbiased is None else int(bool(unbiased))
        return apply("var", (self,), {"dim": dim, "keepdim": keepdim, "correction": correction})

    @public("std")
    def std(self, dim=None, keepdim: bool = False, *, correction: int = 1, unbiased=None):
        """sqrt(var); where var = 0 the gradient is 0, as torch's (not 0 * inf)."""
        var = self.var(dim, keepdim, correction=correction, unbiased=unbiased)
        flat, dtype = var.data == 0, var.data.dtype
        safe = apply("where", (flat, np.ones((), dtype), var))  # sqrt's slope is finite here
        return apply("where", (flat, np.zeros((), dtype), safe.sqrt()))

    @public("max")
    def max(self, dim=None, keepdim: bool = False):
        """``x.max()`` is the largest value (ties share the gradient evenly, as
        torch); ``x.max(dim)`` returns ``(values, indices)`` and the gradient
        goes to the index returned."""
        if isinstance(dim, Tensor):
            return self.maximum(dim)
        if dim is None:
            return apply("amax", (self,), {"dim": None, "keepdim": False})
        return _min_max(self, dim, keepdim, np.argmax)

    @public("min")
    def min(self, dim=None, keepdim: bool = False):
        if isinstance(dim, Tensor):
            return self.minimum(dim)
        if dim is None:
            return apply("amin", (self,), {"dim": None, "keepdim": False})
        return _min_max(self, dim, keepdim, np.argmin)

    @public("amax")
    def amax(self, dim=None, keepdim: bool = False):
        return apply("amax", (self,), {"dim": dim, "keepdim": keepdim})

    @public("amin")
    def amin(self, dim=None, keepdim: bool = False):
        return apply("amin", (self,), {"dim": dim, "keepdim": keepdim})

    def argmax(self, dim=None, keepdim: bool = False):
        return _arg_extremum(self, dim, keepdim, np.argmax)

    def argmin(self, dim=None, keepdim: bool = False):
        return _arg_extremum(self, dim, keepdim, np.argmin)

    # ------------------------------------------------------------- shape ops
    @public("reshape")
    def reshape(self, *shape):
        return apply("reshape", (self,), {"shape": _dims(shape)})

    @public("view")
    def view(self, *shape):
        """torch.view: like reshape, but never copies (errors on a layout it
        cannot view, as torch does)."""
        if isinstance(shape[0], np.dtype | str) if shape else False:
            raise NotImplementedError("view(dtype) reinterprets bits; use .to(dtype) instead")
        out = self.reshape(*shape)
        if out.data.size and not np.may_share_memory(out.data, self.data):
            raise RuntimeError(
                f"view size is not compatible with input tensor's size and stride "
                f"(shape {list(self.shape)}); use .reshape(...) instead.")
        return out

    def view_as(self, other: Tensor) -> Tensor:
        return self.view(other.shape)

    def reshape_as(self, other: Tensor) -> Tensor:
        return self.reshape(other.shape)

    @public("flatten")
    def flatten(self, start_dim: int = 0, end_dim: int = -1):
        shape = self.data.shape
        start, end = (check_dim("flatten", d, len(shape)) for d in (start_dim, end_dim))
        if not shape:
            return self.reshape(1)
        if start > end:
            raise RuntimeError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim}")
        return self.reshape(shape[:start] + (-1,) + shape[end + 1:])

    @public("unsqueeze")
    def unsqueeze(self, dim: int):
        shape = list(self.data.shape)
        shape.insert(check_dim("unsqueeze", dim, len(shape) + 1), 1)
        return self.reshape(tuple(shape))

    @public("squeeze")
    def squeeze(self, dim=None):
        shape = self.data.shape
        dims = normalize_dims("squeeze", dim, len(shape))
        return self.reshape(tuple(s for i, s in enumerate(shape) if not (i in dims and s == 1)))

    @public("transpose")
    def transpose(self, dim0: int, dim1: int):
        return apply("transpose", (self,), {"dim0": dim0, "dim1": dim1})

    def t(self) -> Tensor:
        if self.data.ndim > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, got {self.ndim}")
        return self if self.data.ndim < 2 else self.transpose(0, 1)

    @property
    def T(self) -> Tensor:
        return self.permute(*reversed(range(self.data.ndim)))

    @property
    def mT(self) -> Tensor:
        return self.transpose(-2, -1)

    @public("permute")
    def permute(self, *dims):
        return apply("permute", (self,), {"dims": _dims(dims)})

    @public("expand")
    def expand(self, *sizes):
        sizes = _dims(sizes)
        lead = len(sizes) - self.data.ndim
        shape = tuple(self.data.shape[i - lead] if s == -1 else s for i, s in enumerate(sizes))
        return apply("broadcast_to", (self,), {"shape": shape})

    def expand_as(self, other: Tensor) -> Tensor:
        return self.expand(other.shape)

    def broadcast_to(self, shape) -> Tensor:
        return self.expand(*shape)

    def contiguous(self) -> Tensor:
        """self when its elements are laid out row by row already, else a copy
        that is (flattening a strided view copies it in row order)."""
        return self if self.data.flags.c_contiguous else self.reshape(-1).reshape(self.shape)

    @public("getitem")
    def __getitem__(self, index):
        # torch's meaning of the index (.indexing.torch_parts); warnings point at x[index]
        return apply("getitem", (self,), {"index": torch_parts(_arrays(index), stacklevel=3)})

    def __setitem__(self, index, value):
        self._check_inplace("__setitem__", value)
        value = value.data if isinstance(value, Tensor) else value
        first, then = torch_index(torch_parts(_arrays(index), stacklevel=3))
        if then is None:
            self.data[first] = value
        else:  # torch's two steps; the first is basic indexing, a view to write through
            self.data[first][then] = value
        self._vbox[0] += 1

    # ------------------------------------------------------------------ casts
    @public("to")
    def to(self, *args, dtype=None, device=None, **kwargs):
        """``to(dtype)`` casts with a gradient cast back to this dtype;
        ``to("cpu")`` and ``to(device="cpu")`` are accepted (the engine's one device)."""
        for arg in (*args, device):
            if arg is None:
                continue
            if isinstance(arg, str) and arg.startswith(("cpu", "cuda", "mps")):
                if not arg.startswith("cpu"):
                    raise RuntimeError(
                        f"to({arg!r}): this engine computes with numpy on the CPU only; compare "
                        "with torch on the GPU through chapters.torchcheck.to_torch(x, 'cuda').")
                continue
            if isinstance(arg, Tensor):
                dtype = arg.dtype
            else:
                dtype = arg
        if dtype is None:
            return self
        dtype = dtypes.as_dtype(dtype)
        if dtype == self.data.dtype:
            return self
        return apply("cast", (self,), {"dtype": dtype})

    def type_as(self, other: Tensor) -> Tensor:
        return self.to(other.dtype)

    def type(self, dtype=None):
        """torch's legacy form: with no argument the type name
        (``"torch.FloatTensor"``), else ``to(dtype)``; ``dtype`` may be a
        dtype or such a name."""
        if dtype is None:
            return f"torch.{dtypes.TYPE_NAMES[self.data.dtype]}"
        if isinstance(dtype, str) and dtype.endswith("Tensor"):
            names = {name: d for d, name in dtypes.TYPE_NAMES.items()}
            dtype = names.get(dtype.removeprefix("torch."), dtype)
        return self.to(dtype)

    def float(self) -> Tensor:
        return self.to(dtypes.float32)

    def double(self) -> Tensor:
        return self.to(dtypes.float64)

    def half(self) -> Tensor:
        return self.to(dtypes.float16)

    def bfloat16(self) -> Tensor:
        return self.to(dtypes.bfloat16)

    def long(self) -> Tensor:
        return self.to(dtypes.int64)

    def int(self) -> Tensor:
        return self.to(dtypes.int32)

    def short(self) -> Tensor:
        return self.to(dtypes.int16)

    def char(self) -> Tensor:
        return self.to(dtypes.int8)

    def byte(self) -> Tensor:
        return self.to(dtypes.uint8)

    def bool(self) -> Tensor:
        return self.to(dtypes.bool_)

    def cpu(self) -> Tensor:
        return self

    @public("clone")
    def clone(self):
        return apply("cast", (self,), {"dtype": self.data.dtype})

    # -------------------------------------------------------------- in place
    def _check_inplace(self, op: str, other=None) -> None:
        for observer in MODES.observers:  # forward mode refuses writes to tangent carriers
            observer.inplace_checked(op, self, other)
        if not MODES.grad_enabled:
            return
        if self._requires_grad and self.grad_fn is None:
            raise RuntimeError(
                f"{op}: a leaf tensor that requires grad is being used in an in-place "
                "operation. Wrap the update in `with no_grad():` (as optimizers do), or "
                "work on x.detach().")
        if self._requires_grad or (isinstance(other, Tensor) and other._requires_grad):
            raise RuntimeError(
                f"{op}: in-place ops are not recorded in this engine's history (it differs "
                "from torch here to keep the graph simple). Use the out-of-place form "
                "(y = x + z) or run the update under no_grad().")

    def addcmul_(self, a, b, value=1) -> Tensor:
        dtypes.check_implemented("addcmul_", self.data.dtype, bool_ok=False)
        return self.add_(_arrays(a) * _arrays(b) * value)

    def addcdiv_(self, a, b, value=1) -> Tensor:
        return self.add_(_arrays(a) / _arrays(b) * value)

    def lerp_(self, end, weight) -> Tensor:
        dtypes.check_implemented("lerp_", self.data.dtype, bool_ok=False, integer_ok=False)
        return self.add_((_arrays(end) - self.data) * weight)

    def zero_(self) -> Tensor:
        return self.fill_(0)

    def fill_(self, value) -> Tensor:
        self._check_inplace("fill_")
        self.data[...] = value.data if isinstance(value, Tensor) else value
        self._vbox[0] += 1
        return self

    def copy_(self, other) -> Tensor:
        value = other.data if isinstance(other, Tensor) else np.asarray(other)
        try:
            np.broadcast_to(value, self.data.shape)
        except ValueError:
            raise RuntimeError(
                f"copy_: the source of shape {list(value.shape)} cannot be broadcast to the "
                f"destination's shape {list(self.shape)}.") from None
        self._check_inplace("copy_", other)
        self.data[...] = value
        self._vbox[0] += 1
        return self

    def __iadd__(self, other):
        return self.add_(other)

    def __isub__(self, other):
        return self.sub_(other)

    def __imul__(self, other):
        return self.mul_(other)

    def __itruediv__(self, other):
        return self.div_(other)

    def new_zeros(self, *size, dtype=None) -> Tensor:
        return Tensor(np.zeros(as_shape(size), dtypes.as_dtype(dtype or self.dtype)))

    def new_ones(self, *size, dtype=None) -> Tensor:
        return Tensor(np.ones(as_shape(size), dtypes.as_dtype(dtype or self.dtype)))

    def new_tensor(self, data, dtype=None) -> Tensor:
        """A new leaf holding a copy of ``data`` (``torch.Tensor.new_tensor``)."""
        return Tensor(np.array(data.data if isinstance(data, Tensor) else data,
                               dtype=dtypes.as_dtype(dtype or self.dtype)))


#: ``apply(op, inputs, attrs=None) -> Tensor``: run ``op`` on ``inputs`` (tensors,
#: or arrays taken as constants) and record its history node when an input
#: requires grad; :func:`.core.run` with results made as Tensors (a partial
#: costs no extra Python call per op)
apply = functools.partial(run, Tensor)

_ValuesIndices = namedtuple("return_types", ["values", "indices"])


def tensor_method(*aliases: str):
    """Decorator for op family modules (:mod:`.ops`): attach ``fn`` to
    :class:`Tensor` as the method ``fn.__name__`` (and each alias, e.g.
    ``"__mod__"``), so a family's user API sits next to its kernels and rules
    instead of growing this file. A name Tensor already has is refused."""

    def attach(fn):
        for name in (fn.__name__, *aliases):
            if name in vars(Tensor):
                raise ValueError(f"Tensor.{name} is already defined; an op family may add "
                                 "methods, not replace them (edit the existing one instead)")
            setattr(Tensor, name, fn)
        return fn

    return attach


def _scaled_binary(op: str, a: Tensor, b, alpha) -> Tensor:
    """``a op alpha * b`` in the dtype of ``a op b``: torch's alpha scales the
    operand without promoting it (bool ``a + 2 * b`` stays bool)."""
    if alpha == 1:
        return _binary(op, a, b)
    dtype = dtypes.result_dtype([a.data, b.data if isinstance(b, Tensor) else b])
    out = _binary(op, a, b * alpha)
    return out if out.data.dtype == dtype else out.to(dtype)


def _min_max(x: Tensor, dim: int, keepdim: bool, arg) -> tuple:
    """``(values, indices)`` of max/min along ``dim``: a gather at the arg-index,
    so the gradient goes to the index returned (torch's rule). A 0-d tensor
    is its own max along dim 0 (or -1), at index 0."""
    dim = check_dim("max" if arg is np.argmax else "min", dim, x.ndim)
    if x.ndim == 0:
        values, indices = _min_max(x.reshape(1), 0, False, arg)
        return _ValuesIndices(values, indices)
    _check_reduced_size(arg.__name__.removeprefix("arg"), x, dim)
    indices = np.expand_dims(arg(x.data, axis=dim), dim).astype(np.int64)
    values = apply("gather", (x,), {"dim": dim, "index": indices})
    if not keepdim:
        values = values.squeeze(dim)
        indices = np.squeeze(indices, dim)
    return _ValuesIndices(values, Tensor(indices))


def _arg_extremum(x: Tensor, dim, keepdim: bool, arg) -> Tensor:
    """argmax/argmin as int64 indices; ``dim=None`` indexes the flattened tensor."""
    name = arg.__name__
    if x.data.dtype == np.bool_:
        raise RuntimeError(f"{name}(): does not support bool input; use x.int().{name}(...)")
    if dim is None:
        _check_reduced_size(name, x, None)
        return Tensor(np.asarray(arg(x.data), dtype=np.int64))
    d = check_dim(name, dim, x.ndim)
    if x.ndim == 0:
        return Tensor(np.zeros((), dtype=np.int64))
    _check_reduced_size(name, x, d)
    return Tensor(arg(x.data, axis=d, keepdims=keepdim).astype(np.int64))


def _check_reduced_size(op: str, x: Tensor, dim: int | None) -> None:
    """An extremum of no elements is undefined: IndexError, as torch."""
    size = x.data.size if dim is None else x.data.shape[dim]
    if size == 0:
        where = "the tensor" if dim is None else f"dim {dim}"
        raise IndexError(f"{op}(): {where} of shape {list(x.shape)} has no elements to choose "
                         "from; reduce over a dim of non-zero size.")


def as_shape(size) -> tuple[int, ...]:
    """``zeros(2, 3)`` and ``zeros((2, 3))`` alike: the sizes as a tuple of ints."""
    return tuple(int(s) for s in _dims(size))
