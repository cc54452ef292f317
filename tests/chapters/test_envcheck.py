"""The environment check finds what this machine has, and on a machine without
a component (simulated by a finder that finds nothing) reports it missing with
its fix, instead of crashing."""

import importlib
import shutil

from chapters import envcheck
from chapters.envcheck import MISSING, NOTE, OK


def importer_without(*absent):
    def importer(name):
        if name in absent:
            raise ModuleNotFoundError(f"No module named {name!r}")
        return importlib.import_module(name)
    return importer


def by_name(checks):
    return {c.name: c for c in checks}


def test_this_machine_has_everything_the_course_needs():
    checks = envcheck.run_checks()
    assert [c.name for c in checks if not c.ok] == []
    names = by_name(checks)
    assert names["NumPy"].found == importlib.import_module("numpy").__version__
    assert names["Graphviz dot"].found.startswith("dot - graphviz version")
    assert " at /" in names["C compiler"].found


def test_missing_c_compiler_says_what_is_lost_and_how_to_install_it():
    check = envcheck.check_c_compiler(which=lambda name: None)
    assert check.status == MISSING
    assert "numpy code" in check.found and "apt-get install gcc" in check.fix


def test_missing_python_package_is_reported_with_pip_fix():
    checks = by_name(envcheck.run_checks(importer=importer_without("numpy", "ipywidgets")))
    for name in ("NumPy", "ipywidgets"):
        assert checks[name].status == MISSING
        assert "pip install" in checks[name].fix
    assert checks["plotly"].status == OK


def test_missing_torch_skips_the_cuda_line():
    checks = by_name(envcheck.run_checks(importer=importer_without("torch")))
    assert checks["PyTorch"].status == MISSING
    assert "CUDA GPU" not in checks


def test_cuda_absence_is_a_note_not_a_failure():
    import torch

    (cuda,) = [c for c in envcheck.check_torch() if c.name == "CUDA GPU"]
    assert cuda.ok
    assert cuda.status == (OK if torch.cuda.is_available() else NOTE)


def test_missing_dot_says_how_to_install_graphviz():
    check = envcheck.check_dot(which=lambda name: None)
    assert check.status == MISSING and "apt-get install graphviz" in check.fix


def test_dot_that_cannot_run_is_missing():
    def broken(*args, **kwargs):
        raise PermissionError("Permission denied")
    check = envcheck.check_dot(which=shutil.which, run=broken)
    assert check.status == MISSING and "Permission denied" in check.found


def test_frontend_without_jupyterlab_renderer_is_missing():
    check = by_name(envcheck.run_checks(find=lambda name: None))["plotly"]
    assert check.status == MISSING and "raw JSON" in check.found


def test_old_python_is_missing():
    assert envcheck.check_python((3, 9, 1)).status == MISSING
    assert envcheck.check_python((3, 12, 0)).status == OK


def test_report_html_names_each_missing_part_and_its_fix():
    checks = envcheck.run_checks(importer=importer_without("plotly"), which=lambda n: None)
    page = envcheck.render_html(checks)
    assert "Missing: Graphviz dot, C compiler, plotly." in page
    assert "brew install graphviz" in page
    text = envcheck.render_text(checks)
    assert "[missing] plotly" in text and "fix:" in text
