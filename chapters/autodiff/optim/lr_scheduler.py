"""Learning-rate schedules (学习率调度) with ``torch.optim.lr_scheduler``'s names.

A scheduler owns no tensors: it rewrites ``group["lr"]`` in its optimizer's
``param_groups``. The protocol is torch's ``LRScheduler``:

* building one records each group's starting rate as ``group["initial_lr"]``
  (the scheduler's ``base_lrs``) and performs step 0, so the optimizer's very
  first update already uses the schedule's first rate;
* ``scheduler.step()`` is called **after** ``optimizer.step()``, once per epoch
  (or per batch for ``OneCycleLR``): ``last_epoch`` goes up by one and every
  group gets its next rate. Calling them the other way round skips the first
  rate of the schedule, so it warns, as torch does;
* ``get_last_lr()`` lists the rates just set; ``state_dict()`` is every
  attribute except the optimizer, so a checkpoint resumes the schedule.

Like torch's, most schedules update the *current* ``group["lr"]`` by a factor
(so two schedulers on one optimizer compose) and agree with a closed form of
the epoch ``t``, given in each docstring and used when ``step(epoch)`` jumps.
"""

from __future__ import annotations

import math
import warnings
from bisect import bisect_right
from collections import Counter

from .optimizer import Optimizer

_ORDER_WARNING = (
    "Detected call of `lr_scheduler.step()` before `optimizer.step()`: the first rate of the "
    "schedule is skipped. Call optimizer.step() first, then lr_scheduler.step().")


class LRScheduler:
    """Base class: ``base_lrs``, ``last_epoch``, ``step()`` and state dicts.
    A subclass writes ``get_lr()``: the rates for ``last_epoch``."""

    _not_state = ("optimizer",)

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1):
        self.optimizer = _checked(optimizer)
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        for i, group in enumerate(optimizer.param_groups):
            if "initial_lr" not in group:
                raise KeyError(
                    f"param 'initial_lr' is not specified in param_groups[{i}] when resuming "
                    f"with last_epoch={last_epoch}: load the optimizer's state_dict (it carries "
                    "initial_lr) before building the scheduler, or start with last_epoch=-1")
        self.base_lrs = [group["initial_lr"] for group in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self) -> None:
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self) -> list[float]:
        raise NotImplementedError(f"{type(self).__name__} must define get_lr()")

    def _closed_form_lr(self) -> list[float]:
        """The rates at ``last_epoch`` from ``base_lrs`` alone (for ``step(epoch)``)."""
        return self.get_lr()

    def step(self, epoch: int | None = None) -> None:
        if self._step_count == 1 and not getattr(self.optimizer, "_opt_called", False):
            warnings.warn(_ORDER_WARNING, UserWarning, stacklevel=2)
        self._step_count += 1
        if epoch is not None:
            warnings.warn("step(epoch) is deprecated (as in torch): call step() once per "
                          "epoch instead", UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None = None) -> None:
        if epoch is None:
            self.last_epoch += 1
            rates = self.get_lr()
        else:
            self.last_epoch = epoch
            rates = self._closed_form_lr()
        for group, lr in zip(self.optimizer.param_groups, rates, strict=True):
            group["lr"] = lr
        self._last_lr = [group["lr"] for group in self.optimizer.param_groups]

    def get_last_lr(self) -> list[float]:
        return self._last_lr

    def _current(self) -> list[float]:
        return [group["lr"] for group in self.optimizer.param_groups]

    def state_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k not in self._not_state}

    def load_state_dict(self, state_dict: dict) -> None:
        self.__dict__.update(state_dict)


def _checked(optimizer) -> Optimizer:
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{type(optimizer).__name__} is not an Optimizer: a scheduler changes "
                        "an optimizer's learning rates, so pass the optimizer "
                        "(e.g. StepLR(optim.SGD(model.parameters(), lr=0.1), step_size=10))")
    return optimizer


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


class SequentialLR(LRScheduler):
    """Run ``schedulers[0]`` until ``milestones[0]``, then ``schedulers[1]``
    (restarted at its epoch 0), and so on: e.g. a ``LinearLR`` warm-up followed
    by a ``CosineAnnealingLR`` decay. Build the parts on the same optimizer first."""

    _not_state = ("optimizer", "_schedulers")

    def __init__(self, optimizer, schedulers, milestones, last_epoch: int = -1):
        if not schedulers:
            raise ValueError("SequentialLR expects at least one scheduler, but got none")
        for i, scheduler in enumerate(schedulers):
            if isinstance(scheduler, ReduceLROnPlateau):
                raise ValueError(f"SequentialLR cannot run ReduceLROnPlateau (index {i}): its "
                                 "step() needs the metric; step it yourself instead")
            if getattr(scheduler, "optimizer", None) is not optimizer:
                raise ValueError(f"SequentialLR: the scheduler at index {i} drives another "
                                 "optimizer; build every part on the optimizer given here")
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(f"SequentialLR needs one milestone fewer than schedulers, got "
                             f"{len(schedulers)} schedulers and {len(milestones)} milestones")
        self._schedulers, self._milestones = list(schedulers), list(milestones)
        self.optimizer, self.last_epoch = optimizer, last_epoch + 1
        for group in optimizer.param_groups:  # undo the parts' own step 0 ...
            group["lr"] = group["initial_lr"]
        for scheduler in self._schedulers:
            scheduler.last_epoch -= 1
        first = self._schedulers[bisect_right(self._milestones, 0)]
        first._initial_step()  # ... and redo the first one's
        self._last_lr = first.get_last_lr()

    def step(self) -> None:
        self.last_epoch += 1
        index = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[index]
        if index > 0 and self._milestones[index - 1] == self.last_epoch:
            scheduler._update_lr(0)  # a part starts at its closed form for epoch 0
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()

    def state_dict(self) -> dict:
        return {**super().state_dict(), "_schedulers": [s.state_dict() for s in self._schedulers]}

    def load_state_dict(self, state_dict: dict) -> None:
        parts = state_dict["_schedulers"]
        self.__dict__.update({k: v for k, v in state_dict.items() if k != "_schedulers"})
        for scheduler, part in zip(self._schedulers, parts, strict=True):
            scheduler.load_state_dict(part)


class OneCycleLR(LRScheduler):
    """The one-cycle policy, stepped once per **batch** for ``total_steps`` steps
    (or ``epochs * steps_per_epoch``). The rate rises from ``max_lr / div_factor``
    to ``max_lr`` over the first ``pct_start`` of the steps, then falls to
    ``max_lr / div_factor / final_div_factor``; within a phase from ``a`` to ``b``
    at fraction ``p`` it is ``b + (a - b) * (1 + cos(pi * p)) / 2`` (``"cos"``) or
    ``a + (b - a) * p`` (``"linear"``). With ``cycle_momentum`` the momentum
    (SGD's ``momentum`` or Adam's ``beta1``) moves the opposite way, between
    ``max_momentum`` and ``base_momentum``. ``three_phase=True`` comes back down to
    the starting rate over a second ``pct_start`` of the steps before the final fall."""

    def __init__(self, optimizer, max_lr, total_steps: int | None = None,
                 epochs: int | None = None, steps_per_epoch: int | None = None,
                 pct_start: float = 0.3, anneal_strategy: str = "cos",
                 cycle_momentum: bool = True, base_momentum: float = 0.85,
                 max_momentum: float = 0.95, div_factor: float = 25.0,
                 final_div_factor: float = 1e4, three_phase: bool = False,
                 last_epoch: int = -1):
        _checked(optimizer)
        self.total_steps = _total_steps(total_steps, epochs, steps_per_epoch)
        if not 0 <= pct_start <= 1:
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy!r}")
        self.anneal_strategy = anneal_strategy
        self._phases = _one_cycle_phases(float(pct_start * self.total_steps), self.total_steps,
                                         three_phase)
        groups = optimizer.param_groups
        if last_epoch == -1:
            for group, top in zip(groups, _per_group("max_lr", max_lr, groups), strict=True):
                group.update(initial_lr=top / div_factor, max_lr=top,
                             min_lr=top / div_factor / final_div_factor)
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError("optimizer must support momentum or beta1 with "
                                 "`cycle_momentum` option enabled (or pass cycle_momentum=False)")
            self.use_beta1 = "betas" in optimizer.defaults
            if last_epoch == -1:
                highs = _per_group("max_momentum", max_momentum, groups)
                lows = _per_group("base_momentum", base_momentum, groups)
                for group, high, low in zip(groups, highs, lows, strict=True):
                    self._set_momentum(group, high)
                    group.update(max_momentum=high, base_momentum=low)
        super().__init__(optimizer, last_epoch)

    def _anneal(self, start: float, end: float, pct: float) -> float:
        if self.anneal_strategy == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def _set_momentum(self, group: dict, momentum: float) -> None:
        if self.use_beta1:
            group["betas"] = (momentum, *group["betas"][1:])
        else:
            group["momentum"] = momentum

    def get_lr(self):
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"Tried to step {step} times. The specified number of total steps "
                             f"is {self.total_steps}: build the scheduler with the number of "
                             "batches you will train for")
        rates = []
        for group in self.optimizer.param_groups:
            start = 0.0
            for i, (end, lr_a, lr_b, mom_a, mom_b) in enumerate(self._phases):
                if step <= end or i == len(self._phases) - 1:
                    pct = (step - start) / (end - start)
                    rates.append(self._anneal(group[lr_a], group[lr_b], pct))
                    if self.cycle_momentum:
                        self._set_momentum(group, self._anneal(group[mom_a], group[mom_b], pct))
                    break
                start = end
        return rates


def _one_cycle_phases(warmup: float, total: int, three_phase: bool) -> list[tuple]:
    """Each phase: (last step, rate from, rate to, momentum from, momentum to),
    naming the param-group entries that hold the values."""
    up = (warmup - 1, "initial_lr", "max_lr", "max_momentum", "base_momentum")
    if not three_phase:
        return [up, (total - 1, "max_lr", "min_lr", "base_momentum", "max_momentum")]
    return [up, (2 * warmup - 2, "max_lr", "initial_lr", "base_momentum", "max_momentum"),
            (total - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum")]


def _total_steps(total_steps, epochs, steps_per_epoch) -> int:
    if total_steps is not None:
        if not isinstance(total_steps, int) or total_steps <= 0:
            raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
        return total_steps
    if epochs is None or steps_per_epoch is None:
        raise ValueError("You must define either total_steps OR (epochs AND steps_per_epoch)")
    for name, value in (("epochs", epochs), ("steps_per_epoch", steps_per_epoch)):
        if not isinstance(value, int) or value <= 0:
            raise ValueError(f"Expected positive integer {name}, but got {value}")
    return epochs * steps_per_epoch


def _per_group(name: str, value, groups: list) -> list:
    if isinstance(value, list | tuple):
        if len(value) != len(groups):
            raise ValueError(f"expected {len(groups)} values for {name}, got {len(value)}")
        return list(value)
    return [value] * len(groups)


class ReduceLROnPlateau(LRScheduler):
    """Multiply every rate by ``factor`` when the metric passed to ``step(metric)``
    has not improved for more than ``patience`` epochs, then wait ``cooldown``
    epochs before counting again; never below ``min_lr``. "Improved" means, for
    ``mode="min"``, ``metric < best * (1 - threshold)`` (``threshold_mode="rel"``)
    or ``metric < best - threshold`` (``"abs"``); mirrored for ``"max"``. A change
    smaller than ``eps`` is skipped."""

    def __init__(self, optimizer, mode: str = "min", factor: float = 0.1, patience: int = 10,
                 threshold: float = 1e-4, threshold_mode: str = "rel", cooldown: int = 0,
                 min_lr=0, eps: float = 1e-8):
        if factor >= 1.0:
            raise ValueError(f"Factor should be < 1.0 (it multiplies the rate), got {factor}")
        if mode not in ("min", "max") or threshold_mode not in ("rel", "abs"):
            raise ValueError(f"mode must be 'min' or 'max' and threshold_mode 'rel' or 'abs', "
                             f"got {mode!r} and {threshold_mode!r}")
        self.optimizer = _checked(optimizer)
        self.min_lrs = _per_group("min_lr", min_lr, optimizer.param_groups)
        self.factor, self.patience, self.cooldown, self.eps = factor, patience, cooldown, eps
        self.mode, self.threshold, self.threshold_mode = mode, threshold, threshold_mode
        self.best = math.inf if mode == "min" else -math.inf
        self.last_epoch, self.cooldown_counter, self.num_bad_epochs = 0, 0, 0
        self._last_lr = self._current()

    def _is_better(self, value: float) -> bool:
        relative = self.threshold_mode == "rel"
        if self.mode == "min":
            bar = self.best * (1 - self.threshold) if relative else self.best - self.threshold
            return value < bar
        bar = self.best * (1 + self.threshold) if relative else self.best + self.threshold
        return value > bar

    def step(self, metrics) -> None:
        value = float(metrics)
        self.last_epoch += 1
        if self._is_better(value):
            self.best, self.num_bad_epochs = value, 0
        else:
            self.num_bad_epochs += 1
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0  # bad epochs during the cool-down do not count
        if self.num_bad_epochs > self.patience:
            self._reduce()
            self.cooldown_counter, self.num_bad_epochs = self.cooldown, 0
        self._last_lr = self._current()

    def _reduce(self) -> None:
        for group, floor in zip(self.optimizer.param_groups, self.min_lrs, strict=True):
            new = max(group["lr"] * self.factor, floor)
            if group["lr"] - new > self.eps:
                group["lr"] = new


__all__ = ["ConstantLR", "CosineAnnealingLR", "ExponentialLR", "LRScheduler", "LambdaLR",
           "LinearLR", "MultiStepLR", "OneCycleLR", "ReduceLROnPlateau", "SequentialLR",
           "StepLR"]
