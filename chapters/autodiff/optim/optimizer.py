"""Optimizers (优化器) with torch.optim's names, hyper-parameters and update order.

An optimizer holds ``param_groups`` (a list of dicts: ``"params"`` plus that
group's hyper-parameters, so one model can train its parts at different learning
rates) and ``state`` (a dict keyed by parameter: momentum buffers, Adam moments,
step counts). ``step()`` reads each ``p.grad`` and updates ``p.data`` **in place**
under ``no_grad`` — an update is not part of any graph. The formulas, with
``g`` the gradient, ``t`` the step number and ``lr`` the learning rate:

SGD (``momentum`` mu, ``dampening`` tau, ``weight_decay`` lambda)::

    g <- g + lambda * p
    b <- g                                (first step)
    b <- mu * b + (1 - tau) * g           (later steps)
    g <- g + mu * b  if nesterov else  b
    p <- p - lr * g

Adam (``betas`` = (beta1, beta2))::

    g <- g + lambda * p                   (Adam: L2 penalty added to the gradient)
    m <- beta1 * m + (1 - beta1) * g
    v <- beta2 * v + (1 - beta2) * g^2
    p <- p - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)

AdamW is Adam with *decoupled* weight decay: ``p <- p * (1 - lr * lambda)``
before the Adam step, instead of adding ``lambda * p`` to ``g``.
The arithmetic runs in the parameter's dtype, in the same order as torch's
single-tensor ("for-loop") implementation, so trajectories agree with torch.optim
to float rounding over many steps (tested). Not implemented: torch's ``amsgrad``,
``maximize``, ``foreach``/``fused`` and learning-rate tensors — they change
speed or add variants, not the algorithm taught here.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterable

import numpy as np

from ..grad_mode import no_grad
from ..tensor import Tensor


class Optimizer:
    """Base class: parameter groups, per-parameter state, ``zero_grad`` and state dicts."""

    def __init__(self, params, defaults: dict):
        self.defaults = dict(defaults)
        self.state: dict[Tensor, dict] = {}
        self.param_groups: list[dict] = []
        groups = list(params)
        if not groups:
            raise ValueError(f"{type(self).__name__} got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, group: dict) -> None:
        params = group["params"]
        params = [params] if isinstance(params, Tensor) else list(params)
        for p in params:
            if not isinstance(p, Tensor) or not p.requires_grad:
                raise ValueError(f"{type(self).__name__} can only optimize leaf tensors that "
                                 f"require grad, got {type(p).__name__} "
                                 f"(requires_grad={getattr(p, 'requires_grad', None)})")
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        full = {**self.defaults, **group, "params": params}
        self.param_groups.append(full)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Drop (``set_to_none=True``, torch's default) or zero every gradient."""
        for group in self.param_groups:
            for p in group["params"]:
                if set_to_none:
                    p.grad = None
                elif p.grad is not None:
                    p.grad.data[...] = 0

    def step(self) -> None:
        self._opt_called = True  # a scheduler checks it was stepped after the optimizer
        with no_grad():
            for group in self.param_groups:
                for p in group["params"]:
                    if p.grad is not None:
                        self._update(p, p.grad.data, self.state.setdefault(p, {}), group)
                        _bump_version(p)

    def _update(self, p: Tensor, grad: np.ndarray, state: dict, group: dict) -> None:
        raise NotImplementedError

    # ------------------------------------------------------------ state dicts

    def state_dict(self) -> dict:
        """``{"state": {index: {...}}, "param_groups": [{..., "params": [indices]}]}``:
        parameters are replaced by their position, as torch does, so the dict
        can be loaded into a new optimizer over a new (identical) model."""
        index = {}
        groups = []
        for group in self.param_groups:
            ids = []
            for p in group["params"]:
                index.setdefault(id(p), len(index))
                ids.append(index[id(p)])
            groups.append({**{k: v for k, v in group.items() if k != "params"}, "params": ids})
        state = {index[id(p)]: copy.deepcopy(s) for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict) -> None:
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups) or any(
                len(g["params"]) != len(own["params"])
                for g, own in zip(groups, self.param_groups, strict=True)):
            raise ValueError("loaded state_dict has a different number of parameter groups or "
                             "parameters than this optimizer")
        by_index = {}
        for saved, own in zip(groups, self.param_groups, strict=True):
            by_index.update(zip(saved["params"], own["params"], strict=True))
            own.update({k: v for k, v in saved.items() if k != "params"})
        self.state = {by_index[i]: copy.deepcopy(s) for i, s in state_dict["state"].items()}

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {k}: {v}" for k, v in sorted(group.items()) if k != "params"]
        return "\n".join(lines + [")"])


def _bump_version(p: Tensor) -> None:
    """An update is an in-place op, so it bumps the version counter (as torch's
    ``p.add_()`` would): a graph that saved ``p`` before the step then refuses
    to backward with stale values instead of silently using the new ones."""
    p._vbox[0] += 1


class SGD(Optimizer):
    def __init__(self, params: Iterable, lr: float = 1e-3, momentum: float = 0.0,
                 dampening: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False):
        if lr < 0 or momentum < 0 or weight_decay < 0:
            raise ValueError(f"SGD: lr, momentum and weight_decay must be >= 0, got lr={lr}, "
                             f"momentum={momentum}, weight_decay={weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("SGD: Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening,
                                      weight_decay=weight_decay, nesterov=nesterov))

    def _update(self, p, grad, state, group):
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * p.data
        mu = group["momentum"]
        if mu:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = grad.copy()
            else:
                buf *= mu
                buf += (1 - group["dampening"]) * grad
            grad = grad + mu * buf if group["nesterov"] else buf
        p.data -= group["lr"] * grad


class Adam(Optimizer):
    decoupled_weight_decay = False

    def __init__(self, params: Iterable, lr: float = 1e-3, betas=(0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0):
        if lr < 0 or eps < 0 or not all(0 <= b < 1 for b in betas):
            raise ValueError(f"{type(self).__name__}: need lr >= 0, eps >= 0 and betas in "
                             f"[0, 1), got lr={lr}, eps={eps}, betas={betas}")
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay))

    def _update(self, p, grad, state, group):
        lr, (beta1, beta2), eps, wd = group["lr"], group["betas"], group["eps"], group[
            "weight_decay"]
        if not state:
            state["step"] = 0
            state["exp_avg"] = np.zeros_like(p.data)
            state["exp_avg_sq"] = np.zeros_like(p.data)
        state["step"] += 1
        t = state["step"]
        if wd and self.decoupled_weight_decay:
            p.data *= 1 - lr * wd
        elif wd:
            grad = grad + wd * p.data
        m, v = state["exp_avg"], state["exp_avg_sq"]
        m += (1 - beta1) * (grad - m)        # torch's lerp: m + (1 - beta1) * (g - m)
        v *= beta2
        v += (1 - beta2) * grad * grad
        step_size = lr / (1 - beta1**t)
        denom = np.sqrt(v) / math.sqrt(1 - beta2**t) + eps
        p.data -= step_size * (m / denom)


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter); torch's default
    ``weight_decay=0.01``."""

    decoupled_weight_decay = True

    def __init__(self, params: Iterable, lr: float = 1e-3, betas=(0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.01):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)
