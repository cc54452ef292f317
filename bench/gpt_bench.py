"""One training step of the capstone GPT, engines vs PyTorch (CPU), in one run.

    python bench/gpt_bench.py [--threads N] [--repeats R] [--amp-dtype float32|bfloat16]

The step is chapters.capstone.gpt's model (4 layers, width 128, 4 heads, block 64,
batch 12, scaled-dot-product attention) and the training command's step: forward,
backward, gradient clipping, AdamW. Both libraries run the same source
(``gpt.build(torch, ...)`` with real torch and with chapters.as_torch) from the same
weights on the same batch. They are timed round-robin
(:func:`vizkit.timing.interleaved_medians`), one thread each (numpy's BLAS through
threadpoolctl, ``torch.set_num_threads``); the ratio is the median engine step over
the median torch step, with each one's interquartile range. Goal: <= 1.3x.
"""

from __future__ import annotations

import argparse

import torch
from threadpoolctl import threadpool_limits

import chapters.as_torch as engines
from chapters.capstone import gpt
from vizkit.timing import interleaved_medians

CONFIG = gpt.GPTConfig(layers=4, width=128, heads=4, block=64, batch=12, accumulate=1)
GOAL = 1.3


def step_of(lib, config: gpt.GPTConfig):
    """A closure running one full training step of ``lib``'s model."""
    model = gpt.build(lib, config)
    opt = gpt.optimizer(lib, model, config)
    x, y = (lib.from_numpy(a) for a in gpt.batch_at(config, 0, 0, 0, 1))
    amp = gpt.autocast_dtype(lib, config)

    def step():
        with lib.autocast("cpu", dtype=amp, enabled=amp is not None):
            loss = model(x, y)
        loss.backward()
        lib.nn.utils.clip_grad_norm_(model.parameters(), config.clip_norm)
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--amp-dtype", default="float32", choices=["float32", "bfloat16"])
    args = parser.parse_args()
    config = CONFIG.but(amp_dtype=args.amp_dtype)
    torch.set_num_threads(args.threads)
    with threadpool_limits(limits=args.threads):
        times = interleaved_medians({"engines": step_of(engines, config),
                                     "torch": step_of(torch, config)},
                                    repeats=args.repeats, warmup=2)
    tokens = config.batch * config.block
    print(f"GPT step ({config.layers} layers, width {config.width}, block {config.block}, "
          f"batch {config.batch}, {config.amp_dtype}), {args.threads} thread(s)")
    for name, t in times.items():
        print(f"  {name:8s} {t}   {tokens / t.median:,.0f} tokens/s")
    ratio = times["engines"].median / times["torch"].median
    print(f"  ratio engines/torch {ratio:.2f}x (goal <= {GOAL}x: "
          f"{'met' if ratio <= GOAL else 'not met'})")


if __name__ == "__main__":
    main()
