"""The two ways to install the course (pip + pyproject, conda + environment.yml)
must ask for the same packages."""

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[ ;]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _environment_pip_section() -> list[str]:
    lines = (ROOT / "environment.yml").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == "- pip:")
    deps = []
    for line in lines[start + 1:]:
        if not line.startswith("      - "):
            break
        deps.append(line.strip()[2:])
    return deps


def test_environment_yml_lists_the_same_runtime_dependencies_as_pyproject():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    pip_deps = [d for d in _environment_pip_section() if not d.startswith("-e")]
    assert sorted(pip_deps) == sorted(project["dependencies"]), (
        "environment.yml's pip section and pyproject.toml's dependencies differ; "
        "edit both together."
    )
    assert any(d.startswith("-e .[dev]") for d in _environment_pip_section())


def test_environment_yml_brings_the_graphviz_binary_and_python():
    text = (ROOT / "environment.yml").read_text()
    assert re.search(r"^\s+- graphviz\s*$", text, re.M), "conda graphviz (the dot binary) missing"
    assert re.search(r"^\s+- python=3\.1\d", text, re.M)
    assert "conda-forge" in text


def test_torch_range_admits_the_cpu_build_on_disk():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    torch_req = next(d for d in project["dependencies"] if _name(d) == "torch")
    low = re.search(r">=\s*([\d.]+)", torch_req).group(1)
    assert tuple(map(int, low.split("."))) <= (2, 13, 0)
