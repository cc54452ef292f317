"""Drawing a backward graph (反向图): the history autograd recorded for a tensor.

Works on the course's engine tensors and on torch tensors alike, because both
expose the same small protocol (PyTorch's):

* ``tensor.grad_fn`` — the node that made the tensor (``None`` for a leaf);
* ``node.name()`` — ``"MulBackward0"``, ``"AccumulateGrad"``, ...;
* ``node.next_functions`` — ``((node_or_None, index), ...)``, one per input;
* an ``AccumulateGrad`` node's ``.variable`` — the leaf it writes ``.grad`` into.

The drawing reads like micrograd's: data flows left to right; a **tensor node**
shows its name (when given), shape, a summary of its data and of its gradient
(``data | grad``); an **op node** shows the backward function that will run for
it, and optionally the tensors it saved for backward (or "freed" after a
backward without ``retain_graph``). Intermediate tensors are nameless unless
passed in ``named`` (``{"h": h}``): neither engine keeps a reference from the
graph to the tensors it produced, only to what it saved.
"""

from __future__ import annotations

import numpy as np

from chapters.autodiff.interop import to_numpy

from .graphviz_views import FONT, GraphDrawing
from .strings import check_table, words

TEXT = check_table({
    "en": {"leaf": "a leaf tensor of shape {shape} with no history", "scalar": "scalar",
           "shaped": "{shape}", "list": ", ", "mean_std": "mean {mean:.3g}, std {std:.3g}",
           "titles": ("course engine", "PyTorch"), "side": "{title}: {summary}",
           "graph": ("backward graph of a {kind} tensor: {count} backward functions ({ops}) and "
                     "{leaves} leaf accumulators (AccumulateGrad)")},
    "zh": {"leaf": "形状为 {shape} 的叶子张量，没有计算历史", "scalar": "标量",
           "shaped": "形状为 {shape} 的", "list": "、",
           "mean_std": "均值 {mean:.3g}，标准差 {std:.3g}",
           "titles": ("课程的参考引擎", "PyTorch"), "side": "{title}：{summary}",
           "graph": ("{kind}张量的反向计算图：{count} 个反向函数（{ops}），以及 {leaves} 个"
                     "叶子梯度累加器（AccumulateGrad）")},
})

TENSOR_STYLE = {"shape": "record", "style": "rounded,filled", "fillcolor": "#e8f1fb",
                "fontname": FONT, "fontsize": "10"}
LEAF_STYLE = {**TENSOR_STYLE, "fillcolor": "#d5ecd4"}
OP_STYLE = {"shape": "box", "style": "filled", "fillcolor": "#fdebd0", "fontname": FONT,
            "fontsize": "10"}


def summarize_values(value, digits: int = 4) -> str:
    """``7.0000`` for one element, ``[1, 2, 3]`` for up to three, else
    ``mean m, std s``; ``None`` (no gradient) is ``-``."""
    if value is None:
        return "-"
    array = np.asarray(to_numpy(value), dtype=np.float64)
    if array.size == 1:
        return f"{array.item():.{digits}f}"
    if array.size <= 3:
        return "[" + ", ".join(f"{v:.{min(digits, 3)}g}" for v in array.ravel()) + "]"
    return words(TEXT)["mean_std"].format(mean=array.mean(), std=array.std())


def _format_shape(shape) -> str:
    return "[" + ", ".join(str(s) for s in tuple(shape)) + "]"


def _shape(value) -> str:
    return _format_shape(value.shape)


def _name(node) -> str:
    """``node.name()`` without torch's C++ namespace (``torch::autograd::AccumulateGrad``)."""
    return node.name().rsplit("::", 1)[-1]


def _grad(tensor):
    """``tensor.grad`` where it is meaningful: a leaf's, or a non-leaf's after
    ``retain_grad()`` (torch warns when a non-leaf's ``.grad`` is merely read)."""
    if tensor.grad_fn is not None and not getattr(tensor, "retains_grad", True):
        return None
    return tensor.grad


def _escape(text: str) -> str:
    for ch in "{}|<>":
        text = text.replace(ch, "\\" + ch)
    return text


def _tensor_label(name: str | None, shape: str, data, grad, show_values: bool) -> str:
    head = _escape(f"{name}  {shape}" if name else shape)
    if not show_values:
        return head
    return (f"{head} | data {_escape(summarize_values(data))} | "
            f"grad {_escape(summarize_values(grad))}")


def _node_output_shape(node) -> str:
    """Shape of the tensor a node produced: the engine's nodes carry ``meta``;
    torch's carry it in ``_input_metadata`` (the shape of the incoming gradient)."""
    meta = getattr(node, "meta", None)
    if meta is not None and hasattr(meta, "shape"):
        return _format_shape(meta.shape)
    metadata = getattr(node, "_input_metadata", None)
    if metadata:
        return _format_shape(metadata[0].shape)
    return "?"


def saved_tensors(node) -> list[tuple[str, str]]:
    """``[(what, summary)]`` of what ``node`` saved for backward, for both engines;
    ``[("saved", "freed")]`` once backward released them."""
    if hasattr(node, "_saved"):  # the course's engine
        if node._saved is None:
            return [("saved", "freed")] if getattr(node, "released", False) else []
        out = []
        for i, (value, _box, _version) in enumerate(node._saved):
            out.append((f"saved[{i}]", f"{_shape(value)} {getattr(value, 'dtype', '')}"))
        return out
    out = []
    for attr in sorted(a for a in dir(node) if a.startswith("_saved_")):
        try:
            value = getattr(node, attr)
        except RuntimeError:  # torch raises once the saved values were freed
            return [("saved", "freed")]
        what = attr.removeprefix("_saved_")
        if hasattr(value, "shape") and hasattr(value, "dtype"):
            out.append((what, f"{_shape(value)} {str(value.dtype).removeprefix('torch.')}"))
        elif value is not None and (not isinstance(value, tuple | list) or len(value) < 6):
            out.append((what, str(value)))
    return out


def _missing_value_error(node) -> ValueError:
    return ValueError(
        f"every_value=True labels every tensor with its data and grad, but the tensor made by "
        f"{_name(node)} (shape {_node_output_shape(node)}) is not in named=: neither engine keeps "
        "a reference from the graph to the tensors it produced. Pass every intermediate, e.g. "
        "named={'a': a, 'e': e, 'L': L}, and call retain_grad() on the intermediates before "
        "backward() so their grads exist.")


def _add_history(g, root, named: dict | None, show_saved: bool, show_values: bool,
                 prefix: str, every_value: bool = False) -> None:
    """Add ``root``'s history to the graphviz graph (or cluster) ``g``; with
    ``every_value`` an intermediate tensor missing from ``named`` is an error."""
    named = dict(named or {})
    by_grad_fn = {id(t.grad_fn): (n, t) for n, t in named.items() if t.grad_fn is not None}
    by_leaf = {id(t): n for n, t in named.items() if t.grad_fn is None}
    if root.grad_fn is None:
        g.node(f"{prefix}root", _tensor_label(by_leaf.get(id(root), "leaf"), _shape(root),
                                              root, _grad(root), show_values), **LEAF_STYLE)
        return
    drawn: set[int] = set()
    stack = [root.grad_fn]
    while stack:
        node = stack.pop()
        if id(node) in drawn:
            continue
        drawn.add(id(node))
        node_id = f"{prefix}{id(node)}"
        if _name(node) == "AccumulateGrad":
            leaf = node.variable
            g.node(node_id, _tensor_label(by_leaf.get(id(leaf)), _shape(leaf), leaf, _grad(leaf),
                                          show_values), **LEAF_STYLE)
            continue
        label = _name(node)
        if show_saved:
            label += "".join(f"\\n{what}: {summary}" for what, summary in saved_tensors(node))
        g.node(f"{node_id}op", label, **OP_STYLE)
        name, tensor = by_grad_fn.get(id(node), (None, None))
        if tensor is None and node is root.grad_fn:
            name, tensor = "output", root
        if tensor is not None:
            out_label = _tensor_label(name, _shape(tensor), tensor, _grad(tensor), show_values)
        elif every_value:
            raise _missing_value_error(node)
        else:
            out_label = _escape(_node_output_shape(node))
        g.node(node_id, out_label, **TENSOR_STYLE)
        g.edge(f"{node_id}op", node_id)
        for parent, _ in node.next_functions:
            if parent is None:
                continue
            g.edge(f"{prefix}{id(parent)}", f"{node_id}op")
            stack.append(parent)


def _digraph(title: str = ""):
    import graphviz

    return graphviz.Digraph(graph_attr={"rankdir": "LR", "label": title, "labelloc": "t",
                                        "fontname": FONT})


def backward_graph(root, named: dict | None = None, show_saved: bool = False,
                   show_values: bool = True, title: str = "",
                   every_value: bool = False) -> GraphDrawing:
    """A drawing of ``root``'s history (an engine or a torch tensor).

    ``named`` maps names to tensors (parameters, inputs, intermediates) so the
    drawing can label them; a named non-leaf tensor shows its data and — after
    ``retain_grad()`` and backward — its gradient. Displays as SVG, or as DOT
    text with an install hint where Graphviz is missing (chapter 1's
    :class:`~vizkit.graphviz_views.GraphDrawing`).

    ``every_value=True`` draws micrograd's picture of a small expression: every
    tensor, intermediates included, labelled ``name | data | grad``. It needs
    every intermediate in ``named`` (and ``retain_grad()`` on each before
    backward, for its grad); a missing one raises ``ValueError`` saying so.
    """
    g = _digraph(title)
    _add_history(g, root, named, show_saved, show_values or every_value, prefix="",
                 every_value=every_value)
    return GraphDrawing(g.source, describe(root))


def side_by_side(left_root, right_root, left_named=None, right_named=None,
                 titles: tuple[str, str] | None = None, show_saved: bool = False,
                 show_values: bool = True) -> GraphDrawing:
    """One drawing with two clusters, e.g. the engine's graph next to torch's
    for the same computation, so their op names and shapes can be compared.
    ``titles`` defaults to the course's engine and PyTorch, in the course's language."""
    text = words(TEXT)
    titles = titles or text["titles"]
    g = _digraph()
    for i, (root, named, title) in enumerate([(left_root, left_named, titles[0]),
                                              (right_root, right_named, titles[1])]):
        with g.subgraph(name=f"cluster_{i}") as cluster:
            cluster.attr(label=title, style="rounded", color="#999999")
            _add_history(cluster, root, named, show_saved, show_values, prefix=f"g{i}_")
    summary = " | ".join(text["side"].format(title=t, summary=describe(r))
                         for t, r in zip(titles, (left_root, right_root), strict=True))
    return GraphDrawing(g.source, summary)


def op_names(root) -> list[str]:
    """Names of the backward functions in ``root``'s history, sorted — a quick
    textual comparison of two engines' graphs."""
    names, seen, stack = [], set(), [root.grad_fn] if root.grad_fn is not None else []
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        names.append(_name(node))
        stack.extend(p for p, _ in node.next_functions if p is not None)
    return sorted(names)


def describe(root) -> str:
    """The text summary of a backward graph: how many backward functions of each kind."""
    text = words(TEXT)
    names = op_names(root)
    if not names:
        return text["leaf"].format(shape=_shape(root))
    counts = {n: names.count(n) for n in dict.fromkeys(names)}
    leaves = counts.pop("AccumulateGrad", 0)
    ops = text["list"].join(f"{n} x{c}" if c > 1 else n for n, c in counts.items())
    kind = (text["scalar"] if tuple(root.shape) == ()
            else text["shaped"].format(shape=_shape(root)))
    return text["graph"].format(kind=kind, count=sum(counts.values()), ops=ops, leaves=leaves)
