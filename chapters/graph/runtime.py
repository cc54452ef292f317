"""A standalone runner for saved graphs (部署运行时): numpy, kernels, interpreter.

This is the deployed side of a static graph. It imports the op registry, the
IR, the interpreter and the file format, and nothing that builds graphs: no
tracing front end, no user model code, no torch. ::

    python -m chapters.graph.runtime model.json inputs.npz outputs.npz

reads the inputs by placeholder name from ``inputs.npz``, runs the graph and
writes its outputs as ``output_0``, ``output_1``, ... to ``outputs.npz``.
"""

from __future__ import annotations

import sys

import numpy as np

from .interpreter import run
from .serialize import load


def run_saved(model_path, inputs: dict[str, np.ndarray]) -> tuple[np.ndarray, ...]:
    """Load a saved graph and run it on named inputs; always a tuple of outputs."""
    graph = load(model_path)
    result = run(graph, **inputs)
    return result if isinstance(result, tuple) else (result,)


def main(argv: list[str]) -> None:
    model, inputs_path, outputs_path = argv
    with np.load(inputs_path, allow_pickle=False) as npz:
        inputs = dict(npz)
    outputs = run_saved(model, inputs)
    np.savez(outputs_path, **{f"output_{i}": out for i, out in enumerate(outputs)})


if __name__ == "__main__":
    main(sys.argv[1:])
