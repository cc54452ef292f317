"""Chapter 1 benchmark: compiled (traced + optimised + memory-planned) vs eager.

The model is elementwise-heavy on purpose: a two-layer MLP whose activation is
the tanh approximation of GELU written in primitive ops,

    gelu(h) = 0.5 * h * (1 + tanh(sqrt(2 / pi) * (h + 0.044715 * h ** 3)))

so each layer is one matmul followed by ten elementwise ops. Eager runs each op
as Python reaches it and records the graph of what ran (what a define-by-run
framework does every iteration); compiled traces once, folds, simplifies
(``h ** 3 -> h * h * h``), fuses the ten ops into one blocked kernel, plans
buffers, and then runs the plan. PyTorch eager runs the same function on
``torch.Tensor`` for reference. Ratios come from one run of this script:

    python bench/graph_bench.py [--batch 256] [--repeat 7]

Memory is measured with tracemalloc (which sees numpy's allocations), inputs
and weights excluded, in two parts: persistent bytes, allocated once and held
between calls (compiled's planned buffers and graph), and what one call
allocates on top; the memory ratio compares working sets, their sum. Everything runs on one thread
(numpy's BLAS and torch alike), so the ratios measure the engines rather than
thread contention on a shared machine; the cases are timed in interleaved
rounds and each keeps its best round, so load that comes and goes hits all.
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # before numpy loads its BLAS

import argparse  # noqa: E402
import timeit  # noqa: E402
from functools import partial  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402

from chapters.graph import compile, measured_memory, run_eager  # noqa: E402
from chapters.graph.passes import PIPELINE, simplify  # noqa: E402
from chapters.torchcheck import assert_close, to_torch  # noqa: E402


def gelu(h):
    return 0.5 * h * (1 + (0.7978845608028654 * (h + 0.044715 * h ** 3)).tanh())


def gelu_mlp(x, w1, b1, w2, b2):
    return gelu(gelu(x @ w1 + b1) @ w2 + b2)


def make_inputs(batch: int, width: int, hidden: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    arrays = (rng.standard_normal((batch, width)),
              rng.standard_normal((width, hidden)) / np.sqrt(width),
              rng.standard_normal(hidden) * 0.1,
              rng.standard_normal((hidden, width)) / np.sqrt(hidden),
              rng.standard_normal(width) * 0.1)
    return tuple(a.astype(np.float32) for a in arrays)


def seconds_per_call(cases: dict, repeat: int, number: int) -> dict[str, float]:
    """Best time per call of each case over ``repeat`` interleaved rounds."""
    best = {name: float("inf") for name in cases}
    for fn in cases.values():
        fn()
    for _ in range(repeat):
        for name, fn in cases.items():
            best[name] = min(best[name], timeit.timeit(fn, number=number) / number)
    return best


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--width", type=int, default=128)
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--number", type=int, default=10)
    args = parser.parse_args(argv)

    inputs = make_inputs(args.batch, args.width, args.hidden)
    compiled = compile(gelu_mlp)
    # the same pipeline without algebraic simplification, to show what x ** 3 -> x * x * x
    # is worth on its own (numpy's general float power is far slower than two multiplies)
    unsimplified = compile(gelu_mlp, passes=[p for p in PIPELINE if p is not simplify])
    torch_inputs = [to_torch(a) for a in inputs]
    eager_out = run_eager(gelu_mlp, *inputs).outputs
    assert_close(compiled(*inputs), eager_out, rtol=1e-5, atol=1e-5, what="compiled vs eager")
    with torch.no_grad():
        assert_close(eager_out, gelu_mlp(*torch_inputs), rtol=1e-4, atol=1e-5,
                     what="eager vs torch")

    cases = {
        "eager (records its graph)": lambda: run_eager(gelu_mlp, *inputs),
        "eager, no recording": lambda: run_eager(gelu_mlp, *inputs, record=False),
        "compiled": lambda: compiled(*inputs),
        "compiled, no simplification": lambda: unsimplified(*inputs),
    }
    torch.set_num_threads(1)
    with torch.no_grad():
        times = seconds_per_call({**cases, "torch eager": lambda: gelu_mlp(*torch_inputs)},
                                 args.repeat, args.number)
    memory = {name: measured_memory(build) for name, build in {
        "eager (records its graph)": lambda: partial(run_eager, gelu_mlp, *inputs),
        "eager, no recording": lambda: partial(run_eager, gelu_mlp, *inputs, record=False),
        "compiled": lambda: partial(compile(gelu_mlp), *inputs),
    }.items()}

    entry = compiled.entry_for(*inputs)
    print(f"GELU MLP, batch {args.batch}, {args.width} -> {args.hidden} -> {args.width}, "
          f"float32, one thread")
    print(f"compiled graph: {len(entry.graph.topological_order())} nodes "
          f"(traced: {len(run_eager(gelu_mlp, *inputs).graph)}); "
          + "; ".join(str(r) for r in entry.reports if r.changed))
    print(f"memory plan: {entry.executor.plan.summary()}")
    print(f"{'':28s}{'ms/call':>10s}{'persistent KiB':>16s}{'per-call KiB':>14s}")
    for name, t in times.items():
        use = memory.get(name)
        kib = (f"{use.persistent / 1024:16.0f}{use.per_call / 1024:14.0f}" if use
               else f"{'-':>16s}{'-':>14s}")
        print(f"{name:28s}{t * 1e3:10.3f}{kib}")
    eager, fast = "eager (records its graph)", "compiled"
    ratios = {
        "speedup compiled vs eager": times[eager] / times[fast],
        "working set compiled / eager": memory[fast].working_set / memory[eager].working_set,
        "per-call bytes compiled / eager": memory[fast].per_call / memory[eager].per_call,
        "compiled time / torch eager": times[fast] / times["torch eager"],
        "eager time / torch eager": times[eager] / times["torch eager"],
        "speedup without simplification": times[eager] / times["compiled, no simplification"],
    }
    for name, value in ratios.items():
        print(f"{name:34s}{value:8.2f}x")
    fast_enough = ratios["speedup compiled vs eager"] >= 1.5
    small_enough = ratios["working set compiled / eager"] <= 0.7
    print(f"goals: speedup >= 1.5x {'met' if fast_enough else 'NOT met'}; "
          f"working set <= 0.7x {'met' if small_enough else 'NOT met'}")
    return ratios


if __name__ == "__main__":
    main()
