"""Engine vs PyTorch eager (CPU): time ratios measured in one run.

    python bench/autodiff_bench.py [--threads N] [--repeats R] [--only WORD]

Four workloads, each written once as a function of a "library" namespace and
run on both engines with the same thread count for numpy's BLAS (set through
threadpoolctl) and for torch (``torch.set_num_threads``):

1. an MLP training step 64-256-256-10, batch 128, Adam     (goal: <= 1.5x torch)
2. per-op overhead: forward + backward of a 50-op chain on 16-element tensors
                                                            (goal: <= 1.5x torch)
3. a matmul-dominated layer: Linear 1024 -> 1024 on a batch of 512, forward
   and backward                                             (goal: <= 1.1x torch)
4. a small transformer block: nn.TransformerEncoderLayer(d_model=64, nhead=4,
   dim_feedforward=256, pre-LayerNorm, GELU, causal mask) on a batch of 8
   sequences of 32 tokens, forward and backward             (goal: <= 1.5x torch)

Both engines are timed round-robin (:func:`vizkit.timing.interleaved_medians`:
each round runs the engine's loop, then torch's, each loop sized to last about
0.05 s), so a change of machine load hits both alike; the ratio is the median
engine time over the median torch time, and the interquartile range of each
is printed beside it.
"""

from __future__ import annotations

import argparse
import time
from types import SimpleNamespace

import numpy as np
import torch
from threadpoolctl import threadpool_limits

import chapters.autodiff as ad
from chapters.autodiff import nn, optim
from vizkit.timing import interleaved_medians

TORCH = SimpleNamespace(name="torch", nn=torch.nn, optim=torch.optim, F=torch.nn.functional,
                        tensor=lambda a, requires_grad=False: torch.tensor(
                            a, requires_grad=requires_grad))
ENGINE = SimpleNamespace(name="engine", nn=nn, optim=optim, F=ad.functional,
                         tensor=lambda a, requires_grad=False: ad.tensor(
                             a, requires_grad=requires_grad))


def mlp_step(lib, rng):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(),
                                torch.nn.Linear(256, 256), torch.nn.ReLU(),
                                torch.nn.Linear(256, 10))
    if lib is ENGINE:
        ours = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(),
                             nn.Linear(256, 10))
        ours.load_state_dict(model.state_dict())
        model = ours
    opt = lib.optim.Adam(model.parameters(), lr=1e-3)
    x = lib.tensor(rng.standard_normal((128, 64)).astype(np.float32))
    y = lib.tensor(rng.integers(0, 10, size=128))

    def step():
        opt.zero_grad()
        lib.F.cross_entropy(model(x), y).backward()
        opt.step()

    return step


def op_chain(lib, rng):
    x = lib.tensor(rng.standard_normal(16).astype(np.float32), requires_grad=True)
    a = lib.tensor(rng.uniform(0.5, 1.0, 16).astype(np.float32), requires_grad=True)
    b = lib.tensor(rng.standard_normal(16).astype(np.float32), requires_grad=True)
    ops = [lambda y: y * a, lambda y: y + b, lambda y: y.tanh(), lambda y: y * 0.9,
           lambda y: y - b]

    def step():
        y = x
        for i in range(50):
            y = ops[i % len(ops)](y)
        y.sum().backward()  # the 51st op: a scalar to start backward from

    return step


def big_layer(lib, rng):
    x = lib.tensor(rng.standard_normal((512, 1024)).astype(np.float32), requires_grad=True)
    w = lib.tensor((rng.standard_normal((1024, 1024)) / 32).astype(np.float32),
                   requires_grad=True)
    b = lib.tensor(np.zeros(1024, np.float32), requires_grad=True)
    cotangent = lib.tensor(rng.standard_normal((512, 1024)).astype(np.float32))

    def step():
        lib.F.linear(x, w, b).backward(cotangent)

    return step


def transformer_block(lib, rng):
    torch.manual_seed(0)
    block = torch.nn.TransformerEncoderLayer(64, 4, dim_feedforward=256, dropout=0.0,
                                             activation="gelu", batch_first=True,
                                             norm_first=True)
    if lib is ENGINE:
        ours = nn.TransformerEncoderLayer(64, 4, dim_feedforward=256, dropout=0.0,
                                          activation="gelu", batch_first=True, norm_first=True)
        ours.load_state_dict(block.state_dict())
        block = ours
    x = lib.tensor(rng.standard_normal((8, 32, 64)).astype(np.float32), requires_grad=True)
    causal = lib.tensor(np.triu(np.full((32, 32), -np.inf, np.float32), 1))
    cotangent = lib.tensor(rng.standard_normal((8, 32, 64)).astype(np.float32))

    def step():
        block(x, src_mask=causal, is_causal=True).backward(cotangent)

    return step


def calls_in(step, seconds: float) -> int:
    """How many calls of ``step`` last about ``seconds`` (after one warm-up call)."""
    step()
    start, calls = time.perf_counter(), 0
    while time.perf_counter() - start < seconds:
        step()
        calls += 1
    return calls


def measure(steps: dict, repeats: int) -> dict:
    """Interleaved timings of ``steps`` (name -> step), each loop about 0.05 s."""
    number = max(1, min(calls_in(step, 0.05) for step in steps.values()))
    return interleaved_medians(steps, repeats=repeats, number=number)


WORKLOADS = [("MLP training step 64-256-256-10, batch 128, Adam", mlp_step, 1.5),
             ("50-op chain on 16-element tensors, fwd+bwd", op_chain, 1.5),
             ("Linear 1024x1024, batch 512, fwd+bwd", big_layer, 1.1),
             ("Transformer block d=64 h=4 ff=256, 8x32 tokens, fwd+bwd", transformer_block,
              1.5)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--only", default="", help="run the workloads whose title has WORD")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    with threadpool_limits(limits=args.threads):
        print(f"threads: numpy BLAS {args.threads}, torch {torch.get_num_threads()}; "
              f"torch {torch.__version__}, numpy {np.__version__}")
        print(f"{'workload':58s} {'engine':>10s} {'torch':>10s} {'ratio':>7s} {'goal':>6s}")
        for title, build, goal in WORKLOADS:
            if args.only.lower() not in title.lower():
                continue
            timings = measure({lib.name: build(lib, np.random.default_rng(0))
                               for lib in (ENGINE, TORCH)}, args.repeats)
            engine, torch_ = timings["engine"], timings["torch"]
            ratio = engine.median / torch_.median
            verdict = "ok" if ratio <= goal else "over"
            print(f"{title:58s} {engine.median * 1e3:8.3f}ms {torch_.median * 1e3:8.3f}ms "
                  f"{ratio:6.2f}x {goal:5.1f}x {verdict}  (IQR engine {engine.spread:.0%}, "
                  f"torch {torch_.spread:.0%})")


if __name__ == "__main__":
    main()
