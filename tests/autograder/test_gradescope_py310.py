"""The Gradescope zip end to end, on the Python of Gradescope's default image.

Gradescope's default base image is Ubuntu 22.04, whose ``python3`` is 3.10, while
the course as a whole needs 3.11. This test lays out a directory as Gradescope's
``/autograder`` (``source/`` holding the unzipped zip, ``submission/`` one
notebook), runs the zip's own ``setup.sh`` with Python 3.10 (it installs lab 1's
few requirements from PyPI) and its ``run_autograder`` for a full-marks and a
partial submission, and checks ``results/results.json`` against Gradescope's
schema and against the grade the course's own Python gives the same notebook.

It needs a Python 3.10: ``$COURSE_PYTHON310`` if set, else ``python3.10`` on
``PATH``, else one that pyenv installed. Without one the test skips, or fails where
``COURSE_REQUIRE_PY310=1``. (CI does not set that: Debian 12 has no python3.10
package, so a fresh CI machine is not sure to have one.)
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import zipfile
from pathlib import Path

import jsonschema
import pytest

from autograder.grade import grade_notebook, prepare
from autograder.gradescope import build_zip, results_for
from autograder.gradescope_schema import RESULTS_SCHEMA
from autograder.spec import load_lab

from ..labs.labkit import LABS_DIR
from ..system_deps import missing

LAB = "lab1_graph"
SAMPLES = ("full_marks", "partial_buggy")


def _candidates() -> list[str]:
    """Where a Python 3.10 may be, most explicit first."""
    pyenv = Path(os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv")
    found = [os.environ.get("COURSE_PYTHON310"), shutil.which("python3.10")]
    found += [str(p) for p in sorted(pyenv.glob("versions/3.10*/bin/python3.10"))]
    return [p for p in found if p]


def _python310() -> str:
    """A working Python 3.10, or skip (fail under COURSE_REQUIRE_PY310=1)."""
    for python in _candidates():
        probe = subprocess.run(
            [python, "-c", "import sys; sys.exit(sys.version_info[:2] != (3, 10))"],
            capture_output=True, timeout=60)
        if probe.returncode == 0:
            return python
    missing("no working Python 3.10 (Gradescope's default image runs 3.10): set "
            "COURSE_PYTHON310 to one, or put python3.10 on PATH", "COURSE_REQUIRE_PY310")


def _gradescope_dir(tmp_path: Path) -> Path:
    """``/autograder`` as Gradescope builds it: the zip unpacked into ``source/``,
    ``run_autograder`` copied to the top."""
    root = tmp_path / "autograder"
    with zipfile.ZipFile(build_zip(LAB, tmp_path / "autograder.zip")) as zf:
        zf.extractall(root / "source")
    for script in ("setup.sh", "run_autograder"):  # extractall drops the modes
        (root / "source" / script).chmod(0o755)
    shutil.copy2(root / "source" / "run_autograder", root / "run_autograder")
    return root


def _run(command: list[str], cwd: Path, env: dict, timeout: float) -> None:
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout)
    assert done.returncode == 0, f"{command[0]} failed:\n{done.stdout[-3000:]}\n" \
                                 f"{done.stderr[-3000:]}"


def _expected(sample: Path) -> dict:
    """The results this project's own interpreter computes for ``sample``."""
    results = results_for(grade_notebook(prepare(load_lab(LAB)), sample), 0.0)
    results.pop("execution_time")
    return results


@pytest.mark.slow
def test_setup_and_run_autograder_grade_lab1_on_python_310(tmp_path):
    python = _python310()
    root = _gradescope_dir(tmp_path)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env.update(COURSE_AUTOGRADER_ROOT=str(root), COURSE_AUTOGRADER_PYTHON=python,
               COURSE_AUTOGRADER_APT="0")
    _run(["bash", str(root / "source" / "setup.sh")], root / "source", env, timeout=900)

    site = next((root / "venv" / "lib").glob("python3.10/site-packages"))
    assert (site / "numpy").is_dir() and not (site / "torch").exists()
    assert not (site / "jupyterlab").exists()
    assert (root / "source").stat().st_mode & 0o077 == 0
    validator = jsonschema.Draft202012Validator(RESULTS_SCHEMA)
    for name in SAMPLES:
        sample = LABS_DIR / LAB / "samples" / f"{name}.ipynb"
        for folder in ("submission", "results"):
            shutil.rmtree(root / folder, ignore_errors=True)
            (root / folder).mkdir()
        shutil.copy(sample, root / "submission" / f"{name}.ipynb")
        _run([str(root / "run_autograder")], root, env, timeout=300)
        results = json.loads((root / "results" / "results.json").read_text())
        assert not list(validator.iter_errors(results)), name
        assert results.pop("execution_time") >= 0
        assert results == _expected(sample), name
        assert (results["score"] == 16.0) == (name == "full_marks"), results["score"]
        assert sum(t["max_score"] for t in results["tests"]) == 16.0
