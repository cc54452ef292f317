"""Chapter 4's reference engine: mixed precision (混合精度).

* :mod:`chapters.amp.formats` — float32/16, bfloat16, float8 from their bit layout;
* :mod:`chapters.amp.scaler` — ``GradScaler``, torch.amp's dynamic loss scaler;
* :mod:`chapters.amp.autocast` — ``autocast(device_type, dtype)`` for the chapter 2 engine;
* :mod:`chapters.amp.master` — float32 master weights for a low-precision model;
* :mod:`chapters.amp.experiments` — the chapter's training comparisons.

As ``torch.amp`` does, the package exports the two classes a training loop
uses: ``from chapters.amp import GradScaler, autocast``. So the package's
``autocast`` attribute is the class; the module keeps its path, and
``from chapters.amp.autocast import get_policy`` still reads from it.
"""

from chapters.amp.autocast import autocast
from chapters.amp.formats import FORMATS, FloatFormat, decode, encode, get_format, quantize
from chapters.amp.scaler import GradScaler

__all__ = ["FORMATS", "FloatFormat", "GradScaler", "autocast", "decode", "encode",
           "get_format", "quantize"]
