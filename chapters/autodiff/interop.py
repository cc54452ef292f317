"""Values from outside the engine, read as numpy arrays: :func:`to_numpy`.

``Module.load_state_dict`` and ``TensorDataset`` take PyTorch tensors as readily
as engine tensors, arrays and Python numbers, so a torch model's ``state_dict()``
can seed an engine model. The engine itself imports no torch: a foreign tensor
is read through torch's own tensor method ``t.numpy(force=True)`` (a detached CPU
copy with any lazy conjugate/negative bit applied). numpy has no bfloat16 or
float8 types, so tensors of those dtypes travel through float32 — exactly, since
float32 holds every bfloat16 and float8 value — and arrive as the ``ml_dtypes``
type of the same name. (``chapters.torchcheck.to_numpy``, which may use torch,
moves those bit for bit.)
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from .tensor import Tensor

#: torch dtype names (``str(t.dtype)`` less ``torch.``) that numpy cannot hold
LOW_PRECISION = {name: np.dtype(getattr(ml_dtypes, name))
                 for name in ("bfloat16", "float8_e4m3fn", "float8_e5m2")}


def to_numpy(value) -> np.ndarray:
    """An ndarray from an engine tensor (detached, like torch's ``detach().numpy()``),
    a tensor with torch's API, an array or a Python number."""
    if isinstance(value, Tensor):
        return np.asarray(value.detach().numpy())
    if isinstance(value, np.ndarray | np.generic) or not hasattr(value, "numpy"):
        return np.asarray(value)
    low = LOW_PRECISION.get(str(getattr(value, "dtype", "")).removeprefix("torch."))
    if low is not None:
        return value.float().numpy(force=True).astype(low)
    return value.numpy(force=True)
