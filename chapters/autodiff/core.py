"""The dispatch core (调度核心): one door every op goes through.

:func:`run` is all that happens when an op runs on tensors:

1. run the op's numpy kernel from chapter 1's registry (float16/bfloat16
   inputs computed in float32 and rounded, as PyTorch's CPU kernels do,
   unless the op only moves values: ``OpInfo.movement``);
2. wrap the array in a tensor (:meth:`TensorBase._make`, the one constructor
   path every tensor takes); a view op's result shares its input's version
   counter (``OpInfo.view``);
3. when grad mode is on and an input requires grad, *record* the op: a
   :class:`~.node.BackwardNode` (``grad_fn``) with edges to the inputs' nodes
   and the tensors its derivative rule will read;
4. show the result to the active observers (anomaly detection, forward mode:
   :mod:`.modes`).

:class:`TensorBase` is the state a tensor carries (its array, its history,
its version counter) and the autograd bookkeeping on it; the methods users
call are added by :class:`~.tensor.Tensor`. Type promotion for binary ops
(:func:`operands`) lives here too, so every entry point promotes alike.
"""

from __future__ import annotations

import weakref

import numpy as np

from chapters.graph.ops import TensorMeta, get_op

from . import dtypes
from .modes import MODES
from .node import AccumulateGrad, BackwardNode, RemovableHandle
from .rules import SAVES, info

_LOW = frozenset(dtypes.LOW_PRECISION)
_FLOATING = frozenset(dtypes.FLOATING)  # only floating results carry gradients
_NO_EDGE = (None, 0)
_PREPARED: dict[str, tuple] = {}
_new = object.__new__


def as_array(data, dtype=None) -> np.ndarray:
    """``torch.tensor``'s dtype inference: Python floats give float32, ints
    int64, bools bool; numpy arrays keep their dtype."""
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype)
    if isinstance(data, np.ndarray):
        return data if dtype is None or data.dtype == dtype else data.astype(dtype)
    if isinstance(data, list | tuple) and any(isinstance(d, TensorBase) for d in data):
        data = [d.data if isinstance(d, TensorBase) else d for d in data]
    array = np.asarray(data)
    if dtype is not None:
        return array.astype(dtype, copy=False)
    if isinstance(data, np.generic):
        return array
    if array.dtype == np.float64:
        return array.astype(np.float32)
    if array.dtype.kind in "iu":
        return array.astype(np.int64, copy=False)
    return array


class TensorBase:
    """What every tensor is: ``data`` (a numpy array), its history
    (``grad_fn``, ``requires_grad``), its gradient and version counter."""

    __slots__ = ("data", "_requires_grad", "grad", "grad_fn", "_vbox", "_acc", "_hooks",
                 "_retains_grad", "__weakref__")

    def __init__(self, data, requires_grad: bool = False, dtype=None):
        if isinstance(data, TensorBase):
            data = data.data
        self._init(as_array(data, dtype), [0])
        if requires_grad:
            self.requires_grad = True

    def _init(self, data: np.ndarray, vbox: list, grad_fn=None) -> None:
        self.data = data
        self._vbox = vbox                  # [version]: shared by a tensor and its views
        self.grad_fn = grad_fn
        self._requires_grad = grad_fn is not None
        self.grad = None
        self._acc = None
        self._hooks = None
        self._retains_grad = False

    @classmethod
    def _make(cls, data: np.ndarray, vbox: list, grad_fn=None):
        """The constructor path every tensor takes: ``data`` as it is (no dtype
        inference), with version counter ``vbox`` and history ``grad_fn``."""
        t = _new(cls)
        t._init(data, vbox, grad_fn)
        return t

    # ------------------------------------------------------------ autograd state
    @property
    def requires_grad(self) -> bool:
        return self._requires_grad

    @requires_grad.setter
    def requires_grad(self, value: bool) -> None:
        value = bool(value)
        if self.grad_fn is not None and not value:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf tensors; this tensor was "
                f"made by {self.grad_fn.name}. Use y = x.detach() to get a tensor without "
                "history.")
        if value and not dtypes.is_floating(self.data.dtype):
            raise RuntimeError(
                f"only tensors of floating point dtype can require gradients, got "
                f"{self.data.dtype}: a gradient needs a continuous value. Convert first, "
                "e.g. x.float().requires_grad_().")
        self._requires_grad = value

    def requires_grad_(self, requires_grad: bool = True):
        self.requires_grad = requires_grad
        return self

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    @property
    def _version(self) -> int:
        return self._vbox[0]

    def _accumulator(self) -> AccumulateGrad:
        node = self._acc() if self._acc is not None else None
        if node is None:
            node = AccumulateGrad(self)
            self._acc = weakref.ref(node)
        return node

    def retain_grad(self) -> None:
        """Keep this non-leaf tensor's gradient in ``.grad`` after backward."""
        if not self._requires_grad:
            raise RuntimeError("can't retain_grad on a tensor that does not require grad")
        if self.grad_fn is None or self._retains_grad:
            return
        self._retains_grad = True
        self.grad_fn.retained = weakref.ref(self)

    @property
    def retains_grad(self) -> bool:
        return self._retains_grad

    def register_hook(self, fn):
        """``fn(grad) -> new grad or None`` runs when this tensor's gradient is
        computed, before it is used or accumulated. Returns a handle with ``remove()``."""
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if self.grad_fn is not None:
            return self.grad_fn.register_hook(fn)
        if self._hooks is None:
            self._hooks = {"pre": [], "post": []}
        self._hooks["pre"].append(fn)
        return RemovableHandle(self._hooks["pre"], fn)

    def register_post_accumulate_grad_hook(self, fn):
        """``fn(tensor)`` runs after backward has accumulated this leaf's ``.grad``
        (DDP starts its all-reduce from here)."""
        if self.grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                               "tensors; they run when .grad of a leaf is accumulated.")
        if self._hooks is None:
            self._hooks = {"pre": [], "post": []}
        self._hooks["post"].append(fn)
        return RemovableHandle(self._hooks["post"], fn)

    def detach(self):
        """The same values (shared memory and version counter), without history."""
        return self._make(self.data, self._vbox)

    def detach_(self):
        self.grad_fn = None
        self._requires_grad = False
        return self


# ------------------------------------------------------------------ running ops


def _prepare(op: str) -> tuple:
    """``(kernel, view, computes)`` for ``op``, cached: its numpy kernel, whether
    it may return a view of its first input, and whether it computes new values
    (so float16/bfloat16 inputs are computed in float32: :func:`_in_float32`)."""
    facts = info(op)
    _PREPARED[op] = get_op(op).kernel, facts.view, not facts.movement
    return _PREPARED[op]


def _low_precision(arrays) -> np.dtype | None:
    """The float16/bfloat16 dtype among ``arrays``, None if there is none."""
    low = None
    for a in arrays:
        if a is not None and a.dtype in _LOW:
            low = a.dtype
    return low


def _in_float32(kernel, arrays, attrs: dict, low: np.dtype) -> np.ndarray:
    """``kernel`` on float16/bfloat16 inputs: computed in float32, the result
    rounded to ``low``, as PyTorch's CPU kernels do."""
    up = [a.astype(np.float32) if a is not None and a.dtype in _LOW else a for a in arrays]
    out = kernel(*up, **attrs)
    return out.astype(low) if out.dtype == np.float32 else out


def _explain(op: str, arrays, attrs, err: Exception) -> Exception:
    """Turn a numpy failure into an error naming the op, shapes and dtypes:
    the op's meta rule usually says exactly what is wrong."""
    arrays = [a for a in arrays if a is not None]  # optional inputs left out
    try:
        get_op(op).infer(*(TensorMeta.of(a) for a in arrays), **attrs)
    except Exception as meta_err:  # the meta rule's message is the better one
        return meta_err
    described = ", ".join(f"{np.asarray(a).dtype}{list(np.shape(a))}" for a in arrays)
    return type(err)(f"{op}: {err} (inputs: {described})")


def run(result_type: type, op: str, inputs: tuple, attrs: dict | None = None):
    """Run ``op`` on ``inputs`` (tensors, or arrays taken as constants), wrap the
    result in a ``result_type`` and record its history node when an input
    requires grad (steps 1-4 of the module docstring).

    The common case costs the least: float32 inputs go straight to the kernel,
    and the thread's modes are read once."""
    if attrs is None:
        attrs = {}
    arrays = [x.data if isinstance(x, TensorBase) else x for x in inputs]
    kernel, view, computes = _PREPARED.get(op) or _prepare(op)
    try:
        low = _low_precision(arrays) if computes else None
        out = kernel(*arrays, **attrs) if low is None else _in_float32(kernel, arrays, attrs, low)
    except Exception as err:
        raise _explain(op, arrays, attrs, err) from err
    if type(out) is not np.ndarray:
        out = np.asarray(out)
    if view and np.may_share_memory(out, arrays[0]):
        vbox = inputs[0]._vbox
    else:
        vbox = [0]
    result = _new(result_type)
    result._init(out, vbox)
    modes = MODES
    observers = modes.observers
    if modes.grad_enabled and out.dtype in _FLOATING:
        for x in inputs:
            if isinstance(x, TensorBase) and x._requires_grad:
                _record(op, inputs, attrs, result, observers)
                break
    for observer in observers:  # anomaly detection, forward mode
        observer.op_ran(op, inputs, attrs, result)
    return result


def _record(op: str, inputs: tuple, attrs: dict, result: TensorBase, observers: tuple) -> None:
    """Attach ``result.grad_fn``: edges to the inputs' nodes, their shapes and
    dtypes, and the tensors ``SAVES[op]`` names, with their versions."""
    try:
        saves = SAVES[op]
    except KeyError:
        raise NotImplementedError(
            f"the derivative for {op!r} is not implemented: no VJP rule is registered for it. "
            "Register one with chapters.autodiff.rules.vjp_rule, or compute it under no_grad()."
        ) from None
    nexts, metas, parents = [], [], []
    for x in inputs:
        if isinstance(x, TensorBase) and x._requires_grad:
            data = x.data
            parent = x.grad_fn or x._accumulator()
            nexts.append((parent, 0))
            metas.append((data.shape, data.dtype))
            parents.append(parent)
        else:
            nexts.append(_NO_EDGE)
            metas.append(None)
    out = result.data
    node = BackwardNode(op, tuple(nexts), tuple(metas), attrs, out, tuple(parents))
    if saves:
        vbox = result._vbox
        items = []
        for s in saves:
            if s == "out":
                items.append((out, vbox, vbox[0]))
            else:
                x = inputs[s]
                if isinstance(x, TensorBase):
                    items.append((x, x._vbox, x._vbox[0]))
                else:
                    items.append((x, None, 0))
        node.save(tuple(items), type(result))
    for observer in observers:
        observer.node_recorded(node)
    result.grad_fn = node
    result._requires_grad = True


# ------------------------------------------------------------- type promotion


def scalar(value, like: np.dtype) -> np.ndarray:
    """A Python number as a weak 0-d array: it takes the tensor's dtype unless
    its own kind is higher (an int tensor times 2.5 gives float32). An integer
    outside the tensor's integer range wraps around, as in torch
    (``uint8_tensor + -1`` adds 255)."""
    if (type(value) is float or type(value) is int) and like in _FLOATING:
        return np.asarray(value, dtype=like)  # the common case, decided at once
    kind = dtypes.default_dtype_for(value)
    dtype = like if dtypes.category(kind) <= dtypes.category(like) else kind
    return np.asarray(value).astype(dtype)


def operands(a: TensorBase, b) -> tuple:
    """Both operands of a binary op as tensors/arrays of one promoted dtype."""
    if isinstance(b, TensorBase):
        bd = b.data
    elif isinstance(b, np.ndarray):
        bd = b
    else:
        b = scalar(b, a.data.dtype)
        bd = b
    ad = a.data
    if ad.dtype is bd.dtype or ad.dtype == bd.dtype:
        return a, b
    dt = dtypes.result_dtype((ad, bd))
    if ad.dtype != dt:
        a = a.to(dt) if isinstance(a, TensorBase) else a.astype(dt)
    if bd.dtype != dt:
        b = b.to(dt) if isinstance(b, TensorBase) else b.astype(dt)
    return a, b
