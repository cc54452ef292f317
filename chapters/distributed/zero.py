"""ZeRO (零冗余优化器): data parallelism without keeping N copies of everything.

Plain data parallelism with Adam in mixed precision keeps, on **every** rank,
for each of the model's ``Psi`` parameters: fp16 parameters (2 bytes), fp16
gradients (2), and fp32 optimizer state — master weights, Adam's ``m`` and
``v`` (4 + 4 + 4 = 12): **16 bytes per parameter**, identical on all ``N``
ranks. ZeRO (Rajbhandari et al., 2020) splits the flat parameter vector into
``N`` shards, rank ``r`` owning shard ``r``, and removes the redundancy stage
by stage (bytes per parameter per rank):

========  ==============================================  ===================
stage     what is sharded                                  bytes / param
========  ==============================================  ===================
0 (DDP)   nothing                                          2 + 2 + 12 = 16
1         optimizer state: each rank updates its shard      2 + 2 + 12/N
2         + gradients: reduce-scatter instead of all-reduce 2 + (2 + 12)/N
3         + parameters: all-gathered when needed            (2 + 2 + 12)/N
========  ==============================================  ===================

Communication stays at DDP's volume for stages 1 and 2: all-reduce =
reduce-scatter + all-gather, and ZeRO just does the update *between* the two
halves (reduce-scatter gradients -> update own shard -> all-gather parameters).
Stage 3 gathers parameters for forward and again for backward in the real
thing (1.5x DDP's traffic).

:class:`ZeroAdam` implements all four stages with one Adam (the formula of
``torch.optim.Adam``) on the flat vector, so stages 1-3 give bit-identical
parameters to stage 0 (the same sums in the same order: our ring all-reduce
*is* reduce-scatter followed by all-gather). Simplification, on purpose: stage
3 gathers the whole model once per step before forward and keeps it until the
step (the engine's saved tensors hold the weights through backward), so its
*persistent* state between steps is ``16/N`` bytes per parameter while its peak
holds the full fp16 parameters; real ZeRO-3 gathers layer by layer and frees
each layer after use. Stage 2's full gradient likewise exists during backward
here (real ZeRO-2 reduce-scatters bucket by bucket as gradients appear).
"""

from __future__ import annotations

import math

import numpy as np

from chapters.autodiff import Tensor
from chapters.autodiff.nn import Module

from .collectives import ReduceOp, all_gather, all_reduce, broadcast, reduce_scatter
from .transport import DistributedError, Group


class ZeroAdam:
    """Data-parallel training with Adam and ZeRO stage 0, 1, 2 or 3.

    ``model(x)`` runs the module (gathering the parameters first at stage 3);
    after ``loss.backward()``, ``step()`` averages the gradients over ranks and
    updates. Parameters and gradients keep the module's dtype (fp16 for the
    paper's setting, ``module.half()``); master weights and Adam state are fp32.
    """

    def __init__(self, module: Module, group: Group, stage: int, lr: float = 1e-3,
                 betas=(0.9, 0.999), eps: float = 1e-8):
        if stage not in (0, 1, 2, 3):
            raise ValueError(f"ZeroAdam: stage must be 0, 1, 2 or 3, got {stage}")
        self.module, self.group, self.stage = module, group, stage
        self.lr, self.betas, self.eps, self.t = lr, betas, eps, 0
        self.params = [p for p in module.parameters() if p.requires_grad]
        self.shapes = [p.data.shape for p in self.params]
        self.dtype = self.params[0].data.dtype
        self.numel = sum(p.data.size for p in self.params)
        n = group.world_size
        self.shard = math.ceil(self.numel / n)
        self.lo, self.hi = group.rank * self.shard, (group.rank + 1) * self.shard
        flat = self._flatten([p.data for p in self.params])
        broadcast(group, flat, src=0)                       # same start everywhere
        master = flat.astype(np.float32)
        master = master[self.lo:self.hi].copy() if stage > 0 else master[:self.numel]
        self.master, self.m, self.v = master, np.zeros_like(master), np.zeros_like(master)
        self.grad_shard = None
        self.param_shard = None
        if stage == 3:
            self.param_shard = flat[self.lo:self.hi].copy()
            self._free_params()
        else:
            self._scatter_into_params(flat)

    # ------------------------------------------------------------ flat views

    def _flatten(self, arrays) -> np.ndarray:
        flat = np.zeros(self.shard * self.group.world_size, dtype=self.dtype)
        start = 0
        for a in arrays:
            flat[start:start + a.size] = a.reshape(-1)
            start += a.size
        return flat

    def _scatter_into_params(self, flat: np.ndarray) -> None:
        start = 0
        for p, shape in zip(self.params, self.shapes, strict=True):
            size = int(np.prod(shape))
            p.data = flat[start:start + size].reshape(shape).copy()
            start += size

    def _free_params(self) -> None:
        for p in self.params:
            p.data = np.zeros(0, dtype=self.dtype)
            p.grad = None

    def gather_params(self) -> None:
        """Stage 3: all-gather the parameter shards into the module's parameters."""
        shards = all_gather(self.group, self.param_shard)
        self._scatter_into_params(np.concatenate(shards))

    def __call__(self, *args, **kwargs):
        if self.stage == 3 and self.params[0].data.size == 0:
            self.gather_params()
        return self.module(*args, **kwargs)

    # ------------------------------------------------------------ the step

    def step(self) -> None:
        missing = [i for i, p in enumerate(self.params) if p.grad is None]
        if missing:
            raise DistributedError(f"ZeroAdam.step: parameters {missing[:5]} have no gradient; "
                                   "call loss.backward() first (every parameter must be used)")
        grads = self._flatten([p.grad.data for p in self.params])
        if self.stage <= 1:
            all_reduce(self.group, grads, ReduceOp.AVG)     # every rank gets every gradient
            for p, g in zip(self.params, self._unflatten(grads), strict=True):
                p.grad = Tensor(g)
            mine = grads[:self.numel] if self.stage == 0 else grads[self.lo:self.hi]
        else:
            mine = reduce_scatter(self.group, grads, ReduceOp.AVG)
            self.grad_shard = mine                             # the full gradient is dropped
            for p in self.params:
                p.grad = None
        self._adam(mine.astype(np.float32))
        updated = self.master.astype(self.dtype)
        if self.stage == 0:
            self._scatter_into_params(updated)
        elif self.stage in (1, 2):
            self._scatter_into_params(np.concatenate(all_gather(self.group, updated)))
        else:
            self.param_shard = updated
            self._free_params()

    def _unflatten(self, flat: np.ndarray) -> list[np.ndarray]:
        out, start = [], 0
        for shape in self.shapes:
            size = int(np.prod(shape))
            out.append(flat[start:start + size].reshape(shape).copy())
            start += size
        return out

    def _adam(self, g: np.ndarray) -> None:
        """``torch.optim.Adam``'s update on this rank's (shard of the) master weights."""
        b1, b2 = self.betas
        self.t += 1
        self.m *= b1
        self.m += (1 - b1) * g
        self.v *= b2
        self.v += (1 - b2) * g * g
        step_size = self.lr / (1 - b1 ** self.t)
        denom = np.sqrt(self.v) / math.sqrt(1 - b2 ** self.t) + self.eps
        self.master -= (step_size * self.m / denom).astype(np.float32)

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    # ------------------------------------------------------------ accounting

    def full_parameters(self) -> np.ndarray:
        """The whole (unpadded) parameter vector, in the model dtype (gathers at stage 3)."""
        if self.stage == 3:
            return np.concatenate(all_gather(self.group, self.param_shard))[:self.numel]
        return self._flatten([p.data for p in self.params])[:self.numel]

    def bytes_per_rank(self) -> dict[str, int]:
        """Bytes this rank holds between steps, by kind (what the table above counts)."""
        if self.stage == 3:
            params = self.param_shard.nbytes
        else:
            params = sum(p.data.nbytes for p in self.params)
        if self.stage <= 1:
            grads = sum(p.grad.data.nbytes for p in self.params if p.grad is not None)
        else:
            grads = 0 if self.grad_shard is None else self.grad_shard.nbytes
        optimizer = self.master.nbytes + self.m.nbytes + self.v.nbytes
        return {"parameters": params, "gradients": grads, "optimizer state": optimizer}


def paper_bytes_per_param(stage: int, n: int, param_bytes: int = 2, grad_bytes: int = 2,
                          k: int = 12) -> float:
    """The ZeRO paper's memory per parameter per rank, for stage 0..3 on ``n`` ranks."""
    return {0: param_bytes + grad_bytes + k,
            1: param_bytes + grad_bytes + k / n,
            2: param_bytes + (grad_bytes + k) / n,
            3: (param_bytes + grad_bytes + k) / n}[stage]
