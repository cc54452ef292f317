"""Run an unmodified torch script on the engines: ``python -m chapters.as_torch script.py``.

**Who sees which torch.** One process holds two torches: the script's
``import torch`` must reach the engines, while the engines themselves keep
using *real* torch — chapter 3's transport sends bytes through real
``torch.distributed`` point-to-point, and the comparison helpers convert to
real tensors. So the alias is decided per importing module, not globally:

* :func:`install` replaces ``builtins.__import__`` (the function every
  ``import`` statement calls, which is told the importing module's globals);
* an ``import torch`` / ``import torch.nn as nn`` / ``from torch.utils.data
  import DataLoader`` made by the script, or by any module that is not part of
  Python, an installed package or the course's packages (the script's own
  helper modules), gets :mod:`chapters.as_torch` and its submodules — the same
  module objects, so ``torch.nn is chapters.as_torch.nn``;
* every other importer — the engines, numpy, real torch's own lazy imports —
  gets real torch, and ``sys.modules["torch"]`` stays real torch.

Consequences, on purpose: ``importlib.import_module("torch")`` and
``sys.modules["torch"]`` in the script reach real torch (they bypass the
``import`` statement); real torch is imported before the script starts, so
the transport's ``torch.distributed`` is ready under ``torchrun``, where this
module runs as each rank's program
(``torchrun --nproc_per_node=2 -m chapters.as_torch train.py``).
"""

from __future__ import annotations

import builtins
import os
import runpy
import sys
import sysconfig
from importlib import import_module

import torch as _real_torch  # noqa: F401  (loaded first: the engines' transport uses it)

import chapters
import chapters.as_torch as as_torch

_ORIGINAL_IMPORT = builtins.__import__
#: importers under these directories get real torch: Python, installed packages, the course
_REAL_TORCH_ROOTS = tuple(sorted({os.path.realpath(p) + os.sep for p in (
    *(sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")),
    os.path.dirname(os.path.dirname(chapters.__file__)) + "/chapters",
    os.path.dirname(os.path.dirname(chapters.__file__)) + "/vizkit",
    os.path.dirname(os.path.dirname(chapters.__file__)) + "/autograder")}))


def sees_engines(importer_globals) -> bool:
    """Whether the module with these globals is the script's side of the process."""
    if not importer_globals:
        return False
    module = importer_globals.get("__name__") or ""
    if module.partition(".")[0] in ("torch", "chapters", "vizkit", "autograder"):
        return False
    path = importer_globals.get("__file__")
    if path is None:  # frozen and built-in modules; exec'd code is not the script's
        return False
    return not os.path.realpath(path).startswith(_REAL_TORCH_ROOTS)


def resolve(name: str):
    """The engine object for ``torch.a.b``: attribute by attribute from
    :mod:`chapters.as_torch`, importing a submodule that is not loaded yet."""
    target = as_torch
    parts = name.split(".")[1:]
    for depth, part in enumerate(parts, start=1):
        try:
            target = getattr(target, part)
        except AttributeError:
            dotted = ".".join(parts[:depth])
            try:
                target = import_module(f"chapters.as_torch.{dotted}")
            except ModuleNotFoundError:
                raise ModuleNotFoundError(
                    f"No module named 'torch.{dotted}' in the course's engines "
                    "(chapters.as_torch). Run the script with real torch (python script.py), "
                    "or import what the engines have (see chapters/as_torch/__init__.py)",
                    name=f"torch.{dotted}") from None
    return target


def _import(name, globals=None, locals=None, fromlist=(), level=0):
    if level == 0 and (name == "torch" or name.startswith("torch.")) and sees_engines(globals):
        leaf = resolve(name)
        return leaf if fromlist else as_torch
    return _ORIGINAL_IMPORT(name, globals, locals, fromlist, level)


def install() -> None:
    """Route the script side's ``import torch`` to the engines (idempotent)."""
    builtins.__import__ = _import


def uninstall() -> None:
    builtins.__import__ = _ORIGINAL_IMPORT


def run_script(script: str, args: list[str]) -> None:
    """Run ``script`` as ``__main__`` with ``sys.argv = [script, *args]``, its
    directory first on ``sys.path`` (as ``python script.py`` does), on the engines."""
    if not os.path.isfile(script):
        raise SystemExit(f"python -m chapters.as_torch: no such script {script!r}; give the "
                         "path of a .py file (python -m chapters.as_torch train.py --epochs 2)")
    sys.argv = [script, *args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    install()
    try:
        runpy.run_path(script, run_name="__main__")
    finally:
        uninstall()
