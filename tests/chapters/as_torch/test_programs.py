"""Torch programs (tests/programs), unedited, under real torch and under the
engines through ``python -m chapters.as_torch``: the results they print agree
within the tolerances below."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[3]
PROGRAMS = ROOT / "tests" / "programs"
#: program -> (rtol, atol) on its numbers; float32 programs differ by summation
#: order only, the bfloat16 one by bfloat16 rounding of differently ordered sums
TOLERANCES = {"gpt_tiny": (2e-4, 1e-5), "cnn_digits": (2e-4, 1e-5),
              "mlp_custom_function": (1e-4, 1e-5), "save_load": (1e-4, 1e-5),
              "amp_bf16": (2e-2, 1e-3)}
#: programs that need torchrun's ranks, each run both ways by its own test
UNDER_TORCHRUN = {"ddp_no_sync": "tests/chapters/distributed/test_torch_api.py"}


def run_both(path: str) -> tuple[dict, dict]:
    """What ``python path`` (torch) and ``python -m chapters.as_torch path``
    (the engines) print after ``RESULT``, the two processes side by side."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    commands = ([path], ["-m", "chapters.as_torch", path])
    procs = [subprocess.Popen([sys.executable, *c], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
             for c in commands]
    results = []
    for command, proc in zip(commands, procs, strict=True):
        try:
            out, err = proc.communicate(timeout=180)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
        assert proc.returncode == 0, f"{command} failed:\n{err[-3000:]}"
        line = [ln for ln in out.splitlines() if ln.startswith("RESULT ")][-1]
        results.append(json.loads(line.removeprefix("RESULT ")))
    return results[0], results[1]


def assert_same(engine, torch_result, rtol, atol, where="result"):
    if isinstance(torch_result, dict):
        assert engine.keys() == torch_result.keys(), where
        for key in torch_result:
            assert_same(engine[key], torch_result[key], rtol, atol, f"{where}[{key!r}]")
    elif isinstance(torch_result, float):
        np.testing.assert_allclose(engine, torch_result, rtol=rtol, atol=atol, err_msg=where)
    elif isinstance(torch_result, list) and torch_result and isinstance(torch_result[0], float):
        np.testing.assert_allclose(engine, torch_result, rtol=rtol, atol=atol, err_msg=where)
    else:
        assert engine == torch_result, where


@pytest.mark.parametrize("program", sorted(TOLERANCES))
def test_program_runs_unedited_on_the_engines_as_on_torch(program):
    path = str(PROGRAMS / f"{program}.py")
    expected, got = run_both(path)
    assert_same(got, expected, *TOLERANCES[program])
    assert len(expected["losses"]) >= 4 and expected["losses"][-1] < expected["losses"][0]


def test_every_program_has_a_tolerance_or_a_torchrun_test():
    assert {p.stem for p in PROGRAMS.glob("*.py")} == set(TOLERANCES) | set(UNDER_TORCHRUN)
    for test in UNDER_TORCHRUN.values():
        assert (ROOT / test).is_file()
