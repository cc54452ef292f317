"""Chapter 1's practice: three small exercises on plain-data graphs, all cases public.

A graph here is plain data, the form the lab uses too:
``{"nodes": [{"name", "op", "inputs", "attrs"}, ...], "outputs": [names]}``,
with the nodes listed in a topological order (every node after its inputs).
Each exercise practises an idea next to one of the lab's, never the lab's own:
the depth of a node (next to topological order), removing ``x * 1`` and
``x + 0`` (next to dead-code elimination and folding), and the peak of the
bytes alive when values are freed at their last use (next to live intervals
and buffer assignment). The references are written here, from the definitions
in the chapter's "Try it" cells.
"""

from __future__ import annotations

from pathlib import Path

from autograder.spec import Case, Exercise, LabSpec

SOURCE_VALUES = ("placeholder", "constant")
"""Ops whose value exists before anything runs: depth 0, never an intermediate."""
IDENTITY = {"mul": 1, "add": 0}
"""op -> the scalar constant that leaves the other operand unchanged."""


def node(name, op, *inputs, **attrs):
    return {"name": name, "op": op, "inputs": list(inputs), "attrs": dict(attrs)}


def graph(nodes, outputs):
    return {"nodes": list(nodes), "outputs": list(outputs)}


# ------------------------------------------------------------------ references


def ref_node_depths(g):
    """depth(placeholder or constant) = 0; depth(op) = 1 + the largest depth of its inputs."""
    depth = {}
    for n in g["nodes"]:
        below = [depth[i] for i in n["inputs"]]
        depth[n["name"]] = 0 if n["op"] in SOURCE_VALUES else 1 + max(below, default=0)
    return depth


def _scalar_constants(g) -> dict:
    """name -> value of every constant holding a plain number (not a list)."""
    return {n["name"]: n["attrs"]["value"] for n in g["nodes"] if n["op"] == "constant"
            and isinstance(n["attrs"].get("value"), int | float)}


def _identity_operand(n, scalars, renamed):
    """The operand ``n`` passes through unchanged, or None if ``n`` is no identity."""
    if n["op"] not in IDENTITY or len(n["inputs"]) != 2:
        return None
    a, b = (renamed.get(i, i) for i in n["inputs"])
    if b in scalars and scalars[b] == IDENTITY[n["op"]]:
        return a
    if a in scalars and scalars[a] == IDENTITY[n["op"]]:
        return b
    return None


def ref_remove_identities(g):
    scalars, renamed, kept = _scalar_constants(g), {}, []
    for n in g["nodes"]:
        through = _identity_operand(n, scalars, renamed)
        if through is not None:
            renamed[n["name"]] = through
        else:
            kept.append(node(n["name"], n["op"], *(renamed.get(i, i) for i in n["inputs"]),
                             **n["attrs"]))
    return graph(kept, [renamed.get(o, o) for o in g["outputs"]])


def ref_peak_live_bytes(g, nbytes):
    """The largest sum of ``nbytes`` over the intermediates alive at one step, where a
    value is alive from its own step to the step of its last reader (both included)."""
    steps = {n["name"]: k for k, n in enumerate(g["nodes"])}
    death = {}
    for n in g["nodes"]:
        if n["op"] not in SOURCE_VALUES and n["name"] not in g["outputs"]:
            death[n["name"]] = steps[n["name"]]
    for n in g["nodes"]:
        for i in n["inputs"]:
            if i in death:
                death[i] = max(death[i], steps[n["name"]])
    return max((sum(nbytes[v] for v in death if steps[v] <= k <= death[v])
                for k in range(len(g["nodes"]))), default=0)


# ------------------------------------------------------------------ cases


def _layer():
    return graph([node("x", "placeholder"), node("w", "placeholder"), node("b", "placeholder"),
                  node("h", "matmul", "x", "w"), node("z", "add", "h", "b"),
                  node("y", "tanh", "z")], ["y"])


def _diamond():
    return graph([node("x", "placeholder"), node("a", "exp", "x"), node("b", "neg", "x"),
                  node("c", "mul", "a", "b"), node("d", "add", "c", "a")], ["d"])


def _two_branches():
    return graph([node("x", "placeholder"), node("c", "constant", value=2.0),
                  node("a", "exp", "x"), node("b", "tanh", "a"), node("e", "sigmoid", "b"),
                  node("s", "mul", "x", "c"), node("y", "add", "e", "s")], ["y", "s"])


def _chain(n):
    nodes = [node("v0", "placeholder")]
    nodes += [node(f"v{k}", "neg" if k % 2 else "exp", f"v{k - 1}") for k in range(1, n)]
    return graph(nodes, [f"v{n - 1}"])


DEPTHS = (
    Case("layer_by_hand", (_layer(),)),
    Case("diamond", (_diamond(),)),
    Case("constant_and_two_outputs", (_two_branches(),)),
    Case("chain_of_30", (_chain(30),)),
)

_ONE, _ZERO = node("one", "constant", value=1.0), node("zero", "constant", value=0)

IDENTITIES = (
    Case("x_times_one",
         (graph([node("x", "placeholder"), _ONE, node("m", "mul", "x", "one"),
                 node("y", "exp", "m")], ["y"]),)),
    Case("chain_of_identities_ending_in_the_output",
         (graph([node("x", "placeholder"), _ONE, _ZERO, node("m", "mul", "one", "x"),
                 node("p", "add", "m", "zero"), node("q", "mul", "p", "one")], ["q"]),)),
    Case("other_constants_and_arrays_stay",
         (graph([node("x", "placeholder"), node("two", "constant", value=2.0),
                 node("ones", "constant", value=[1.0, 1.0]), _ZERO,
                 node("a", "mul", "x", "two"), node("b", "mul", "x", "ones"),
                 node("c", "add", "a", "b"), node("d", "sub", "c", "zero")], ["d"]),)),
    Case("shared_identity_with_two_users",
         (graph([node("x", "placeholder"), node("w", "placeholder"), _ZERO,
                 node("s", "add", "zero", "x"), node("h", "matmul", "s", "w"),
                 node("t", "tanh", "s"), node("y", "mul", "h", "t")], ["y", "s"]),)),
)

PEAKS = (
    Case("layer_by_hand", (_layer(), {"h": 40, "z": 40, "y": 40})),
    Case("diamond_keeps_a_alive", (_diamond(), {"a": 100, "b": 100, "c": 100, "d": 100})),
    Case("outputs_and_constants_do_not_count",
         (_two_branches(), {"a": 64, "b": 32, "e": 16, "s": 8, "y": 8})),
    Case("value_nobody_reads_lives_one_step",
         (graph([node("x", "placeholder"), node("big", "exp", "x"), node("a", "neg", "x"),
                 node("b", "abs", "a"), node("y", "tanh", "b")], ["y"]),
          {"big": 1000, "a": 10, "b": 10, "y": 10})),
)

LAB = LabSpec(
    id="ch1_graph",
    title="Chapter 1 practice — computational graphs",
    source=Path(__file__).parents[2] / "01_computational_graphs.ipynb",
    exercises=(
        Exercise("ch1_node_depths", "node_depths", DEPTHS, ref_node_depths, compare="equal",
                 hints=(
                     "A node can run only once all of its inputs have run, so its depth is one "
                     "more than the deepest of its inputs.",
                     "The nodes are listed inputs first, so one pass in list order sees every "
                     "input's depth before the node that reads it.",
                     "Keep a dict name -> depth. For each node in order: 0 if its op is "
                     "'placeholder' or 'constant', else 1 + max(depth[i] for i in its inputs)."),
                 hints_zh=(
                     "一个节点要等它的所有输入都算完才能运行，所以它的深度比它最深的那个输入"
                     "多 1。",
                     "节点按“输入在前”的顺序列出，所以按列表顺序走一遍，"
                     "就能在处理一个节点之前先拿到它每个输入的深度。",
                     "维护一个 name -> depth 的字典。按顺序处理每个节点：算子是 "
                     "'placeholder' 或 'constant' 的，深度为 0；否则为 1 + 它各个输入的 "
                     "depth 中的最大值。")),
        Exercise("ch1_remove_identities", "remove_identities", IDENTITIES,
                 ref_remove_identities, compare="equal", hints=(
                     "A node mul(x, one) where the constant 'one' holds the number 1 computes "
                     "x itself; its users can read x directly, and the node can go.",
                     "Walk the nodes in order with a dict renamed: removed name -> the name "
                     "that replaces it. Rewrite each node's inputs through renamed first, so "
                     "a chain like (x * 1) + 0 collapses to x.",
                     "Collect the constants whose attrs['value'] is an int or float. A node is "
                     "an identity if it is mul with one operand such a constant equal to 1, or "
                     "add with one equal to 0: map its name to the other operand. Copy every "
                     "other node with renamed inputs; rename the outputs the same way."),
                 hints_zh=(
                     "节点 mul(x, one) 中，常量 'one' 存的是数字 1，它算出来的就是 x 本身；"
                     "读它的节点可以直接读 x，这个节点也就可以删掉了。",
                     "按顺序遍历节点，同时维护一个字典 renamed：被删掉的名字 -> "
                     "顶替它的名字。每个节点的 inputs 先经 renamed 改写一遍，这样 (x * 1) + "
                     "0 这样的一串就会一路收缩成 x。",
                     "先收集 attrs['value'] 是 int 或 float 的常量。如果一个节点是 mul，"
                     "且有一个操作数是这种等于 1 的常量，或者是 add 且有一个操作数等于 0，"
                     "它就是恒等节点：把它的名字映射到另一个操作数。其余节点照抄，只把 "
                     "inputs 换成改名后的；outputs 也照此改名。")),
        Exercise("ch1_peak_live_bytes", "peak_live_bytes", PEAKS, ref_peak_live_bytes,
                 compare="equal", hints=(
                     "A value is alive from the step that computes it to the step of the last "
                     "node that reads it; while a node runs, its inputs and its output are "
                     "alive together.",
                     "First find each intermediate's last reader (a value nobody reads dies at "
                     "its own step). Then, for every step, add up the bytes of the values "
                     "alive at that step.",
                     "death[v] = max(own step, steps of its readers) for every node that is "
                     "not a placeholder, a constant or an output. The answer is the max over "
                     "steps k of sum(nbytes[v] for v with step(v) <= k <= death[v])."),
                 hints_zh=(
                     "一个值从算出它的那一步起存活，直到最后一个读它的节点那一步为止；"
                     "一个节点运行时，它的输入和输出同时存活。",
                     "先找出每个中间值的最后一个读者（没有人读的值在它自己那一步就死亡）。"
                     "然后对每一步，把这一步存活的各个值的字节数加起来。",
                     "对每个不是 placeholder、constant 或输出的节点，death[v] = "
                     "max(它自己的步号, 各读者的步号)。答案是对所有步 k 取 sum(nbytes[v] for "
                     "v with step(v) <= k <= death[v]) 的最大值。")),
    ),
)
