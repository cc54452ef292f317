"""``torch.distributed``: :mod:`chapters.distributed.torch_api`'s names
(process groups, collectives, DistributedDataParallel over chapter 3's
collectives), the same objects."""

from chapters.distributed import torch_api
from chapters.distributed.torch_api import *  # noqa: F403

__all__ = list(torch_api.__all__)
