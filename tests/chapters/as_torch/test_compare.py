"""``python -m chapters.as_torch --compare``: a faithful program shows no divergence;
a program that computes something else on one side is caught at the first module
call that differs, by value or by shape; the loss curves are drawn."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from chapters.as_torch.compare import Recorder, compare_traces

ROOT = Path(__file__).resolve().parents[3]

#: an MLP whose second layer differs on the engines side by ``{change}``
PLANTED = """
import numpy as np
import torch
rng = np.random.default_rng(0)  # numpy draws the numbers: torch's generator is not the engines'
net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
with torch.no_grad():
    for p in net.parameters():
        p.copy_(torch.from_numpy(rng.standard_normal(tuple(p.shape)).astype(np.float32)))
x = torch.from_numpy(rng.standard_normal((5, 4)).astype(np.float32))
y = torch.tensor([0, 1, 2, 0, 1])
if not hasattr(torch, "_C"):  # on the engines
    {change}
opt = torch.optim.SGD(net.parameters(), lr=0.1)
for _ in range(3):
    loss = torch.nn.functional.cross_entropy(net(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
"""


def _compare(tmp_path: Path, source: str):
    script = tmp_path / "prog.py"
    script.write_text(source)
    figure = tmp_path / "curves.html"
    done = subprocess.run([sys.executable, "-m", "chapters.as_torch", "--compare", "--figure",
                           str(figure), str(script)], capture_output=True, text=True,
                          timeout=240, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)})
    return done, figure


@pytest.mark.slow
def test_a_faithful_program_shows_no_divergence_and_both_loss_curves(tmp_path):
    done, figure = _compare(tmp_path, PLANTED.format(change="pass"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no divergence in 12 module calls" in done.stdout, done.stdout
    assert "3 backward() calls on each side" in done.stdout
    page = figure.read_text()
    assert '"name":"torch"' in page and '"name":"engines"' in page


@pytest.mark.slow
def test_a_changed_layer_is_named_at_its_first_call(tmp_path):
    # calls per forward: Linear 0, ReLU 1, Linear 2, Sequential 3: the change shows at call 2
    done, _ = _compare(tmp_path, PLANTED.format(
        change="with torch.no_grad():\n        net[2].bias += 0.01"))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "first divergence at module call 2 (Linear, output (5, 3))" in done.stdout


@pytest.mark.slow
def test_a_changed_shape_is_named(tmp_path):
    change = "x = torch.cat([x, x])\n    y = y.repeat(2)"
    done, _ = _compare(tmp_path, PLANTED.format(change=change))
    assert done.returncode == 1
    assert ("first divergence at module call 0 (Linear): output shape (10, 8) on the engines, "
            "(5, 8) on torch") in done.stdout, done.stdout


def _trace(tmp_path: Path, name: str, outputs: list, losses: list) -> str:
    recorder = Recorder(np.asarray)
    for out in outputs:
        recorder.module_output(object(), out)
    for loss in losses:
        recorder.loss(np.array(loss))
    path = str(tmp_path / f"{name}.npz")
    recorder.save(path)
    return path


def test_traces_compare_within_tolerance_and_sample_large_outputs(tmp_path):
    big = np.arange(10_000.0)
    torch_ = _trace(tmp_path, "t", [np.ones(3), big], [2.0, 1.0])
    close = _trace(tmp_path, "c", [np.ones(3) + 1e-6, big], [2.0, 1.0])
    far = _trace(tmp_path, "f", [np.ones(3), big + 1.0], [2.0, 1.5])
    ok = compare_traces(torch_, close, rtol=1e-3, atol=1e-4)
    assert ok.first is None and ok.calls == 2
    bad = compare_traces(torch_, far, rtol=1e-4, atol=1e-5)
    assert bad.first.call == 1 and bad.first.error == pytest.approx(1.0)
    assert "largest relative difference 5.00e-01" in bad.report()
