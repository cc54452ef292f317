"""Saving a graph to disk and loading it back (导出 / export), without pickle.

A saved graph is two files side by side:

* ``model.json`` — the program, readable and versioned::

    {"format": "chapters.graph", "version": 1, "name": "mlp",
     "arrays": "model.npz",
     "nodes": [{"name": "x", "op": "placeholder", "inputs": [],
                "attrs": {"name": "x", "shape": {"tuple": [4, 3]},
                          "dtype": {"dtype": "float32"}},
                "shape": [4, 3], "dtype": "float32",
                "source": {"file": "...", "line": 12, "code": "h = x @ w"}}, ...],
     "outputs": ["tanh_3"]}

  Nodes are listed inputs first; an edge is the producer's name. Attribute
  values are JSON numbers, strings, booleans, null and lists, or one-key
  objects for what JSON lacks: ``{"tuple": [...]}``, ``{"dtype": "float32"}``,
  ``{"array": key}`` (a constant, stored in the ``.npz``) and
  ``{"fused_program": {"n_inputs": n, "steps": [[op, [slots], [[k, v], ...]]]}}``.
* ``model.npz`` — every array (constants, parameters) by key, read back with
  ``allow_pickle=False``: loading a file can never run code from it.

Loading re-derives each node's shape and dtype from its op's meta rule and
checks them against the recorded ones, so a file whose arrays do not match its
program (weights of another model, say) fails at load time, naming the node.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from .fused import FusedProgram
from .ir import Graph, GraphError, Node
from .ops import TensorMeta
from .source import SourceLocation

FORMAT, VERSION = "chapters.graph", 1


def encode(value, key: str, arrays: dict):
    """One attribute value as JSON; arrays go to ``arrays[key]``."""
    if isinstance(value, np.ndarray):
        arrays[key] = value
        return {"array": key}
    if isinstance(value, np.dtype):
        return {"dtype": value.str}
    if isinstance(value, FusedProgram):
        steps = [[op, list(slots), [[k, encode(v, f"{key}.{i}.{k}", arrays)] for k, v in attrs]]
                 for i, (op, slots, attrs) in enumerate(value.steps)]
        return {"fused_program": {"n_inputs": value.n_inputs, "steps": steps}}
    if isinstance(value, tuple):
        return {"tuple": [encode(v, f"{key}.{i}", arrays) for i, v in enumerate(value)]}
    if isinstance(value, list):
        return [encode(v, f"{key}.{i}", arrays) for i, v in enumerate(value)]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    raise TypeError(f"cannot save attribute {key!r} of type {type(value).__name__}; "
                    "the format stores numbers, strings, tuples, dtypes and arrays.")


def decode(value, arrays):
    """The inverse of :func:`encode`."""
    if isinstance(value, list):
        return [decode(v, arrays) for v in value]
    if not isinstance(value, dict):
        return value
    (tag, body), = value.items()
    if tag == "array":
        return arrays[body]
    if tag == "dtype":
        return np.dtype(body)
    if tag == "tuple":
        return tuple(decode(v, arrays) for v in body)
    if tag == "fused_program":
        steps = tuple((op, tuple(slots), tuple((k, decode(v, arrays)) for k, v in attrs))
                      for op, slots, attrs in body["steps"])
        return FusedProgram(body["n_inputs"], steps)
    raise ValueError(f"unknown attribute tag {tag!r} in a saved graph.")


def save(graph: Graph, path) -> Path:
    """Write ``graph`` to ``path`` (``.json``) and its arrays beside it (``.npz``)."""
    path = Path(path)
    arrays: dict[str, np.ndarray] = {}
    nodes = [{"name": n.name, "op": n.op, "inputs": [i.name for i in n.inputs],
              "attrs": {k: encode(v, f"{n.name}.{k}", arrays) for k, v in n.attrs.items()},
              "shape": list(n.shape), "dtype": n.dtype.str,
              "source": vars(n.source) if n.source else None}
             for n in graph.topological_order()]
    document = {"format": FORMAT, "version": VERSION, "name": graph.name,
                "arrays": path.with_suffix(".npz").name, "nodes": nodes,
                "outputs": [o.name for o in graph.outputs]}
    np.savez(path.with_suffix(".npz"), **arrays)
    path.write_text(json.dumps(document, indent=1))
    return path


def load(path) -> Graph:
    """Read a graph written by :func:`save`."""
    path = Path(path)
    document = json.loads(path.read_text())
    if document.get("format") != FORMAT or document.get("version") != VERSION:
        raise ValueError(f"{path} is not a version-{VERSION} {FORMAT} file (format "
                         f"{document.get('format')!r}, version {document.get('version')!r}).")
    graph = Graph(document["name"])
    by_name: dict[str, Node] = {}
    with np.load(path.parent / document["arrays"], allow_pickle=False) as npz:
        arrays = dict(npz)
    for entry in document["nodes"]:
        source = SourceLocation(**entry["source"]) if entry["source"] else None
        attrs = {k: decode(v, arrays) for k, v in entry["attrs"].items()}
        node = Node(entry["op"], [by_name[i] for i in entry["inputs"]], attrs,
                    name=entry["name"], source=source)
        recorded = TensorMeta(entry["shape"], np.dtype(entry["dtype"]))
        if node.meta != recorded:
            raise GraphError(f"{path}: node {node.name} ({node.op}) was saved as "
                             f"{recorded.dtype}{list(recorded.shape)} but its inputs now give "
                             f"{node.dtype}{list(node.shape)}; the arrays file does not match "
                             "the program."
                             + (f"\nIt was created at\n  {source}" if source else ""))
        by_name[node.name] = graph._add(node)
    return graph.set_outputs(*(by_name[o] for o in document["outputs"]))
