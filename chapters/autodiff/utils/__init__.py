"""``torch.utils``'s names. ``utils.data`` is :mod:`chapters.autodiff.data`
under torch's name (one module, two names, as ``os.path``), so
``import chapters.autodiff.utils.data as data`` works as
``import torch.utils.data as data`` does."""

import sys

from .. import data

sys.modules[f"{__name__}.data"] = data

__all__ = ["data"]
