"""Dynamic loss scaling (动态损失缩放): ``GradScaler``, with torch.amp's API and state machine.

Why: float16 cannot hold magnitudes below ``2**-24`` (about 6e-8); many gradients
are smaller and would flush to zero. Multiplying the loss by ``S`` multiplies
every gradient by ``S`` (the chain rule is linear in the upstream gradient), so
backward runs on ``S * g``, which fits. Before the optimizer uses them the
gradients are divided by ``S`` again (in float32, on the master weights).

How ``S`` is chosen, per iteration:

* ``scale(loss)`` returns ``loss * S``;
* ``unscale_(opt)`` multiplies each gradient by ``1/S`` (computed in float64,
  rounded to float32) and records whether any gradient held inf or NaN;
* ``step(opt)`` unscales if not done yet, then calls ``opt.step()`` only when
  every gradient was finite — a step on an overflowed gradient is skipped;
* ``update()``: after an overflow, ``S *= backoff_factor`` and the count of
  good steps restarts; after ``growth_interval`` good steps in a row,
  ``S *= growth_factor`` (kept only if the result is finite in float32).

Each optimizer moves through ``READY -> UNSCALED -> STEPPED`` and back to
``READY`` at ``update()``; calls out of this order raise, as in torch.

Deliberate differences from ``torch.amp.GradScaler``: (1) the device is only a
label (the engine computes with numpy); unknown devices are rejected rather than
accepted silently; (2) torch signals "no gradients were checked" with
``assert`` (which ``python -O`` removes); here it is a ``RuntimeError`` with a
message that says what to do; (3) no sparse gradients and no closures.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum

import numpy as np

from chapters.autodiff import Tensor


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


_SUPPORTED_DEVICES = ("cpu", "cuda")


class GradScaler:
    """``GradScaler(device="cuda", init_scale=2.0**16, growth_factor=2.0,
    backoff_factor=0.5, growth_interval=2000, enabled=True)`` as in torch.amp."""

    def __init__(self, device: str = "cuda", init_scale: float = 2.0**16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        if device not in _SUPPORTED_DEVICES:
            raise ValueError(f"GradScaler: unsupported device {device!r}; use one of "
                             f"{_SUPPORTED_DEVICES}")
        if growth_factor <= 1.0:
            raise ValueError(f"GradScaler: growth_factor must be > 1.0, got {growth_factor}")
        if not 0.0 < backoff_factor < 1.0:
            raise ValueError(f"GradScaler: backoff_factor must be in (0, 1), got "
                             f"{backoff_factor}")
        if int(growth_interval) != growth_interval or growth_interval < 1:
            raise ValueError(f"GradScaler: growth_interval must be a positive integer, got "
                             f"{growth_interval!r}")
        self._device = device
        self._enabled = bool(enabled)
        self._init_scale = float(init_scale)
        self._growth_factor = float(growth_factor)
        self._backoff_factor = float(backoff_factor)
        self._growth_interval = int(growth_interval)
        self._init_growth_tracker = 0
        self._scale: np.float32 | None = None   # created lazily by scale(), as in torch
        self._growth_tracker: int | None = None
        self._per_optimizer: dict[int, dict] = {}

    # ------------------------------------------------------------ the iteration

    def scale(self, outputs):
        """``outputs * S``: a Tensor, or (nested) lists/tuples of Tensors. The
        result keeps each output's dtype (S is a weak Python scalar)."""
        if not self._enabled:
            return outputs
        self._lazy_init()
        return self._scale_nested(outputs)

    def _scale_nested(self, value):
        if isinstance(value, Tensor):
            return value * float(self._scale)
        if isinstance(value, list | tuple):
            return type(value)(self._scale_nested(v) for v in value)
        if isinstance(value, Iterable) and not isinstance(value, str | bytes):
            return map(self._scale_nested, value)
        raise ValueError(f"GradScaler.scale: outputs must be a Tensor or an iterable of "
                         f"Tensors, got {type(value).__name__}")

    def unscale_(self, optimizer) -> None:
        """Divide ``optimizer``'s gradients by S in place and record inf/NaN.

        Call it once per ``update()``, before ``step()``, when you need the true
        gradients first (gradient clipping, logging)."""
        if not self._enabled:
            return
        self._check_initialized("unscale_")
        state = self._state_of(optimizer)
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since "
                               "the last update(); call it at most once per iteration")
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step(); unscale before "
                               "step() (step() unscales by itself if you did not)")
        state["found_inf"] = self._unscale_grads(optimizer)
        state["stage"] = OptState.UNSCALED

    def _unscale_grads(self, optimizer) -> bool | None:
        """Multiply every gradient by 1/S; True if any was non-finite, None if
        there were no gradients at all."""
        inv_scale = np.float32(1.0 / np.float64(self._scale))
        found_inf, checked = False, False
        for group in optimizer.param_groups:
            for i, param in enumerate(group["params"]):
                grad = param.grad
                if grad is None:
                    continue
                array = grad.data
                if array.dtype == np.float16:
                    raise ValueError(
                        f"GradScaler.unscale_: parameter {i} of a param group has a float16 "
                        f"gradient (shape {tuple(array.shape)}). Unscaling in float16 "
                        "would flush the small gradients that loss scaling just saved. "
                        "Keep float32 master weights for the optimizer "
                        "(chapters.amp.master.MasterWeights) and give the scaler their "
                        "optimizer.")
                checked = True
                compute = np.promote_types(array.dtype, np.float32)
                found_inf |= not bool(np.isfinite(array).all())
                array[...] = (array.astype(compute) * inv_scale).astype(array.dtype)
        return found_inf if checked else None

    def step(self, optimizer, *args, **kwargs):
        """``optimizer.step()`` unless a gradient held inf/NaN (then skipped).
        Returns what ``optimizer.step`` returned, or None when skipped."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("GradScaler.step: closures are not supported when the "
                               "scaler is enabled; run forward/backward before step()")
        self._check_initialized("step")
        state = self._state_of(optimizer)
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update(); "
                               "call scaler.update() once per iteration")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if state["found_inf"] is None:
            raise RuntimeError(
                "GradScaler.step: no inf checks were recorded for this optimizer: none of "
                "its parameters has a .grad. Call scaler.scale(loss).backward() before "
                "step(), and check that the optimizer holds the parameters the loss "
                "depends on (for master weights: copy the model's gradients to the "
                "masters first).")
        result = None if state["found_inf"] else optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return result

    def update(self, new_scale=None) -> None:
        """Adjust S for the next iteration (see the module docstring) and reset
        every optimizer to READY. ``new_scale`` (a float or a 0-d/1-element
        Tensor) sets S directly instead."""
        if not self._enabled:
            return
        self._check_initialized("update")
        if new_scale is not None:
            value = new_scale if isinstance(new_scale, int | float) else new_scale.item()
            self._scale = np.float32(value)
        else:
            found = [s["found_inf"] for s in self._per_optimizer.values()
                     if s["found_inf"] is not None]
            if not found:
                raise RuntimeError("GradScaler.update: no inf checks were recorded prior to "
                                   "update(); call step() (or unscale_()) for each optimizer "
                                   "first, and update() once per iteration")
            self._update_scale(any(found))
        self._per_optimizer = {}

    def _update_scale(self, found_inf: bool) -> None:
        if found_inf:
            self._scale = np.float32(np.float64(self._scale) * self._backoff_factor)
            self._growth_tracker = 0
            return
        successful = self._growth_tracker + 1
        if successful == self._growth_interval:
            with np.errstate(over="ignore"):
                grown = np.float32(np.float64(self._scale) * self._growth_factor)
            if np.isfinite(grown):
                self._scale = grown
            self._growth_tracker = 0
        else:
            self._growth_tracker = successful

    # ------------------------------------------------------------ bookkeeping

    def _lazy_init(self) -> None:
        if self._scale is None:
            self._scale = np.float32(self._init_scale)
            self._growth_tracker = self._init_growth_tracker

    def _check_initialized(self, name: str) -> None:
        if self._scale is None:
            raise RuntimeError(f"GradScaler.{name}: the scale is not initialised yet; call "
                               "scaler.scale(loss).backward() earlier in the iteration")

    def _state_of(self, optimizer) -> dict:
        return self._per_optimizer.setdefault(id(optimizer),
                                              {"stage": OptState.READY, "found_inf": None})

    def found_inf(self, optimizer) -> bool | None:
        """Whether this iteration's gradients of ``optimizer`` held inf/NaN
        (None before unscale_/step). torch keeps this private; the course plots it."""
        return self._per_optimizer.get(id(optimizer), {}).get("found_inf")

    # ------------------------------------------------------------ accessors

    def get_scale(self) -> float:
        """The current S as a Python float (1.0 when disabled)."""
        if not self._enabled:
            return 1.0
        return self._init_scale if self._scale is None else float(self._scale)

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = float(new_factor)

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = float(new_factor)

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = int(new_interval)

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> dict:
        """torch's keys: scale, growth_factor, backoff_factor, growth_interval,
        _growth_tracker ({} when disabled). Loadable into torch's scaler too."""
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._growth_tracker if self._growth_tracker is not None
                else self._init_growth_tracker}

    def load_state_dict(self, state_dict: dict) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("GradScaler.load_state_dict: the source state dict is empty, "
                               "possibly because it was saved from a disabled GradScaler")
        self._init_scale = float(state_dict["scale"])
        self._growth_factor = float(state_dict["growth_factor"])
        self._backoff_factor = float(state_dict["backoff_factor"])
        self._growth_interval = int(state_dict["growth_interval"])
        self._init_growth_tracker = int(state_dict["_growth_tracker"])
        if self._scale is not None:
            self._scale = np.float32(self._init_scale)
            self._growth_tracker = self._init_growth_tracker
