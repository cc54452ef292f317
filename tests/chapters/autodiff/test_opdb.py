"""Every entry of the op table (``opdb.py``), on both engines: forward values,
dtypes and shapes in every dtype torch accepts, gradients against a random
cotangent in float32/float64, the refusal of the dtypes torch refuses, the
error inputs, and a coverage check that no public op lacks an entry."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import chapters.autodiff as ad
import chapters.autodiff.functional as F
from chapters.torchcheck import assert_close
from tests.chapters.autodiff.opdb import (
    DTYPES,
    FLOATING,
    GRAD_DTYPES,
    OPS,
    inputs,
    numpy_dtype,
    torch_dtypes,
    torch_refuses,
)

LOW_PRECISION = ("float16", "bfloat16")


#: numpy warns on empty reductions and log(0), torch on var/std of one element: the
#: values are what is compared, the warnings are noise here
pytestmark = [pytest.mark.filterwarnings("ignore::RuntimeWarning"),
              pytest.mark.filterwarnings("ignore:.*degrees of freedom:UserWarning")]


def _cases():
    """One case per entry and dtype; the samples run inside it (one pytest case
    per sample would spend most of the table's time in pytest itself)."""
    for op in OPS:
        for dtype in torch_dtypes(op.name):
            reason = op.xfail.get(dtype)
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            yield pytest.param(op, dtype, marks=marks, id=f"{op.name}-{dtype}")


def _refused():
    for op in OPS:
        for dtype in DTYPES:
            if dtype not in torch_dtypes(op.name) and any(s.arrays for s in op.samples):
                reason = op.xfail.get(f"refuse-{dtype}")
                marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
                yield pytest.param(op, dtype, marks=marks, id=f"{op.name}-{dtype}")


def _errors():
    for op in OPS:
        for k, err in enumerate(op.errors):
            yield pytest.param(op, k, id=f"{op.name}-{err.desc}")


def _flat(out) -> list:
    """The tensors of an op's result (a tensor, or a tuple/list of them, nested)."""
    if isinstance(out, tuple | list):
        return [t for o in out for t in _flat(o)]
    return [out]


def _run(op, form, sample, dtype, lib, requires_grad):
    leaves, args = inputs(lib, sample, dtype, requires_grad)
    return leaves, _flat(form(lib, F if lib is ad else TF, *args, **sample.kwargs))


def _tolerance(op, dtype: str, out_dtype: np.dtype):
    """The input dtype's tolerance for low-precision inputs, else the output's."""
    if dtype in LOW_PRECISION:
        return op.tolerance(dtype)
    name = next((d for d in DTYPES if numpy_dtype(d) == out_dtype), "int64")
    return op.tolerance(name)


@pytest.mark.parametrize(("op", "dtype"), list(_cases()))
def test_op_matches_torch(op, dtype):
    """Every sample of the entry in ``dtype``; a failure names the sample."""
    for sample in op.samples:
        try:
            check_sample(op, sample, dtype)
        except Exception as err:
            err.add_note(f"sample {sample.desc!r} of entry {op.name!r} in {dtype}")
            raise


def check_sample(op, sample, dtype):
    """Each lambda of the entry on both engines: same values, dtypes, shapes,
    the same ``requires_grad`` on the result, and (float32/float64) the same
    gradients for one random cotangent."""
    wants_grad = dtype in FLOATING and bool(sample.arrays)
    for n, (key, form) in enumerate(op.fns.items()):
        leaves_t, outs_t = _run(op, form, sample, dtype, torch, wants_grad)
        leaves_e, outs_e = _run(op, form, sample, dtype, ad, wants_grad)
        assert len(outs_e) == len(outs_t), f"{key}: {len(outs_e)} outputs, torch {len(outs_t)}"
        for i, (oe, ot) in enumerate(zip(outs_e, outs_t, strict=True)):
            assert isinstance(oe, ad.Tensor), f"{key}: output {i} is a {type(oe).__name__}"
            tol = _tolerance(op, dtype, numpy_dtype(str(ot.dtype).removeprefix("torch.")))
            assert_close(oe, ot, rtol=tol.fwd_rtol, atol=tol.fwd_atol,
                         what=f"{key} output {i}")
            assert op.differentiable is None or oe.requires_grad == ot.requires_grad, (
                f"{key} output {i}: requires_grad {oe.requires_grad}, torch {ot.requires_grad}")
        if op.differentiable is False:
            assert not any(o.requires_grad for o in outs_t), (
                f"{key}: the table says not differentiable, but torch's result requires grad")
        if op.differentiable and wants_grad:
            assert n or outs_t[0].requires_grad, (
                f"{key}: the table says differentiable, torch's result does not require grad")
            if dtype in GRAD_DTYPES:
                _check_gradients(op, key, outs_e, outs_t, leaves_e, leaves_t, dtype)


def _check_gradients(op, key, outs_e, outs_t, leaves_e, leaves_t, dtype):
    """Backpropagate one random cotangent through the first output that needs it."""
    k = next((i for i, o in enumerate(outs_t) if o.requires_grad), None)
    if k is None:
        return
    cotangent = np.random.default_rng(k).standard_normal(outs_t[k].shape)
    outs_t[k].backward(torch.from_numpy(cotangent.astype(numpy_dtype(dtype))).to(outs_t[k].dtype))
    outs_e[k].backward(ad.tensor(cotangent, dtype=outs_e[k].dtype))
    tol = op.tolerance(dtype)
    for i, (le, lt) in enumerate(zip(leaves_e, leaves_t, strict=True)):
        assert (le.grad is None) == (lt.grad is None), (
            f"{key}: gradient of input {i} is {'' if le.grad is None else 'not '}None here, "
            f"{'' if lt.grad is None else 'not '}None in torch")
        if lt.grad is not None:
            assert_close(le.grad, lt.grad, rtol=tol.grad_rtol, atol=tol.grad_atol,
                         what=f"{key} gradient of input {i}")


@pytest.mark.parametrize(("op", "dtype"), list(_refused()))
def test_refuses_the_dtypes_torch_refuses(op, dtype):
    """Where torch refuses a dtype, the engine raises too, an instance of torch's class
    (on the first lambda and sample torch refuses)."""
    form, sample = torch_refuses(op, dtype)
    with pytest.raises(Exception) as theirs:
        _run(op, form, sample, dtype, torch, False)
    with pytest.raises(theirs.type) as ours:
        _run(op, form, sample, dtype, ad, False)
    assert len(str(ours.value)) > 20, f"the message should say what to do: {ours.value!r}"


@pytest.mark.parametrize(("op", "k"), list(_errors()))
def test_error_inputs_raise_like_torch(op, k):
    err = op.errors[k]
    with pytest.raises(Exception) as theirs:
        err.fn(torch, TF, *(torch.from_numpy(np.asarray(a)) for a in err.arrays))
    with pytest.raises(theirs.type) as ours:
        err.fn(ad, F, *(ad.tensor(a) for a in err.arrays))
    assert len(str(ours.value)) > 20, f"the message should say what to do: {ours.value!r}"


# ------------------------------------------------------------------ coverage

#: public callables that are not ops on tensors, and why the table skips them
NOT_OPS = {
    **dict.fromkeys(["backward", "grad", "jvp", "gradcheck", "Tensor.backward"],
                    "autograd drivers, not ops: test_basics.py, test_forward_mode.py, "
                    "test_gradcheck_anomaly.py"),
    "is_grad_enabled": "reads the grad mode: test_modes.py",
    **dict.fromkeys(["arange", "as_tensor", "empty", "eye", "full", "linspace", "logspace",
                     "ones", "zeros", "tensor",
                     "rand", "randn", "randn_like", "manual_seed"],
                    "factories from sizes or data, no input tensor to compare (test_basics.py; "
                    "random ones draw from another stream than torch's)"),
    **dict.fromkeys(["from_numpy", "randint", "randperm"],
                    "factories from sizes or an array, no input tensor to compare "
                    "(test_api_rand.py; random ones draw from another stream than torch's)"),
    **dict.fromkeys([f"Tensor.{n}" for n in (
        "stride", "is_contiguous", "data_ptr", "storage_offset", "__format__")],
        "reads memory layout or formats a number, not an op: test_api_rand.py"),
    "Tensor.cuda": "refused (this engine has no GPU), with what to do: test_api_rand.py",
    "saved_tensor_bytes": "memory accounting: test_memory.py",
    **dict.fromkeys(["get_default_dtype", "promote_types", "can_cast"],
                    "questions about dtypes, no tensor input: test_ops_stats.py"),
    "repeat": "torch has no top-level repeat to compare with (only Tensor.repeat, whose entry "
              "runs the same code)",
    "F.attention_bias": "the engine's helper behind scaled_dot_product_attention; torch has "
                        "no such public function",
    **dict.fromkeys([f"Tensor.{n}" for n in (
        "register_hook", "register_post_accumulate_grad_hook", "retain_grad", "requires_grad_",
        "detach_")], "autograd bookkeeping, not a computation: test_hooks.py, test_basics.py"),
    **dict.fromkeys([f"Tensor.{n}" for n in (
        "dim", "size", "numel", "element_size", "is_floating_point", "item", "tolist",
        "numpy")], "reads metadata or converts to Python/numpy: test_basics.py"),
    **dict.fromkeys([f"Tensor.__{n}__" for n in (
        "init", "repr", "len", "iter", "bool", "float", "int", "index", "array", "pos",
        "setitem", "init_subclass", "subclasshook")],
        "Python protocol, not an op (test_basics.py, test_torch_semantics.py)"),
}


def _public_names() -> set[str]:
    top = {n for n in ad.__all__ if callable(getattr(ad, n))
           and not isinstance(getattr(ad, n), type | np.dtype)}
    tensor = {f"Tensor.{n}" for n, v in inspect.getmembers(ad.Tensor)
              if callable(v) and not isinstance(v, type)
              and (not n.startswith("_") or (n.startswith("__") and getattr(object, n, None)
                                             is not v))}
    functional = {f"F.{n}" for n, v in inspect.getmembers(F, inspect.isfunction)
                  if not n.startswith("_") and v.__module__.startswith(f"{F.__name__}.")}
    return top | tensor | functional


def test_every_public_op_has_an_entry():
    covered = {key for op in OPS for key in op.fns}
    missing = sorted(_public_names() - covered - set(NOT_OPS))
    assert not missing, ("public ops with no entry in opdb.py (add one, or a reasoned "
                         f"exclusion to NOT_OPS): {missing}")


def test_exclusions_and_entries_name_real_ops():
    public = _public_names()
    stale = sorted((set(NOT_OPS) | {k for op in OPS for k in op.fns}) - public
                   - {"Tensor.T", "Tensor.mT"})
    assert not stale, f"opdb.py / NOT_OPS name ops that do not exist: {stale}"
    both = sorted(set(NOT_OPS) & {k for op in OPS for k in op.fns})
    assert not both, f"excluded and covered at once: {both}"


def test_entry_names_are_unique():
    """Names key the dtype probe and the test ids: a repeat would test one entry twice."""
    names = [op.name for op in OPS]
    assert len(set(names)) == len(names), sorted({n for n in names if names.count(n) > 1})


def test_every_entry_has_a_dtype_torch_accepts():
    """An entry whose first sample torch refuses in every dtype tests nothing."""
    empty = [op.name for op in OPS if not torch_dtypes(op.name)]
    assert not empty, f"entries torch runs in no dtype (fix their first sample): {empty}"
