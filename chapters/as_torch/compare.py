"""``python -m chapters.as_torch --compare SCRIPT [ARGS ...]``: run an unmodified torch
script under real torch and on the engines, and say where the two first part.

Each run is a child process of its own. Before the script starts, the child wraps two
methods of its library, ``nn.Module.__call__`` and ``Tensor.backward``, so it records:

* every module call's output: the module's class, the output's shape, and its values
  (all of them up to ``SAMPLE`` elements, else ``SAMPLE`` evenly spaced ones, the same
  positions on both sides), in call order, for the first ``MAX_CALLS`` calls;
* the value of every scalar that ``backward()`` is called on: the loss curve.

The same program calls the same modules in the same order, so call ``k`` of one run
is call ``k`` of the other. The report names the first call whose output has another
shape, or differs by more than ``atol + rtol * |torch|``, with its largest error, and
writes a plotly figure of both loss curves. Only what modules return is compared, so a
difference inside a functional op shows at the module that called it.
"""

from __future__ import annotations

import json
import os
import runpy
import subprocess
import sys
import tempfile
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import numpy as np

SAMPLE = 4096
MAX_CALLS = 20_000
LIBRARIES = ("torch", "engines")


@dataclass
class Call:
    """One recorded module call (or loss, ``module == "loss"``)."""

    module: str
    shape: tuple
    values: np.ndarray


class Recorder:
    """What one child records; :meth:`save` writes it as one ``.npz`` file."""

    def __init__(self, to_numpy):
        self.to_numpy, self.calls, self.losses = to_numpy, [], []

    def module_output(self, module, output) -> None:
        tensor = output[0] if isinstance(output, tuple | list) and output else output
        if len(self.calls) >= MAX_CALLS or not hasattr(tensor, "shape"):
            return
        values = self.to_numpy(tensor).reshape(-1)
        if values.size > SAMPLE:
            values = values[np.linspace(0, values.size - 1, SAMPLE).astype(np.int64)]
        self.calls.append(Call(type(module).__name__, tuple(tensor.shape), values))

    def loss(self, tensor) -> None:
        if int(np.prod(tensor.shape)) == 1:
            self.losses.append(float(self.to_numpy(tensor).reshape(-1)[0]))

    def save(self, path: str) -> None:
        meta = {"modules": [c.module for c in self.calls],
                "shapes": [list(c.shape) for c in self.calls], "losses": self.losses}
        np.savez(path, meta=np.array(json.dumps(meta)),
                 **{f"c{i}": c.values for i, c in enumerate(self.calls)})


def _wrap(cls, name: str, after=None, before=None) -> None:
    original = getattr(cls, name)

    def wrapped(self, *args, **kwargs):
        if before is not None:
            before(self)
        out = original(self, *args, **kwargs)
        if after is not None:
            after(self, out)
        return out

    setattr(cls, name, wrapped)


def _real_torch_recorder() -> Recorder:
    import torch

    recorder = Recorder(lambda t: t.detach().to(torch.float64).cpu().numpy())
    _wrap(torch.nn.Module, "__call__", after=recorder.module_output)
    _wrap(torch.Tensor, "backward", before=recorder.loss)
    return recorder


def _engine_recorder() -> Recorder:
    import chapters.as_torch as engines

    recorder = Recorder(lambda t: np.asarray(t.detach().numpy(), dtype=np.float64))
    _wrap(engines.nn.Module, "__call__", after=recorder.module_output)
    _wrap(engines.Tensor, "backward", before=recorder.loss)
    return recorder


def run_child(library: str, trace: str, script: str, args: list[str]) -> None:
    """The child's work: record ``library``, run the script, save the trace (also when
    the script exits early)."""
    recorder = _engine_recorder() if library == "engines" else _real_torch_recorder()
    try:
        if library == "engines":
            from .runner import run_script

            run_script(script, args)
        else:
            sys.argv = [script, *args]
            sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
            runpy.run_path(script, run_name="__main__")
    finally:
        recorder.save(trace)


@dataclass
class Divergence:
    call: int
    module: str
    shapes: tuple
    error: float
    allowed: float


@dataclass
class Comparison:
    calls: int
    first: Divergence | None     # the first call beyond tolerance (or of another shape)
    worst: Divergence | None     # the largest error among the calls that agree
    losses: dict[str, list[float]]

    def report(self) -> str:
        lines = []
        if self.first is None:
            worst = (f"; largest error {self.worst.error:.2e} at call {self.worst.call} "
                     f"({self.worst.module})" if self.worst else "")
            lines.append(f"no divergence in {self.calls} module calls{worst}")
        elif self.first.shapes[0] != self.first.shapes[1]:
            lines.append(f"first divergence at module call {self.first.call} "
                         f"({self.first.module}): output shape {self.first.shapes[1]} on the "
                         f"engines, {self.first.shapes[0]} on torch")
        else:
            lines.append(f"first divergence at module call {self.first.call} "
                         f"({self.first.module}, output {self.first.shapes[0]}): max |engines "
                         f"- torch| = {self.first.error:.3g}, allowed {self.first.allowed:.3g}")
        if self.first is not None and self.first.call == 0 and len(set(self.first.shapes)) == 1:
            lines.append("(at the very first call: the two runs likely started from other "
                         "numbers. The engines' random generator is not torch's, so draw "
                         "weights and data with numpy, or load one state_dict on both sides)")
        t, e = (np.array(self.losses[k]) for k in LIBRARIES)
        if len(t) and len(t) == len(e):
            gap = float(np.max(np.abs(e - t) / np.maximum(np.abs(t), 1e-12)))
            lines.append(f"losses: {len(t)} backward() calls on each side, largest relative "
                         f"difference {gap:.2e}")
        else:
            lines.append(f"losses: {len(t)} backward() calls under torch, {len(e)} on the "
                         "engines")
        return "\n".join(lines)

    def figure(self, title: str):
        import plotly.graph_objects as go

        fig = go.Figure([go.Scatter(y=self.losses[k], name=k, mode="lines+markers")
                         for k in LIBRARIES])
        fig.update_layout(title=title, xaxis_title="backward() call", yaxis_title="loss",
                          template="plotly_white")
        return fig


def _load(path: str) -> tuple[dict, list[np.ndarray]]:
    with np.load(path) as data:
        meta = json.loads(str(data["meta"]))
        return meta, [data[f"c{i}"] for i in range(len(meta["modules"]))]


def compare_traces(torch_trace: str, engine_trace: str, rtol: float,
                   atol: float) -> Comparison:
    (tm, tv), (em, ev) = _load(torch_trace), _load(engine_trace)
    first = worst = None
    calls = min(len(tv), len(ev))
    for k in range(calls):
        shapes = (tuple(tm["shapes"][k]), tuple(em["shapes"][k]))
        if shapes[0] != shapes[1] or tv[k].shape != ev[k].shape:
            first = Divergence(k, tm["modules"][k], shapes, float("inf"), 0.0)
            break
        err = np.abs(ev[k] - tv[k])
        allowed = atol + rtol * np.abs(tv[k])
        where = int(np.argmax(np.where(np.isnan(err), np.inf, err - allowed))) if err.size else 0
        if err.size and not err[where] <= allowed[where]:
            first = Divergence(k, tm["modules"][k], shapes, float(err[where]),
                               float(allowed[where]))
            break
        if err.size and (worst is None or err.max() > worst.error):
            worst = Divergence(k, tm["modules"][k], shapes, float(err.max()), 0.0)
    return Comparison(calls, first, worst, {"torch": tm["losses"], "engines": em["losses"]})


def compare(script: str, args: list[str], rtol: float = 1e-3, atol: float = 1e-4,
            figure: str | None = None, timeout: float | None = None) -> Comparison:
    """Run ``script`` both ways (two child processes, side by side) and compare them."""
    if not os.path.isfile(script):
        raise SystemExit(f"python -m chapters.as_torch --compare: no such script {script!r}")
    with tempfile.TemporaryDirectory(prefix="as-torch-compare-") as tmp, ExitStack() as files:
        traces = {lib: os.path.join(tmp, f"{lib}.npz") for lib in LIBRARIES}
        # each child's messages go to a file: with two pipes, the child not waited on
        # would block once it had written a pipe's worth
        logs = {lib: files.enter_context(open(os.path.join(tmp, f"{lib}.log"), "w+"))
                for lib in LIBRARIES}
        children = {lib: subprocess.Popen(
            [sys.executable, "-m", "chapters.as_torch.compare", lib, traces[lib], script, *args],
            stdout=subprocess.DEVNULL, stderr=logs[lib]) for lib in LIBRARIES}
        for lib, child in children.items():
            child.wait(timeout=timeout)
            if child.returncode or not os.path.exists(traces[lib]):
                logs[lib].seek(0)
                raise SystemExit(f"the script failed under {lib} (exit {child.returncode}):\n"
                                 f"{logs[lib].read()[-3000:]}")
        result = compare_traces(traces["torch"], traces["engines"], rtol, atol)
    if figure:
        Path(figure).parent.mkdir(parents=True, exist_ok=True)
        result.figure(f"{Path(script).name}: loss under torch and on the engines").write_html(
            figure, include_plotlyjs=True)
    return result


if __name__ == "__main__":
    library, trace, script_path, *script_args = sys.argv[1:]
    if library not in LIBRARIES:
        raise SystemExit(f"usage: python -m chapters.as_torch.compare {{torch,engines}} TRACE "
                         f"SCRIPT [ARGS]; got library {library!r}")
    run_child(library, trace, script_path, script_args)
