"""save/load round trips, and the standalone runtime in a fresh process."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from chapters.graph import GraphError, load, optimize, run, save, trace

ROOT = Path(__file__).resolve().parents[3]


def gelu_mlp(x, w1, w2):
    h = x @ w1
    h = 0.5 * h * (1 + (0.7978845608028654 * (h + 0.044715 * h ** 3)).tanh())
    return (h @ w2).softmax(dim=-1), h.sum(dim=1)


@pytest.fixture
def inputs():
    rng = np.random.default_rng(0)
    return [rng.standard_normal(s).astype(np.float32) for s in ((8, 5), (5, 16), (16, 3))]


@pytest.mark.parametrize("optimized", [False, True])
def test_round_trip_gives_the_same_outputs(tmp_path, inputs, optimized):
    graph = trace(gelu_mlp, *inputs)
    if optimized:
        optimize(graph)  # constants folded, ops fused: the fused program is saved too
    loaded = load(save(graph, tmp_path / "model.json"))
    for ours, theirs in zip(run(loaded, *inputs), run(graph, *inputs), strict=True):
        np.testing.assert_array_equal(ours, theirs)
    assert [n.op for n in loaded.topological_order()] == [n.op for n in graph.topological_order()]
    assert loaded.nodes[-1].source == graph.topological_order()[-1].source


def test_the_format_is_versioned_json_with_arrays_beside_it(tmp_path, inputs):
    path = save(trace(gelu_mlp, *inputs), tmp_path / "model.json")
    document = json.loads(path.read_text())
    assert (document["format"], document["version"]) == ("chapters.graph", 1)
    assert (tmp_path / document["arrays"]).exists()
    document["version"] = 99
    path.write_text(json.dumps(document))
    with pytest.raises(ValueError, match="version-1"):
        load(path)


def test_arrays_that_do_not_match_the_program_fail_at_load(tmp_path):
    def affine(x):
        return x @ np.ones((3, 2), np.float32)

    path = save(trace(affine, np.ones((4, 3), np.float32)), tmp_path / "m.json")
    with np.load(tmp_path / "m.npz") as npz:
        (key,) = npz.files
    np.savez(tmp_path / "m.npz", **{key: np.ones((5, 2), np.float32)})
    with pytest.raises(GraphError, match=r"constant_1 \(constant\) was saved as float32\[3, 2\]"):
        load(path)


def test_runtime_runs_in_a_fresh_process_without_tracer_or_torch(tmp_path, inputs):
    graph = trace(gelu_mlp, *inputs)
    optimize(graph)
    save(graph, tmp_path / "model.json")
    np.savez(tmp_path / "in.npz", x=inputs[0], w1=inputs[1], w2=inputs[2])
    script = ("import sys, runpy; sys.argv = ['runtime'] + sys.argv[1:]; "
              "runpy.run_module('chapters.graph.runtime', run_name='__main__'); "
              "print(sorted(m for m in sys.modules if m.startswith(('chapters', 'torch'))))")
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "model.json"), str(tmp_path / "in.npz"),
         str(tmp_path / "out.npz")], capture_output=True, text=True, timeout=60, check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=tmp_path)
    loaded_modules = done.stdout.strip()
    for absent in ("chapters.graph.tracing", "chapters.graph.frontend",
                   "chapters.graph.eager", "chapters.graph.compiler", "'torch"):
        assert absent not in loaded_modules
    assert "chapters.graph.interpreter" in loaded_modules
    with np.load(tmp_path / "out.npz") as out:
        for i, expected in enumerate(run(graph, *inputs)):
            np.testing.assert_array_equal(out[f"output_{i}"], expected)
