"""The capstone loop across processes or machines, under ``torchrun``.

One machine, two processes::

    torchrun --standalone --nproc_per_node=2 -m chapters.capstone.torchrun_loop

Two machines (run on each; ``--node_rank`` 0 on the machine at ``HOST``)::

    torchrun --nnodes=2 --node_rank=0 --nproc_per_node=1 \\
             --master_addr=HOST --master_port=29500 -m chapters.capstone.torchrun_loop

Each rank trains the engine model and the PyTorch model with the same loop as
the notebook (autocast, GradScaler, DDP) on its shard of every global batch;
rank 0 prints both global-batch loss curves, their largest relative
difference, and both models' accuracy on the held-out digits. ``--steps``,
``--amp-dtype`` and ``--sync`` choose the run. The engine computes on the CPU;
with NCCL (a GPU per rank) PyTorch's side trains on the GPU and the engine's
all-reduces go through NCCL.
"""

from __future__ import annotations

import argparse

import numpy as np

from . import engine_loop, torch_loop
from .recipe import SYNC_MODES, LoopConfig, accuracy, digits, held_out_digits


def mean_over_ranks(values, world_size: int) -> np.ndarray:
    import torch
    import torch.distributed as dist

    t = torch.tensor(values, dtype=torch.float64)
    backend_device = "cuda" if dist.get_backend() == "nccl" else "cpu"
    t = t.to(backend_device)
    dist.all_reduce(t)
    return (t / world_size).cpu().numpy()


def main(argv=None) -> None:
    import torch.distributed as dist

    from chapters.distributed.torch_transport import init_from_env

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=LoopConfig.steps)
    parser.add_argument("--amp-dtype", default="float16",
                        choices=["float32", "float16", "bfloat16"])
    parser.add_argument("--sync", default="ddp", choices=SYNC_MODES)
    args = parser.parse_args(argv)
    group = init_from_env()
    config = LoopConfig(steps=args.steps, amp_dtype=args.amp_dtype, sync=args.sync)
    data = digits(config.seed)
    engine = engine_loop.train(group, config, data)
    reference = torch_loop.train(group, config, data, device=str(group.device))
    e = mean_over_ranks(engine["loss"], group.world_size)
    t = mean_over_ranks(reference["loss"], group.world_size)
    if group.rank == 0:
        print(f"{group.world_size} ranks, {config.amp_dtype}, sync={config.sync}")
        print("step  engine    torch")
        for step in range(0, config.steps, max(1, config.steps // 10)):
            print(f"{step:4d}  {e[step]:.5f}  {t[step]:.5f}")
        print(f"largest relative difference: {np.max(np.abs(e - t) / t):.2e}")
        test = held_out_digits(config.seed)
        print(f"test accuracy: engine {accuracy(engine['weights'], test):.3f}, "
              f"torch {accuracy(reference['weights'], test):.3f}")
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
