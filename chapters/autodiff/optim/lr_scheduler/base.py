"""The scheduler protocol: :class:`LRScheduler` (see the package docstring)."""

from __future__ import annotations

import warnings

from ..optimizer import Optimizer

_ORDER_WARNING = (
    "Detected call of `lr_scheduler.step()` before `optimizer.step()`: the first rate of the "
    "schedule is skipped. Call optimizer.step() first, then lr_scheduler.step().")


class LRScheduler:
    """Base class: ``base_lrs``, ``last_epoch``, ``step()`` and state dicts.
    A subclass writes ``get_lr()``: the rates for ``last_epoch``."""

    _not_state = ("optimizer",)

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1):
        self.optimizer = check_optimizer(optimizer)
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


def check_optimizer(optimizer) -> Optimizer:
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{type(optimizer).__name__} is not an Optimizer: a scheduler changes "
                        "an optimizer's learning rates, so pass the optimizer "
                        "(e.g. StepLR(optim.SGD(model.parameters(), lr=0.1), step_size=10))")
    return optimizer
