"""GradScaler against torch.amp.GradScaler("cpu"), driven step for step."""

import numpy as np
import pytest
import torch

from chapters import autodiff as ad
from chapters.amp.scaler import GradScaler
from chapters.autodiff import optim
from chapters.torchcheck import assert_close, to_numpy

SHAPES = [(3,), (2, 2), (4,)]


def make_pair(seed=0, **scaler_kwargs):
    """The same parameters, SGD and scaler settings in the engine and in torch."""
    rng = np.random.default_rng(seed)
    values = [rng.standard_normal(s).astype(np.float32) for s in SHAPES]
    ours = [ad.tensor(v.copy(), requires_grad=True) for v in values]
    theirs = [torch.nn.Parameter(torch.from_numpy(v.copy())) for v in values]
    return {
        "engine": (ours, optim.SGD(ours, lr=0.05),
                   GradScaler("cpu", **scaler_kwargs), ad.tensor),
        "torch": (theirs, torch.optim.SGD(theirs, lr=0.05),
                  torch.amp.GradScaler("cpu", **scaler_kwargs), torch.from_numpy),
    }


def random_gradients(rng, scale):
    """Gradients for one step: scaled normals of random magnitude, sometimes
    with an inf or NaN, sometimes missing for a parameter."""
    grads = []
    for i, shape in enumerate(SHAPES):
        if i > 0 and rng.random() < 0.1:  # parameter 0 always has one: step() needs a grad
            grads.append(None)
            continue
        g = rng.standard_normal(shape) * 10.0 ** rng.uniform(-4, 2) * scale
        roll = rng.random()
        if roll < 0.08:
            g.flat[rng.integers(g.size)] = np.inf * rng.choice([-1, 1])
        elif roll < 0.14:
            g.flat[rng.integers(g.size)] = np.nan
        with np.errstate(over="ignore"):
            grads.append(g.astype(np.float32))  # very large * scale can overflow too
    return grads


@pytest.mark.parametrize("settings", [
    {"init_scale": 2.0**10, "growth_interval": 3},
    {"init_scale": 1000.0, "growth_factor": 1.7, "backoff_factor": 0.3, "growth_interval": 2},
    {"init_scale": 3e38, "growth_interval": 1},   # growth would overflow float32
])
def test_trajectories_match_torch_step_for_step(settings):
    pair = make_pair(**settings)
    rng = np.random.default_rng(42)
    steps, skipped = 300, 0
    for step in range(steps):
        grads = random_gradients(rng, pair["torch"][2].get_scale())
        explicit_unscale = rng.random() < 0.3
        results = {}
        for name, (params, opt, scaler, make) in pair.items():
            loss = make(np.array(1.5, np.float32))
            with np.errstate(over="ignore"):  # 1.5 * 3e38 overflows, as it should
                scaled = scaler.scale(loss)
            for p, g in zip(params, grads, strict=True):
                p.grad = None if g is None else make(g.copy())
            if explicit_unscale:
                scaler.unscale_(opt)
                results[f"{name} unscaled"] = [None if p.grad is None else to_numpy(p.grad)
                                               for p in params]
            scaler.step(opt)
            scaler.update()
            opt.zero_grad()
            results[name] = (float(to_numpy(scaled)), scaler.get_scale(),
                             scaler.state_dict())
        if explicit_unscale:  # unscaling is bit-exact: same float32 1/S, same products
            for a, b in zip(results["engine unscaled"], results["torch unscaled"], strict=True):
                assert (a is None and b is None) or np.array_equal(a, b, equal_nan=True)
        ours, theirs = results["engine"], results["torch"]
        assert ours == theirs, f"step {step}: engine {ours} != torch {theirs}"
        skipped += any(g is not None and not np.isfinite(g).all() for g in grads)
        for i, (p, q) in enumerate(zip(pair["engine"][0], pair["torch"][0], strict=True)):
            assert_close(p, q, rtol=1e-5, atol=1e-6, what=f"step {step} parameter {i}")
    assert 20 < skipped < steps - 20  # the sequence really exercised both branches


def one_param(dtype=np.float32):
    """A parameter with a gradient, its SGD, in the engine and in torch."""
    g = np.array([1.0, -2.0], dtype)
    ours = ad.tensor(np.ones(2, dtype), requires_grad=True)
    ours.grad = ad.tensor(g.copy())
    theirs = torch.nn.Parameter(torch.ones(2, dtype=getattr(torch, np.dtype(dtype).name)))
    theirs.grad = torch.from_numpy(g.copy())
    return {"engine": (ours, optim.SGD([ours], lr=0.1), GradScaler("cpu"), ad.tensor),
            "torch": (theirs, torch.optim.SGD([theirs], lr=0.1), torch.amp.GradScaler("cpu"),
                      torch.from_numpy)}


MISUSE = {
    "unscale_ twice": (lambda s, o: (s.unscale_(o), s.unscale_(o)),
                       RuntimeError, "already been called on this optimizer"),
    "unscale_ after step": (lambda s, o: (s.step(o), s.unscale_(o)),
                            RuntimeError, "after step"),
    "step twice": (lambda s, o: (s.step(o), s.step(o)), RuntimeError, "already been called"),
    "closure": (lambda s, o: s.step(o, closure=lambda: 0), RuntimeError, "losure"),
}


@pytest.mark.parametrize("case", list(MISUSE))
def test_misuse_raises_like_torch(case):
    action, error, message = MISUSE[case]
    for _, (_, opt, scaler, make) in one_param().items():
        scaler.scale(make(np.array(1.0, np.float32)))
        with pytest.raises(error, match=message):
            action(scaler, opt)


def test_float16_gradients_are_refused_by_unscale():
    for name, (_, opt, scaler, make) in one_param(np.float16).items():
        scaler.scale(make(np.array(1.0, np.float32)))
        with pytest.raises(ValueError, match="FP16 gradients" if name == "torch" else
                           "float16 gradient .* master weights"):
            scaler.unscale_(opt)


def test_optimizer_without_gradients_is_a_clear_error():
    p = ad.tensor(np.ones(2, np.float32), requires_grad=True)
    q = torch.nn.Parameter(torch.ones(2))
    ours, theirs = GradScaler("cpu"), torch.amp.GradScaler("cpu")
    ours.scale(ad.tensor(np.array(1.0, np.float32)))
    theirs.scale(torch.tensor(1.0))
    with pytest.raises(AssertionError, match="No inf checks were recorded for this optimizer"):
        theirs.step(torch.optim.SGD([q], lr=0.1))
    with pytest.raises(RuntimeError, match="no inf checks .* none of its parameters has a .grad"):
        ours.step(optim.SGD([p], lr=0.1))
    with pytest.raises(RuntimeError, match="no inf checks were recorded prior to update"):
        fresh = GradScaler("cpu")
        fresh.scale(ad.tensor(np.array(1.0, np.float32)))
        fresh.update()


def test_calls_before_scale_are_errors():
    opt = optim.SGD([ad.tensor(np.ones(1, np.float32), requires_grad=True)], lr=0.1)
    for call in (lambda s: s.unscale_(opt), lambda s: s.step(opt), lambda s: s.update()):
        with pytest.raises(RuntimeError, match="scale is not initialised"):
            call(GradScaler("cpu"))


def test_bad_constructor_arguments():
    with pytest.raises(ValueError, match="growth_factor must be > 1.0"):
        GradScaler("cpu", growth_factor=0.5)
    with pytest.raises(ValueError, match="backoff_factor"):
        GradScaler("cpu", backoff_factor=2.0)
    with pytest.raises(ValueError, match="growth_interval"):
        GradScaler("cpu", growth_interval=0)
    with pytest.raises(ValueError, match="unsupported device 'tpu'"):
        GradScaler("tpu")


def test_nan_and_inf_gradients_skip_the_step_and_back_off():
    for grad in ([np.nan, 1.0], [np.inf, 1.0], [-np.inf, 1.0]):
        p = ad.tensor(np.ones(2, np.float32), requires_grad=True)
        opt = optim.SGD([p], lr=0.1)
        scaler = GradScaler("cpu", init_scale=8.0)
        scaler.scale(ad.tensor(np.array(1.0, np.float32)))
        p.grad = ad.tensor(np.array(grad, np.float32))
        assert scaler.step(opt) is None
        assert scaler.found_inf(opt) is True
        scaler.update()
        np.testing.assert_array_equal(p.data, [1.0, 1.0])
        assert scaler.get_scale() == 4.0


def test_scale_keeps_dtypes_and_structure_like_torch():
    ours, theirs = GradScaler("cpu", init_scale=4.0), torch.amp.GradScaler("cpu", init_scale=4.0)
    for dtype in (np.float16, np.float32, np.float64):
        x = np.array([1.5, -2.0], dtype)
        a, b = ours.scale(ad.tensor(x)), theirs.scale(torch.from_numpy(x))
        assert_close(a, b, rtol=0, atol=0, what=f"scaled {np.dtype(dtype).name}")
    nested = ours.scale([ad.tensor(np.float32(1.0)), (ad.tensor(np.float32(2.0)),)])
    assert isinstance(nested, list) and isinstance(nested[1], tuple)
    assert nested[1][0].item() == 8.0
    with pytest.raises(ValueError, match="Tensor or an iterable of Tensors"):
        ours.scale(3.0)


def test_scaled_loss_backward_gives_scaled_gradients():
    w = ad.tensor(np.array([0.5, -1.0], np.float32), requires_grad=True)
    scaler = GradScaler("cpu", init_scale=2.0**12)
    scaler.scale((w * w).sum()).backward()
    np.testing.assert_array_equal(w.grad.data, 2 * w.data * 2.0**12)
    opt = optim.SGD([w], lr=0.0)
    scaler.unscale_(opt)
    np.testing.assert_array_equal(w.grad.data, 2 * w.data)


def test_state_dict_round_trips_through_torch():
    ours = GradScaler("cpu", init_scale=16.0, growth_factor=3.0, growth_interval=5)
    ours.scale(ad.tensor(np.float32(1.0)))
    theirs = torch.amp.GradScaler("cpu")
    theirs.load_state_dict(ours.state_dict())
    assert theirs.state_dict() == ours.state_dict()
    back = GradScaler("cpu")
    back.load_state_dict(theirs.state_dict())
    assert back.state_dict() == theirs.state_dict() and back.get_scale() == 16.0
    with pytest.raises(RuntimeError, match="state dict is empty"):
        GradScaler("cpu").load_state_dict({})


def test_disabled_scaler_is_transparent():
    p = ad.tensor(np.ones(2, np.float32), requires_grad=True)
    p.grad = ad.tensor(np.full(2, np.inf, np.float32))
    opt = optim.SGD([p], lr=0.1)
    scaler = GradScaler("cpu", enabled=False)
    loss = ad.tensor(np.float32(3.0))
    assert scaler.scale(loss) is loss
    scaler.step(opt)  # steps even on inf: nothing is checked when disabled
    assert np.isinf(p.data).all()
    assert scaler.get_scale() == 1.0 and scaler.state_dict() == {} and not scaler.is_enabled()


def test_new_scale_in_update():
    ours, theirs = one_param()["engine"], one_param()["torch"]
    for _, opt, scaler, make in (ours, theirs):
        scaler.scale(make(np.array(1.0, np.float32)))
        scaler.step(opt)
        scaler.update(new_scale=8.0)
    assert ours[2].state_dict() == theirs[2].state_dict()
