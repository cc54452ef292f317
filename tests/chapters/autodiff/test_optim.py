"""Optimizers against torch.optim: the same model, the same gradients each step
(from the same data), and parameter trajectories that stay together over many steps."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chapters.autodiff as ad
from chapters.autodiff import nn, optim
from chapters.torchcheck import assert_close, to_numpy, to_torch

STEPS = 60


pytestmark = pytest.mark.usefixtures("one_torch_thread")



def build(m):
    return m.Sequential(m.Linear(5, 8), m.Tanh(), m.Linear(8, 3))


def run_both(make_opt, steps=STEPS, seed=0, lr_change_at=None):
    """Train one tiny regression net in both engines with one optimizer factory
    ``make_opt(optim_module, params)``; return both models."""
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    theirs = build(torch.nn)
    ours = build(nn)
    ours.load_state_dict(theirs.state_dict())
    opt_t, opt_e = make_opt(torch.optim, theirs.parameters()), make_opt(optim, ours.parameters())
    for step in range(steps):
        x = rng.standard_normal((16, 5)).astype(np.float32)
        y = rng.standard_normal((16, 3)).astype(np.float32)
        for model, opt, lib, mk in [(theirs, opt_t, torch.nn.functional, to_torch),
                                    (ours, opt_e, ad.functional, ad.tensor)]:
            opt.zero_grad()
            lib.mse_loss(model(mk(x)), mk(y)).backward()
            opt.step()
        if step == lr_change_at:
            for opt in (opt_t, opt_e):
                for group in opt.param_groups:
                    group["lr"] *= 0.1
    return theirs, ours


def assert_same_parameters(theirs, ours, rtol, atol, what):
    reference = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        assert_close(p, reference[name], rtol=rtol, atol=atol, what=f"{what}: {name}")


@pytest.mark.parametrize("kwargs", [
    dict(lr=0.1),
    dict(lr=0.05, momentum=0.9),
    dict(lr=0.05, momentum=0.9, dampening=0.3),
    dict(lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-2),
    dict(lr=0.1, weight_decay=0.1),
])
def test_sgd_trajectory_matches_torch(kwargs):
    theirs, ours = run_both(lambda o, p: o.SGD(p, **kwargs))
    assert_same_parameters(theirs, ours, rtol=1e-4, atol=1e-5, what=f"SGD {kwargs}")


@pytest.mark.parametrize("name, kwargs", [
    ("Adam", dict(lr=1e-2)),
    ("Adam", dict(lr=1e-2, betas=(0.8, 0.99), eps=1e-6, weight_decay=1e-2)),
    ("AdamW", dict(lr=1e-2)),
    ("AdamW", dict(lr=1e-2, weight_decay=0.3, betas=(0.5, 0.9))),
])
def test_adam_family_trajectory_matches_torch(name, kwargs):
    theirs, ours = run_both(lambda o, p: getattr(o, name)(p, **kwargs), lr_change_at=30)
    assert_same_parameters(theirs, ours, rtol=1e-4, atol=1e-5, what=f"{name} {kwargs}")


def test_parameter_groups_have_their_own_hyperparameters():
    def make(o, params):
        params = list(params)
        return o.SGD([{"params": params[:2]}, {"params": params[2:], "lr": 0.5}], lr=0.01,
                     momentum=0.5)

    theirs, ours = run_both(make, steps=20)
    assert_same_parameters(theirs, ours, rtol=1e-4, atol=1e-5, what="param groups")
    opt = make(optim, build(nn).parameters())
    assert [g["lr"] for g in opt.param_groups] == [0.01, 0.5]
    assert opt.param_groups[1]["momentum"] == 0.5


def test_state_dict_round_trip_continues_identically():
    rng = np.random.default_rng(0)
    x = ad.tensor(rng.standard_normal((8, 5)).astype(np.float32))
    a, b = build(nn), build(nn)
    b.load_state_dict(a.state_dict())
    opt_a = optim.Adam(a.parameters(), lr=1e-2)
    for _ in range(3):
        opt_a.zero_grad()
        a(x).pow(2).mean().backward()
        opt_a.step()
    b.load_state_dict(a.state_dict())
    opt_b = optim.Adam(b.parameters(), lr=1.0)
    opt_b.load_state_dict(opt_a.state_dict())
    assert opt_b.param_groups[0]["lr"] == 1e-2
    saved = opt_a.state_dict()
    assert sorted(saved["state"]) == list(range(4)) and saved["state"][0]["step"] == 3
    for model, opt in [(a, opt_a), (b, opt_b)]:
        opt.zero_grad()
        model(x).pow(2).mean().backward()
        opt.step()
    for pa, pb in zip(a.parameters(), b.parameters(), strict=True):
        np.testing.assert_array_equal(to_numpy(pa), to_numpy(pb))


def test_zero_grad_set_to_none_and_skip_missing_grads():
    model = build(nn)
    opt = optim.SGD(model.parameters(), lr=0.1)
    before = [to_numpy(p).copy() for p in model.parameters()]
    opt.step()  # no gradients yet: nothing moves
    for p, b in zip(model.parameters(), before, strict=True):
        np.testing.assert_array_equal(to_numpy(p), b)
    model(ad.tensor(np.ones((2, 5), np.float32))).sum().backward()
    opt.zero_grad(set_to_none=False)
    assert all(np.all(to_numpy(p.grad) == 0) for p in model.parameters())
    opt.zero_grad()
    assert all(p.grad is None for p in model.parameters())


def test_bad_arguments_are_rejected():
    params = list(build(nn).parameters())
    with pytest.raises(ValueError, match="Nesterov"):
        optim.SGD(params, lr=0.1, nesterov=True)
    with pytest.raises(ValueError, match="empty"):
        optim.Adam([])
    with pytest.raises(ValueError, match="betas"):
        optim.Adam(params, betas=(0.9, 1.5))
    with pytest.raises(ValueError, match="require grad"):
        optim.SGD([ad.tensor([1.0])], lr=0.1)
    with pytest.raises(ValueError, match="more than one"):
        optim.SGD([{"params": params}, {"params": params[:1]}], lr=0.1)


def test_update_keeps_parameter_dtype():
    model = build(nn).half()
    opt = optim.Adam(model.parameters(), lr=1e-3)
    model(ad.tensor(np.ones((2, 5), np.float16))).float().sum().backward()
    opt.step()
    assert all(p.dtype == np.float16 for p in model.parameters())
    assert all(s["exp_avg"].dtype == np.float16 for s in opt.state.values())


def test_step_is_an_inplace_change_that_saved_graphs_detect():
    """As in torch: a graph that saved a parameter before optimizer.step() refuses
    to backward afterwards instead of silently using the updated values."""
    for opt_lib, make in [(optim, nn.Parameter),
                          (torch.optim, lambda a: torch.nn.Parameter(torch.from_numpy(a)))]:
        w = make(np.ones(3, np.float32))
        opt = opt_lib.SGD([w], lr=0.1)
        (w * w).sum().backward()
        y = (w * w).sum()  # mul saves w
        opt.step()
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.backward()
