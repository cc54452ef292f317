"""The engine's layout: imports go one way, and each op is defined in one place.

* no import cycle among the modules of ``chapters.autodiff`` (an AST scan of
  the imports each module runs when it is imported; importing a name from a
  package counts as importing the package's ``__init__``);
* no import inside a function, except the one documented lazy import;
* every op with a chapter 2 registration has its VJP and JVP in the module
  that registered it, next to its kernel when chapter 2 defines the kernel.
"""

import ast
import inspect
from pathlib import Path

import pytest

import chapters.autodiff  # noqa: F401  (registers every op)
from chapters.autodiff import rules
from chapters.autodiff.ops.bitwise import BITWISE_OPS
from chapters.graph.ops import REGISTRY

ROOT = Path(chapters.autodiff.__file__).parent
PACKAGE = "chapters.autodiff"
#: imports inside functions that are there on purpose (each takes a good part of a second,
#: and only one rarely used path needs it): module -> imported module
LAZY = {f"{PACKAGE}.data": {"sklearn.datasets"}, f"{PACKAGE}.ops.erf_kernel": {"scipy"}}


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(ROOT.rglob("*.py"))}
PACKAGE_INITS = {m for m, p in MODULES.items() if p.name == "__init__.py"}


def resolve(module: str, node: ast.ImportFrom) -> str:
    """The absolute module an ``ImportFrom`` in ``module`` reads from."""
    if not node.level:
        return node.module or ""
    is_package = MODULES[module].name == "__init__.py"
    base = module.split(".")
    base = base[:len(base) - node.level + (1 if is_package else 0)]
    return ".".join(base + ([node.module] if node.module else []))


def module_level_imports(module: str) -> set[str]:
    """Modules of this package that ``module`` imports when it is imported."""
    tree = ast.parse(MODULES[module].read_text())
    found = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            source = resolve(module, node)
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                found.add(submodule if submodule in MODULES else source)
    return {m for m in found if m in MODULES and m != module}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a path ``[a, b, ..., a]``, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(node, path):
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                cycle = visit(nxt, path + [nxt])
                if cycle:
                    return cycle
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            cycle = visit(start, [start])
            if cycle:
                return cycle
    return None


def test_the_cycle_finder_finds_a_cycle_and_accepts_a_chain():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_no_import_cycles_in_the_engine():
    graph = {m: module_level_imports(m) for m in MODULES}
    assert find_cycle(graph) is None, f"import cycle: {' -> '.join(find_cycle(graph))}"


def test_the_parts_of_the_engine_import_from_modules_not_from_the_package():
    offenders = {m: sorted(PACKAGE_INITS & imports) for m in MODULES
                 if (imports := module_level_imports(m)) & PACKAGE_INITS - {m}
                 and m not in PACKAGE_INITS}
    assert offenders == {}


def test_no_imports_inside_functions():
    found = {}
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                for inner in ast.walk(node):
                    if isinstance(inner, ast.Import | ast.ImportFrom):
                        names = ({a.name for a in inner.names} if isinstance(inner, ast.Import)
                                 else {resolve(module, inner)})
                        if names - LAZY.get(module, set()):
                            found.setdefault(module, []).append((node.name, sorted(names)))
    assert found == {}


REGISTERED = sorted(rules.OPS)


@pytest.mark.parametrize("op", REGISTERED)
def test_an_ops_rules_live_in_the_module_that_registers_it(op):
    info = rules.OPS[op]
    assert info.module.startswith(f"{PACKAGE}.ops."), info.module
    for rule in (info.vjp, info.jvp):
        if rule is not None:
            assert rule.__module__ == info.module, (op, rule.__qualname__, info.module)
    kernel_module = REGISTRY[op].kernel.__module__
    if kernel_module.startswith(PACKAGE):
        assert kernel_module == info.module, (op, kernel_module, info.module)


@pytest.mark.parametrize("op", REGISTERED)
def test_an_op_with_a_floating_result_has_both_rules_with_their_math(op):
    info = rules.OPS[op]
    if info.vjp is None:  # a comparison, predicate or bitwise op: its result carries no gradient
        assert op in {"eq", "ne", "lt", "le", "gt", "ge", "isnan", "isinf", "isfinite", "isclose",
                      "logical_reduce", *BITWISE_OPS}
        return
    assert info.jvp is not None, f"{op} has a VJP but no JVP"
    for rule in (info.vjp, info.jvp):
        assert inspect.getdoc(rule), f"{op}: {rule.__qualname__} has no docstring"
    assert rules.VJP[op] is info.vjp and rules.JVP[op] is info.jvp
    assert rules.SAVES[op] == info.saves


def test_every_op_of_the_registry_that_the_engine_runs_is_registered_in_chapter_2():
    # graph inputs and the compiler's fused kernels: never run on tensors
    chapter_1_only = {"constant", "placeholder", "fused"}
    built_in = {op for op, entry in REGISTRY.items()  # not the ops tests add at run time
                if entry.kernel.__module__.startswith(("chapters.graph.", PACKAGE))}
    assert built_in - set(rules.OPS) - chapter_1_only == set()


def test_core_tensor_and_factories_each_fit_in_one_sitting():
    for name in ("core", "tensor", "factories"):
        lines = len((ROOT / f"{name}.py").read_text().splitlines())
        assert lines <= 800, f"{name}.py has {lines} lines"
    for path in (ROOT / "ops").glob("*.py"):
        assert len(path.read_text().splitlines()) <= 300, path.name
