"""``torch.autograd``'s names for what this engine already has under its top
level: ``grad`` and ``backward`` (:mod:`.engine`), the grad-mode switches,
``gradcheck`` and ``detect_anomaly``, and custom functions (``Function``,
``function.once_differentiable``: :mod:`.function`). Code written as
``torch.autograd.grad(loss, params, create_graph=True)`` runs unchanged."""

from ..anomaly import detect_anomaly
from ..engine import backward, grad
from ..grad_mode import enable_grad, no_grad, set_grad_enabled
from ..gradcheck import GradcheckError, gradcheck
from . import forward_ad, function
from .function import Function

__all__ = ["Function", "GradcheckError", "backward", "detect_anomaly", "enable_grad", "forward_ad",
           "function", "grad", "gradcheck", "no_grad", "set_grad_enabled"]
