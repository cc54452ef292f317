"""The runner's import hook: the script's ``import torch`` reaches the engines
(the same module objects as chapters.as_torch), everything else keeps real torch."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

SCRIPT = """
import sys
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torch import optim
import helper
import chapters.as_torch as engines
import chapters.distributed.torch_transport as transport
assert torch is engines and nn is engines.nn and F is engines.nn.functional
assert DataLoader is engines.utils.data.DataLoader and optim is engines.optim
assert helper.torch is engines, "the script's own modules see the engines too"
real = sys.modules["torch"]
assert real is not engines and hasattr(real, "_C")
# the real-process transport was imported while the engines stood in: it still holds real torch
assert transport.dist is real.distributed, "the engines' transport keeps real torch"
print("ARGV", sys.argv[1:])
"""


def run_runner(tmp_path, script: str, *args: str):
    (tmp_path / "prog.py").write_text(script)
    (tmp_path / "helper.py").write_text("import torch\n")
    return subprocess.run([sys.executable, "-m", "chapters.as_torch", str(tmp_path / "prog.py"),
                           *args], capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})


def test_script_sees_the_engines_and_the_engines_keep_real_torch(tmp_path):
    done = run_runner(tmp_path, SCRIPT, "--lr", "0.1")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "ARGV ['--lr', '0.1']" in done.stdout


def test_a_missing_torch_module_says_what_to_do(tmp_path):
    done = run_runner(tmp_path, "import torch.onnx_runtime_thing\n")
    assert done.returncode != 0
    assert "No module named 'torch.onnx_runtime_thing' in the course's engines" in done.stderr
    assert "Run the script with real torch" in done.stderr


def test_compare_under_torchrun_is_refused_with_what_to_do(tmp_path):
    done = run_runner(tmp_path, "print(1)\n")
    assert done.returncode == 0 and done.stdout == "1\n"
    refused = subprocess.run([sys.executable, "-m", "chapters.as_torch", "--compare",
                              str(tmp_path / "prog.py")], capture_output=True, text=True,
                             timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT), "RANK": "0"})
    assert refused.returncode == 2 and "once with torch and once on the engines" in refused.stderr
