"""Train the capstone GPT, on real torch or on the course's engines, one process or
several under torchrun.

    python -m chapters.capstone.gpt_train --engines --world-size 2 --steps 200 \\
        --checkpoint build/gpt.ckpt --figure build/gpt_loss.html

With ``--world-size N`` (default 2) the command starts ``torchrun`` itself; under
torchrun already (``RANK`` set) it is one rank. The step is the same program on
both libraries, each piece from one chapter::

    for each micro-batch (the last one syncs; the others run under model.no_sync()):
        with torch.autocast("cpu", dtype=bfloat16):    # ch. 4: ops choose their precision
            loss = model(x, y) / accumulate            # ch. 1/2: the graph, recorded
        scaler.scale(loss).backward()                  # ch. 2: reverse mode; ch. 3: DDP's
                                                       #   bucketed all-reduce during backward
    scaler.unscale_(opt); clip_grad_norm_(...)         # ch. 4/5: clip the true gradients
    scaler.step(opt); scaler.update()                  # AdamW, skipped on inf/NaN (float16)

Rank 0 shows a tqdm bar, evaluates on held-out text every ``--eval-every`` steps,
writes an atomic checkpoint every ``--checkpoint-every`` steps (rerun the same
command to resume from it: the curve continues exactly), a plotly loss figure,
and the run's numbers as JSON (``--out``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from contextlib import nullcontext
from importlib import import_module
from pathlib import Path

import numpy as np

from vizkit.gpt_figures import loss_figure

from . import gpt, gpt_comm

AMP_DTYPES = ("float32", "bfloat16", "float16")
#: the GPTConfig fields the command takes as integer flags, and every field it takes
SIZES = ("layers", "width", "heads", "block", "batch", "accumulate")
FLAGS = ("steps", "amp_dtype", "attention", "lr", *SIZES)
#: the "step" whose micro-batches are the held-out ones (no training step has it)
HELD_OUT_STEP = 2**31 - 1


def evaluate(torch, model, config: gpt.GPTConfig, batches: int = 4) -> float:
    """Mean loss on ``batches`` fixed micro-batches of the held-out text."""
    val = gpt.splits()[1]
    losses = []
    with torch.no_grad():
        for i in range(batches):
            x, y = gpt.batch_at(config, HELD_OUT_STEP, i, 0, 1, val)
            losses.append(model(torch.from_numpy(x), torch.from_numpy(y)).item())
    return float(np.mean(losses))


def _save(torch, path: Path, state: dict) -> None:
    """Write ``state`` next to ``path`` and rename it into place: a kill mid-write
    leaves the previous checkpoint whole."""
    partial = path.with_name(path.name + ".partial")
    torch.save(state, partial)
    os.replace(partial, path)


def train(torch, config: gpt.GPTConfig, *, checkpoint: Path | None = None,
          checkpoint_every: int = 10, eval_every: int = 0, progress: bool = False) -> dict:
    """Run (or resume) ``config.steps`` steps on this rank of ``torch.distributed``'s
    world (one process when it is not initialised); return rank-averaged losses per
    step, held-out losses, learning rates and step times, and the trained model."""
    dist = torch.distributed
    world, rank = (dist.get_world_size(), dist.get_rank()) if dist.is_initialized() else (1, 0)
    net = gpt.build(torch, config)
    model = torch.nn.parallel.DistributedDataParallel(net) if world > 1 else net
    opt = gpt.optimizer(torch, net, config)
    amp = gpt.autocast_dtype(torch, config)
    scaler = torch.amp.GradScaler("cpu", enabled=config.amp_dtype == "float16")
    history = {"loss": [], "val": [], "lr": [], "seconds": [], "skipped": []}
    start = 0
    if checkpoint is not None and checkpoint.exists():
        state = torch.load(checkpoint)
        net.load_state_dict(state["model"])
        opt.load_state_dict(state["optimizer"])
        scaler.load_state_dict(state["scaler"])
        history, start = state["history"], int(state["step"])
    steps = range(start, config.steps)
    if progress and rank == 0:
        from tqdm.auto import tqdm

        steps = tqdm(steps, initial=start, total=config.steps, desc="GPT steps", unit="step")
    for step in steps:
        began = time.perf_counter()
        lr = gpt.learning_rate(config, step)
        for group in opt.param_groups:
            group["lr"] = lr
        scale_before = scaler.get_scale() if scaler.is_enabled() else 1.0
        local = 0.0
        for micro in range(config.accumulate):
            x, y = (torch.from_numpy(a) for a in gpt.batch_at(config, step, micro, rank, world))
            last = micro == config.accumulate - 1
            with nullcontext() if last or world == 1 else model.no_sync():
                with torch.autocast("cpu", dtype=amp, enabled=amp is not None):
                    loss = model(x, y) / config.accumulate
                scaler.scale(loss).backward()
            local += loss.item()
        scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(net.parameters(), config.clip_norm)
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)
        history["seconds"].append(time.perf_counter() - began)
        mean = torch.tensor([local], dtype=torch.float64)
        if world > 1:
            dist.all_reduce(mean)
        history["loss"].append(float(mean.item()) / world)
        history["lr"].append(lr)
        history["skipped"].append(scaler.is_enabled() and scaler.get_scale() < scale_before)
        if eval_every and rank == 0 and ((step + 1) % eval_every == 0 or step + 1 == config.steps):
            history["val"].append([step + 1, evaluate(torch, net, config)])
            if progress:
                steps.set_postfix(loss=f"{history['loss'][-1]:.3f}",
                                  val=f"{history['val'][-1][1]:.3f}")
        if checkpoint is not None and rank == 0 and (step + 1) % checkpoint_every == 0:
            _save(torch, checkpoint, {"model": net.state_dict(), "optimizer": opt.state_dict(),
                                      "scaler": scaler.state_dict(), "step": step + 1,
                                      "history": history})
    return {"history": history, "model": net, "world_size": world}


def _arguments(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    defaults = gpt.GPTConfig()
    parser.add_argument("--engines", action="store_true",
                        help="train on the course's engines (chapters.as_torch), not torch")
    parser.add_argument("--world-size", type=int, default=2)
    parser.add_argument("--steps", type=int, default=defaults.steps)
    parser.add_argument("--amp-dtype", default=defaults.amp_dtype, choices=AMP_DTYPES)
    parser.add_argument("--attention", default=defaults.attention, choices=gpt.ATTENTION)
    for name in SIZES:
        parser.add_argument(f"--{name}", type=int, default=getattr(defaults, name))
    parser.add_argument("--lr", type=float, default=defaults.lr)
    parser.add_argument("--eval-every", type=int, default=10)
    parser.add_argument("--checkpoint", type=Path, help="resume from and save to this file")
    parser.add_argument("--checkpoint-every", type=int, default=10)
    parser.add_argument("--figure", type=Path, help="write the loss figure (HTML) here")
    parser.add_argument("--out", type=Path, help="write the run's numbers (JSON) here")
    parser.add_argument("--no-progress", action="store_true")
    parser.add_argument("--sample", type=int, default=200, help="characters to generate")
    parser.add_argument("--comm-repeats", type=int, default=0,
                        help="after training, time the all-reduce with and without overlap "
                             "over this many rounds (gpt_comm; needs --world-size > 1)")
    return parser.parse_args(argv)


def _config(args) -> gpt.GPTConfig:
    return gpt.GPTConfig(**{name: getattr(args, name) for name in FLAGS})


def command(argv: list[str], world_size: int) -> list[str]:
    """The command line that runs this module with ``argv``: under ``torchrun``, with
    ``world_size`` processes on this machine, when ``world_size`` > 1."""
    if world_size == 1:
        return [sys.executable, "-m", "chapters.capstone.gpt_train", *argv]
    return [sys.executable, "-m", "torch.distributed.run", "--standalone",
            f"--nproc_per_node={world_size}", "-m", "chapters.capstone.gpt_train", *argv]


def launch(argv: list[str], world_size: int, timeout: float | None = None) -> None:
    """Run this module under ``torchrun`` with ``world_size`` processes on this machine."""
    done = subprocess.run(command(argv, world_size), timeout=timeout, check=False)
    if done.returncode:
        raise SystemExit(f"the {world_size} GPT ranks failed (exit {done.returncode}); their "
                         "messages are above")


def run(*, engines: bool, out: Path, world_size: int = 2, timeout: float = 300,
        **options) -> dict:
    """This command in a child process (under torchrun when ``world_size`` > 1), with
    ``options`` as its flags (``steps=10`` is ``--steps 10``); the numbers it wrote."""
    flags = [f"--{name.replace('_', '-')}={value}" for name, value in options.items()]
    argv = ["--no-progress", f"--world-size={world_size}", f"--out={out}", *flags,
            *(["--engines"] if engines else [])]
    done = subprocess.run(command(argv, world_size), capture_output=True, text=True,
                          timeout=timeout, cwd=gpt.ROOT,
                          env={**os.environ, "PYTHONPATH": str(gpt.ROOT)})
    if done.returncode:
        raise RuntimeError(f"the GPT run failed (exit {done.returncode}); what it said:\n"
                           f"{done.stderr[-3000:]}")
    return json.loads(Path(out).read_text())


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    args = _arguments(argv)
    if args.comm_repeats and args.world_size < 2:
        raise SystemExit("--comm-repeats times the all-reduce between ranks: give "
                         "--world-size 2 or more")
    if "RANK" not in os.environ and args.world_size > 1:
        launch(argv, args.world_size)
        return
    torch = import_module("chapters.as_torch" if args.engines else "torch")
    if "RANK" in os.environ:
        torch.distributed.init_process_group("gloo")
    config = _config(args)
    run = train(torch, config, checkpoint=args.checkpoint, checkpoint_every=args.checkpoint_every,
                eval_every=args.eval_every, progress=not args.no_progress)
    history = run["history"]
    comm = None
    if args.comm_repeats and torch.distributed.is_initialized():
        comm = gpt_comm.comm_cost(torch, config, args.comm_repeats)
    if torch.distributed.is_initialized():
        torch.distributed.barrier()
    if "RANK" not in os.environ or os.environ["RANK"] == "0":
        label = "engines" if args.engines else "torch"
        tokens = config.batch * config.block * config.accumulate * run["world_size"]
        seconds = float(np.median(history["seconds"])) if history["seconds"] else float("nan")
        text = gpt.generate(torch, run["model"], config, "The graph ", args.sample)
        print(f"{label}: {len(history['loss'])} steps, loss {history['loss'][0]:.3f} -> "
              f"{history['loss'][-1]:.3f}, {tokens / seconds:,.0f} tokens/s "
              f"(median step {seconds * 1e3:.0f} ms, {run['world_size']} process(es))")
        print(f"sample: {text!r}")
        if args.figure:
            args.figure.parent.mkdir(parents=True, exist_ok=True)
            loss_figure({label: history}).write_html(args.figure, include_plotlyjs=True)
        if args.out:
            args.out.parent.mkdir(parents=True, exist_ok=True)
            numbers = {"history": history, "tokens_per_s": tokens / seconds, "sample": text,
                       "world_size": run["world_size"]}
            if comm is not None:
                numbers["comm"] = {name: vars(t) for name, t in comm.items()}
            args.out.write_text(json.dumps(numbers))
    if torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main()
