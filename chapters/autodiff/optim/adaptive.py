"""Optimizers with a per-coordinate step size (自适应学习率), torch.optim's names.

Each keeps a running measure of how large each coordinate's gradient has been
and divides the step by it (a root of squared gradients, or Adamax's running
maximum), so a coordinate with large gradients takes smaller steps. With ``g``
the gradient (plus ``lambda * p`` when ``weight_decay`` lambda is set), ``t``
the step number and ``lr`` the learning rate:

Adagrad (``lr_decay`` delta; the sum starts at ``initial_accumulator_value``)::

    s <- s + g^2                          (all gradients so far, never forgotten)
    p <- p - lr / (1 + (t - 1) * delta) * g / (sqrt(s) + eps)

RMSprop (smoothing ``alpha``): the sum becomes a moving average, so old
gradients fade and the step does not shrink to zero::

    v <- alpha * v + (1 - alpha) * g^2
    g_bar <- g_bar + (1 - alpha) * (g - g_bar);  a <- sqrt(v - g_bar^2)   (centered)
    a <- sqrt(v)                                                          (otherwise)
    b <- mu * b + g / (a + eps);  p <- p - lr * b          (``momentum`` mu > 0)
    p <- p - lr * g / (a + eps)                            (no momentum)

``centered`` divides by an estimate of the gradient's standard deviation
instead of its root mean square.

Adamax (Adam with the infinity norm: a decayed running maximum of ``|g|``)::

    m <- beta1 * m + (1 - beta1) * g
    u <- max(beta2 * u, |g| + eps)
    p <- p - lr / (1 - beta1^t) * m / u

RAdam (rectified Adam: plain momentum SGD while the variance estimate rests on
too few steps, ``rho_t <= 5``)::

    m, v as Adam;  rho_inf = 2 / (1 - beta2) - 1
    rho_t = rho_inf - 2 t beta2^t / (1 - beta2^t)
    r = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t))
    p <- p - m / (1 - beta1^t) * lr * sqrt(1 - beta2^t) / (sqrt(v) + eps) * r   (rho_t > 5)
    p <- p - m / (1 - beta1^t) * lr                                             (otherwise)

NAdam (Adam with Nesterov momentum: the step looks one momentum step ahead;
``momentum_decay`` psi warms the momentum coefficient up)::

    mu_t = beta1 * (1 - 0.5 * 0.96^(t psi));  P_t = mu_1 * ... * mu_t
    m, v as Adam;  d = sqrt(v / (1 - beta2^t)) + eps
    p <- p - lr (1 - mu_t) / (1 - P_t) * g / d - lr mu_{t+1} / (1 - P_t mu_{t+1}) * m / d

(``P_t``, the state's ``"mu_product"``, is a float32 number as in torch.)
For RAdam and NAdam, with ``decoupled_weight_decay=True`` the decay is
``p <- p * (1 - lr * lambda)`` (as AdamW) instead of ``lambda * p`` added to ``g``.

The arithmetic runs in the parameter's dtype in the order of torch's
single-tensor implementation, and the state keys are torch's (``"step"``,
``"sum"``, ``"square_avg"``, ``"momentum_buffer"``, ``"grad_avg"``,
``"exp_avg"``, ``"exp_inf"``, ``"exp_avg_sq"``, ``"mu_product"``), so a trajectory and a
``state_dict`` match torch.optim's (tested).
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


def _check_betas(name: str, lr: float, eps: float, betas) -> None:
    if lr < 0 or eps < 0 or not all(0 <= b < 1 for b in betas):
        raise ValueError(f"{name}: need lr >= 0, eps >= 0 and betas in [0, 1), got lr={lr}, "
                         f"eps={eps}, betas={betas}")


class Adamax(Optimizer):
    """Adamax (Kingma & Ba): Adam's second moment replaced by a running maximum."""

    def __init__(self, params: Iterable, lr: float = 2e-3, betas=(0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0):
        _check_betas("Adamax", lr, eps, betas)
        _check_non_negative("Adamax", weight_decay=weight_decay)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay))

    def _update(self, p, grad, state, group):
        beta1, beta2 = group["betas"]
        if not state:
            state.update(step=0, exp_avg=np.zeros_like(p.data), exp_inf=np.zeros_like(p.data))
        state["step"] += 1
        if group["weight_decay"]:
            grad = grad + group["weight_decay"] * p.data
        m, u = state["exp_avg"], state["exp_inf"]
        m += (1 - beta1) * (grad - m)        # torch's lerp
        u *= beta2
        np.maximum(u, np.abs(grad) + group["eps"], out=u)
        clr = group["lr"] / (1 - beta1 ** state["step"])
        p.data -= clr * (m / u)


class RAdam(Optimizer):
    """RAdam (Liu et al.): Adam whose adaptive step is scaled by the rectifier
    ``r``, and left out while the second-moment estimate is still unreliable."""

    def __init__(self, params: Iterable, lr: float = 1e-3, betas=(0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0,
                 decoupled_weight_decay: bool = False):
        _check_betas("RAdam", lr, eps, betas)
        _check_non_negative("RAdam", weight_decay=weight_decay)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay,
                                      decoupled_weight_decay=decoupled_weight_decay))

    def _update(self, p, grad, state, group):
        lr, (beta1, beta2) = group["lr"], group["betas"]
        if not state:
            state.update(step=0, exp_avg=np.zeros_like(p.data),
                         exp_avg_sq=np.zeros_like(p.data))
        state["step"] += 1
        t = state["step"]
        grad = _decayed(p, grad, group)
        m, v = _adam_moments(state, grad, beta1, beta2)
        correction2 = 1 - beta2**t
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * t * beta2**t / correction2
        step = m / (1 - beta1**t) * lr
        if rho_t > 5.0:
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                    / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            step = step * (correction2**0.5 / (np.sqrt(v) + group["eps"])) * rect
        p.data -= step


def _decayed(p, grad: np.ndarray, group: dict) -> np.ndarray:
    """Weight decay: decoupled (``p`` shrinks in place) or added to the gradient."""
    lr, wd = group["lr"], group["weight_decay"]
    if wd and group["decoupled_weight_decay"]:
        p.data *= 1 - lr * wd
    elif wd:
        grad = grad + wd * p.data
    return grad


def _adam_moments(state: dict, grad: np.ndarray, beta1: float, beta2: float):
    """Adam's running averages of ``g`` and ``g^2``, updated in place."""
    m, v = state["exp_avg"], state["exp_avg_sq"]
    m += (1 - beta1) * (grad - m)        # torch's lerp
    v *= beta2
    v += (1 - beta2) * grad * grad
    return m, v


class NAdam(Optimizer):
    """NAdam (Dozat): Adam with Nesterov momentum."""

    def __init__(self, params: Iterable, lr: float = 2e-3, betas=(0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False):
        _check_betas("NAdam", lr, eps, betas)
        _check_non_negative("NAdam", weight_decay=weight_decay, momentum_decay=momentum_decay)
        super().__init__(params, dict(lr=lr, betas=tuple(betas), eps=eps,
                                      weight_decay=weight_decay, momentum_decay=momentum_decay,
                                      decoupled_weight_decay=decoupled_weight_decay))

    def _update(self, p, grad, state, group):
        lr, (beta1, beta2), psi = group["lr"], group["betas"], group["momentum_decay"]
        if not state:
            state.update(step=0, mu_product=np.float32(1.0), exp_avg=np.zeros_like(p.data),
                         exp_avg_sq=np.zeros_like(p.data))
        state["step"] += 1
        t = state["step"]
        grad = _decayed(p, grad, group)
        mu = beta1 * (1.0 - 0.5 * 0.96 ** (t * psi))
        mu_next = beta1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * psi))
        state["mu_product"] = np.float32(state["mu_product"] * np.float32(mu))
        product = float(state["mu_product"])
        m, v = _adam_moments(state, grad, beta1, beta2)
        denom = np.sqrt(v / (1 - beta2**t)) + group["eps"]
        p.data -= lr * (1.0 - mu) / (1.0 - product) * (grad / denom)
        p.data -= lr * mu_next / (1.0 - product * mu_next) * (m / denom)
