"""History nodes (``grad_fn``): what backward needs to remember about an op.

Every op that touches a tensor requiring grad leaves a :class:`BackwardNode`
behind, a chapter 1 :class:`~chapters.graph.ir.Node` whose ``inputs`` are the
history nodes of its inputs. A leaf that requires grad is represented by an
:class:`AccumulateGrad` node, the point where a gradient finally lands in
``.grad``. So a tensor's history *is* a graph of the chapter 1 IR and
``topological_sort([y.grad_fn])`` orders it.

Two deliberate differences from the chapter 1 nodes, both for speed of eager
execution: ``meta`` is computed from the output's shape and dtype on demand
(no meta rule runs per op), and ``users`` stays empty (recording users would
tie every node to its consumers in a reference cycle and keep dead graphs
alive until the garbage collector runs).

Saved tensors (保存的张量) are what the derivative rule reads in backward:
inputs and/or the output. They are released after backward unless
``retain_graph=True``; :func:`saved_tensor_bytes` reports the bytes held by
saved tensors of live graphs.
"""

from __future__ import annotations

import itertools

import numpy as np

from chapters.graph.ir import Node
from chapters.graph.ops import TensorMeta

from .rules import OPS, info

_ids = itertools.count()
_SAVED_BYTES = [0]


def saved_tensor_bytes() -> int:
    """Bytes currently held by saved tensors of live (not yet freed) graphs.

    Each saved reference counts: an array saved by two ops counts twice, so
    this is what the graphs keep alive, measured per op as PyTorch's
    saved-tensor hooks would see it."""
    return _SAVED_BYTES[0]


class NodeName(str):
    """A label that is also callable.

    Chapter 1 reads ``node.name`` as a string label; PyTorch spells the same
    thing ``grad_fn.name()``. This string answers both."""

    __slots__ = ()

    def __call__(self) -> str:
        return str(self)


_NAMES: dict[str, NodeName] = {}
_FIXED_NAMES: dict[str, NodeName] = {}  # op -> its name, for ops whose name never varies


def backward_name(op: str, attrs: dict | None = None, input_meta: tuple = (),
                  out_ndim: int = -1) -> NodeName:
    """torch's name for the backward of ``op``, from the op's registration
    (:class:`~.rules.OpInfo`): ``"log_softmax"`` -> ``"LogSoftmaxBackward0"``;
    where torch's name depends on the call (``x.sum(dim=0)`` is
    ``SumBackward1``, a 2-D ``@`` is ``MmBackward0``), the inputs' meta
    (``(shape, dtype)`` each, None for an input needing no gradient) and
    ``out_ndim`` pick it."""
    name = _FIXED_NAMES.get(op)
    if name is not None:
        return name
    entry = OPS.get(op) or info(op)  # info(): the defaults, for an op only chapter 1 knows
    text = entry.backward_name(attrs or {}, input_meta, out_ndim)
    name = _NAMES.get(text)
    if name is None:
        name = _NAMES[text] = NodeName(text)
    if op in OPS and entry.grad_fn_variant is None:  # registered once, one name for every call
        _FIXED_NAMES[op] = name
    return name


class BackwardNode(Node):
    """``grad_fn`` of a tensor made by op ``op``.

    ``next_functions`` has one ``(node, 0)`` pair per positional input
    (``(None, 0)`` for inputs that need no gradient), as in PyTorch;
    ``inputs`` holds the non-None ones for the chapter 1 graph algorithms.
    ``input_meta[i]`` is ``(shape, dtype)`` of input ``i`` (None when it
    needs no gradient): backward sums and casts each gradient back to it;
    ``needs_input_grad[i]`` says whether it is not None.
    """

    __slots__ = ("next_functions", "input_meta", "needs_input_grad", "out_shape", "out_dtype",
                 "_saved", "_saved_nbytes", "_tensor_type", "released", "hooks", "retained",
                 "site")

    def __init__(self, op: str, next_functions: tuple, input_meta: tuple, attrs: dict,
                 out: np.ndarray, inputs: tuple | None = None):
        self.id = next(_ids)
        self.op = op
        self.next_functions = next_functions
        if inputs is None:  # the nodes of next_functions, unless the caller has them at hand
            inputs = tuple([n for n, _ in next_functions if n is not None])
        self.inputs = inputs
        self.input_meta = input_meta
        self.needs_input_grad = ((True,) * len(input_meta) if len(inputs) == len(input_meta)
                                 else tuple([m is not None for m in input_meta]))
        self.attrs = attrs
        self.users = []
        self.name = _FIXED_NAMES.get(op) or backward_name(op, attrs, input_meta, out.ndim)
        self.out_shape = out.shape
        self.out_dtype = out.dtype
        self._saved = None
        self._saved_nbytes = 0
        self.released = False
        self.hooks = None
        self.retained = None
        self.site = None

    @property
    def meta(self) -> TensorMeta:
        return TensorMeta(self.out_shape, self.out_dtype)

    # ------------------------------------------------------------ saving
    def save(self, items: tuple, tensor_type: type) -> None:
        """Remember ``items`` for backward, each ``(value, version_box, version)``:
        an input tensor with its version counter; the op's output array with its
        counter (unpacked as a ``tensor_type`` whose ``grad_fn`` is this node, so
        higher-order gradients flow through it); or a constant array (a mask,
        indices) with box ``None``."""
        self._saved = items
        self._tensor_type = tensor_type
        nbytes = 0
        for value, _box, _version in items:
            if value is not None:
                nbytes += value.nbytes if isinstance(value, np.ndarray) else value.data.nbytes
        self._saved_nbytes = nbytes
        _SAVED_BYTES[0] += nbytes

    @property
    def saved(self) -> tuple:
        """The saved tensors, checked against in-place changes since saving."""
        out = []
        for value, box, _version in self._checked_items():
            if box is not None and isinstance(value, np.ndarray):  # the op's output,
                value = self._tensor_type._make(value, box, self)  # re-attached to this node
            out.append(value)
        return tuple(out)

    @property
    def saved_arrays(self) -> tuple:
        """The saved values as numpy arrays (for ``vjp_fast`` rules), checked alike."""
        return tuple([value if box is None or isinstance(value, np.ndarray) else value.data
                      for value, box, _version in self._checked_items()])

    def _checked_items(self) -> tuple:
        """The saved items, after checking that none was changed in place."""
        items = self._saved
        if items is None:
            if self.released:
                raise RuntimeError(
                    f"{self.name}: trying to backward through the graph a second time (or to "
                    "read saved tensors after they were freed). Saved values of the graph are "
                    "freed when you call .backward(); pass retain_graph=True to the first "
                    ".backward() if you need to run backward through it again."
                )
            return ()
        for index, (value, box, version) in enumerate(items):
            if box is not None and box[0] != version:
                raise self._modified_error(index, value, box[0], version)
        return items

    def _modified_error(self, index: int, value, version_now: int,
                        version_saved: int) -> RuntimeError:
        """The error for saved ``value`` (item ``index``), changed in place since saving."""
        is_tensor = not isinstance(value, np.ndarray)
        what = f"saved input {index}" if is_tensor else "its output"
        array = value.data if is_tensor else value
        return RuntimeError(
            "one of the variables needed for gradient computation has been modified "
            f"by an inplace operation: [{array.dtype} {list(array.shape)}], {what} of "
            f"{self.name}, is at version {version_now}; expected version {version_saved} "
            "instead. Hint: replace the in-place op (x.mul_(), x += ...) by its "
            "out-of-place form (x = x * ...), or clone the tensor before changing it."
        )

    def release(self) -> None:
        """Free the saved tensors (after a backward without retain_graph)."""
        if self._saved is not None:
            _SAVED_BYTES[0] -= self._saved_nbytes
            self._saved = None
            self._saved_nbytes = 0
            self.released = True

    def __del__(self):
        if self._saved_nbytes:
            _SAVED_BYTES[0] -= self._saved_nbytes

    def register_hook(self, fn):
        """``fn(grad)`` runs on the gradient arriving at this node's output."""
        if self.hooks is None:
            self.hooks = []
        self.hooks.append(fn)
        return RemovableHandle(self.hooks, fn)

    def __repr__(self) -> str:
        return f"<{self.name} object (op {self.op!r}, id {self.id})>"


class AccumulateGrad(Node):
    """The node where a leaf's gradient is added into ``leaf.grad``.

    Its op is ``placeholder``: a leaf is an input of the backward graph."""

    __slots__ = ("variable", "next_functions")

    def __init__(self, variable):
        self.id = next(_ids)
        self.op = "placeholder"
        self.inputs = ()
        self.next_functions = ()
        self.attrs = {}
        self.users = []
        self.name = _ACCUMULATE
        self.variable = variable

    @property
    def meta(self) -> TensorMeta:
        return TensorMeta(self.variable.data.shape, self.variable.data.dtype)

    def __repr__(self) -> str:
        return f"<AccumulateGrad object (leaf of shape {list(self.variable.shape)})>"


_ACCUMULATE = NodeName("AccumulateGrad")


class RemovableHandle:
    """What ``register_hook`` returns: ``handle.remove()`` takes the hook off."""

    __slots__ = ("hooks", "fn")

    def __init__(self, hooks: list, fn):
        self.hooks, self.fn = hooks, fn

    def remove(self) -> None:
        if self.fn in self.hooks:
            self.hooks.remove(self.fn)
