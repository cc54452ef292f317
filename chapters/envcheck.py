"""Check that this machine has what the course needs, and say how to fix what is missing.

The first notebook (``00_start_here.ipynb``) runs :func:`run_checks` and shows
:func:`render_html`. Each check returns a :class:`Check`: what was found, whether
the course can use it, and — when it cannot — the one command that fixes it.

The checks take the functions they use to look around (``importer``, ``which``,
``run``, ``find_labextension``) as arguments, so a test can show each check's
answer on a machine *without* the thing (a finder that finds nothing), without
uninstalling anything.
"""

from __future__ import annotations

import html
import importlib
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

OK, MISSING, NOTE = "ok", "missing", "note"   # NOTE: optional, works without it


@dataclass(frozen=True)
class Check:
    """One line of the environment report."""

    name: str
    status: str          # OK, MISSING or NOTE
    found: str           # what was found (a version, a path) or why nothing was
    fix: str = ""        # what to run when status is not OK

    @property
    def ok(self) -> bool:
        return self.status != MISSING


def _version_of(module) -> str:
    return str(getattr(module, "__version__", "unknown version"))


def check_python(version_info=sys.version_info, minimum=(3, 11)) -> Check:
    found = ".".join(map(str, version_info[:3]))
    if tuple(version_info[:2]) >= minimum:
        return Check("Python", OK, found)
    return Check("Python", MISSING, f"{found} (need {minimum[0]}.{minimum[1]} or newer)",
                 "Install Python 3.11+, then `make lab PYTHON=python3.11` "
                 "(or `conda env create -f environment.yml`).")


def check_module(import_name: str, label: str, fix: str,
                 importer: Callable = importlib.import_module) -> Check:
    """A Python package the course imports: its version, or the pip command."""
    try:
        module = importer(import_name)
    except ImportError as exc:
        return Check(label, MISSING, f"not importable ({exc})", fix)
    return Check(label, OK, _version_of(module))


def check_torch(importer: Callable = importlib.import_module) -> list[Check]:
    """torch itself, then whether a CUDA GPU is visible (optional: CPU is enough)."""
    base = check_module("torch", "PyTorch", "`make setup` (installs torch 2.13.0 CPU) or "
                        "`.venv/bin/pip install torch`", importer)
    if not base.ok:
        return [base]
    torch = importer("torch")
    if torch.cuda.is_available():
        cuda = Check("CUDA GPU", OK, f"{torch.cuda.device_count()} device(s): "
                     f"{torch.cuda.get_device_name(0)} (CUDA {torch.version.cuda})")
    else:
        build = f"CUDA build {torch.version.cuda}" if torch.version.cuda else "CPU-only build"
        cuda = Check("CUDA GPU", NOTE, f"none visible ({build}); every chapter runs on CPU",
                     "Optional. On a GPU machine install a CUDA build of torch into .venv, "
                     "e.g. `.venv/bin/pip install torch --index-url "
                     "https://download.pytorch.org/whl/cu126`; the CUDA checks then run too.")
    return [base, cuda]


def check_dot(which: Callable = shutil.which, run: Callable = subprocess.run) -> Check:
    """Graphviz's ``dot`` binary, which turns graph descriptions into SVG."""
    fix = ("`sudo apt-get install graphviz` (Debian/Ubuntu), `brew install graphviz` (macOS) "
           "or `conda install -c conda-forge graphviz`; then restart the kernel.")
    path = which("dot")
    if path is None:
        return Check("Graphviz dot", MISSING, "`dot` not on PATH: graphs show as DOT text",
                     fix)
    try:
        done = run([path, "-V"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError) as exc:
        return Check("Graphviz dot", MISSING, f"{path} does not run ({exc})", fix)
    version = (done.stderr or done.stdout).strip() or "unknown version"
    return Check("Graphviz dot", OK, f"{version} at {path}")


def c_compiler_command() -> str:
    """The C compiler cffi calls: ``$CC``, else the one Python was built with, else ``cc``."""
    return os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"


def check_c_compiler(which: Callable = shutil.which, run: Callable = subprocess.run) -> Check:
    """The C compiler that chapter 1's compiler hands its fused kernels to (through
    cffi): ``$CC``, else the one Python was built with. Without it the fused
    kernels run as generated numpy code, and chapter 1 skips its C-kernel claims."""
    fix = ("`sudo apt-get install gcc libc6-dev` (Debian/Ubuntu), `xcode-select --install` "
           "(macOS) or `conda install -c conda-forge c-compiler`; then restart the kernel.")
    command = c_compiler_command()
    path = which(shlex.split(command)[0])
    if path is None:
        return Check("C compiler", MISSING, f"`{command}` not found: fused kernels run as "
                     "numpy code, without the C speedup", fix)
    try:
        done = run([path, "--version"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError) as exc:
        return Check("C compiler", MISSING, f"{path} does not run ({exc})", fix)
    return Check("C compiler", OK, f"{done.stdout.partition(chr(10))[0].strip()} at {path}")


def find_labextension(name: str) -> Path | None:
    """The folder of a prebuilt JupyterLab extension, searched where JupyterLab looks."""
    from jupyter_core.paths import jupyter_path

    for root in jupyter_path("labextensions"):
        candidate = Path(root) / name
        if (candidate / "package.json").is_file():
            return candidate
    return None


def check_frontend(label: str, import_name: str, extension: str, fix: str,
                   importer: Callable = importlib.import_module,
                   find: Callable = find_labextension) -> Check:
    """A package that draws in the browser: the Python side AND JupyterLab's renderer."""
    python_side = check_module(import_name, label, fix, importer)
    if not python_side.ok:
        return python_side
    where = find(extension)
    if where is None:
        return Check(label, MISSING, f"{python_side.found}, but JupyterLab's `{extension}` "
                     "renderer is not installed: figures would show as raw JSON", fix)
    return Check(label, OK, f"{python_side.found}; JupyterLab renderer `{extension}` found")


def run_checks(importer: Callable = importlib.import_module, which: Callable = shutil.which,
               run: Callable = subprocess.run,
               find: Callable = find_labextension) -> list[Check]:
    """Every check the course needs, in the order the report shows them."""
    pip = "`.venv/bin/pip install -e '.[dev]'` (or `make setup`), then restart JupyterLab"
    return [
        check_python(),
        check_module("numpy", "NumPy", pip, importer),
        *check_torch(importer),
        check_dot(which, run),
        check_c_compiler(which, run),
        check_frontend("ipywidgets", "ipywidgets", "@jupyter-widgets/jupyterlab-manager",
                       pip + " and reload the page", importer, find),
        check_frontend("plotly", "plotly", "jupyterlab-plotly",
                       pip + " and reload the page", importer, find),
    ]


_MARK = {OK: "✅", MISSING: "❌", NOTE: "ℹ️"}


def render_text(checks: list[Check]) -> str:
    lines = []
    for c in checks:
        lines.append(f"[{c.status:>7}] {c.name}: {c.found}")
        if c.status != OK and c.fix:
            lines.append(f"          fix: {c.fix}")
    return "\n".join(lines)


def render_html(checks: list[Check]) -> str:
    """A table: one row per check, the fix beside anything that is not OK."""
    rows = "".join(
        f"<tr><td>{_MARK[c.status]}</td><td><b>{html.escape(c.name)}</b></td>"
        f"<td>{html.escape(c.found)}</td>"
        f"<td>{html.escape(c.fix) if c.status != OK else ''}</td></tr>"
        for c in checks)
    missing = [c.name for c in checks if not c.ok]
    verdict = ("Everything the course needs is here." if not missing else
               "Missing: " + ", ".join(missing) + ". Apply the fixes, then restart the kernel.")
    return (f"<table><tr><th></th><th>component</th><th>found</th><th>fix</th></tr>{rows}"
            f"</table><p><b>{html.escape(verdict)}</b></p>")


class Report:
    """What the notebook displays: HTML in JupyterLab, text elsewhere."""

    def __init__(self, checks: list[Check]):
        self.checks = checks

    def _repr_html_(self) -> str:
        return render_html(self.checks)

    def __repr__(self) -> str:
        return render_text(self.checks)


def report() -> Report:
    return Report(run_checks())
