"""``torch.nn.parallel``: ``DistributedDataParallel`` is chapter 3's, from
:mod:`chapters.distributed.torch_api` (torch.distributed's names over the
course's collectives). It is imported on first use, so a single-process
program never loads the distributed transport."""

from importlib import import_module

__all__ = ["DistributedDataParallel"]  # noqa: F822  (served by __getattr__)


def __getattr__(name: str):
    if name == "DistributedDataParallel":
        return import_module("chapters.distributed.torch_api").DistributedDataParallel
    if name == "DataParallel":
        raise NotImplementedError("torch.nn.parallel.DataParallel is not implemented by the "
                                  "course's engines (torch itself recommends against it): use "
                                  "DistributedDataParallel under torchrun.")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
