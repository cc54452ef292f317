"""Chapter 4's reference engine: mixed precision (混合精度).

* :mod:`chapters.amp.formats` — float32/16, bfloat16, float8 from their bit layout;
* :mod:`chapters.amp.scaler` — ``GradScaler``, torch.amp's dynamic loss scaler;
* :mod:`chapters.amp.autocast` — ``autocast(device_type, dtype)`` for the chapter 2 engine;
* :mod:`chapters.amp.master` — float32 master weights for a low-precision model;
* :mod:`chapters.amp.experiments` — the chapter's training comparisons.
"""

from chapters.amp.formats import FORMATS, FloatFormat, decode, encode, get_format, quantize

__all__ = ["FORMATS", "FloatFormat", "decode", "encode", "get_format", "quantize"]
