"""The project's import graph, read statically from its source, and its cycles.

Every ``import`` / ``from ... import`` statement counts, wherever it sits (module
level, inside a function, under ``try``), because an import moved into a function
still ties the two modules together: it only postpones the cycle to run time.
Each statement becomes an edge to the project module it loads:

* ``import a.b.c`` and ``from a.b.c import name`` -> ``a.b.c``;
* ``from a.b import c`` where ``a/b/c.py`` (or ``a/b/c/``) exists -> ``a.b.c``;
* relative forms are resolved against the importing module's package.

The implicit import of a parent package's ``__init__`` is not an edge (every
submodule would otherwise depend on its own package). Imports of anything
outside the project's packages are kept apart as *external* names, which is how
the torch-free test asks which third-party packages a module reaches.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("chapters", "vizkit", "autograder", "labs")


def project_modules(root: Path = ROOT, packages: Iterable[str] = PACKAGES) -> dict[str, Path]:
    """Dotted module name -> source file, for every ``.py`` file under ``packages``
    (a package is named by its ``__init__.py``)."""
    modules = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join(parts)] = path
    return modules


def _is_package(name: str, modules: dict[str, Path]) -> bool:
    return modules[name].name == "__init__.py"


def _base(module: str, level: int, target: str | None, modules: dict[str, Path]) -> str:
    """The absolute name ``from <level dots><target> import ...`` refers to."""
    if level == 0:
        return target or ""
    package = module if _is_package(module, modules) else module.rpartition(".")[0]
    for _ in range(level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{target}" if target else package


def imports_of(module: str, modules: dict[str, Path]) -> tuple[set[str], set[str]]:
    """(project modules, external top-level names) that ``module``'s source imports."""
    tree = ast.parse(modules[module].read_text(encoding="utf-8"), str(modules[module]))
    inside, outside = set(), set()
    packages = {name.split(".")[0] for name in modules}

    def add(name: str) -> None:
        if name in modules:
            inside.add(name)
        elif name.split(".")[0] not in packages:
            outside.add(name.split(".")[0])
        else:  # a project name that is no module: ``from pkg.mod import function``
            while name and name not in modules:
                name = name.rpartition(".")[0]
            if name:
                inside.add(name)

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            base = _base(module, node.level, node.module, modules)
            submodules = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in modules]
            for name in submodules:
                add(name)
            if len(submodules) < len(node.names):  # some names are attributes of ``base``
                add(base)
    inside.discard(module)
    return inside, outside


def import_graph(modules: dict[str, Path] | None = None) -> dict[str, set[str]]:
    """Module -> the project modules it imports."""
    modules = project_modules() if modules is None else modules
    return {name: imports_of(name, modules)[0] for name in modules}


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """The graph's strongly connected components with more than one module
    (each one is a set of modules that import each other, directly or not),
    by Tarjan's algorithm, written iteratively so deep graphs do not recurse."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph.get(child, ())))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return found


def one_cycle(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """A shortest import cycle through the component's first module, as the list of
    modules along it (first repeated at the end), to name in a failure message."""
    members, start = set(component), component[0]
    previous, frontier = {start: None}, [start]
    while frontier:
        following = []
        for node in frontier:
            for child in sorted(graph[node] & members):
                if child == start:
                    path = [node]
                    while previous[path[-1]] is not None:
                        path.append(previous[path[-1]])
                    return [*reversed(path), start]
                if child not in previous:
                    previous[child] = node
                    following.append(child)
        frontier = following
    raise ValueError(f"{component} is not a cycle")
