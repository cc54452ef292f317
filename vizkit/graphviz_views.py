"""Graphviz drawings of computational graphs, with a text summary beside each.

The drawing functions read graphs through a small protocol, so chapter 1's
``Graph`` and chapter 2's tensor history are drawn by the same code:

* a **node** has ``name`` (str, unique within the drawing), ``op`` (str) and
  ``inputs`` (a sequence of nodes); optionally ``meta`` with ``shape`` and
  ``dtype`` (used to label edges). Nodes whose ``op`` is ``"placeholder"``
  are drawn as inputs, ``"constant"`` as small grey boxes;
* a **source** is a node, a sequence of nodes (the outputs), or any object with
  an ``outputs`` sequence (a ``Graph``). Everything reachable from the outputs
  through ``inputs`` is drawn, plus, when the source also has a ``nodes``
  sequence, every node in it (so dead code a pass is about to remove shows).

:func:`to_dot` emits the DOT text (left to right; outputs with a double border;
edges labelled ``f32[256, 128]``). It stays readable at a few hundred nodes:
``collapse`` draws each straight chain of ops as one box, ``depth`` keeps only
the nodes within that many edges of the outputs. ``highlight`` colours a subset
(say, the nodes a pass removed or created) and ``values`` prints values.

:func:`draw` shows a drawing through :func:`vizkit.figures.show`: an SVG when
the Graphviz ``dot`` program is installed, otherwise a message saying how to
install it followed by the DOT text — never a traceback.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from .figures import show
from .strings import check_table, words

HIGHLIGHT = "#ffb74d"  # orange: the nodes a caption talks about
FONT = "Helvetica,Arial,Liberation Sans,Noto Sans CJK SC,PingFang SC,Microsoft YaHei,sans-serif"
"""The ``fontname`` of every Graphviz drawing: a family list, read by ``dot`` (through
Pango and fontconfig, for its layout and PNG output) and by the browser (as the SVG's
``font-family``). Latin text takes the first installed of Helvetica and its
metric twins; Chinese text, which none of those has, takes the first installed
Simplified Chinese font. Without one named, fontconfig picks any font that has
the glyphs, which may draw a Chinese label in Japanese letterforms."""
INSTALL_HINT = (
    "The Graphviz `dot` program was not found on PATH, so this graph is shown as "
    "DOT text instead of a drawing. Install it with `conda install -c conda-forge "
    "graphviz` (the course environment.yml does this), `sudo apt-get install graphviz` "
    "or `brew install graphviz`, then restart the kernel."
)
SHORT_DTYPES = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16",
                "int64": "i64", "int32": "i32", "bool": "bool", "uint8": "u8", "int8": "i8"}


# ------------------------------------------------------------- protocol walk


def output_nodes(source) -> list:
    if hasattr(source, "outputs"):
        return list(source.outputs)
    if isinstance(source, Sequence) and not isinstance(source, str):
        return list(source)
    return [source]


def roots_of(source) -> list:
    """Where the walk starts: the outputs, then any other node the source lists."""
    return output_nodes(source) + list(getattr(source, "nodes", []))


def collect(outputs: Iterable) -> list:
    """Every node reachable from ``outputs``, inputs before users (iterative)."""
    order, done, stack = [], set(), []
    for root in outputs:
        if id(root) in done:
            continue
        stack.append((root, iter(root.inputs)))
        on_stack = {id(root)}
        while stack:
            node, pending = stack[-1]
            child = next(pending, None)
            if child is None:
                stack.pop()
                on_stack.discard(id(node))
                done.add(id(node))
                order.append(node)
            elif id(child) not in done and id(child) not in on_stack:
                on_stack.add(id(child))
                stack.append((child, iter(child.inputs)))
    return order


def type_label(node) -> str:
    meta = getattr(node, "meta", None)
    if meta is None:
        return ""
    dtype = str(np.dtype(meta.dtype)) if meta.dtype is not None else "?"
    return f"{SHORT_DTYPES.get(dtype, dtype)}{list(meta.shape)}"


SUMMARY_TEXT = check_table({
    "en": {"mean_range": "mean {mean:.3g}, range [{low:.3g}, {high:.3g}]",
           "input": "input {name} {type}", "highlighted": " [highlighted]", "output": " [output]",
           "more": "; ... and {count} more nodes",
           "head": "Graph of {ops} ops ({nodes} nodes incl. inputs and constants). ",
           "join": "; ", "before": "before {name} (red: removed)",
           "after": "after {name} (green: created)"},
    "zh": {"mean_range": "均值 {mean:.3g}，范围 [{low:.3g}, {high:.3g}]",
           "input": "输入 {name} {type}", "highlighted": " [高亮]", "output": " [输出]",
           "more": "；……另有 {count} 个节点",
           "head": "计算图共有 {ops} 个算子（{nodes} 个节点，含输入与常量）。",
           "join": "；", "before": "{name} 之前（红色：被删除）",
           "after": "{name} 之后（绿色：新建）"},
})


def value_label(value) -> str:
    """A value in a few characters: all of it up to 4 elements, else its mean and range."""
    array = np.asarray(value)
    if array.size <= 4:
        return np.array2string(array, precision=3, separator=", ")
    return words(SUMMARY_TEXT)["mean_range"].format(mean=array.mean(), low=array.min(),
                                                    high=array.max())


def escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def is_source(node) -> bool:
    return node.op in ("placeholder", "constant")


# ------------------------------------------------------------ layout helpers


def distances_from_outputs(outputs: list) -> dict[int, int]:
    dist = {id(o): 0 for o in outputs}
    frontier = list(outputs)
    while frontier:
        nxt = []
        for node in frontier:
            for inp in node.inputs:
                if id(inp) not in dist:
                    dist[id(inp)] = dist[id(node)] + 1
                    nxt.append(inp)
        frontier = nxt
    return dist


def chains(nodes: list, outputs: list, min_length: int) -> dict[int, list]:
    """Straight chains of ops (each member's only non-constant input is the
    previous member, which has no other user): first member id -> members."""
    users: dict[int, list] = {id(n): [] for n in nodes}
    for n in nodes:
        for i in n.inputs:
            if id(i) in users:
                users[id(i)].append(n)
    out_ids = {id(o) for o in outputs}

    def previous(node):
        if is_source(node):
            return None
        main = [i for i in node.inputs if i.op != "constant"]
        if len(main) == 1 and not is_source(main[0]) and len(users[id(main[0])]) == 1 \
                and id(main[0]) not in out_ids:
            return main[0]
        return None

    nexts = {id(p): n for n in nodes if (p := previous(n)) is not None}
    starts = [n for n in nodes if not is_source(n) and previous(n) is None]
    found = {}
    for start in starts:
        members = [start]
        while id(members[-1]) in nexts:
            members.append(nexts[id(members[-1])])
        if len(members) >= min_length:
            found[id(start)] = members
    return found


# ------------------------------------------------------------------- DOT text


def to_dot(source, *, highlight: Iterable[str] | Mapping[str, str] = (),
           values: Mapping[str, object] | None = None, depth: int | None = None,
           collapse: int | None = None, edge_labels: bool = True,
           title: str | None = None) -> str:
    """The DOT text of ``source`` (see the module docstring for the protocol).

    ``highlight``: names to fill orange, or ``{name: colour}``. ``values``:
    ``{name: array}`` printed under each node. ``depth``: draw only nodes within
    that many edges of an output. ``collapse``: draw each straight chain of at
    least that many ops as one box (default: 3 when there are over 60 nodes).
    """
    outputs = output_nodes(source)
    nodes = collect(roots_of(source))
    colours = dict(highlight) if isinstance(highlight, Mapping) else \
        {name: HIGHLIGHT for name in highlight}
    if collapse is None and len(nodes) > 60:
        collapse = 3
    hidden_count = 0
    if depth is not None:
        dist = distances_from_outputs(outputs)
        hidden_count = sum(1 for n in nodes if dist.get(id(n), depth + 1) > depth)
        nodes = [n for n in nodes if dist.get(id(n), depth + 1) <= depth]
    groups = chains(nodes, outputs, collapse) if collapse else {}
    box_of = {}  # node id -> the dot id that draws it
    for members in groups.values():
        for m in members:
            box_of[id(m)] = f"c{id(members[0])}"
    visible = {id(n) for n in nodes}
    # constants that feed only collapsed chains are folded into the chain's box
    consumers: dict[int, set] = {}
    for n in nodes:
        for i in n.inputs:
            consumers.setdefault(id(i), set()).add(box_of.get(id(n), f"n{id(n)}"))
    hidden_constants = {id(n) for n in nodes if n.op == "constant" and consumers.get(id(n))
                        and all(c.startswith("c") for c in consumers[id(n)])}
    out_ids = {id(o) for o in outputs}

    lines = ["digraph G {", '  rankdir=LR; ranksep=0.3; nodesep=0.15;',
             f'  node [fontname="{FONT}", fontsize=10, shape=box, style="rounded,filled", '
             'fillcolor="#e3f2fd", color="#546e7a"];',
             f'  edge [fontname="{FONT}", fontsize=8, color="#78909c", fontcolor="#455a64"];']
    if title:
        lines.append(f'  labelloc=t; label="{escape(title)}"; fontname="{FONT}";')
    for members in groups.values():
        ops = [m.op for m in members]
        shown = ops if len(ops) <= 6 else ops[:3] + ["…"] + ops[-2:]
        label = f"{len(ops)} ops: {' → '.join(shown)}\\n{escape(members[-1].name)}"
        colour = next((colours[m.name] for m in members if m.name in colours), "#e8eaf6")
        border = ", peripheries=2" if id(members[-1]) in out_ids else ""
        lines.append(f'  c{id(members[0])} [label="{label}", fillcolor="{colour}"{border}];')
    for n in nodes:
        if id(n) in box_of or id(n) in hidden_constants:
            continue
        if n.op == "placeholder":
            label, attrs = f"{n.name}\\n{type_label(n)}", 'shape=ellipse, fillcolor="#e8f5e9"'
        elif n.op == "constant":
            value = getattr(n, "attrs", {}).get("value") if hasattr(n, "attrs") else None
            shown = value_label(value) if value is not None else n.name
            label, attrs = escape(shown), 'fontsize=8, fillcolor="#eeeeee"'
        else:
            label, attrs = f"{escape(n.name)}\\n{escape(n.op)}", ""
            program = getattr(n, "attrs", {}).get("program") if hasattr(n, "attrs") else None
            if program is not None and hasattr(program, "ops"):
                label += "\\n" + escape(" → ".join(program.ops))
        if values is not None and n.name in values and n.op != "constant":
            label += "\\n" + escape(value_label(values[n.name]))
        fill = f', fillcolor="{colours[n.name]}"' if n.name in colours else ""
        border = ", peripheries=2" if id(n) in out_ids else ""
        sep = ", " if attrs else ""
        lines.append(f'  n{id(n)} [label="{label}"{sep}{attrs}{fill}{border}];')
    if hidden_count:
        lines.append(f'  hidden [label="⋯ {hidden_count} earlier nodes", shape=plaintext, '
                     'style=""];')
    drawn_edges = set()
    for n in nodes:
        dst = box_of.get(id(n), f"n{id(n)}")
        for i in n.inputs:
            if id(i) in hidden_constants:
                continue
            src = "hidden" if id(i) not in visible else box_of.get(id(i), f"n{id(i)}")
            if src == dst or (src, dst) in drawn_edges:
                continue
            drawn_edges.add((src, dst))
            label = f' [label="{escape(type_label(i))}"]' if edge_labels and src != "hidden" \
                else ""
            lines.append(f"  {src} -> {dst}{label};")
    lines.append("}")
    return "\n".join(lines)


# ------------------------------------------------------------------ rendering


def dot_program() -> str | None:
    return shutil.which("dot")


def render_svg(dot_text: str, timeout: float = 30.0) -> str | None:
    """SVG text from DOT, or None when ``dot`` is missing or fails."""
    program = dot_program()
    if program is None:
        return None
    try:
        done = subprocess.run([program, "-Tsvg"], input=dot_text.encode(), capture_output=True,
                              timeout=timeout, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.decode("utf-8", errors="replace")


class GraphDrawing:
    """A drawing Jupyter displays as SVG, or as the install hint plus the
    DOT text when Graphviz is not installed."""

    def __init__(self, dot: str, summary: str = ""):
        self.dot = dot
        self.summary = summary
        self._svg: str | None = None

    @property
    def svg(self) -> str | None:
        if self._svg is None:
            self._svg = render_svg(self.dot)
        return self._svg

    def fallback_markdown(self) -> str:
        return f"**No drawing:** {INSTALL_HINT}\n\n```dot\n{self.dot}\n```"

    def _repr_mimebundle_(self, include=None, exclude=None):
        svg = self.svg
        text = self.summary or "a computational graph drawing"
        if svg is not None:
            return {"image/svg+xml": svg, "text/plain": text}
        return {"text/markdown": self.fallback_markdown(),
                "text/plain": f"{INSTALL_HINT}\n\n{self.dot}"}


# ----------------------------------------------------------------- summaries




def summarize(source, *, highlight: Iterable[str] = (), values=None, limit: int = 40) -> str:
    """A plain-text node list: what the drawing shows, for readers who cannot
    see it. Long graphs are cut after ``limit`` nodes (with a count)."""
    words_ = words(SUMMARY_TEXT)
    nodes = collect(roots_of(source))
    outputs = {id(o) for o in output_nodes(source)}
    marked = set(highlight)
    ops = [n for n in nodes if not is_source(n)]
    parts = []
    for n in nodes[:limit]:
        if n.op == "placeholder":
            text = words_["input"].format(name=n.name, type=type_label(n))
        elif n.op == "constant":
            continue
        else:
            args = ", ".join(i.name if i.op != "constant" else "const" for i in n.inputs)
            text = f"{n.name} = {n.op}({args}) {type_label(n)}"
        if values is not None and n.name in values:
            text += f" = {value_label(values[n.name])}"
        if n.name in marked:
            text += words_["highlighted"]
        if id(n) in outputs:
            text += words_["output"]
        parts.append(text)
    more = words_["more"].format(count=len(nodes) - limit) if len(nodes) > limit else ""
    head = words_["head"].format(ops=len(ops), nodes=len(nodes))
    return head + words_["join"].join(parts) + more


def draw(source, summary: str | None = None, **options) -> GraphDrawing:
    """Show ``source`` as a drawing with a text summary; returns the drawing.
    ``options`` go to :func:`to_dot`."""
    highlight = options.get("highlight", ())
    text = summary or summarize(source, highlight=highlight, values=options.get("values"))
    drawing = GraphDrawing(to_dot(source, **options), text)
    show(drawing, text)
    return drawing


REMOVED, ADDED = "#ef9a9a", "#a5d6a7"  # red: taken out by a pass; green: created by it


def draw_pass(before, after, report, **options) -> tuple[GraphDrawing, GraphDrawing]:
    """Show a pass's effect: ``before`` with the nodes it removed in red, then
    ``after`` with the nodes it created in green. ``report`` has ``name``,
    ``removed`` and ``added`` (names), like ``chapters.graph.passes.PassReport``."""
    text = words(SUMMARY_TEXT)
    first = draw(before, highlight={n: REMOVED for n in report.removed},
                 title=text["before"].format(name=report.name), **options)
    second = draw(after, highlight={n: ADDED for n in report.added},
                  title=text["after"].format(name=report.name), **options)
    return first, second
