"""The backward engine (反向传播): reverse-mode differentiation over the history.

``loss.backward()`` is three steps:

1. **order**: ``topological_sort`` from chapter 1 lists every node the loss
   depends on, each after its inputs; walking that list *backwards* visits a
   node only after every node that used its output (no recursion, so a chain
   of 100,000 ops is fine);
2. **apply the rules**: each node's VJP rule turns the gradient of its
   output into gradients of its inputs; a node used twice receives the *sum*
   of the gradients from its users (the multivariate chain rule). A custom
   ``autograd.Function``'s node is not in the rule table and brings its own
   rule (:mod:`.autograd.function`). When the backward itself is not
   recorded (``create_graph=False``) and no observer watches the rules, an
   op's ``vjp_fast`` form (the same rule as one numpy expression,
   :mod:`.rules`) runs in place of its Tensor rule;
3. **land**: at the leaves (``AccumulateGrad`` nodes) the gradient is added
   into ``.grad``; then the saved tensors are freed unless ``retain_graph``.

Every gradient is made to match its input here, in one place: summed over
broadcast dimensions (:func:`sum_to`) and cast back to the input's dtype.
"""

from __future__ import annotations

import numpy as np

from chapters.graph.ir import topological_sort

from . import dtypes
from .core import TensorBase, run
from .dispatch import suppress_hook
from .grad_mode import set_grad_enabled
from .modes import MODES
from .node import AccumulateGrad
from .rules import VJP, VJP_FAST


def sum_to(g: TensorBase, shape: tuple) -> TensorBase:
    """Sum ``g`` down to ``shape``: the adjoint of broadcasting. Leading dims
    that broadcasting added are summed away; dims where ``shape`` has 1 and
    ``g`` has more are summed with keepdim."""
    if g.data.shape == shape:
        return g
    lead = g.ndim - len(shape)
    dims = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape)
                                      if s == 1 and g.data.shape[lead + i] != 1)
    if dims:
        g = g.sum(dims, keepdim=True)
    return g.reshape(shape)


def _fit(g: TensorBase, meta: tuple) -> TensorBase:
    """``g`` in the shape and dtype of the input it is the gradient of."""
    shape, dtype = meta
    if g.data.shape != shape:
        g = sum_to(g, shape)
    if g.data.dtype != dtype:
        g = g.to(dtype)
    return g


def _root_gradients(tensors, grad_tensors) -> list[TensorBase]:
    grads = []
    for i, t in enumerate(tensors):
        if not isinstance(t, TensorBase):
            raise TypeError(f"backward: expected Tensors, got {type(t).__name__}")
        if not t._requires_grad:
            raise RuntimeError(
                "element 0 of tensors does not require grad and does not have a grad_fn: "
                "backward() needs a tensor computed from a leaf with requires_grad=True "
                "(was it made under no_grad(), or from tensors without requires_grad?).")
        g = None if grad_tensors is None else grad_tensors[i]
        if g is None:
            if t.data.size != 1:
                raise RuntimeError(
                    f"grad can be implicitly created only for scalar outputs; this tensor has "
                    f"shape {list(t.shape)}. Pass gradient= (a tensor of the same shape: the "
                    "vector of the vector-Jacobian product), or reduce first, e.g. y.sum().")
            g = type(t)._make(np.ones(t.data.shape, dtype=t.data.dtype), [0])
        else:
            g = g if isinstance(g, TensorBase) else type(t)(np.asarray(g, dtype=t.data.dtype))
            if g.data.shape != t.data.shape:
                raise RuntimeError(
                    f"backward: gradient has shape {list(g.shape)} but the tensor has shape "
                    f"{list(t.shape)}; they must match.")
            if g.data.dtype != t.data.dtype and dtypes.is_floating(g.data.dtype):
                g = g.to(t.data.dtype)
        grads.append(g)
    return grads


def _own(g: TensorBase, handed: set) -> TensorBase:
    """``g`` itself if nothing else can see its array, else a copy: a leaf's
    ``.grad`` must own its memory (optimizers and clipping change it in place)."""
    array = g.data
    if array.flags.owndata and array.flags.writeable and id(array) not in handed:
        handed.add(id(array))
        return g
    return type(g)._make(array.copy(), [0])


def run_backward(roots: list, root_grads: list[TensorBase], retain_graph: bool,
                 create_graph: bool, capture: dict | None = None) -> dict:
    """The engine. ``capture`` (node -> slot) collects the gradients arriving
    at those nodes instead of accumulating into leaves (``autograd.grad``)."""
    grads: dict = {}
    handed: set = {id(g.data) for g in root_grads}
    for node, g in zip(roots, root_grads, strict=True):
        grads[node] = grads[node] + g if node in grads else g
    captured: dict = {}
    order = topological_sort(roots)
    outer, MODES.in_backward = MODES.in_backward, True
    try:
        _walk(order, grads, captured, retain_graph, create_graph, capture, handed)
    finally:
        MODES.in_backward = outer
    return captured


def _walk(order, grads, captured, retain_graph, create_graph, capture, handed) -> None:
    """Visit ``order`` backwards, applying each node's rule (see module docstring)."""
    fast = not create_graph and not MODES.observers  # nothing needs the Tensor path
    with set_grad_enabled(create_graph), suppress_hook():
        for node in reversed(order):
            g = grads.pop(node, None)
            if g is None:
                continue
            if isinstance(node, AccumulateGrad):
                hooks = node.variable._hooks
                if hooks:
                    g = _run_hooks(hooks["pre"], g)
                if capture is not None:
                    if node in capture:
                        captured[node] = g
                    continue
                _accumulate(node.variable, g, create_graph, handed)
                continue
            if node.hooks:
                g = _run_hooks(node.hooks, g)
            if node.retained is not None and capture is None:
                _retain(node.retained(), g, create_graph)
            if capture is not None and node in capture:
                captured[node] = g
            input_grads = _fast_gradients(node, g) if fast else None
            if input_grads is None:  # no fast form, or it declined: the Tensor rule
                rule = VJP.get(node.op) or type(node).rule  # a custom Function brings its own
                input_grads = rule(node, g)
                for observer in MODES.observers:  # anomaly detection checks each rule
                    observer.rule_ran(node, input_grads)
            if not retain_graph and node._saved is not None:
                node.release()
            for (next_node, _), meta, gi in zip(node.next_functions, node.input_meta,
                                                input_grads, strict=True):
                if next_node is None or gi is None:
                    continue
                data = gi.data
                if data.shape != meta[0] or (data.dtype is not meta[1] and data.dtype != meta[1]):
                    gi = _fit(gi, meta)
                previous = grads.get(next_node)
                grads[next_node] = gi if previous is None else _sum(previous, gi, fast)


def _fast_gradients(node, g: TensorBase) -> list | None:
    """The gradients of ``node``'s inputs from the ``vjp_fast`` form of its rule;
    None when the op has none, when ``VJP[op]`` was replaced since (the fast
    form agrees with the rule it was written for), when a hook changed ``g``'s
    dtype (the form assumes the output's), or when the form declines the call.
    numpy gives 0-d results as scalars, made arrays again here."""
    fast = VJP_FAST.get(node.op)
    if fast is None or fast[0] is not VJP[node.op] or g.data.dtype is not node.out_dtype:
        return None
    arrays = fast[1](node, g.data)
    if arrays is None:
        return None
    make = g._make
    return [None if a is None else make(np.asarray(a), [0]) for a in arrays]


def _sum(previous: TensorBase, gi: TensorBase, fast: bool) -> TensorBase:
    """``previous + gi``: two gradients for one input, of its shape and dtype
    (both went through :func:`_fit`). The core's add records the sum (under
    ``create_graph``) and shows it to observers; when neither is needed
    (``fast``), numpy's add gives the same array directly: no type promotion
    to do, and a float16/bfloat16 sum computed in float32 and rounded, as the
    core computes it, is the correctly rounded sum, which numpy gives too."""
    if fast:
        return gi._make(previous.data + gi.data, [0])
    return run(type(gi), "add", (previous, gi))


def _retain(kept: TensorBase | None, g: TensorBase, create_graph: bool) -> None:
    """``kept.grad += g`` for a non-leaf that called ``retain_grad()`` (as a leaf's
    gradient accumulates); nothing if the tensor is gone."""
    if kept is None:
        return
    fresh = g if create_graph else type(g)._make(g.data.copy(), [0])
    kept.grad = fresh if kept.grad is None else kept.grad + fresh


def _run_hooks(hooks: list, g: TensorBase) -> TensorBase:
    """Each hook may return a new gradient, which the next hook receives."""
    for hook in list(hooks):
        new = hook(g)
        if new is not None:
            g = new
    return g


def _accumulate(leaf: TensorBase, g: TensorBase, create_graph: bool, handed: set) -> None:
    """``leaf.grad += g`` (a fresh tensor the first time), then the
    post-accumulate hooks."""
    if leaf.grad is None:
        leaf.grad = g if create_graph else _own(g.detach() if g.grad_fn else g, handed)
    elif create_graph or leaf.grad.grad_fn is not None:
        leaf.grad = leaf.grad + g
    else:
        np.add(leaf.grad.data, g.data, out=leaf.grad.data, casting="unsafe")
    hooks = leaf._hooks and leaf._hooks["post"]
    if hooks:
        with set_grad_enabled(False):
            for hook in list(hooks):
                hook(leaf)


def _root_node(t: TensorBase):
    return t.grad_fn if t.grad_fn is not None else t._accumulator()


def _as_tuple(value):
    """torch's autograd functions take one tensor or a sequence of them."""
    return (value,) if isinstance(value, TensorBase) else value


def backward(tensors, grad_tensors=None, retain_graph: bool | None = None,
             create_graph: bool = False, inputs=None) -> None:
    """``torch.autograd.backward``: accumulate gradients of ``tensors`` into leaves."""
    for observer in MODES.observers:  # forward mode refuses: .grad would drop tangents
        observer.backward_called()
    tensors, grad_tensors = _as_tuple(tensors), _as_tuple(grad_tensors)
    retain_graph = create_graph if retain_graph is None else retain_graph
    root_grads = _root_gradients(tensors, grad_tensors)
    roots = [_root_node(t) for t in tensors]
    if inputs is None:
        run_backward(roots, root_grads, retain_graph, create_graph)
        return
    inputs = tuple(_as_tuple(inputs))
    got = grad(tensors, inputs, grad_tensors, retain_graph, create_graph, allow_unused=True)
    for t, g in zip(inputs, got, strict=True):
        if g is not None:
            _accumulate(t, g, create_graph, set())


def grad(outputs, inputs, grad_outputs=None, retain_graph: bool | None = None,
         create_graph: bool = False, allow_unused: bool = False) -> tuple:
    """``torch.autograd.grad``: d(outputs)/d(inputs), returned, not accumulated."""
    outputs, inputs, grad_outputs = _as_tuple(outputs), _as_tuple(inputs), _as_tuple(grad_outputs)
    retain_graph = create_graph if retain_graph is None else retain_graph
    root_grads = _root_gradients(outputs, grad_outputs)
    targets = []
    for t in inputs:
        if not t._requires_grad:
            raise RuntimeError("one of the differentiated tensors does not require grad")
        targets.append(_root_node(t))
    captured = run_backward([_root_node(t) for t in outputs], root_grads, retain_graph,
                            create_graph, capture={n: i for i, n in enumerate(targets)})
    result = []
    for node in targets:
        g = captured.get(node)
        if g is None and not allow_unused:
            raise RuntimeError(
                "one of the differentiated tensors appears to not have been used in the graph; "
                "pass allow_unused=True if this is intended.")
        result.append(g)
    return tuple(result)
