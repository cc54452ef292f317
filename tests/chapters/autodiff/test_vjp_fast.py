"""``vjp_fast``, an op's derivative rule on numpy arrays, gives what its Tensor rule gives.

For every op registered with a fast form, the Tensor rule (the definition)
and the fast form run on the same history node and gradient, in every
floating dtype; their arrays must be equal bit for bit (NaN where NaN) and of
one dtype. The engine must take the fast form only when nothing needs the
Tensor path: not under ``create_graph``, not while an observer (anomaly
detection, forward mode) watches the rules."""

import numpy as np
import pytest

import chapters.autodiff as ad
from chapters.autodiff import dtypes, rules
from chapters.autodiff.modes import OpObserver, observing
from chapters.autodiff.tensor import apply

RNG = np.random.default_rng(0)


def _values(shape, positive=False) -> np.ndarray:
    values = np.asarray(RNG.standard_normal(shape) * 3)
    return np.abs(values) + 0.1 if positive else values


#: op -> calls to check: (input arrays as float64, attrs); None = a constant input
CASES = {
    "add": [((_values(6), _values(6)), {}), ((_values((2, 3)), _values(3)), {})],
    "sub": [((_values(6), _values(6)), {}), ((_values(6), None), {})],
    "mul": [((_values(6), _values(6)), {}), ((_values((2, 3)), _values((1, 3))), {}),
            ((_values(6), None), {}), ((None, _values(6)), {})],
    "neg": [((_values(6),), {})],
    "exp": [((_values(6),), {})],
    "log": [((_values(6, positive=True),), {})],
    "sqrt": [((_values(6, positive=True),), {})],
    "tanh": [((_values(6),), {})],
    "sigmoid": [((_values(6),), {})],
    "gelu": [((_values(64),), {}), ((_values(64),), {"approximate": "tanh"})],
    "layer_norm": [((_values((4, 3, 8)), _values(8), _values(8)), {"dims": (-1,), "eps": 1e-5}),
                   ((_values((4, 3, 8)), _values((3, 8)), _values((3, 8))),
                    {"dims": (-2, -1), "eps": 1e-3}),
                   ((_values((4, 8)), None, None), {"dims": (-1,), "eps": 1e-5}),
                   ((_values((4, 8)), _values(8), None), {"dims": (-1,), "eps": 1e-5})],
    "batch_norm": [((_values((4, 3, 5)), _values(3), _values(3)), {"dims": (0, 2), "eps": 1e-5}),
                   ((_values((6, 3)), None, None), {"dims": (0,), "eps": 1e-5})],
    "linear": [((_values((4, 3, 8)), _values((5, 8)), _values(5)), {}),
               ((_values(8), _values((5, 8))), {})],
    "softmax": [((_values((4, 8)),), {"dim": -1}), ((_values((4, 8)),), {"dim": 0})],
    "log_softmax": [((_values((4, 8)),), {"dim": -1}), ((_values((4, 8)),), {"dim": 0})],
}
SCALARS = {  # 0-d arrays, which numpy computes as scalars
    op: [(tuple(None if a is None else a.reshape(-1)[0].reshape(()) for a in arrays), attrs)
         for arrays, attrs in cases] for op, cases in CASES.items()
    if not op.endswith("_norm") and op != "linear"
}


def test_every_fast_form_is_checked_here():
    assert set(rules.VJP_FAST) <= set(CASES), "add a case for each new vjp_fast"


def test_a_fast_form_needs_its_tensor_rule():
    with pytest.raises(ValueError, match="register vjp too"):
        rules.register("a_fast_form_alone", vjp_fast=lambda ctx, g: (g,))
    assert "a_fast_form_alone" not in rules.OPS


def _node(op: str, arrays, attrs: dict, dtype):
    """The history node of ``op`` on ``arrays`` in ``dtype`` (None: a constant,
    an array of 2s that needs no gradient)."""
    if op.endswith("_norm"):  # optional weight and bias: absent, not constant
        inputs = tuple(None if a is None else ad.tensor(a.astype(np.float32)).to(dtype)
                       .requires_grad_() for a in arrays)
        out = apply(op, inputs, dict(attrs))
        return out.grad_fn, ad.tensor(_values(out.shape).astype(np.float32)).to(dtype)
    shape = next(a.shape for a in arrays if a is not None)
    inputs = tuple(ad.tensor(np.full(shape, 2.0)).to(dtype) if a is None
                   else ad.tensor(a.astype(np.float32)).to(dtype).requires_grad_()
                   for a in arrays)
    out = apply(op, inputs, dict(attrs))
    return out.grad_fn, ad.tensor(_values(out.shape).astype(np.float32)).to(dtype)


@pytest.mark.parametrize("dtype", dtypes.FLOATING, ids=str)
@pytest.mark.parametrize("op", sorted(CASES))
def test_fast_form_equals_the_tensor_rule(op, dtype):
    for arrays, attrs in CASES[op] + SCALARS.get(op, []):
        node, g = _node(op, arrays, attrs, dtype)
        slow_rule = rules.VJP[op]
        slow = slow_rule(node, g)
        rule, fast_form = rules.VJP_FAST[op]
        assert rule is slow_rule
        fast = fast_form(node, g.data)
        if fast is None:  # declined: the engine runs the Tensor rule
            assert dtype in dtypes.LOW_PRECISION or node.out_shape == (), f"{op}: {dtype}"
            continue
        fast = [None if f is None else np.asarray(f) for f in fast]  # as the engine does
        assert len(fast) == len(slow)
        for i, (s, f) in enumerate(zip(slow, fast, strict=True)):
            assert (s is None) == (f is None), (op, i)
            if s is None:
                continue
            assert f.dtype == s.data.dtype, (op, i, f.dtype, s.data.dtype)
            assert f.shape == s.data.shape, (op, i)
            assert np.array_equal(f.astype(np.float64), s.data.astype(np.float64),
                                  equal_nan=True), (op, attrs, i)


def _chain_grads(dtype, **backward):
    """Gradients of a graph using every fast form, through the engine."""
    values = np.random.default_rng(1).standard_normal((2, 8)).astype(np.float32)
    a, b = (ad.tensor(v).to(dtype).requires_grad_() for v in values)
    y = (a * b + a).tanh() - b
    y = y.exp().sigmoid() * a.abs().sqrt().log().neg()
    y = ad.functional.gelu(y) + ad.functional.gelu(b, approximate="tanh")
    y = ad.functional.layer_norm(y.reshape(2, 4), (4,), a[:4], b[4:]).reshape(8) * a
    y = ad.functional.linear(y.reshape(4, 2), b.reshape(4, 2), a[:4]).reshape(16)[:8] * b
    y.sum().backward(**backward)
    return a.grad.data, b.grad.data


@pytest.mark.parametrize("dtype", dtypes.FLOATING, ids=str)
def test_backward_with_fast_forms_equals_backward_without(dtype, monkeypatch):
    fast = _chain_grads(dtype)
    monkeypatch.setattr(rules, "VJP_FAST", {})
    monkeypatch.setattr(ad.engine, "VJP_FAST", {})
    slow = _chain_grads(dtype)
    for f, s in zip(fast, slow, strict=True):
        assert f.dtype == s.dtype == dtype
        assert np.array_equal(f.astype(np.float64), s.astype(np.float64), equal_nan=True)


class _Spy(dict):
    """A VJP_FAST table that counts look-ups."""

    looked_up = 0

    def get(self, key, default=None):
        type(self).looked_up += 1
        return super().get(key, default)


@pytest.mark.parametrize("mode", ["plain", "create_graph", "observed"])
def test_fast_forms_run_only_when_nothing_needs_the_tensor_path(mode, monkeypatch):
    spy = _Spy(rules.VJP_FAST)
    _Spy.looked_up = 0
    monkeypatch.setattr(ad.engine, "VJP_FAST", spy)
    x = ad.tensor(_values(4).astype(np.float32), requires_grad=True)
    loss = (x * x).tanh().sum()
    if mode == "observed":
        with observing(OpObserver()):
            loss.backward()
    else:
        loss.backward(create_graph=mode == "create_graph")
    assert (_Spy.looked_up > 0) == (mode == "plain")


def test_a_replaced_tensor_rule_runs_instead_of_the_fast_form(monkeypatch):
    broken = rules.VJP["tanh"]
    monkeypatch.setitem(rules.VJP, "tanh", lambda ctx, g: tuple(2 * gi for gi in broken(ctx, g)))
    x = ad.tensor(_values(4).astype(np.float32), requires_grad=True)
    x.tanh().sum().backward()
    np.testing.assert_allclose(x.grad.data, 2 * (1 - np.tanh(x.data) ** 2), rtol=1e-6)


def test_a_hook_that_changes_the_dtype_gets_the_tensor_rule():
    x = ad.tensor(_values(4).astype(np.float32), requires_grad=True)
    y = x.tanh()
    y.register_hook(lambda g: g.double())
    y.sum().backward()
    z = np.tanh(x.data)  # the float32 output the rule reads
    expected = 1 - z * z
    assert x.grad.dtype == np.float32
    np.testing.assert_allclose(x.grad.data, expected, rtol=1e-6)
