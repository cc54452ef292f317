"""Optimizers with a per-coordinate step size (自适应学习率), torch.optim's names.

Each keeps a running measure of how large each coordinate's gradient has been
and divides the step by its square root, so a coordinate with large gradients
takes smaller steps. With ``g`` the gradient (plus ``lambda * p`` when
``weight_decay`` lambda is set), ``t`` the step number and ``lr`` the learning
rate:

Adagrad (``lr_decay`` delta; the sum starts at ``initial_accumulator_value``)::

    s <- s + g^2                          (all gradients so far, never forgotten)
    p <- p - lr / (1 + (t - 1) * delta) * g / (sqrt(s) + eps)

RMSprop (smoothing ``alpha``): the sum becomes a moving average, so old
gradients fade and the step does not shrink to zero::

    v <- alpha * v + (1 - alpha) * g^2
    a <- g_bar <- g_bar + (1 - alpha) * (g - g_bar);  sqrt(v - g_bar^2)   (centered)
    a <- sqrt(v)                                                           (otherwise)
    b <- mu * b + g / (a + eps);  p <- p - lr * b          (``momentum`` mu > 0)
    p <- p - lr * g / (a + eps)                            (no momentum)

``centered`` divides by an estimate of the gradient's standard deviation
instead of its root mean square. The arithmetic runs in the parameter's dtype in
the order of torch's single-tensor implementation, and the state keys are
torch's (``"step"``, ``"sum"``, ``"square_avg"``, ``"momentum_buffer"``,
``"grad_avg"``), so a trajectory and a ``state_dict`` match torch.optim's (tested).
Not implemented: ``maximize``, ``foreach``/``fused``, ``capturable`` and sparse
gradients.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from .optimizer import Optimizer


def _check_non_negative(name: str, **values) -> None:
    bad = {k: v for k, v in values.items() if v < 0}
    if bad:
        raise ValueError(f"{name}: {', '.join(f'{k}={v}' for k, v in bad.items())} must be "
                         ">= 0")


class Adagrad(Optimizer):
    """Adagrad (Duchi et al.): divide by the root of the sum of all squared gradients."""

    def __init__(self, params: Iterable, lr: float = 1e-2, lr_decay: float = 0.0,
                 weight_decay: float = 0.0, initial_accumulator_value: float = 0.0,
                 eps: float = 1e-10):
        _check_non_negative("Adagrad", lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
                            initial_accumulator_value=initial_accumulator_value, eps=eps)
        super().__init__(params, dict(lr=lr, lr_decay=lr_decay, eps=eps,
                                      weight_decay=weight_decay,
                                      initial_accumulator_value=initial_accumulator_value))

    def add_param_group(self, group: dict) -> None:
        """As the base class, then the sum starts at the group's
        ``initial_accumulator_value`` at once (torch fills it on construction)."""
        super().add_param_group(group)
        group = self.param_groups[-1]
        for p in group["params"]:
            self.state[p] = {"step": 0,
                             "sum": np.full_like(p.data, group["initial_accumulator_value"])}

    def _update(self, p, grad, state, group):
        state["step"] += 1
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * p.data
        clr = group["lr"] / (1 + (state["step"] - 1) * group["lr_decay"])
        state["sum"] += grad * grad
        std = np.sqrt(state["sum"]) + group["eps"]
        p.data -= clr * (grad / std)


class RMSprop(Optimizer):
    """RMSprop (Hinton): divide by the root of a moving average of squared gradients."""

    def __init__(self, params: Iterable, lr: float = 1e-2, alpha: float = 0.99,
                 eps: float = 1e-8, weight_decay: float = 0.0, momentum: float = 0.0,
                 centered: bool = False):
        _check_non_negative("RMSprop", lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                            momentum=momentum)
        super().__init__(params, dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps,
                                      centered=centered, weight_decay=weight_decay))

    def _update(self, p, grad, state, group):
        alpha, mu = group["alpha"], group["momentum"]
        if not state:
            state["step"] = 0
            state["square_avg"] = np.zeros_like(p.data)
            if mu > 0:
                state["momentum_buffer"] = np.zeros_like(p.data)
            if group["centered"]:
                state["grad_avg"] = np.zeros_like(p.data)
        state["step"] += 1
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * p.data
        v = state["square_avg"]
        v *= alpha
        v += (1 - alpha) * grad * grad
        if group["centered"]:
            g_bar = state["grad_avg"]
            g_bar += (1 - alpha) * (grad - g_bar)   # torch's lerp
            avg = np.sqrt(v - g_bar * g_bar)
        else:
            avg = np.sqrt(v)
        avg += group["eps"]
        if mu > 0:
            buf = state["momentum_buffer"]
            buf *= mu
            buf += grad / avg
            p.data -= group["lr"] * buf
        else:
            p.data -= group["lr"] * (grad / avg)
