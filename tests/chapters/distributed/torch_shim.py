"""Run a torch script on the engines with ``torch_api`` as its ``torch.distributed``:
``python -m tests.chapters.distributed.torch_shim SCRIPT`` (under torchrun too).

A stand-in for the ``python -m chapters.as_torch`` runner, only as large as
tests/programs/ddp_no_sync.py needs: ``torch`` is chapters.autodiff (tensors,
``nn``, ``optim``), ``torch.distributed`` is chapters.distributed.torch_api,
``torch.nn.parallel.DistributedDataParallel`` is torch_api's. The real torch
is imported first and kept by the transport (``torch_modules``), as the
runner must do too."""

from __future__ import annotations

import runpy
import sys
import types

from chapters.distributed.transport import torch_modules

torch_modules()   # the real torch.distributed, kept for the transport before the stand-in

import chapters.autodiff as engine  # noqa: E402 - after the real torch is kept
from chapters.distributed import torch_api  # noqa: E402


def _module(name: str, source, **extra) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__dict__.update({k: v for k, v in vars(source).items() if not k.startswith("__")})
    module.__dict__.update(extra)
    return module


def install() -> None:
    parallel = types.ModuleType("torch.nn.parallel")
    parallel.DistributedDataParallel = torch_api.DistributedDataParallel
    nn = _module("torch.nn", engine.nn, parallel=parallel)
    torch = _module("torch", engine, nn=nn, optim=engine.optim, distributed=torch_api)
    sys.modules.update({"torch": torch, "torch.nn": nn, "torch.nn.parallel": parallel,
                        "torch.optim": engine.optim, "torch.distributed": torch_api})


if __name__ == "__main__":
    script = sys.argv[1]
    sys.argv = sys.argv[1:]
    install()
    runpy.run_path(script, run_name="__main__")
