"""One shared lambda, two engines: run it on chapters.autodiff and on torch and
compare forward values, dtypes, shapes and gradients (against a random
cotangent) with separate, explicit tolerances.

These helpers serve the per-family tests (``test_ops_*.py``, ``test_nn*.py``),
which keep the cases that need more than a table row. The one place that
covers every public op systematically (samples, every dtype torch accepts,
error inputs, a coverage check) is the op table: ``opdb.py``, driven by
``test_opdb.py``."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import chapters.autodiff as ad
import chapters.autodiff.functional as F
from chapters.torchcheck import assert_close, available_devices, to_numpy, to_torch


def devices():
    """``available_devices()`` as pytest params, the CUDA one marked."""
    return [pytest.param(d, marks=pytest.mark.cuda) if d == "cuda" else d
            for d in available_devices()]


@dataclass(frozen=True)
class Tol:
    """Forward and gradient tolerances, kept apart on purpose."""

    fwd_rtol: float = 1e-5
    fwd_atol: float = 1e-6
    grad_rtol: float = 1e-4
    grad_atol: float = 1e-5


FLOAT32 = Tol()
FLOAT64 = Tol(1e-12, 1e-12, 1e-10, 1e-10)


@dataclass
class Both:
    """The result of running one lambda on both engines."""

    engine_out: object
    torch_out: object
    engine_grads: list = field(default_factory=list)
    torch_grads: list = field(default_factory=list)


def run_both(fn, arrays, *, device="cpu", grad_mask=None, constants=(), seed=0) -> Both:
    """``fn(lib, F, *tensors, *constants)`` with lib = chapters.autodiff / torch
    and F their functional modules. Float arrays become leaves requiring grad
    (unless ``grad_mask`` says otherwise); the output is back-propagated with
    one random cotangent shared by both engines."""
    rng = np.random.default_rng(seed)
    grad_mask = grad_mask or [np.asarray(a).dtype.kind == "f" or np.asarray(a).dtype.name ==
                              "bfloat16" for a in arrays]
    ins_e = [ad.tensor(a, requires_grad=g) for a, g in zip(arrays, grad_mask, strict=True)]
    ins_t = [to_torch(a, device, requires_grad=g) for a, g in zip(arrays, grad_mask, strict=True)]
    out_e = fn(ad, F, *ins_e, *constants)
    out_t = fn(torch, TF, *ins_t, *constants)
    both = Both(out_e, out_t)
    if isinstance(out_e, ad.Tensor) and out_e.requires_grad:
        cot = rng.standard_normal(out_t.shape).astype(np.float64)
        out_e.backward(ad.tensor(cot.astype(out_e.dtype)))
        out_t.backward(to_torch(cot.astype(to_numpy(out_t.detach()).dtype), device))
        both.engine_grads = [x.grad for x, g in zip(ins_e, grad_mask, strict=True) if g]
        both.torch_grads = [x.grad for x, g in zip(ins_t, grad_mask, strict=True) if g]
    return both


def check_both(fn, arrays, tol: Tol = FLOAT32, **kwargs) -> Both:
    """run_both, then assert forward and every gradient close (dtype and shape too)."""
    both = run_both(fn, arrays, **kwargs)
    outs_e = both.engine_out if isinstance(both.engine_out, tuple) else (both.engine_out,)
    outs_t = both.torch_out if isinstance(both.torch_out, tuple) else (both.torch_out,)
    for k, (oe, ot) in enumerate(zip(outs_e, outs_t, strict=True)):
        assert_close(oe, ot, rtol=tol.fwd_rtol, atol=tol.fwd_atol, what=f"forward output {k}")
    for i, (ge, gt) in enumerate(zip(both.engine_grads, both.torch_grads, strict=True)):
        assert (ge is None) == (gt is None), (
            f"input {i}: engine gradient {'is' if ge is None else 'is not'} None, torch's "
            f"{'is' if gt is None else 'is not'}")
        if gt is None:
            continue
        assert_close(ge, gt, rtol=tol.grad_rtol, atol=tol.grad_atol, what=f"gradient of input {i}")
    return both


def raises_like_torch(fn, arrays) -> BaseException:
    """``fn(lib, *tensors)`` raises in torch; the engine must raise an exception of
    torch's type (ours may be a subclass, e.g. ShapeError(RuntimeError)) whose
    message says what to do. Returns the engine's exception."""
    with pytest.raises(Exception) as expected:
        fn(torch, *(torch.from_numpy(a) for a in arrays))
    with pytest.raises(expected.type) as ours:
        fn(ad, *(ad.tensor(a) for a in arrays))
    assert len(str(ours.value)) > 20, "the message should say what to do"
    return ours.value


def in_float64(arrays) -> list[np.ndarray]:
    """The float32 arrays of a float32 case as float64 (for the float64 run of the same
    case); integer and bool arrays are left as they are."""
    return [a.astype(np.float64) if a.dtype == np.float32 else a for a in arrays]


def case_tests(cases: dict, float32: Tol = FLOAT32, overrides: dict | None = None):
    """The two parity tests of a module's ``cases`` (name -> (fn, float32 arrays)):
    each case in float32, with ``float32`` tolerances (or its entry in
    ``overrides``), and the same case in float64. Assign them to two test names:
    ``test_op_matches_torch_float32, test_op_matches_torch_float64 = case_tests(CASES)``."""
    overrides = overrides or {}

    @pytest.mark.parametrize("name", sorted(cases))
    def in_float32(name):
        fn, arrays = cases[name]
        check_both(fn, arrays, overrides.get(name, float32))

    @pytest.mark.parametrize("name", sorted(cases))
    def in_float64_too(name):
        fn, arrays = cases[name]
        check_both(fn, in_float64(arrays), FLOAT64)

    return in_float32, in_float64_too
