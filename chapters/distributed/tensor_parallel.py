"""Tensor (model) parallelism (张量并行), Megatron-LM style.

A linear layer ``y = x W^T + b`` (``W``: ``[out, in]``, torch's layout) can be
split over ``p`` ranks in two ways:

* **column-parallel** — each rank holds ``out/p`` rows of ``W`` (output
  features): ``y_r = x W_r^T + b_r``. Forward needs no communication (every
  rank has all of ``x``) and leaves the output *split* by feature. In backward,
  ``dL/dx = sum_r dL/dy_r W_r`` is a sum over ranks: an **all-reduce**.
* **row-parallel** — each rank holds ``in/p`` columns of ``W`` and the matching
  slice of its input: ``y = sum_r x_r W_r^T + b``, an **all-reduce** in forward;
  ``dL/dx_r = dL/dy W_r`` needs no communication in backward.

Megatron's MLP puts the two back to back — column-parallel, elementwise
activation (it acts feature by feature, so it can run on the split output),
row-parallel — so the whole MLP needs **one all-reduce in forward and one in
backward**, done by a pair of conjugate operators:

* ``copy_to_parallel`` (Megatron's *f*): identity in forward, all-reduce in backward;
* ``reduce_from_parallel`` (Megatron's *g*): all-reduce in forward, identity in backward.

Each all-reduce moves the *activations* (``batch x tokens x hidden`` values),
not the weights — per layer, in both directions. That is far more traffic per
step than data parallelism's once-per-step gradient all-reduce for small
batches... and it sits on the critical path, which is why tensor parallelism
is kept inside one machine on its fastest links. (The source text calls this
communication "frequent but small"; the chapter measures it.)
"""

from __future__ import annotations

import numpy as np

import chapters.autodiff.functional as F
from chapters.autodiff import Tensor
from chapters.autodiff.nn import Linear, Module, Parameter

from .collectives import ReduceOp, all_reduce
from .transport import DistributedError, Group


def copy_to_parallel(x: Tensor, group: Group) -> Tensor:
    """Megatron's *f*: the value passes unchanged; the gradient is summed over ranks.

    Every rank uses the same ``x``, and each rank's part of the model
    contributes a partial ``dL/dx``; the true gradient is their sum. (An input
    that needs no gradient, like the data, passes through untouched.)"""
    if not x.requires_grad:
        return x
    y = x * 1.0

    def sum_gradients(grad: Tensor) -> Tensor:
        return Tensor(all_reduce(group, np.array(grad.data, copy=True), ReduceOp.SUM))

    y.register_hook(sum_gradients)
    return y


def reduce_from_parallel(x: Tensor, group: Group) -> Tensor:
    """Megatron's *g*: the value is summed over ranks; the gradient passes unchanged.

    Written as ``(x - x.detach()) + total``: the first term is exactly zero in
    value but carries ``x``'s gradient (identity), the second is the all-reduced
    sum, a constant. So every rank gets bit-identical values."""
    total = all_reduce(group, np.array(x.data, copy=True), ReduceOp.SUM)
    return (x - x.detach()) + Tensor(total)


def _split(n: int, p: int, what: str) -> int:
    if n % p:
        raise DistributedError(f"{what}: {n} features cannot be split evenly over {p} ranks; "
                               "choose a size divisible by the tensor-parallel world size")
    return n // p


class ColumnParallelLinear(Module):
    """``out_features`` split over the ranks; input replicated, output split."""

    def __init__(self, in_features: int, out_features: int, group: Group, bias: bool = True):
        super().__init__()
        object.__setattr__(self, "group", group)
        local = _split(out_features, group.world_size, "ColumnParallelLinear")
        self.in_features, self.out_features, self.local_out = in_features, out_features, local
        self.weight = Parameter(np.zeros((local, in_features), np.float32))
        self.register_parameter("bias", Parameter(np.zeros(local, np.float32)) if bias else None)

    @classmethod
    def from_linear(cls, full: Linear, group: Group) -> ColumnParallelLinear:
        """This rank's slice of an unsplit ``Linear`` (rows ``rank*out/p ...``)."""
        layer = cls(full.in_features, full.out_features, group, bias=full.bias is not None)
        rows = slice(group.rank * layer.local_out, (group.rank + 1) * layer.local_out)
        layer.weight = Parameter(np.array(full.weight.data[rows], copy=True))
        if full.bias is not None:
            layer.bias = Parameter(np.array(full.bias.data[rows], copy=True))
        return layer

    def forward(self, x: Tensor) -> Tensor:
        return F.linear(copy_to_parallel(x, self.group), self.weight, self.bias)


class RowParallelLinear(Module):
    """``in_features`` split over the ranks; input split, output summed (replicated)."""

    def __init__(self, in_features: int, out_features: int, group: Group, bias: bool = True):
        super().__init__()
        object.__setattr__(self, "group", group)
        local = _split(in_features, group.world_size, "RowParallelLinear")
        self.in_features, self.out_features, self.local_in = in_features, out_features, local
        self.weight = Parameter(np.zeros((out_features, local), np.float32))
        self.register_parameter("bias", Parameter(np.zeros(out_features, np.float32))
                                if bias else None)

    @classmethod
    def from_linear(cls, full: Linear, group: Group) -> RowParallelLinear:
        """This rank's slice of an unsplit ``Linear`` (columns ``rank*in/p ...``)."""
        layer = cls(full.in_features, full.out_features, group, bias=full.bias is not None)
        cols = slice(group.rank * layer.local_in, (group.rank + 1) * layer.local_in)
        layer.weight = Parameter(np.array(full.weight.data[:, cols], copy=True))
        if full.bias is not None:
            layer.bias = Parameter(np.array(full.bias.data, copy=True))
        return layer

    def forward(self, x: Tensor) -> Tensor:
        # the bias is added once, after the sum (adding it on every rank would count it p times)
        y = reduce_from_parallel(x @ self.weight.T, self.group)
        return y if self.bias is None else y + self.bias


class ParallelMLP(Module):
    """``Linear -> activation -> Linear`` split Megatron-style: one all-reduce
    in forward, one in backward. Build it from an unsplit pair of layers with
    :meth:`from_layers` to compare with the unsplit model."""

    def __init__(self, fc1: ColumnParallelLinear, activation: Module, fc2: RowParallelLinear):
        super().__init__()
        self.fc1, self.act, self.fc2 = fc1, activation, fc2

    @classmethod
    def from_layers(cls, fc1: Linear, activation: Module, fc2: Linear, group: Group):
        return cls(ColumnParallelLinear.from_linear(fc1, group), activation,
                   RowParallelLinear.from_linear(fc2, group))

    def forward(self, x: Tensor) -> Tensor:
        return self.fc2(self.act(self.fc1(x)))
