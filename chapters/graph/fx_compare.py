"""Our tracer next to ``torch.fx.symbolic_trace``, op for op.

A user function written with operators and ``torch.Tensor`` method names
(``x @ w``, ``h.tanh()``, ``h.sum(dim=1)``) runs unchanged on our
:class:`~chapters.graph.frontend.Value` and on torch.fx's ``Proxy``. So both
tracers can capture the *same* function, and :data:`FX_TARGETS` says which
torch.fx node target stands for each of our ops: an operator
(``operator.mul``), a function (``torch.tanh``) or a method name (``"tanh"``,
a ``call_method`` node).

Two differences are expected and filtered out before comparing: torch.fx
inlines Python scalars into a node's arguments where we create ``constant``
nodes, and both record placeholders; the remaining op sequences should agree
one to one. torch.fx proxies carry *no data*, so a Python ``if`` on a value
raises ``torch.fx.proxy.TraceError`` there, where our tracer, which carries
example data, takes a branch and warns.
"""

from __future__ import annotations

import operator

import torch
import torch.fx
import torch.nn.functional as F  # noqa: N812

from .ir import Graph

FX_TARGETS: dict[str, tuple] = {
    "add": (operator.add, torch.add, "add"),
    "sub": (operator.sub, torch.sub, "sub"),
    "mul": (operator.mul, torch.mul, "mul"),
    "div": (operator.truediv, torch.div, "div"),
    "pow": (operator.pow, torch.pow, "pow"),
    "neg": (operator.neg, torch.neg, "neg"),
    "abs": (operator.abs, torch.abs, "abs"),
    "matmul": (operator.matmul, torch.matmul, "matmul"),
    "maximum": (torch.maximum, "maximum"),
    "minimum": (torch.minimum, "minimum"),
    "where": (torch.where, "where"),
    "exp": (torch.exp, "exp"),
    "log": (torch.log, "log"),
    "sqrt": (torch.sqrt, "sqrt"),
    "tanh": (torch.tanh, "tanh"),
    "relu": (torch.relu, F.relu, "relu"),
    "sigmoid": (torch.sigmoid, "sigmoid"),
    "softmax": (torch.softmax, F.softmax, "softmax"),
    "sum": (torch.sum, "sum"),
    "mean": (torch.mean, "mean"),
    "reshape": (torch.reshape, "reshape"),
    "transpose": (torch.transpose, "transpose"),
    "permute": (torch.permute, "permute"),
    "broadcast_to": (torch.broadcast_to, "broadcast_to", "expand"),
    "lt": (operator.lt, torch.lt, "lt"),
    "le": (operator.le, torch.le, "le"),
    "gt": (operator.gt, torch.gt, "gt"),
    "ge": (operator.ge, torch.ge, "ge"),
    "eq": (operator.eq, torch.eq, "eq"),
    "ne": (operator.ne, torch.ne, "ne"),
}


def our_name_for(target) -> str:
    """Our op name for a torch.fx node target; ``?<target>`` if none maps."""
    for ours, targets in FX_TARGETS.items():
        if any(target is t or target == t for t in targets):
            return ours
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


def side_by_side(fn, graph: Graph) -> str:
    """A text table: our node, our op, torch.fx's node target."""
    fx_nodes = [n for n in torch.fx.symbolic_trace(fn).graph.nodes
                if n.op in ("call_function", "call_method")]
    ours = [n for n in graph.nodes if n.op not in ("placeholder", "constant")]
    rows = [("our node", "our op", "torch.fx node", "torch.fx target")]
    for k in range(max(len(ours), len(fx_nodes))):
        a = ours[k] if k < len(ours) else None
        b = fx_nodes[k] if k < len(fx_nodes) else None
        target = "" if b is None else (
            f"{b.op} {getattr(b.target, '__module__', '') or ''}."
            f"{getattr(b.target, '__name__', b.target)}".replace(" .", " "))
        rows.append((a.name if a else "-", a.op if a else "-", b.name if b else "-", target))
    widths = [max(len(r[c]) for r in rows) for c in range(4)]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows)
