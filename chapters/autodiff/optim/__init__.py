"""``torch.optim``'s names: the optimizers (:mod:`.optimizer`, and the adaptive
ones in :mod:`.adaptive`) and the learning-rate schedules that drive their
``param_groups`` (:mod:`.lr_scheduler`, reached as ``optim.lr_scheduler.StepLR``
as in torch)."""

from . import lr_scheduler
from .adaptive import Adagrad, Adamax, NAdam, RAdam, RMSprop
from .optimizer import SGD, Adam, AdamW, Optimizer

__all__ = ["SGD", "Adagrad", "Adam", "AdamW", "Adamax", "NAdam", "Optimizer", "RAdam", "RMSprop",
           "lr_scheduler"]
