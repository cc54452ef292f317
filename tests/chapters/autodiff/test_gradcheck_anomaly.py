"""gradcheck against central differences, and anomaly detection."""

import warnings

import numpy as np
import pytest
import torch

import chapters.autodiff as ad
import chapters.autodiff.functional as F
from chapters.autodiff.gradcheck import GradcheckError
from chapters.autodiff.rules import VJP

FUNCTIONS = {
    "elementwise": lambda x, y: (x * y).exp() / (1 + y * y) - x.tanh(),
    "reductions": lambda x, y: x.var(dim=1) + y.amax(dim=0).sum() + x.logsumexp(dim=0).mean(),
    "nn": lambda x, y: F.layer_norm(F.gelu(x @ y.T), (3,)),
    "conv": lambda x, y: F.avg_pool2d(F.conv2d(x.reshape(1, 1, 3, 4), y.reshape(1, 1, 3, 4)[
        :, :, :2, :2], padding=1), 2),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_gradcheck_passes_for_correct_rules(name):
    rng = np.random.default_rng(0)
    x = ad.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    y = ad.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    assert ad.gradcheck(FUNCTIONS[name], (x, y))


def test_gradcheck_names_input_index_and_both_values(monkeypatch):
    broken = VJP["tanh"]
    monkeypatch.setitem(VJP, "tanh", lambda ctx, g: tuple(gi * 1.5 for gi in broken(ctx, g)))
    x = ad.tensor([[0.3, -0.2]], dtype=ad.float64, requires_grad=True)
    y = ad.tensor([1.0, 2.0], dtype=ad.float64, requires_grad=True)
    with pytest.raises(GradcheckError) as err:
        ad.gradcheck(lambda x, y: x * y + y.tanh(), (x, y))
    message = str(err.value)
    assert "input 1" in message and "input index (0,)" in message
    t = np.tanh(1.0)
    assert f"numerical {1 - t * t + 0.3:.6f}"[:18] in message.replace("np.float64(", "")
    assert not ad.gradcheck(lambda x, y: x * y + y.tanh(), (x, y), raise_exception=False)


def test_gradcheck_runs_in_float64_even_for_float32_inputs():
    x = ad.tensor([0.1, 0.2], requires_grad=True)
    seen = []

    def f(v):
        seen.append(v.dtype)
        return v.exp()

    assert ad.gradcheck(f, (x,))
    assert set(seen) == {ad.float64}


def test_anomaly_names_the_backward_op_and_its_creation_site():
    x = ad.tensor([0.0, 1.0], requires_grad=True)
    with ad.detect_anomaly():
        y = x.sqrt()  # d sqrt / dx at 0 is inf
        with pytest.raises(RuntimeError) as err:
            y.sum().backward()
    message = str(err.value)
    assert "SqrtBackward0" in message and "inf" in message
    assert "test_gradcheck_anomaly.py" in message and "y = x.sqrt()" in message


def test_anomaly_raises_runtime_error_in_both_engines():
    for lib in (ad, torch):
        x = lib.tensor([0.0, 4.0], requires_grad=True)
        with lib.autograd.detect_anomaly() if lib is torch else lib.detect_anomaly():
            y = (x.sqrt() * lib.tensor([0.0, 1.0])).sum()
            with pytest.raises(RuntimeError, match="SqrtBackward0"), warnings.catch_warnings():
                warnings.simplefilter("ignore")  # torch also warns with the forward trace
                y.backward()


def test_anomaly_names_the_first_forward_op_producing_nan():
    x = ad.tensor([-1.0, 1.0], requires_grad=True)
    with ad.detect_anomaly():
        h = x * 2
        with pytest.raises(RuntimeError, match="op 'log' produced nan") as err:
            h.log()
    assert "h.log()" in str(err.value)


def test_without_anomaly_mode_nans_flow_silently():
    x = ad.tensor([-1.0, 1.0], requires_grad=True)
    with np.errstate(invalid="ignore"):
        y = x.log().sum()
        y.backward()
    assert np.isnan(y.item())
    np.testing.assert_array_equal(x.grad.numpy(), [-1.0, 1.0])  # d log x = 1/x, finite


def test_anomaly_can_check_backward_only_as_torch_does():
    x = ad.tensor([0.0, 4.0], requires_grad=True)
    with ad.detect_anomaly(check_forward=False), np.errstate(divide="ignore"):
        y = x.log()  # -inf in forward: allowed here
        with pytest.raises(RuntimeError, match="LogBackward0 returned inf|'LogBackward0'"):
            y.sum().backward()
