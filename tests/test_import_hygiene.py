"""Imports go one way: the numpy engines load no torch, and no module of the
project imports itself back through others (DESIGN.md, "Layering")."""

import os
import subprocess
import sys
import textwrap

import pytest

from .import_graph import (
    ROOT,
    import_graph,
    imports_of,
    one_cycle,
    project_modules,
    strongly_connected,
)

ENGINES = ["chapters.graph", "chapters.autodiff", "chapters.amp", "chapters.distributed"]


def modules_imported_by(statement: str) -> list[str]:
    """Every module a fresh interpreter loads to run ``statement``, read from
    ``python -X importtime`` (one line per module: ``self | cumulative | name``)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    result = subprocess.run([sys.executable, "-X", "importtime", "-c", statement],
                            capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    assert result.returncode == 0, f"`{statement}` failed:\n{result.stderr[-3000:]}"
    return [line.rpartition("|")[2].strip() for line in result.stderr.splitlines()
            if line.startswith("import time:") and "|" in line]


def torch_modules(modules: list[str]) -> list[str]:
    return [m for m in modules if m == "torch" or m.startswith("torch.")]


@pytest.mark.parametrize("engine", ENGINES)
def test_the_numpy_engine_imports_no_torch(engine):
    loaded = modules_imported_by(f"import {engine}")
    assert engine in loaded, f"-X importtime did not report {engine} itself"
    reached = torch_modules(loaded)
    assert not reached, (
        f"`import {engine}` loads torch ({len(reached)} torch modules, first {reached[:3]}). "
        "The numpy engines must not: code that needs torch belongs in chapters/torchcheck.py "
        "(comparisons) or chapters/distributed/torch_transport.py (real processes).")


def test_the_comparison_module_does_load_torch():
    """The check above can fail: the modules that are meant to use torch show up in it."""
    assert torch_modules(modules_imported_by("import chapters.torchcheck"))
    assert torch_modules(modules_imported_by("import chapters.distributed.launcher"))


def test_no_module_imports_itself_back_through_others():
    graph = import_graph()
    assert len(graph) > 150, f"only {len(graph)} modules found under {ROOT}"
    cycles = strongly_connected(graph)
    described = "\n".join(f"- {len(c)} modules, e.g. {' -> '.join(one_cycle(graph, c))}"
                          for c in cycles)
    assert not cycles, (
        f"{len(cycles)} import cycle(s) (function-local imports included):\n{described}\n"
        "Move what both sides need into a module that neither imports back.")


def _write(root, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def test_the_cycle_finder_sees_function_local_and_relative_imports(tmp_path):
    _write(tmp_path, {
        "pkg/__init__.py": "from .low import base\n",
        "pkg/low.py": """\
            import numpy as np

            def base():
                from pkg.high import top  # imported late, still a cycle
                return top
            """,
        "pkg/high.py": "from . import low\n\ndef top():\n    return low\n",
        "pkg/alone.py": "from .low import base\nfrom pkg import low\n",
        "pkg/sub/__init__.py": "",
        "pkg/sub/leaf.py": "from ..alone import base\nfrom .. import high\n",
    })
    modules = project_modules(tmp_path, ["pkg"])
    graph = import_graph(modules)
    assert graph["pkg.sub.leaf"] == {"pkg.alone", "pkg.high"}
    assert graph["pkg.alone"] == {"pkg.low"}
    assert imports_of("pkg.low", modules)[1] == {"numpy"}
    assert strongly_connected(graph) == [["pkg.high", "pkg.low"]]
    assert one_cycle(graph, ["pkg.high", "pkg.low"]) == ["pkg.high", "pkg.low", "pkg.high"]
