"""``torch.amp``: chapter 4's ``autocast`` and ``GradScaler``, the same classes
(``chapters.amp``), under torch's names. ``torch.autocast`` is this ``autocast``."""

from chapters.amp import GradScaler, autocast

from .unsupported import refuse

#: torch.amp names with no engine counterpart, and what to do instead
_REFUSED = {
    "custom_fwd": ("use chapters.amp.autocast.register_op_policy(op, policy, kernel_dtypes=...) "
                   "to say how autocast treats a custom op"),
    "custom_bwd": "the engine's backward already runs in the dtypes forward chose",
}


def is_autocast_available(device_type: str) -> bool:
    """``torch.amp.is_autocast_available``: the engines autocast on "cpu" and "cuda"."""
    return device_type in ("cpu", "cuda")


def __getattr__(name: str):
    if name in _REFUSED:
        raise NotImplementedError(f"torch.amp.{name} is not implemented by the course's "
                                  f"engines: {_REFUSED[name]}.")
    raise refuse(__name__, name)


__all__ = ["GradScaler", "autocast", "is_autocast_available"]
