"""``torch.optim``'s names: the optimizers (:mod:`.optimizer`) and the
learning-rate schedules that drive their ``param_groups`` (:mod:`.lr_scheduler`,
reached as ``optim.lr_scheduler.StepLR`` as in torch)."""

from . import lr_scheduler
from .optimizer import SGD, Adam, AdamW, Optimizer

__all__ = ["SGD", "Adam", "AdamW", "Optimizer", "lr_scheduler"]
