"""Custom autograd functions (自定义自动微分函数): ``torch.autograd.Function``.

A subclass is an op whose derivative you write yourself::

    class Exp(Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):      # g = dL/dy
            (y,) = ctx.saved_tensors
            return g * y           # dL/dx = dL/dy * dy/dx = g * e^x

``Exp.apply(x)`` runs ``forward`` with recording off (its own ops leave no
history) and then records ONE history node, named ``ExpBackward`` as in torch,
whose rule calls ``backward``: given one gradient per output of ``forward``,
it returns one per input (``None`` for a non-tensor argument). The node's
saved tensors go through the same machinery as a built-in op's
(:meth:`~.node.BackwardNode.save`): counted by ``saved_tensor_bytes``, freed
after backward, and checked against in-place changes. Written with engine ops,
``backward`` is itself differentiable, so ``create_graph=True`` gives second
derivatives; :func:`once_differentiable` declares a backward that is not.

The engine keeps one gradient per node, so a function with several
differentiable outputs gets one small node per output (:class:`OutputNode`,
named like the function's) that places its output's gradient into one flat
vector, the gradient of the function's node: ``d(flat)`` is the concatenation
of the outputs' gradients, which the function's rule splits again.

Where it differs from torch: with several differentiable outputs each output
has its own ``grad_fn`` (an :class:`OutputNode`), not one shared node;
``ctx.mark_dirty`` (a function changing its input in place) is refused, as
this engine records no in-place op on tensors that need gradients; torch's
``vmap`` support (``generate_vmap_rule``, ``vmap`` staticmethod) is absent.
"""

from __future__ import annotations

import functools
import inspect
import weakref

import numpy as np

from ..core import TensorBase
from ..factories import zeros
from ..forward_mode import ForwardMode
from ..functions import cat
from ..grad_mode import no_grad
from ..modes import MODES, not_observed
from ..node import BackwardNode, NodeName, _ids

_NO_EDGE = (None, 0)


class FunctionCtx:
    """The ``ctx`` that ``forward`` and ``backward`` share: what ``forward``
    leaves for ``backward`` (saved tensors, any attribute you set) and the
    facts ``backward`` may read (``needs_input_grad``)."""

    def __init__(self, args: tuple, record: bool):
        self.needs_input_grad = tuple([record and isinstance(a, TensorBase) and a._requires_grad
                                       for a in args])
        self._tensor_inputs = tuple([isinstance(a, TensorBase) for a in args])
        self._materialize_grads = True
        self._to_save: tuple = ()
        self._to_save_forward: tuple = ()
        self._in_jvp = False
        self._non_differentiable: set = set()
        self._node = None  # a weak reference to the recorded node: the node holds ctx

    def save_for_backward(self, *tensors) -> None:
        """Keep ``tensors`` (inputs, outputs or None) for backward: read them
        back with ``ctx.saved_tensors``, which fails if one was changed in place."""
        for t in tensors:
            if t is not None and not isinstance(t, TensorBase):
                raise TypeError(
                    f"save_for_backward can only save tensors or None, got {type(t).__name__}; "
                    "keep other values as attributes of ctx (ctx.k = k).")
        self._to_save = tensors

    def save_for_forward(self, *tensors) -> None:
        """Keep ``tensors`` for ``jvp``: inside ``jvp``, ``ctx.saved_tensors`` reads these."""
        self._to_save_forward = tensors

    @property
    def saved_tensors(self) -> tuple:
        if self._in_jvp:
            return self._to_save_forward
        if self._node is None:  # nothing recorded (forward mode, or no input needs grad)
            return self._to_save
        return self._node().saved

    def mark_non_differentiable(self, *outputs) -> None:
        """These outputs get no history (an index, a mask); their gradient in
        ``backward`` is zeros (or None with ``set_materialize_grads(False)``)."""
        self._non_differentiable.update(id(o) for o in outputs)

    def set_materialize_grads(self, value: bool) -> None:
        """False: an output whose gradient never arrives gives ``backward`` None
        instead of a tensor of zeros."""
        self._materialize_grads = bool(value)

    def mark_dirty(self, *tensors) -> None:
        raise NotImplementedError(
            "mark_dirty: custom functions that change their inputs in place are not supported "
            "by this engine. Return a new tensor from forward instead (x.clone().mul_(2) or "
            "x * 2).")


class _CustomNode(BackwardNode):
    """A history node whose rule is its own ``rule(node, g)`` rather than an
    entry of the op table (the engine falls back to it for ops it does not know).
    It sets the fields a :class:`BackwardNode` sets, but takes its name as given:
    a built-in node's name comes from its op's registration."""

    __slots__ = ()

    def __init__(self, op: str, name: str, next_functions: tuple, input_meta: tuple,
                 out: np.ndarray):
        self.id = next(_ids)
        self.op = op
        self.next_functions = next_functions
        self.inputs = tuple([n for n, _ in next_functions if n is not None])
        self.input_meta = input_meta
        self.needs_input_grad = tuple([m is not None for m in input_meta])
        self.attrs = {}
        self.users = []
        self.name = NodeName(name)
        self.out_shape, self.out_dtype = out.shape, out.dtype
        self._saved, self._saved_nbytes, self.released = None, 0, False
        self.hooks = self.retained = self.site = None


def _edges(tensors) -> tuple[tuple, tuple]:
    """``next_functions`` and ``input_meta`` for a node whose inputs are ``tensors``."""
    nexts, metas = [], []
    for x in tensors:
        if isinstance(x, TensorBase) and x._requires_grad:
            nexts.append((x.grad_fn or x._accumulator(), 0))
            metas.append((x.data.shape, x.data.dtype))
        else:
            nexts.append(_NO_EDGE)
            metas.append(None)
    return tuple(nexts), tuple(metas)


class FunctionNode(_CustomNode):
    """``grad_fn`` of a custom function's output: calls the user's ``backward``.

    ``slots`` lists, per differentiable output, ``(output index, offset into the
    flat gradient, shape, dtype)``; ``out_metas`` is ``(shape, dtype)`` of every
    tensor output (None for other outputs), for materialized zero gradients."""

    __slots__ = ("function", "ctx", "slots", "out_metas", "arrived")

    def rule(self, g: TensorBase) -> list:
        grads = self._output_gradients(g)
        result = self.function.backward(self.ctx, *grads)
        return _checked(self, result if isinstance(result, tuple | list) else (result,))

    def _output_gradients(self, g: TensorBase) -> list:
        """One gradient per output of forward: ``g`` itself for a single
        differentiable output, else its slices of the flat vector ``g``;
        zeros (or None) for outputs no gradient reached."""
        grads = [None] * len(self.out_metas)
        if len(self.slots) == 1:
            grads[self.slots[0][0]] = g
        else:
            for index, offset, shape, dtype in self.slots:
                if index in self.arrived:
                    grads[index] = g[offset:offset + int(np.prod(shape))].reshape(shape).to(dtype)
            self.arrived = set()
        if self.ctx._materialize_grads:
            for i, meta in enumerate(self.out_metas):
                if grads[i] is None and meta is not None:
                    grads[i] = g._make(np.zeros(*meta), [0])
        return grads


class OutputNode(_CustomNode):
    """``grad_fn`` of output ``index`` of a function with several differentiable
    outputs: d(flat) = its gradient at ``offset``, zeros elsewhere."""

    __slots__ = ("index", "offset")

    def rule(self, g: TensorBase) -> list:
        main = self.next_functions[0][0]
        main.arrived.add(self.index)
        size, total = g.data.size, main.out_shape[0]
        flat = g.reshape(-1).to(main.out_dtype)
        parts = [zeros(self.offset, dtype=main.out_dtype), flat,
                 zeros(total - self.offset - size, dtype=main.out_dtype)]
        return [cat(parts)]


_NODE_TYPES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _node_type(cls: type) -> type:
    """The node class for function ``cls``, named ``<cls>Backward`` as torch's
    (``type(y.grad_fn).__name__``), made once per function."""
    node_type = _NODE_TYPES.get(cls)
    if node_type is None:
        node_type = _NODE_TYPES[cls] = type(f"{cls.__name__}Backward", (FunctionNode,),
                                            {"__slots__": ()})
    return node_type


def _checked(node: FunctionNode, grads) -> list:
    """The user's gradients, one per input of forward, checked as torch checks them."""
    expected = len(node.input_meta)
    grads = list(grads)
    while len(grads) > expected and grads[-1] is None:  # extra Nones are allowed
        grads.pop()
    if len(grads) != expected:
        raise RuntimeError(
            f"function {node.name} returned an incorrect number of gradients (expected "
            f"{expected}, got {len(grads)}): backward must return one gradient per argument of "
            "forward, None for a non-tensor argument or one that needs no gradient.")
    for i, (g, meta, is_tensor) in enumerate(zip(grads, node.input_meta, node.ctx._tensor_inputs,
                                                 strict=True)):
        if g is None:
            continue
        if not is_tensor:
            raise RuntimeError(
                f"function {node.name} returned a gradient different than None at position "
                f"{i + 1}, but the corresponding forward input was not a Tensor; return None "
                "there.")
        if not isinstance(g, TensorBase):
            raise TypeError(f"function {node.name} returned a {type(g).__name__} as gradient "
                            f"{i}; return a Tensor or None.")
        if meta is None:
            grads[i] = None  # the input needs no gradient: drop it
        elif not _sums_down(g.data.shape, meta[0]):
            raise RuntimeError(
                f"Function {node.name} returned an invalid gradient at index {i} - got "
                f"{list(g.data.shape)} but expected shape compatible with {list(meta[0])}: "
                "a gradient has the shape of its input (or one that sums down to it).")
    return grads


def _sums_down(shape: tuple, target: tuple) -> bool:
    """Whether a gradient of ``shape`` sums down to ``target`` (``target``
    broadcasts to ``shape``)."""
    try:
        return np.broadcast_shapes(target, shape) == shape
    except ValueError:
        return False


class Function:
    """``torch.autograd.Function``: subclass it with static ``forward`` and
    ``backward`` methods (see the module docstring), call ``Cls.apply(*args)``.

    torch 2's split form works too: ``forward(*args)`` without ctx, plus
    ``setup_context(ctx, inputs, output)`` to fill ctx. An optional
    ``jvp(ctx, *tangents)`` gives the function's forward-mode rule."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError(f"{type(self).__name__}: custom functions are not instantiated; call "
                           f"{type(self).__name__}.apply(...) instead.")

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("a Function subclass must define @staticmethod forward")

    @staticmethod
    def setup_context(ctx, inputs: tuple, output) -> None:
        raise NotImplementedError("setup_context is not overridden")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError(
            "this custom Function defines no backward: add @staticmethod backward(ctx, *grads) "
            "returning one gradient per input of forward.")

    @staticmethod
    def jvp(ctx, *tangents):
        raise NotImplementedError(
            "this custom Function defines no jvp, so forward mode cannot go through it: add "
            "@staticmethod jvp(ctx, *tangents) returning the tangent of each output.")

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run ``forward`` without recording, then record one history node."""
        split = cls.setup_context is not Function.setup_context
        if kwargs or split:
            args = _positional(cls.forward, args, kwargs, split)
        record = MODES.grad_enabled and any(
            isinstance(a, TensorBase) and a._requires_grad for a in args)
        ctx = FunctionCtx(args, record)
        modes = [o for o in MODES.observers if isinstance(o, ForwardMode)]
        with no_grad(), _set_aside(modes):
            if split:
                output = cls.forward(*args)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args)
        outputs = output if isinstance(output, tuple) else (output,)
        diff = _differentiable(ctx, outputs)  # before _fresh: marks name forward's tensors
        outputs = tuple([_fresh(o, args) for o in outputs])
        if record and diff:
            _record(cls, ctx, args, outputs, diff)
        for mode in modes:
            _push_tangents(cls, ctx, mode, args, outputs)
        ctx._to_save_forward = ()  # only jvp reads them
        return outputs if isinstance(output, tuple) else outputs[0]


def _positional(forward, args: tuple, kwargs: dict, split: bool) -> tuple:
    """``args`` and ``kwargs`` as forward's positional arguments, as torch binds
    them, so each has its gradient slot; the split form also gets the defaults
    of the arguments left out (``setup_context`` sees every input)."""
    bound = inspect.signature(forward).bind(*((None,) if not split else ()), *args, **kwargs)
    if split:
        bound.apply_defaults()
    return bound.args if split else bound.args[1:]


class _set_aside:
    """Context manager: forward-mode observers do not watch ``forward``'s own ops
    (the function's ``jvp`` gives its tangents)."""

    def __init__(self, observers: list):
        self.blocks = [not_observed(o) for o in observers]

    def __enter__(self):
        for block in self.blocks:
            block.__enter__()

    def __exit__(self, *exc):
        for block in reversed(self.blocks):
            block.__exit__(*exc)
        return False


def _fresh(output, args: tuple):
    """A tensor output that is an input, or has history of its own, becomes a
    new tensor on the same memory (and version counter), as torch's view of it."""
    if isinstance(output, TensorBase) and (
            output._requires_grad or any(output is a for a in args)):
        return output._make(output.data, output._vbox)
    return output


def _differentiable(ctx: FunctionCtx, outputs: tuple) -> list[int]:
    """Indices of the outputs that get history: floating tensors not marked
    non-differentiable."""
    return [i for i, o in enumerate(outputs)
            if isinstance(o, TensorBase) and o.data.dtype.kind in "fV"
            and id(o) not in ctx._non_differentiable]


def _record(cls: type, ctx: FunctionCtx, args: tuple, outputs: tuple, diff: list) -> None:
    """Attach the function's node to the differentiable outputs ``diff`` (through
    one :class:`OutputNode` each when there are several) and save ``ctx._to_save``."""
    name = f"{cls.__name__}Backward"
    nexts, metas = _edges(args)
    slots, offset = [], 0
    for i in diff:
        slots.append((i, offset, outputs[i].data.shape, outputs[i].data.dtype))
        offset += outputs[i].data.size
    single = len(diff) == 1
    flat = (outputs[diff[0]].data if single else
            np.empty(offset, np.result_type(*[s[3] for s in slots])))
    node = _node_type(cls)("autograd_function", name, nexts, metas, flat)
    node.function, node.ctx, node.slots, node.arrived = cls, ctx, slots, set()
    node.out_metas = [(o.data.shape, o.data.dtype) if isinstance(o, TensorBase) else None
                      for o in outputs]
    ctx._node = weakref.ref(node)
    for observer in MODES.observers:  # anomaly detection records where it was made
        observer.node_recorded(node)
    for index, start, _shape, _dtype in slots:
        out = outputs[index]
        grad_fn = node
        if not single:
            grad_fn = OutputNode("autograd_function_output", name, ((node, 0),),
                                 ((flat.shape, flat.dtype),), out.data)
            grad_fn.index, grad_fn.offset, grad_fn.site = index, start, node.site
        out.grad_fn, out._requires_grad = grad_fn, True
    _save(node, ctx._to_save, outputs[diff[0]] if single else None)
    ctx._to_save = ()  # the node holds them now; ctx keeping its outputs would be a cycle


def _save(node: FunctionNode, tensors: tuple, single_output) -> None:
    """Save ``tensors`` on ``node`` with their versions. The single output is
    saved as its array so it is unpacked re-attached to ``node`` (as a built-in
    op saves ``"out"``); any other tensor is saved as itself, with its history."""
    items = []
    for t in tensors:
        if t is None:
            items.append((None, None, 0))
        elif t is single_output:
            items.append((t.data, t._vbox, t._vbox[0]))
        else:
            items.append((t, t._vbox, t._vbox[0]))
    if items:
        node.save(tuple(items), type(single_output) if single_output is not None else
                  type(next(t for t in tensors if t is not None)))


def _push_tangents(cls: type, ctx: FunctionCtx, mode: ForwardMode, args: tuple,
                   outputs: tuple) -> None:
    """Forward mode: the output tangents from the function's ``jvp``."""
    known = [mode.tangent_of(a) if isinstance(a, TensorBase) else None for a in args]
    if all(k is None for k in known):
        return
    _check_jvp_composes(cls, mode, args, known)
    tangents = [k if k is not None else
                (a._make(np.zeros_like(a.data), [0]) if isinstance(a, TensorBase) else None)
                for a, k in zip(args, known, strict=True)]
    ctx._in_jvp = True
    try:
        with not_observed(mode), no_grad():
            result = cls.jvp(ctx, *tangents)
    finally:
        ctx._in_jvp = False
    result = result if isinstance(result, tuple) else (result,)
    if len(result) != len(outputs):
        raise RuntimeError(f"{cls.__name__}.jvp returned {len(result)} tangents for "
                           f"{len(outputs)} outputs; return one per output of forward.")
    for o, t in zip(outputs, result, strict=True):
        if isinstance(o, TensorBase) and t is not None:
            mode.set_tangent(o, t)


def _check_jvp_composes(cls: type, mode: ForwardMode, args: tuple, known: list) -> None:
    """Refuse what a custom Function's ``jvp`` cannot give: it runs on values
    that ``forward`` computed with forward mode off and without recording, so
    its tangent is right at one level but has no tangent at an outer level and
    no history for autograd."""
    outer = [m for m in MODES.observers if isinstance(m, ForwardMode) and m.level < mode.level]
    if outer:
        raise RuntimeError(
            f"{cls.__name__}: a custom Function's jvp cannot be nested inside another forward-mode "
            f"level (level {mode.level} inside {[m.level for m in outer]}): its tangent would "
            "carry no outer tangent. Write the function with engine ops (they nest), or take the "
            "outer derivative by autograd.grad.")
    if MODES.grad_enabled and any(
            isinstance(x, TensorBase) and x._requires_grad for x in (*args, *known)):
        raise RuntimeError(
            f"{cls.__name__}: a custom Function's jvp runs without recording, so the tangent "
            "it gives could not be differentiated by autograd (reverse-over-forward). Run the "
            "jvp under no_grad(), or write the function with engine ops.")


def once_differentiable(backward):
    """Decorator for a ``backward`` that is not itself differentiable (it uses
    numpy, say): it runs without recording, and differentiating its result a
    second time raises, as in torch."""

    @functools.wraps(backward)
    def wrapper(ctx, *grads):
        if _carry_tangents((*grads, *ctx.saved_tensors)):
            raise RuntimeError(
                f"{backward.__qualname__} is @once_differentiable (it need not be written with "
                "engine ops), so forward mode cannot see through it: a jvp of this gradient "
                "would be wrong. Take the second derivative by autograd.grad instead, or drop "
                "@once_differentiable.")
        with no_grad():
            result = backward(ctx, *grads)
        sources = [g for g in grads if isinstance(g, TensorBase) and g._requires_grad]
        if not MODES.grad_enabled or not sources:
            return result
        single = not isinstance(result, tuple | list)
        wrapped = tuple([_delayed_error(r, sources) for r in ((result,) if single else result)])
        return wrapped[0] if single else wrapped

    return wrapper


def _carry_tangents(values: tuple) -> bool:
    """Whether any tensor among ``values`` has a tangent at an active forward-mode level."""
    levels = [o for o in MODES.observers if isinstance(o, ForwardMode)]
    return any(isinstance(v, TensorBase) and m.tangent_of(v) is not None
               for m in levels for v in values)


class DelayedErrorNode(_CustomNode):
    """History of a gradient computed by a ``@once_differentiable`` backward:
    differentiating through it raises."""

    __slots__ = ()

    def rule(self, g: TensorBase) -> list:
        raise RuntimeError(
            "trying to differentiate twice a function that was marked with @once_differentiable: "
            "its backward ran without recording, so it has no derivative. Write backward with "
            "differentiable tensor ops and drop @once_differentiable to get higher-order "
            "gradients.")


def _delayed_error(g, sources: list):
    """``g`` with a history that raises when differentiated."""
    if not isinstance(g, TensorBase):
        return g
    nexts, metas = _edges(sources)
    out = g._make(g.data, g._vbox)
    out.grad_fn = DelayedErrorNode("once_differentiable", "DelayedError", nexts, metas, g.data)
    out._requires_grad = True
    return out
