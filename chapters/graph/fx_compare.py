"""Our tracer next to ``torch.fx.symbolic_trace``, op for op.

A user function written with operators and ``torch.Tensor`` method names
(``x @ w``, ``h.tanh()``, ``h.sum(dim=1)``) runs unchanged on our
:class:`~chapters.graph.frontend.Value` and on torch.fx's ``Proxy``. So both
tracers can capture the *same* function. Each op's registration in
chapter 1's registry says which torch.fx node targets stand for it
(``register_op(..., fx_targets=...)``): an operator (``operator.mul``), a
function (``torch.tanh``) or a method name (``"tanh"``, a ``call_method``
node); :func:`fx_targets` reads them.

Two differences are expected and filtered out before comparing: torch.fx
inlines Python scalars into a node's arguments where we create ``constant``
nodes, and both record placeholders; the remaining op sequences should agree
one to one. torch.fx proxies carry *no data*, so a Python ``if`` on a value
raises ``torch.fx.proxy.TraceError`` there, where our tracer, which carries
example data, takes a branch and warns.
"""

from __future__ import annotations

import importlib

import torch
import torch.fx

from chapters.language import language
from chapters.text_table import display_width, pad

from .ir import Graph
from .ops import REGISTRY, get_op


def fx_target(spec: str):
    """The torch.fx node target a registration names: ``"operator.mul"`` ->
    the function ``operator.mul``, ``"torch.nn.functional.relu"`` -> ``F.relu``,
    ``"Tensor.tanh"`` -> the method name ``"tanh"`` (a ``call_method`` node)."""
    owner, _, attr = spec.rpartition(".")
    holder = None if not owner else torch.Tensor if owner == "Tensor" else \
        importlib.import_module(owner)
    if not hasattr(holder, attr):
        raise ValueError(f"fx target {spec!r} names nothing torch.fx records; write "
                         "'operator.<name>', 'torch.<name>' or 'Tensor.<method>' in the op's "
                         "register_op(..., fx_targets=...)")
    return attr if owner == "Tensor" else getattr(holder, attr)


def fx_targets(op: str) -> tuple:
    """The torch.fx node targets that stand for our op ``op``, from its
    registration (:func:`~chapters.graph.ops.register_op`'s ``fx_targets``)."""
    return tuple(fx_target(spec) for spec in get_op(op).fx_targets)


def our_name_for(target) -> str:
    """Our op name for a torch.fx node target; ``?<target>`` if none maps."""
    for op in REGISTRY:
        if any(target is t or target == t for t in fx_targets(op)):
            return op
    return f"?{getattr(target, '__name__', target)}"


def fx_op_sequence(fn) -> list[str]:
    """torch.fx's ops for ``fn``, in program order, named with our op names."""
    graph_module = torch.fx.symbolic_trace(fn)
    return [our_name_for(n.target) for n in graph_module.graph.nodes
            if n.op in ("call_function", "call_method")]


def op_sequence(graph: Graph) -> list[str]:
    """Our graph's ops in the order they were recorded (program order),
    without placeholders and constants."""
    return [n.op for n in graph.nodes if n.op not in ("placeholder", "constant")]


# side_by_side's column heads in each language the course speaks (chapters.language picks one)
HEADER = {"en": ("our node", "our op", "torch.fx node", "torch.fx target"),
          "zh": ("我们的节点", "我们的算子", "torch.fx 节点", "torch.fx 目标")}


def side_by_side(fn, graph: Graph) -> str:
    """A text table: our node, our op, torch.fx's node target."""
    fx_nodes = [n for n in torch.fx.symbolic_trace(fn).graph.nodes
                if n.op in ("call_function", "call_method")]
    ours = [n for n in graph.nodes if n.op not in ("placeholder", "constant")]
    rows = [HEADER[language()]]
    for k in range(max(len(ours), len(fx_nodes))):
        a = ours[k] if k < len(ours) else None
        b = fx_nodes[k] if k < len(fx_nodes) else None
        target = "" if b is None else (
            f"{b.op} {getattr(b.target, '__module__', '') or ''}."
            f"{getattr(b.target, '__name__', b.target)}".replace(" .", " "))
        rows.append((a.name if a else "-", a.op if a else "-", b.name if b else "-", target))
    widths = [max(display_width(r[c]) for r in rows) for c in range(4)]
    return "\n".join("  ".join(pad(c, w) for c, w in zip(r, widths, strict=True)) for r in rows)
