"""Schedules built from others or driven by a metric: SequentialLR chains
schedules, OneCycleLR warms up then anneals per batch, ReduceLROnPlateau
watches a validation metric."""

from __future__ import annotations

import math
from bisect import bisect_right

from .base import LRScheduler, check_optimizer


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
        check_optimizer(optimizer)
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
        self.optimizer = check_optimizer(optimizer)
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
