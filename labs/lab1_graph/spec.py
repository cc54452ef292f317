"""Lab 1's exercises: graph passes over a plain-data graph.

The references run in the trusted grading process. Ordering and elementwise-ness
come from the chapter engine (:func:`chapters.graph.topological_sort` and the op
registry's ``elementwise`` flags), folded values from the registry's numpy
kernels; the remaining passes are written here, independently of the solutions
in the source notebook.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from autograder.spec import Case, Exercise, LabSpec
from chapters.graph import GraphError, Node, TensorMeta, get_op, topological_sort

IMPURE = {"print", "store", "rand"}
_SCALAR = TensorMeta((), np.float32)


def node(name, op, *inputs, **attrs):
    return {"name": name, "op": op, "inputs": list(inputs), "attrs": dict(attrs)}


def graph(nodes, outputs):
    return {"nodes": list(nodes), "outputs": list(outputs)}


# ------------------------------------------------------------------ references


def _engine_nodes(g) -> dict[str, Node]:
    """The plain graph as chapter-1 ``Node`` objects (edges patched in afterwards,
    so that a cyclic graph can be represented too)."""
    made = {n["name"]: Node(n["op"], (), {}, meta=_SCALAR, name=n["name"]) for n in g["nodes"]}
    for n in g["nodes"]:
        made[n["name"]].inputs = tuple(made[i] for i in n["inputs"])
    return made


def _nodes_on_cycles(g) -> list[str]:
    """Names of the nodes reachable from the outputs that lie on a cycle (Tarjan)."""
    inputs = {n["name"]: n["inputs"] for n in g["nodes"]}
    index, low, on_stack, stack, found = {}, {}, set(), [], set()

    def strongconnect(v):  # graphs with cycles in the cases are small: recursion is fine
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in inputs[v]:
            if w not in index:
                strongconnect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or v in inputs[v]:
                found.update(component)

    for out in g["outputs"]:
        if out not in index:
            strongconnect(out)
    return sorted(found)


def ref_order_or_cycle(g):
    made = _engine_nodes(g)
    try:
        return {"order": [n.name for n in topological_sort([made[o] for o in g["outputs"]])]}
    except GraphError:
        return {"cycle": _nodes_on_cycles(g)}


def _needed(g) -> set[str]:
    inputs = {n["name"]: n["inputs"] for n in g["nodes"]}
    stack = list(g["outputs"]) + [n["name"] for n in g["nodes"] if n["op"] in IMPURE]
    seen = set()
    while stack:
        name = stack.pop()
        if name not in seen:
            seen.add(name)
            stack.extend(inputs[name])
    return seen


def ref_eliminate_dead_code(g):
    live = _needed(g)
    return graph([n for n in g["nodes"] if n["name"] in live or n["op"] == "placeholder"],
                 g["outputs"])


def ref_fold_constants(g):
    values, out = {}, []
    for n in g["nodes"]:
        if n["op"] == "constant":
            values[n["name"]] = np.asarray(n["attrs"]["value"])
            out.append(n)
        elif (n["op"] not in IMPURE | {"placeholder"} and n["inputs"]
              and all(i in values for i in n["inputs"])):
            values[n["name"]] = np.asarray(
                get_op(n["op"]).kernel(*(values[i] for i in n["inputs"]), **n["attrs"]))
            out.append(node(n["name"], "constant", value=values[n["name"]]))
        else:
            out.append(n)
    return graph(out, g["outputs"])


def _elementwise(op: str) -> bool:
    return op not in IMPURE and get_op(op).elementwise


def ref_fusion_groups(g):
    position = {n["name"]: k for k, n in enumerate(g["nodes"])}
    ops = {n["name"]: n["op"] for n in g["nodes"]}
    readers = {name: set() for name in position}
    for n in g["nodes"]:
        for i in n["inputs"]:
            readers[i].add(n["name"])
    group = {name: {name} for name in position}
    for n in g["nodes"]:
        c = n["name"]
        for p in set(n["inputs"]):
            if (_elementwise(ops[p]) and _elementwise(ops[c]) and readers[p] == {c}
                    and p not in g["outputs"] and group[p] is not group[c]):
                merged = group[p] | group[c]
                for member in merged:
                    group[member] = merged
    unique = {id(s): s for s in group.values() if len(s) > 1}.values()
    return sorted((sorted(s, key=position.get) for s in unique), key=lambda s: position[s[0]])


def ref_live_intervals(g):
    steps_reading = {n["name"]: [] for n in g["nodes"]}
    for k, n in enumerate(g["nodes"]):
        for i in n["inputs"]:
            steps_reading[i].append(k)
    end = len(g["nodes"])
    return {n["name"]: [k, end if n["name"] in g["outputs"]
                        else max(steps_reading[n["name"]], default=k)]
            for k, n in enumerate(g["nodes"])}


def ref_assign_buffers(g, nbytes):
    last = {name: iv[1] for name, iv in ref_live_intervals(g).items()}
    sizes: list[int] = []
    assignment: dict[str, int] = {}
    for k, n in enumerate(g["nodes"]):
        if n["op"] in ("placeholder", "constant"):
            continue
        busy = {assignment[v] for v in assignment if last[v] >= k}
        free = [b for b in range(len(sizes)) if b not in busy and sizes[b] >= nbytes[n["name"]]]
        if free:
            assignment[n["name"]] = min(free, key=lambda b: (sizes[b], b))
        else:
            assignment[n["name"]] = len(sizes)
            sizes.append(nbytes[n["name"]])
    return {"assignment": assignment, "sizes": sizes}


# ------------------------------------------------------------------ comparisons


def _names(g):
    return [n["name"] for n in g["nodes"]]


def compare_graphs_by_names(expected, got):
    try:
        names, outputs = _names(got), list(got["outputs"])
    except (TypeError, KeyError):
        return False, "expected a graph dict with 'nodes' (a list of node dicts) and 'outputs'"
    want = _names(expected)
    if names != want:
        return False, f"kept nodes {names}, expected {want}"
    if outputs != expected["outputs"]:
        return False, f"outputs changed to {outputs}; they must stay {expected['outputs']}"
    return True, "ok"


def compare_folded(expected, got):
    ok, msg = compare_graphs_by_names(expected, got)
    if not ok:
        return ok, msg
    for want, have in zip(expected["nodes"], got["nodes"], strict=True):
        name = want["name"]
        try:
            op, inputs = have["op"], list(have["inputs"])
        except (TypeError, KeyError):
            return False, f"node {name} is not a dict with 'op' and 'inputs'"
        if op != want["op"] or inputs != want["inputs"]:
            return False, (f"node {name}: got {op}({', '.join(map(str, inputs))}), expected "
                           f"{want['op']}({', '.join(want['inputs'])})")
        if want["op"] == "constant":
            try:
                value = np.asarray(have["attrs"]["value"], dtype=np.float64)
            except (TypeError, KeyError, ValueError):
                return False, f"constant {name} has no numeric attrs['value']"
            target = np.asarray(want["attrs"]["value"], dtype=np.float64)
            if value.shape != target.shape or not np.allclose(value, target, rtol=1e-6,
                                                              atol=1e-9):
                return False, f"constant {name} = {value.tolist()}, expected {target.tolist()}"
    return True, "ok"


# ------------------------------------------------------------------ cases


def _mlp():
    return graph([
        node("x", "placeholder"), node("w1", "placeholder"),
        node("two", "constant", value=2.0), node("half", "constant", value=0.5),
        node("scale", "mul", "two", "half"), node("h", "matmul", "x", "w1"),
        node("hs", "mul", "h", "scale"), node("a", "relu", "hs"),
        node("unused", "exp", "h"), node("y", "tanh", "a"),
    ], ["y"])


def _diamond():
    return graph([
        node("x", "placeholder"), node("a", "exp", "x"), node("b", "neg", "x"),
        node("c", "mul", "a", "b"), node("d", "add", "c", "a"),
    ], ["d"])


def _chain(n):
    nodes = [node("v0", "placeholder")]
    nodes += [node(f"v{k}", "neg" if k % 2 else "exp", f"v{k - 1}") for k in range(1, n)]
    return graph(nodes, [f"v{n - 1}"])


def _cyclic():
    return graph([
        node("x", "placeholder"), node("a", "add", "x", "d"), node("b", "exp", "a"),
        node("c", "neg", "b"), node("d", "mul", "c", "x"), node("y", "tanh", "c"),
    ], ["y"])


def _two_outputs():
    return graph([
        node("x", "placeholder"), node("y", "placeholder"), node("s", "add", "x", "y"),
        node("p", "mul", "x", "y"), node("q", "sub", "p", "s"), node("r", "relu", "s"),
    ], ["q", "r"])


def _side_effects():
    return graph([
        node("x", "placeholder"), node("unused_in", "placeholder"), node("a", "exp", "x"),
        node("dbg", "log", "a"), node("p", "print", "dbg"), node("noise", "rand"),
        node("b", "mul", "a", "noise"), node("dead", "sqrt", "b"), node("y", "neg", "a"),
    ], ["y"])


TOPO = (
    Case("diamond", (_diamond(),)),
    Case("mlp_skips_dead_branch", (_mlp(),)),
    Case("two_outputs_in_order", (_two_outputs(),)),
    Case("self_loop_is_a_cycle", (graph([node("x", "placeholder"), node("a", "add", "x", "a")],
                                        ["a"]),)),
    Case("cycle_through_three_nodes", (_cyclic(),), hidden=True, points=2.0),
    Case("chain_of_5000_nodes", (_chain(5000),), hidden=True, points=2.0),
    Case("node_reads_same_input_twice",
         (graph([node("x", "placeholder"), node("s", "mul", "x", "x"),
                 node("t", "add", "s", "x")], ["t", "s"]),), hidden=True),
    Case("unreachable_cycle_is_ignored",
         (graph([node("x", "placeholder"), node("p", "exp", "q"), node("q", "exp", "p"),
                 node("y", "neg", "x")], ["y"]),), hidden=True),
)

DCE = (
    Case("one_dead_node", (graph([node("x", "placeholder"), node("a", "exp", "x"),
                                  node("b", "neg", "x"), node("y", "tanh", "a")], ["y"]),)),
    Case("mlp", (_mlp(),)),
    Case("keeps_impure_ops_and_their_inputs", (_side_effects(),)),
    Case("nothing_dead", (_diamond(),), hidden=True),
    Case("output_reads_only_a_placeholder",
         (graph([node("x", "placeholder"), node("a", "exp", "x"), node("b", "neg", "a")],
                ["x"]),), hidden=True),
    Case("dead_chain_of_2000", (graph(_chain(2000)["nodes"] + [node("y", "abs", "v0")],
                                      ["y"]),), hidden=True),
)

_fold_graph = graph([
    node("x", "placeholder"), node("c1", "constant", value=[1.0, 2.0, 3.0]),
    node("c2", "constant", value=3.0), node("k", "mul", "c1", "c2"),
    node("e", "exp", "k"), node("s", "sum", "e", dim=0), node("y", "add", "x", "s"),
], ["y"])

FOLD = (
    Case("two_constants_multiplied",
         (graph([node("x", "placeholder"), node("c1", "constant", value=2.0),
                 node("c2", "constant", value=3.0), node("k", "mul", "c1", "c2"),
                 node("y", "add", "x", "k")], ["y"]),)),
    Case("mlp_scale", (_mlp(),)),
    Case("chain_of_constants_with_attrs", (_fold_graph,)),
    Case("nothing_to_fold", (_diamond(),), hidden=True),
    Case("impure_ops_are_not_folded",
         (graph([node("c", "constant", value=2.0), node("n", "rand"), node("m", "mul", "c", "n"),
                 node("p", "print", "c"), node("q", "sqrt", "c")], ["m", "q"]),), hidden=True),
    Case("matrix_constants",
         (graph([node("a", "constant", value=[[1.0, 2.0], [3.0, 4.0]]),
                 node("b", "constant", value=[[0.5], [-1.0]]), node("ab", "matmul", "a", "b"),
                 node("t", "tanh", "ab"), node("x", "placeholder"), node("y", "mul", "x", "t")],
                ["y"]),), hidden=True),
)

_fuse_graph = graph([
    node("x", "placeholder"), node("w", "placeholder"), node("h", "matmul", "x", "w"),
    node("a", "mul", "h", "h"), node("b", "exp", "a"), node("c", "neg", "x"),
    node("d", "add", "b", "c"), node("e", "tanh", "d"), node("s", "sum", "e"),
], ["s"])

FUSE = (
    Case("chain_after_a_matmul",
         (graph([node("x", "placeholder"), node("w", "placeholder"),
                 node("h", "matmul", "x", "w"), node("a", "relu", "h"),
                 node("b", "neg", "a")], ["b"]),)),
    Case("tree_into_add_stops_at_matmul_and_sum", (_fuse_graph,)),
    Case("diamond_shared_value_is_not_fused", (_diamond(),)),
    Case("outputs_are_materialised", (_two_outputs(),), hidden=True),
    Case("long_chain_is_one_group", (_chain(400),), hidden=True),
    Case("two_separate_groups",
         (graph([node("x", "placeholder"), node("a", "exp", "x"), node("b", "neg", "a"),
                 node("m", "matmul", "b", "x"), node("c", "relu", "m"),
                 node("d", "sigmoid", "c")], ["d"]),), hidden=True),
    Case("impure_ops_break_chains",
         (graph([node("x", "placeholder"), node("a", "exp", "x"), node("p", "print", "a"),
                 node("b", "neg", "x"), node("c", "abs", "b")], ["c", "p"]),), hidden=True),
)

LIVE = (
    Case("diamond", (_diamond(),)),
    Case("mlp_with_dead_value", (_mlp(),)),
    Case("two_outputs", (_two_outputs(),), hidden=True),
    Case("chain_of_2000", (_chain(2000),), hidden=True),
)


def _sizes(g, base=64):
    return {n["name"]: base * (1 + k % 3) for k, n in enumerate(g["nodes"])}


_ladder = graph([node("x", "placeholder")]
                + [node(f"a{k}", "exp" if k % 2 else "neg", f"a{k - 1}" if k else "x")
                   for k in range(6)], ["a5"])

BUFFERS = (
    Case("diamond", (_diamond(), {"a": 100, "b": 100, "c": 100, "d": 100})),
    Case("chain_ping_pongs_two_buffers", (_ladder, {f"a{k}": 256 for k in range(6)})),
    Case("best_fit_prefers_the_smaller_buffer",
         (graph([node("x", "placeholder"), node("big", "exp", "x"), node("small", "neg", "x"),
                 node("u", "add", "big", "small"), node("v", "abs", "u"),
                 node("w", "relu", "v")], ["w"]),
          {"big": 400, "small": 100, "u": 400, "v": 80, "w": 80}), hidden=True),
    Case("mlp_mixed_sizes", (_mlp(), _sizes(_mlp())), hidden=True),
    Case("two_outputs_stay_alive", (_two_outputs(), _sizes(_two_outputs(), 32)), hidden=True),
)

FROM_SCRATCH = ("torch",)
"""Modules the learner's code may not import: the lesson is writing this by hand."""

LAB = LabSpec(
    id="lab1_graph",
    title="Lab 1 — Computational graphs: the passes a compiler runs",
    title_zh="实验 1 · 计算图：编译器要跑的那些 pass",
    source=Path(__file__).with_name("source.ipynb"),
    exercises=(
        Exercise("topological_sort", "order_or_cycle", TOPO, ref_order_or_cycle, compare="equal",
                 forbid_imports=FROM_SCRATCH, timeout_s=20.0, hints=(
                     "A node may be emitted only after all of its inputs. To notice a cycle, "
                     "remember which nodes you are still in the middle of visiting.",
                     "Do the depth-first search with your own stack instead of recursion: each "
                     "entry is a node and how far you got through its inputs. Colour a node "
                     "grey when you push it and black when you pop it (that is when you emit "
                     "it). Meeting a grey node again closes a cycle.",
                     "Start a search from each output not visited yet. The stack holds "
                     "(name, iterator over its inputs). At the top entry take the next input: "
                     "none left -> pop the node, mark it black, append it to the order; a grey "
                     "input -> the grey names on the stack from that input to the top are the "
                     "cycle, raise CycleError with them; an unvisited input -> mark it grey "
                     "and push it."),
                 hints_zh=(
                     "一个节点只能排在它所有的输入之后。要发现环，就得记住哪些节点还处在访问"
                     "的中途。",
                     "用自己的栈代替递归来做深度优先搜索：栈里每一项是一个节点，"
                     "以及它的输入已经处理到了哪里。节点入栈时染成灰色，"
                     "出栈时染成黑色（也就是这时把它排进序列）。再次遇到灰色节点，"
                     "就说明绕成了一个环。",
                     "从每个还没访问过的输出出发开始搜索。栈里存 (name, 遍历其输入的迭代器)。"
                     "取栈顶项的下一个输入：没有了 -> 弹出该节点，标成黑色，追加到序列末尾；"
                     "输入是灰色 -> 栈上从这个输入到栈顶的灰色名字就是环，带上它们抛出 "
                     "CycleError；输入还没访问过 -> 标成灰色并入栈。")),
        Exercise("eliminate_dead_code", "eliminate_dead_code", DCE, ref_eliminate_dead_code,
                 compare=compare_graphs_by_names,
                 forbid_imports=FROM_SCRATCH, hints=(
                     "Think backwards: a node is worth keeping only if something that must "
                     "happen (an output, or an op with a side effect) depends on it.",
                     "Search backwards from every output AND from every node whose op is in "
                     "IMPURE, following inputs; whatever you reach is live. Placeholders are "
                     "kept even when nothing reaches them.",
                     "Put the outputs and the impure nodes' names on a stack; pop a name and, "
                     "if it is new, mark it live and push its inputs. The result is a new graph "
                     "of copies of the nodes that are live or placeholders, in their original "
                     "order, with the same outputs."),
                 hints_zh=(
                     "倒过来想：只有当某件必须发生的事（一个输出，或一个有副作用的算子）"
                     "依赖一个节点时，这个节点才值得保留。",
                     "从每个输出、以及每个算子属于 IMPURE 的节点出发，沿着输入反向搜索；"
                     "能到达的都是活的。placeholder 即使没有被到达也要保留。",
                     "把输出和有副作用的节点的名字放进一个栈；弹出一个名字，"
                     "如果是第一次见到，就标记为活的，并把它的输入入栈。结果是一个新图："
                     "按原来的顺序复制那些活的或是 placeholder 的节点，outputs 不变。")),
        Exercise("fold_constants", "fold_constants", FOLD, ref_fold_constants,
                 compare=compare_folded,
                 forbid_imports=FROM_SCRATCH, hints=(
                     "A node can be computed ahead of time when everything it reads is already "
                     "known, and a node folded a moment ago counts as known.",
                     "Walk the nodes once, in order, with a dict from name to value for the "
                     "constants seen so far. A node folds if it is not a placeholder, constant "
                     "or impure op, has at least one input, and all its inputs are in the dict.",
                     "For a node that folds, run KERNELS[op] on its inputs' values (numpy "
                     "arrays) with the node's attrs as keyword arguments, remember the result "
                     "under its name, and put a constant node of the same name with that value "
                     "in its place. Copy every other node unchanged, constants included."),
                 hints_zh=(
                     "如果一个节点读到的值都已知，它就可以提前算好；刚刚折叠掉的节点也算已"
                     "知。",
                     "按顺序把节点遍历一次，用一个字典记下目前见过的常量的名字和值。"
                     "一个节点可以折叠的条件是：它不是 placeholder、constant "
                     "或有副作用的算子，至少有一个输入，而且所有输入都在字典里。",
                     "对可以折叠的节点，用它各输入的值（numpy 数组）调用 KERNELS[op]（该算子"
                     "的内核），以节点的 attrs 作为关键字参数；把结果记在它的名字下，"
                     "并用一个同名、值为该结果的 constant 节点替换它。其他节点（包括常量）"
                     "原样复制。")),
        Exercise("fusion_groups", "fusion_groups", FUSE, ref_fusion_groups, compare="equal",
                 forbid_imports=FROM_SCRATCH, hints=(
                     "Look at each edge from a producer to a consumer and ask whether the "
                     "producer's value could stay in registers instead of going to memory.",
                     "An edge p -> c fuses only if both ops are elementwise, c is the only node "
                     "that reads p, and p is not an output. The groups are the sets of nodes "
                     "joined by fusable edges (connected components).",
                     "Give every node its own group (a union-find parent map is handy). For "
                     "each node c and each distinct input p whose edge fuses, merge their "
                     "groups. Keep the groups with two or more nodes, sort the names in each "
                     "by position, and sort the groups by the position of their first node."),
                 hints_zh=(
                     "看每一条从生产者指向消费者的边，问一问：生产者的值能不能留在寄存器里，"
                     "而不必写回内存？",
                     "边 p -> c 只有在两端的算子都是逐元素的、c 是唯一读 p 的节点、并且 p "
                     "不是输出时才能融合。分组就是由可融合的边连起来的节点集合（连通分量）。",
                     "先让每个节点各自成一组（用并查集的 parent 映射很方便）。对每个节点 c "
                     "和它每个边可以融合的不同输入 p，合并两者所在的组。"
                     "保留含两个及以上节点的组，组内名字按位置排序，各组再按第一个节点的位置"
                     "排序。")),
        Exercise("live_intervals", "live_intervals", LIVE, ref_live_intervals, compare="equal",
                 forbid_imports=FROM_SCRATCH, hints=(
                     "A value lives from the step that computes it until the last step that "
                     "still needs it.",
                     "Start each node at [its step, its step]; whenever a later node reads it, "
                     "push the end out to that reader's step. Outputs must outlive the whole "
                     "graph, and values nobody reads die where they are born.",
                     "Map each name to its step. For each step k and each input of node k, "
                     "raise that input's end to k if it is smaller. Finally set the end of "
                     "every output to the number of nodes."),
                 hints_zh=(
                     "一个值从算出它的那一步开始存活，直到最后一个还需要它的步骤为止。",
                     "每个节点一开始都是 [它的步号, 它的步号]；每当后面有节点读它，"
                     "就把终点推到那个读者的步号。输出必须活过整个图，"
                     "没有人读的值在哪一步产生，就在哪一步死亡。",
                     "把每个名字映射到它的步号。对每一步 k 和节点 k 的每个输入，"
                     "如果该输入的终点比 k 小，就把它提高到 k。最后把每个输出的终点设为节点总"
                     "数。")),
        Exercise("assign_buffers", "assign_buffers", BUFFERS, ref_assign_buffers,
                 compare="equal",
                 forbid_imports=FROM_SCRATCH, hints=(
                     "A buffer can be handed to a new value once the value holding it will "
                     "never be read again; your liveness intervals say when that is.",
                     "Walk the nodes in order. Before placing node k, free the buffers of "
                     "values whose last use is before k (strictly: a node still reads its "
                     "inputs). Placeholders and constants get no buffer.",
                     "Keep the buffer sizes, the free buffer ids and which value holds which "
                     "buffer. At step k release the buffers whose holder's last use is below "
                     "k, then take the smallest free buffer with at least nbytes[name] bytes "
                     "(the lowest id on a tie); if none fits, open a new buffer of exactly "
                     "that size."),
                 hints_zh=(
                     "一旦占着某块缓冲区的值再也不会被读到，这块缓冲区就可以交给新的值；"
                     "什么时候会这样，你算出的存活区间已经告诉你了。",
                     "按顺序遍历节点。放置节点 k 之前，先释放那些最后一次使用在 k "
                     "之前的值的缓冲区（严格小于：节点运行时还要读它的输入）。placeholder 和 "
                     "constant 不分配缓冲区。",
                     "记下各缓冲区的大小、空闲缓冲区的 id，以及哪个值占着哪块缓冲区。在第 k "
                     "步，先释放占用者最后一次使用早于 k 的缓冲区，再取至少有 nbytes[name] "
                     "字节的最小空闲缓冲区（一样大时取 id 最小的）；没有合适的，"
                     "就新开一块大小正好为该值的缓冲区。")),
    ),
)
