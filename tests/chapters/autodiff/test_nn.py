"""nn modules against torch.nn: same names, same weights (via a torch
state_dict), same forward values, same gradients for a random cotangent."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import chapters.autodiff as ad
from chapters.autodiff import nn
from chapters.torchcheck import assert_close, available_devices, to_numpy, to_torch

FWD = dict(rtol=1e-5, atol=1e-6)   # float32 forward
GRAD = dict(rtol=1e-4, atol=1e-5)  # float32 gradients (longer reduction chains)


def check_module_parity(build, input_shape, *, seed=0, integer_input=None, train=True,
                        fwd=FWD, grad=GRAD, device="cpu"):
    """Build one module with ``build(nn_namespace)`` in both engines, copy torch's
    weights into the engine's, run the same input, backpropagate the same random
    cotangent and compare output, input gradient and every parameter gradient."""
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    reference = build(torch.nn).to(device)
    ours = build(nn)
    ours.load_state_dict(reference.state_dict())
    reference.train(train)
    ours.train(train)
    if integer_input is None:
        x = rng.standard_normal(input_shape).astype(np.float32)
        xt, xe = to_torch(x, device, requires_grad=True), ad.tensor(x, requires_grad=True)
    else:
        x = rng.integers(0, integer_input, size=input_shape)
        xt, xe = to_torch(x, device), ad.tensor(x)
    yt, ye = reference(xt), ours(xe)
    assert_close(ye, yt, **fwd, what=f"{type(ours).__name__} forward")
    cotangent = rng.standard_normal(yt.shape).astype(np.float32)
    yt.backward(to_torch(cotangent, device))
    ye.backward(ad.tensor(cotangent))
    if integer_input is None:
        assert_close(xe.grad, xt.grad, **grad, what=f"{type(ours).__name__} input grad")
    theirs = dict(reference.named_parameters())
    for name, p in ours.named_parameters():
        assert_close(p.grad, theirs[name].grad, **grad,
                     what=f"{type(ours).__name__} grad of {name}")
    return reference, ours


@pytest.mark.parametrize("build, shape", [
    (lambda m: m.Linear(7, 5), (4, 7)),
    (lambda m: m.Linear(7, 5, bias=False), (2, 3, 7)),
    (lambda m: m.Conv2d(3, 4, 3, stride=1, padding=1), (2, 3, 6, 6)),
    (lambda m: m.Conv2d(2, 3, (3, 2), stride=2, padding=0), (2, 2, 7, 6)),
    (lambda m: m.LayerNorm(6), (3, 4, 6)),
    (lambda m: m.LayerNorm((4, 6)), (3, 4, 6)),
    (lambda m: m.Sequential(m.Linear(6, 8), m.ReLU(), m.Linear(8, 8), m.GELU(),
                            m.Linear(8, 8), m.Tanh(), m.Linear(8, 3), m.Sigmoid()), (5, 6)),
    (lambda m: m.GELU(approximate="tanh"), (4, 5)),
    (lambda m: m.Sequential(m.Conv2d(1, 2, 3), m.ReLU(), m.Flatten(), m.Linear(2 * 4 * 4, 3)),
     (2, 1, 6, 6)),
    (lambda m: m.Flatten(0, 1), (2, 3, 4)),
])
@pytest.mark.parametrize("device", available_devices())
def test_layer_matches_torch(build, shape, device):
    """On "cuda" (where present) the torch reference runs on the GPU: cuDNN may
    convolve in TF32 (10-bit mantissa, torch's default for convolutions), hence
    the looser tolerances there."""
    loose = device != "cpu"
    check_module_parity(build, shape, device=device,
                        fwd=dict(rtol=2e-3, atol=2e-3) if loose else FWD,
                        grad=dict(rtol=5e-3, atol=5e-3) if loose else GRAD)


def test_embedding_matches_torch():
    check_module_parity(lambda m: m.Embedding(10, 4), (3, 5), integer_input=10)


@pytest.mark.parametrize("build, shape", [
    (lambda m: m.BatchNorm1d(5), (8, 5)),
    (lambda m: m.BatchNorm1d(5, momentum=None), (8, 5, 3)),
    (lambda m: m.BatchNorm2d(3), (4, 3, 5, 5)),
])
def test_batchnorm_training_statistics_and_eval(build, shape):
    rng = np.random.default_rng(1)
    reference, ours = build(torch.nn), build(nn)
    ours.load_state_dict(reference.state_dict())
    for step in range(4):  # several batches: running stats follow torch's update rule
        x = (rng.standard_normal(shape) * 3 + step).astype(np.float32)
        xt, xe = to_torch(x, requires_grad=True), ad.tensor(x, requires_grad=True)
        yt, ye = reference(xt), ours(xe)
        assert_close(ye, yt, **FWD, what=f"batch norm train forward, step {step}")
        cot = rng.standard_normal(shape).astype(np.float32)
        yt.backward(torch.from_numpy(cot))
        ye.backward(ad.tensor(cot))
        assert_close(xe.grad, xt.grad, **GRAD, what="batch norm input grad")
    for name, buf in reference.named_buffers():
        assert_close(dict(ours.named_buffers())[name], buf, **FWD, what=f"buffer {name}")
    reference.eval()
    ours.eval()
    x = rng.standard_normal(shape).astype(np.float32)
    assert_close(ours(ad.tensor(x)), reference(to_torch(x)), **FWD, what="batch norm eval")


def test_batchnorm_rejects_wrong_rank():
    with pytest.raises(ValueError, match="BatchNorm2d"):
        nn.BatchNorm2d(3)(ad.tensor(np.zeros((2, 3), np.float32)))


def test_dropout_train_and_eval():
    layer = nn.Dropout(p=0.25)
    x = ad.tensor(np.ones((200, 200), np.float32), requires_grad=True)
    y = layer(x)
    kept = to_numpy(y) != 0
    assert abs(kept.mean() - 0.75) < 0.01  # 40 000 Bernoulli(0.75) draws: sd 0.002
    np.testing.assert_allclose(to_numpy(y)[kept], 1 / 0.75, rtol=1e-6)
    y.sum().backward()
    np.testing.assert_array_equal(to_numpy(x.grad) != 0, kept)  # the same mask backward
    layer.eval()
    np.testing.assert_array_equal(to_numpy(layer(x)), to_numpy(x))
    with pytest.raises(ValueError):
        nn.Dropout(1.5)


def test_names_and_traversal_match_torch():
    class TorchTwo(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.block = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3))
            self.head = torch.nn.Linear(3, 2)

    class OurTwo(nn.Module):
        def __init__(self):
            super().__init__()
            self.block = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3))
            self.head = nn.Linear(3, 2)
            self.scale = 2.0  # a plain attribute is neither parameter nor module

    theirs, ours = TorchTwo(), OurTwo()
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert len(list(ours.children())) == 2 and ours.scale == 2.0
    ours.eval()
    assert not any(m.training for m in ours.modules())
    ours.train()
    assert all(m.training for m in ours.modules())


def test_load_torch_state_dict_copies_values_and_checks_keys():
    theirs = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4))
    with torch.no_grad():
        theirs[1].running_mean.fill_(0.5)
    theirs[1].num_batches_tracked.fill_(7)
    ours = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    ours.load_state_dict(theirs.state_dict())
    for key, value in theirs.state_dict().items():
        assert_close(ours.state_dict()[key], value, rtol=0, atol=0, what=key)
    with pytest.raises(KeyError, match="missing keys"):
        ours.load_state_dict({"0.weight": theirs[0].weight})
    bad = dict(theirs.state_dict(), **{"0.weight": torch.zeros(5, 3)})
    with pytest.raises(ValueError, match=r"0\.weight.*\(5, 3\).*\(4, 3\)"):
        ours.load_state_dict(bad)
    # an engine state_dict round-trips into a fresh model
    fresh = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    fresh.load_state_dict(ours.state_dict())
    assert_close(fresh[0].weight, ours[0].weight, rtol=0, atol=0, what="round trip")


def test_state_dict_shares_memory_like_torch():
    layer = nn.Linear(2, 2)
    sd = layer.state_dict()
    layer.weight.data[...] = 3.0
    np.testing.assert_array_equal(to_numpy(sd["weight"]), 3.0)


def test_zero_grad_and_dtype_casts():
    model = nn.Sequential(nn.Linear(3, 2), nn.BatchNorm1d(2))
    model(ad.tensor(np.ones((4, 3), np.float32))).sum().backward()
    assert all(p.grad is not None for p in model.parameters())
    model.zero_grad(set_to_none=False)
    assert all(np.all(to_numpy(p.grad) == 0) for p in model.parameters())
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())
    model.half()
    assert all(p.dtype == np.float16 for p in model.parameters())
    assert model[1].num_batches_tracked.dtype == np.int64  # integer buffers keep their dtype
    assert model[1].running_var.dtype == np.float16
    model.float()
    assert all(p.dtype == np.float32 for p in model.parameters())


def test_parameter_is_a_leaf_requiring_grad():
    p = nn.Parameter(np.zeros(3, np.float32))
    assert isinstance(p, ad.Tensor) and p.requires_grad and p.is_leaf
    assert not nn.Parameter(np.zeros(3, np.float32), requires_grad=False).requires_grad
    with pytest.raises(TypeError, match="nn.Parameter"):
        nn.Linear(2, 2).register_parameter("extra", ad.tensor([1.0]))


def test_module_without_super_init_is_a_clear_error():
    class Forgot(nn.Module):
        def __init__(self):
            self.fc = nn.Linear(2, 2)

    with pytest.raises(AttributeError, match="super"):
        Forgot()


@pytest.mark.parametrize("build", [
    lambda m: m.Linear(300, 200),
    lambda m: m.Conv2d(16, 8, 5),
])
def test_default_init_has_torch_distribution(build):
    """Linear/Conv2d: weight and bias ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in))."""
    ours, theirs = build(nn), build(torch.nn)
    fan_in = int(np.prod(to_numpy(ours.weight).shape[1:]))
    bound = 1 / math.sqrt(fan_in)
    for name, value in [("weight", ours.weight), ("bias", ours.bias)]:
        a, t = to_numpy(value), to_numpy(getattr(theirs, name))
        assert np.abs(a).max() <= bound and np.abs(t).max() <= bound
        n = a.size
        # uniform variance b^2/3; the sample variance's sd is about b^2 * 0.3 / sqrt(n)
        assert abs(a.var() - bound**2 / 3) < 5 * 0.3 * bound**2 / math.sqrt(n), name
        assert abs(a.mean()) < 5 * bound / math.sqrt(3 * n), name
        assert not np.allclose(a, a.flat[0])


@pytest.mark.parametrize("fill, mean, var", [
    (lambda t: nn.init.xavier_uniform_(t), 0.0, 2 / (400 + 300)),
    (lambda t: nn.init.xavier_normal_(t, gain=2.0), 0.0, 4 * 2 / (400 + 300)),
    (lambda t: nn.init.kaiming_normal_(t, nonlinearity="relu"), 0.0, 2 / 400),
    (lambda t: nn.init.kaiming_uniform_(t, mode="fan_out", nonlinearity="relu"), 0.0, 2 / 300),
    (lambda t: nn.init.normal_(t, 1.0, 0.5), 1.0, 0.25),
])
def test_init_functions_match_torch_formulas(fill, mean, var):
    ours = nn.Parameter(np.zeros((300, 400), np.float32))
    fill(ours)
    a = to_numpy(ours)
    assert abs(a.mean() - mean) < 5 * math.sqrt(var / a.size)
    assert abs(a.var() / var - 1) < 0.02  # 120 000 draws: relative sd of a variance ~0.5%


def test_init_torch_same_formula_as_ours():
    """Our formulas against torch's own functions: same empirical variances."""
    for ours_fn, torch_fn in [(nn.init.xavier_uniform_, torch.nn.init.xavier_uniform_),
                              (nn.init.kaiming_normal_, torch.nn.init.kaiming_normal_)]:
        a = ours_fn(nn.Parameter(np.zeros((200, 500), np.float32)))
        t = torch_fn(torch.empty(200, 500))
        assert abs(to_numpy(a).var() / t.var().item() - 1) < 0.03
    assert nn.init.calculate_gain("tanh") == torch.nn.init.calculate_gain("tanh")
    assert nn.init.calculate_gain("leaky_relu", 0.2) == torch.nn.init.calculate_gain(
        "leaky_relu", 0.2)


@pytest.mark.parametrize("loss, target", [("MSELoss", "float"), ("CrossEntropyLoss", "class")])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_losses_match_torch(loss, target, reduction):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((6, 5)).astype(np.float32) * 4
    y = (rng.standard_normal((6, 5)).astype(np.float32) if target == "float"
         else rng.integers(0, 5, size=6))
    xt, xe = to_torch(x, requires_grad=True), ad.tensor(x, requires_grad=True)
    lt = getattr(torch.nn, loss)(reduction=reduction)(xt, torch.from_numpy(y))
    le = getattr(nn, loss)(reduction=reduction)(xe, ad.tensor(y))
    assert_close(le, lt, **FWD, what=f"{loss} value")
    lt.backward()
    le.backward()
    assert_close(xe.grad, xt.grad, **GRAD, what=f"{loss} grad")


def test_assigning_none_keeps_a_declared_parameter_slot():
    layer = nn.Linear(2, 3)
    layer.bias = None
    assert layer.bias is None
    assert [n for n, _ in layer.named_parameters()] == ["weight"]
    assert list(layer.state_dict()) == ["weight"]
    assert "bias" in layer._parameters  # as torch: still declared, so it can be set again


def test_nn_functional_is_the_functional_module_under_torchs_name():
    """``import torch.nn.functional as F``, the usual idiom, works on the engine
    with one edit of the package name, and names the same module."""
    import chapters.autodiff.nn.functional as by_path

    from chapters.autodiff.nn import functional as by_name

    assert by_path is by_name is ad.nn.functional is ad.functional
    x = ad.tensor(np.array([-1.0, 2.0], np.float32))
    np.testing.assert_array_equal(by_path.relu(x).data, [0.0, 2.0])
