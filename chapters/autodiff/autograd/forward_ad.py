"""``torch.autograd.forward_ad``'s names: dual tensors by level (:mod:`..forward_mode`)."""

from ..forward_mode import UnpackedDualTensor, dual_level, make_dual, unpack_dual

__all__ = ["UnpackedDualTensor", "dual_level", "make_dual", "unpack_dual"]
