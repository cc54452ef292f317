"""Schedules with a closed form in the epoch t: Lambda, Step, MultiStep,
Exponential, Constant, Linear and CosineAnnealing."""

from __future__ import annotations

import math
from bisect import bisect_right
from collections import Counter

from .base import LRScheduler


class LambdaLR(LRScheduler):
    """``lr_t = base_lr * lr_lambda(t)``; one function, or one per param group.
    The functions are not part of ``state_dict`` (code is not state)."""

    _not_state = ("optimizer", "lr_lambdas")

    def __init__(self, optimizer, lr_lambda, last_epoch: int = -1):
        groups = len(optimizer.param_groups)
        if isinstance(lr_lambda, list | tuple):
            if len(lr_lambda) != groups:
                raise ValueError(f"Expected {groups} lr_lambdas, but got {len(lr_lambda)}: "
                                 "give one function per param group, or a single one")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * groups
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        return [base * f(self.last_epoch) for f, base in zip(self.lr_lambdas, self.base_lrs,
                                                             strict=True)]


class StepLR(LRScheduler):
    """``lr_t = base_lr * gamma ** (t // step_size)``: a drop every ``step_size`` epochs."""

    def __init__(self, optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1):
        self.step_size, self.gamma = step_size, gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0 or self.last_epoch % self.step_size:
            return self._current()
        return [lr * self.gamma for lr in self._current()]

    def _closed_form_lr(self):
        return [base * self.gamma ** (self.last_epoch // self.step_size) for base in self.base_lrs]


class MultiStepLR(LRScheduler):
    """``lr_t = base_lr * gamma ** (number of milestones <= t)``."""

    def __init__(self, optimizer, milestones, gamma: float = 0.1, last_epoch: int = -1):
        self.milestones, self.gamma = Counter(milestones), gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        drops = self.milestones[self.last_epoch]  # a repeated milestone drops twice
        return [lr * self.gamma ** drops if drops else lr for lr in self._current()]

    def _closed_form_lr(self):
        passed = bisect_right(sorted(self.milestones.elements()), self.last_epoch)
        return [base * self.gamma ** passed for base in self.base_lrs]


class ExponentialLR(LRScheduler):
    """``lr_t = base_lr * gamma ** t``."""

    def __init__(self, optimizer, gamma: float, last_epoch: int = -1):
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        return self._current() if self._is_initial else [lr * self.gamma for lr in self._current()]

    def _closed_form_lr(self):
        return [base * self.gamma ** self.last_epoch for base in self.base_lrs]


class ConstantLR(LRScheduler):
    """``lr_t = base_lr * factor`` for ``t < total_iters``, then ``base_lr``."""

    def __init__(self, optimizer, factor: float = 1.0 / 3, total_iters: int = 5,
                 last_epoch: int = -1):
        if not 0 <= factor <= 1:
            raise ValueError(f"ConstantLR: factor must be in [0, 1], got {factor}")
        self.factor, self.total_iters = factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0:
            return [lr * self.factor for lr in self._current()]
        if self.last_epoch != self.total_iters:
            return self._current()
        return [lr * (1.0 / self.factor) for lr in self._current()]

    def _closed_form_lr(self):
        done = self.last_epoch >= self.total_iters
        return [base * (self.factor + done * (1 - self.factor)) for base in self.base_lrs]


class LinearLR(LRScheduler):
    """``lr_t = base_lr * (s + (e - s) * min(t, total_iters) / total_iters)``: a linear
    ramp of the factor from ``start_factor`` s to ``end_factor`` e (a warm-up when s < e).
    Step by step it is the ratio of consecutive factors,
    ``lr_t = lr_{t-1} * (1 + (e - s) / (total_iters * s + (t - 1) * (e - s)))``."""

    def __init__(self, optimizer, start_factor: float = 1.0 / 3, end_factor: float = 1.0,
                 total_iters: int = 5, last_epoch: int = -1):
        if not 0 < start_factor <= 1 or not 0 <= end_factor <= 1:
            raise ValueError(f"LinearLR: need 0 < start_factor <= 1 and 0 <= end_factor <= 1, "
                             f"got start_factor={start_factor}, end_factor={end_factor}")
        self.start_factor, self.end_factor, self.total_iters = start_factor, end_factor, total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        if self.last_epoch == 0:
            return [lr * self.start_factor for lr in self._current()]
        if self._is_initial or self.last_epoch > self.total_iters:
            return self._current()
        slope = self.end_factor - self.start_factor
        ratio = 1.0 + slope / (self.total_iters * self.start_factor
                               + (self.last_epoch - 1) * slope)
        return [lr * ratio for lr in self._current()]

    def _closed_form_lr(self):
        progress = min(self.total_iters, self.last_epoch) / self.total_iters
        factor = self.start_factor + (self.end_factor - self.start_factor) * progress
        return [base * factor for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """``lr_t = eta_min + (base_lr - eta_min) * (1 + cos(pi * t / T_max)) / 2``: half a
    cosine from ``base_lr`` down to ``eta_min`` over ``T_max`` epochs, then back up.
    Step by step it is updated as torch does, by the ratio of consecutive cosines
    (and by the additive step at the bottom, where that ratio would divide by 0)."""

    def __init__(self, optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1):
        self.T_max, self.eta_min = T_max, eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        t, period, low = self.last_epoch, self.T_max, self.eta_min
        if self._is_initial:
            return self._current()
        if self._step_count == 1 and t > 0:  # resumed: nothing to update from
            return self._closed_form_lr()
        if (t - 1 - period) % (2 * period) == 0:
            return [lr + (base - low) * (1 - math.cos(math.pi / period)) / 2
                    for base, lr in zip(self.base_lrs, self._current(), strict=True)]
        ratio = (1 + math.cos(math.pi * t / period)) / (1 + math.cos(math.pi * (t - 1) / period))
        return [ratio * (lr - low) + low for lr in self._current()]

    def _closed_form_lr(self):
        wave = 1 + math.cos(math.pi * self.last_epoch / self.T_max)
        return [self.eta_min + (base - self.eta_min) * wave / 2 for base in self.base_lrs]
