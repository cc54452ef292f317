"""Data-parallel training with gradient accumulation, written as ordinary torch code.

With PyTorch::

    torchrun --standalone --nproc_per_node=2 tests/programs/ddp_no_sync.py

On the course's engines, unchanged::

    torchrun --standalone --nproc_per_node=2 -m chapters.as_torch tests/programs/ddp_no_sync.py

Each rank starts from its own random init (DDP must broadcast rank 0's) and
sees its own data. Every step accumulates ACCUMULATE micro-batches, all but
the last under ``no_sync()``. The script checks itself: inside ``no_sync``
the ranks' gradients differ (nothing was exchanged); after the synchronized
backward they are identical on every rank and equal to the mean over ranks of
the locally accumulated gradients; the replicas' parameters never drift
apart. Each rank prints one summary line.
"""

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

STEPS, ACCUMULATE, BATCH = 4, 3, 8


def spread(t):
    """Largest difference of ``t`` between any two ranks (0 when all agree)."""
    hi, lo = t.detach().clone(), t.detach().clone()
    dist.all_reduce(hi, op=dist.ReduceOp.MAX)
    dist.all_reduce(lo, op=dist.ReduceOp.MIN)
    return (hi - lo).abs().max().item()


def main():
    dist.init_process_group(backend="gloo")          # env:// from torchrun
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(rank)                          # replicas start apart on purpose
    net = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
    model = DDP(net)
    shadow = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
    shadow.load_state_dict(net.state_dict())         # a local copy that never communicates
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    torch.manual_seed(100 + rank)                    # each rank its own data
    start_spread = max(spread(p) for p in model.parameters())
    inside, after, versus_mean, losses = 0.0, 0.0, 0.0, []
    for _ in range(STEPS):
        opt.zero_grad()
        shadow.zero_grad()
        for micro in range(ACCUMULATE):
            x = torch.randn(BATCH, 4)
            y = x.sum(dim=1, keepdim=True)
            (((shadow(x) - y) ** 2).mean() / ACCUMULATE).backward()
            if micro < ACCUMULATE - 1:
                with model.no_sync():                # forward and backward inside, as torch asks
                    loss = ((model(x) - y) ** 2).mean() / ACCUMULATE
                    loss.backward()
                inside = max(inside, max(spread(p.grad) for p in model.parameters()))
            else:
                loss = ((model(x) - y) ** 2).mean() / ACCUMULATE
                loss.backward()
            losses.append(loss.item() * ACCUMULATE)
        after = max(after, max(spread(p.grad) for p in model.parameters()))
        for p, local in zip(model.parameters(), shadow.parameters(), strict=True):
            mean = local.grad.detach().clone()
            dist.all_reduce(mean)
            versus_mean = max(versus_mean, (p.grad - mean / world).abs().max().item())
        opt.step()
        shadow.load_state_dict(net.state_dict())
    drift = max(spread(p) for p in model.parameters())
    print(f"rank {rank}/{world}: start spread {start_spread:.3g} -> after DDP {drift:.3g}; "
          f"grad spread inside no_sync {inside:.3g}, after sync {after:.3g}; "
          f"synced grad vs mean of local grads {versus_mean:.3g}; "
          f"loss {sum(losses[:ACCUMULATE]) / ACCUMULATE:.4f} -> "
          f"{sum(losses[-ACCUMULATE:]) / ACCUMULATE:.4f}", flush=True)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
