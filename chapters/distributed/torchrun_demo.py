"""The same code on many machines: run this module under ``torchrun``.

One machine, two processes::

    torchrun --standalone --nproc_per_node=2 -m chapters.distributed.torchrun_demo

Two machines (run on each; ``--node_rank`` 0 on the machine at ``HOST``)::

    torchrun --nnodes=2 --node_rank=0 --nproc_per_node=1 \\
             --master_addr=HOST --master_port=29500 -m chapters.distributed.torchrun_demo

torchrun starts the processes and tells each one who it is through environment
variables (``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR``,
``MASTER_PORT``); :func:`~.torch_transport.init_from_env` reads them (``env://``)
and picks NCCL when there is a GPU, gloo otherwise. Everything after that —
our collectives, our DDP — is unchanged.
"""

from __future__ import annotations

import sys

import numpy as np


def say(line: str) -> None:
    """One write per line, so that the ranks' lines do not interleave."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def main() -> None:
    import torch.distributed as dist

    import chapters.autodiff.functional as F
    from chapters.autodiff import Tensor, manual_seed, nn, optim

    from .collectives import all_reduce
    from .ddp import DistributedDataParallel
    from .torch_transport import init_from_env

    group = init_from_env()
    r, p = group.rank, group.world_size
    x = np.full(4, float(r + 1))
    all_reduce(group, x)
    say(f"rank {r}/{p}: all_reduce of rank+1 -> {x[0]:g} (expected {p * (p + 1) / 2:g})")
    manual_seed(r)                           # different on purpose: DDP broadcasts rank 0's
    model = DistributedDataParallel(nn.Linear(3, 1), group)
    opt = optim.SGD(model.parameters(), lr=0.1)
    rng = np.random.default_rng(r)
    for _ in range(5):
        xs = rng.standard_normal((8, 3)).astype(np.float32)
        ys = xs.sum(axis=1, keepdims=True)
        opt.zero_grad()
        loss = F.mse_loss(model(Tensor(xs)), Tensor(ys))
        loss.backward()
        opt.step()
    weights = model.module.weight.data.reshape(-1)
    say(f"rank {r}/{p}: DDP weights after 5 steps {np.round(weights, 6).tolist()}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
