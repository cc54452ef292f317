"""``autocast(device_type, dtype)`` for the chapter 2 engine (自动混合精度).

Inside the context every public engine op is seen once, before it runs, by a
hook installed with :func:`chapters.autodiff.dispatch.set_autocast_hook`. The
hook looks the op up in the device's policy table (:mod:`chapters.amp.policies`)
and casts the op's floating inputs:

* lower precision -> ``x.to(dtype)`` (float16/bfloat16);
* float32 -> ``x.to(float32)``;
* promote -> every floating input to the widest floating dtype among them;
* unchanged -> nothing.

The casts are ordinary engine casts, so they have gradients: backward casts
each gradient back to its input's dtype, and a float32 parameter receives a
float32 ``.grad`` even though its matmul ran in float16 — that is why autocast
needs no master-weight copy for float32 models.

**Ops without a low-precision kernel.** An op can be registered
(:func:`register_op_policy`) as lower precision while declaring the dtypes its
kernel supports. If the autocast dtype is not among them, the op runs in
float32 and a :class:`AutocastFallbackWarning` says so (and is recorded in
:attr:`autocast.fallbacks`): silent float32 fallbacks are how a custom op makes
a "mixed precision" model no faster. This is the source text's fourth pitfall,
made visible. Its claim needs one correction: torch's autocast does not fall
back to float32 by itself for an op it does not know — such an op simply runs
in the dtype of the tensors that reach it (float32 if they come from float32
parameters), and if they are float16 and the kernel has no float16 version,
torch raises "not implemented for 'Half'"; torch's fix is opt-in, per op:
``torch.amp.custom_fwd(device_type=..., cast_inputs=torch.float32)``. The
engine's automatic fallback is a teaching aid that makes the cost visible
(:attr:`autocast.casts` lists every cast a region inserted); the chapter shows
torch's real behaviour next to it.

Differences from ``torch.autocast``: no weight-cast cache (torch caches the
float16 copy of each leaf weight within one region; that saves time, not
dtypes); the engine has no devices, so ``device_type`` only picks the policy
table and every tensor counts as being on that device.
"""

from __future__ import annotations

import functools
import logging
import warnings
from dataclasses import dataclass

import numpy as np

from chapters.amp.policies import FLOAT32, LOWER, POLICIES, PROMOTE, SUPPORTED_DTYPES
from chapters.autodiff import Tensor, dispatch, dtypes

log = logging.getLogger(__name__)


class AutocastFallbackWarning(UserWarning):
    """A lower-precision op ran in float32 because its kernel lacks the dtype."""


#: op name -> {device: policy} for ops added at run time (custom ops)
_CUSTOM_POLICIES: dict[str, dict[str, str]] = {}
#: op name -> dtype names its kernel supports (absent: every floating dtype)
_KERNEL_DTYPES: dict[str, tuple[str, ...]] = {}


def register_op_policy(op_name: str, policy: str, devices=("cpu", "cuda"),
                       kernel_dtypes=None) -> None:
    """Give a (custom) public op an autocast policy on ``devices``.

    ``kernel_dtypes``: names of the dtypes its kernel can compute in; an op whose
    policy is lower precision but whose kernel lacks the autocast dtype falls
    back to float32, with a warning."""
    if policy not in (LOWER, FLOAT32, PROMOTE, None):
        raise ValueError(f"register_op_policy({op_name!r}): unknown policy {policy!r}; use "
                         f"{LOWER!r}, {FLOAT32!r}, {PROMOTE!r} or None (unchanged)")
    for device in devices:
        _check_device(device)
        _CUSTOM_POLICIES.setdefault(op_name, {})[device] = policy
    if kernel_dtypes is not None:
        _KERNEL_DTYPES[op_name] = tuple(np.dtype(_dtype_by_name(d)).name for d in kernel_dtypes)


def unregister_op_policy(op_name: str) -> None:
    _CUSTOM_POLICIES.pop(op_name, None)
    _KERNEL_DTYPES.pop(op_name, None)


def _check_device(device_type: str) -> None:
    if device_type not in POLICIES:
        raise ValueError(f"autocast: unsupported device_type {device_type!r}; the engine "
                         f"has policy tables for {sorted(POLICIES)}")


def _dtype_by_name(dtype) -> np.dtype:
    try:
        return dtypes.as_dtype(dtype)
    except TypeError as err:
        raise ValueError(f"autocast: unknown dtype {dtype!r}: {err}") from None


def get_policy(device_type: str, op_name: str) -> str | None:
    """The policy autocast applies to ``op_name`` on ``device_type`` (None = unchanged)."""
    _check_device(device_type)
    custom = _CUSTOM_POLICIES.get(op_name, {})
    if device_type in custom:
        return custom[device_type]
    return POLICIES[device_type].get(op_name)


def _eligible(x) -> bool:
    """A floating engine Tensor that autocast may cast (not float64, as torch)."""
    return isinstance(x, Tensor) and x.dtype in dtypes.LOW_PRECISION + (dtypes.float32,)


@dataclass(frozen=True)
class Cast:
    """One cast autocast inserted: before ``op``, ``numel`` elements from ``source`` to
    ``target`` (the engine's counterpart of an ``aten::_to_copy`` in torch's profiler)."""

    op: str
    source: str
    target: str
    numel: int

    @property
    def bytes_moved(self) -> int:
        """Bytes read plus bytes written by the cast."""
        return self.numel * (np.dtype(_dtype_by_name(self.source)).itemsize
                             + np.dtype(_dtype_by_name(self.target)).itemsize)


def _cast_all(args, dtype, op_name: str = "", casts: list | None = None):
    """``args`` with every eligible Tensor (also inside lists/tuples) cast to ``dtype``;
    each cast made is appended to ``casts`` as a :class:`Cast` before ``op_name``."""
    out = []
    for a in args:
        if isinstance(a, list | tuple):
            out.append(type(a)(_cast_all(a, dtype, op_name, casts)))
        elif _eligible(a) and a.dtype != dtype:
            if casts is not None:
                casts.append(Cast(op_name, a.dtype.name, np.dtype(dtype).name, a.numel()))
            out.append(a.to(dtype))
        else:
            out.append(a)
    return tuple(out)


def _flat(args):
    for a in args:
        if isinstance(a, list | tuple):
            yield from _flat(a)
        else:
            yield a


class autocast:
    """``with autocast("cpu", dtype=bfloat16): ...`` — as ``torch.autocast``.

    ``dtype`` defaults to float16 on cuda and bfloat16 on cpu (torch's
    defaults). Accepts an engine dtype, a torch dtype, or a name ("bfloat16",
    "half"). ``cache_enabled`` is accepted for torch's signature and has no
    effect (there is no weight-cast cache, see the module docstring). Nests: an inner region
    (also ``enabled=False``) restores the outer one on exit. Usable as a
    decorator."""

    def __init__(self, device_type: str, dtype=None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        _check_device(device_type)
        self.device_type = device_type
        default = "float16" if device_type == "cuda" else "bfloat16"
        self.dtype = _dtype_by_name(default if dtype is None else dtype)
        if self.dtype.name not in SUPPORTED_DTYPES[device_type]:
            raise ValueError(
                f"autocast({device_type!r}): dtype {self.dtype.name} is not supported; "
                f"{device_type} autocast runs ops in one of "
                f"{', '.join(SUPPORTED_DTYPES[device_type])}")
        self.enabled = bool(enabled)
        self.fallbacks: list[tuple[str, str]] = []   # (op, dtype) that ran in float32
        self.casts: list[Cast] = []                  # every cast this region inserted
        self._previous = None

    # the hook ----------------------------------------------------------
    def hook(self, op_name: str, args: tuple) -> tuple:
        """What the dispatcher calls before each public op: the cast arguments."""
        policy = get_policy(self.device_type, op_name)
        if policy is None:
            return args
        with dispatch.suppress_hook():
            if policy == LOWER:
                supported = _KERNEL_DTYPES.get(op_name)
                if supported is not None and self.dtype.name not in supported:
                    self._fall_back(op_name)
                    return _cast_all(args, dtypes.float32, op_name, self.casts)
                return _cast_all(args, self.dtype, op_name, self.casts)
            if policy == FLOAT32:
                return _cast_all(args, dtypes.float32, op_name, self.casts)
            widest = None
            for a in _flat(args):
                if _eligible(a):
                    widest = a.dtype if widest is None else dtypes.promote_types(widest, a.dtype)
            return args if widest is None else _cast_all(args, widest, op_name, self.casts)

    def _fall_back(self, op_name: str) -> None:
        if (op_name, self.dtype.name) not in self.fallbacks:
            self.fallbacks.append((op_name, self.dtype.name))
            message = (f"autocast({self.device_type!r}, {self.dtype.name}): op {op_name!r} "
                       f"is listed as lower precision but its kernel supports only "
                       f"{', '.join(_KERNEL_DTYPES[op_name])}; it runs in float32 instead, "
                       "so it gets no low-precision speed-up")
            log.info(message)
            warnings.warn(message, AutocastFallbackWarning, stacklevel=4)

    # the context -------------------------------------------------------
    def __enter__(self):
        self._previous = dispatch.get_autocast_hook()
        dispatch.set_autocast_hook(self.hook if self.enabled else None)
        return self

    def __exit__(self, *exc) -> bool:
        dispatch.set_autocast_hook(self._previous)
        self._previous = None
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with autocast(self.device_type, self.dtype, self.enabled):
                return fn(*args, **kwargs)

        return wrapper


def is_autocast_enabled() -> bool:
    """Whether an engine autocast region is active."""
    hook = dispatch.get_autocast_hook()
    return isinstance(getattr(hook, "__self__", None), autocast)
