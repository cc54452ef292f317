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

from .base import LRScheduler
from .closed_form import (
    ConstantLR,
    CosineAnnealingLR,
    ExponentialLR,
    LambdaLR,
    LinearLR,
    MultiStepLR,
    StepLR,
)
from .composite import OneCycleLR, ReduceLROnPlateau, SequentialLR

__all__ = ["ConstantLR", "CosineAnnealingLR", "ExponentialLR", "LRScheduler", "LambdaLR",
           "LinearLR", "MultiStepLR", "OneCycleLR", "ReduceLROnPlateau", "SequentialLR",
           "StepLR"]
