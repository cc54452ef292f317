"""Cost of mixed-precision machinery per training step, engine and torch, on CPU.

For one MLP training step (forward, cross-entropy, backward, SGD) this prints
the time of the same step with the AMP machinery added — autocast only, the
GradScaler only, both — as a ratio to the plain float32 step, for this course's
engine and for torch (``torch.autocast("cpu")`` + ``torch.amp.GradScaler("cpu")``)
measured in the same run. On a CPU low precision makes the step slower, not
faster (there are no tensor cores; numpy has no bfloat16 BLAS, so the engine casts
each operand, computes in float32 and rounds), so the ratios measure overhead:
casts, hook dispatch, inf checks and unscaling.

    python bench/amp_bench.py [--steps 15] [--width 256] [--batch 256]
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # one BLAS thread, as torch below: a fair ratio
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402  (after the thread settings, which numpy reads at import)

import numpy as np  # noqa: E402
import torch  # noqa: E402

import chapters.autodiff.functional as F  # noqa: E402
from chapters.amp.autocast import autocast  # noqa: E402
from chapters.amp.scaler import GradScaler  # noqa: E402
from chapters.autodiff import nn, optim, tensor  # noqa: E402
from vizkit.timing import interleaved_medians  # noqa: E402


def engine_step(width, batch, use_autocast, use_scaler, dtype):
    rng = np.random.default_rng(0)
    model = nn.Sequential(nn.Linear(64, width), nn.ReLU(), nn.Linear(width, width), nn.ReLU(),
                          nn.Linear(width, 10))
    opt = optim.SGD(model.parameters(), lr=0.01)
    scaler = GradScaler("cpu", enabled=use_scaler)
    x = tensor(rng.standard_normal((batch, 64)).astype(np.float32))
    y = tensor(rng.integers(0, 10, batch))

    def step():
        with autocast("cpu", dtype=dtype, enabled=use_autocast):
            loss = F.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad()

    return step


def torch_step(width, batch, use_autocast, use_scaler, dtype):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, width), torch.nn.ReLU(),
                                torch.nn.Linear(width, width), torch.nn.ReLU(),
                                torch.nn.Linear(width, 10))
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    scaler = torch.amp.GradScaler("cpu", enabled=use_scaler)
    x = torch.randn(batch, 64)
    y = torch.randint(0, 10, (batch,))
    torch_dtype = getattr(torch, dtype)

    def step():
        with torch.autocast("cpu", dtype=torch_dtype, enabled=use_autocast):
            loss = torch.nn.functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        opt.zero_grad()

    return step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=15)
    parser.add_argument("--width", type=int, default=256)
    parser.add_argument("--batch", type=int, default=256)
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(f"MLP 64-{args.width}-{args.width}-10, batch {args.batch}, median of {args.steps} "
          "interleaved steps; numpy BLAS and torch on 1 thread each")
    configs = {"plain": (False, False), "autocast": (True, False), "scaler": (False, True),
               "autocast + scaler": (True, True)}
    for dtype in ("bfloat16", "float16"):
        for name, make in (("engine", engine_step), ("torch", torch_step)):
            steps = {label: make(args.width, args.batch, a, s, dtype)
                     for label, (a, s) in configs.items()}
            medians = {label: t.median for label, t in
                       interleaved_medians(steps, args.steps, warmup=2).items()}
            base = medians.pop("plain")
            cells = [f"{name:6s} {dtype:8s} plain {base * 1e3:7.2f} ms"]
            cells += [f"{label} x{t / base:.2f}" for label, t in medians.items()]
            print(" | ".join(cells))


if __name__ == "__main__":
    main()
