"""``torch.backends``: the flags training scripts set, accepted and kept.

Every flag here only chooses among GPU kernels (cuDNN autotuning, TF32 matmuls,
deterministic cuDNN algorithms). The engines have one numpy kernel per op on
the CPU, deterministic and in full float32, so no flag can change a result:
setting one is recorded (reads return what was set) and changes nothing.
``is_available()`` answers False for each GPU library, as torch does on a
CPU-only machine.
"""

from __future__ import annotations

from types import SimpleNamespace


def _unavailable() -> bool:
    return False


cudnn = SimpleNamespace(enabled=True, benchmark=False, deterministic=False, allow_tf32=True,
                        is_available=_unavailable, version=lambda: None)
cuda = SimpleNamespace(matmul=SimpleNamespace(allow_tf32=False,
                                              allow_fp16_reduced_precision_reduction=True,
                                              allow_bf16_reduced_precision_reduction=True),
                       is_built=_unavailable, flash_sdp_enabled=lambda: False)
mps = SimpleNamespace(is_available=_unavailable, is_built=_unavailable)
mkldnn = SimpleNamespace(enabled=True, is_available=_unavailable)
openmp = SimpleNamespace(is_available=_unavailable)

__all__ = ["cuda", "cudnn", "mkldnn", "mps", "openmp"]
