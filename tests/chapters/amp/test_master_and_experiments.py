"""Master weights, lost updates, and the four-recipe training comparison."""

import numpy as np
import pytest
import torch

from chapters import autodiff as ad
from chapters.amp.experiments import RECIPES, compare, train
from chapters.amp.master import MasterWeights, lost_update_fraction, repeated_update
from chapters.amp.scaler import GradScaler
from chapters.autodiff import nn, optim


@pytest.mark.parametrize("ratio, lost", [(2.0**-13, 1.0), (2.0**-12.2, 1.0), (2.0**-10, 0.0),
                                         (2.0**-9, 0.0)])
def test_float16_updates_below_2_to_minus_11_are_lost(ratio, lost):
    assert lost_update_fraction(ratio, "float16") == pytest.approx(lost, abs=0.01)
    assert lost_update_fraction(ratio, "float32") == 0.0


def test_lost_update_fraction_against_torch():
    """Independent check: the same additions done by torch in float16."""
    rng = np.random.default_rng(0)
    w = torch.from_numpy((2.0 ** rng.uniform(-8, 8, 4096) * rng.choice([-1, 1], 4096))
                         .astype(np.float32)).half()
    for ratio in (2.0**-12.5, 2.0**-11.5, 2.0**-10.5):
        update = (w.float().abs() * ratio).half()
        torch_lost = ((w.float() + update.float()).half() == w).float().mean().item()
        ours = lost_update_fraction(ratio, "float16", count=4096, seed=0)
        assert ours == pytest.approx(torch_lost, abs=0.03)
    # the threshold is relative: half-way between 2**-12 and 2**-11 about half are lost
    assert 0.2 < lost_update_fraction(2.0**-11.5, "float16") < 0.8


def test_pure_float16_sgd_stalls_and_masters_do_not():
    w16 = ad.tensor(np.ones(4, np.float16), requires_grad=True)
    stalled = optim.SGD([w16], lr=1e-4)
    master_model = ad.tensor(np.ones(4, np.float16), requires_grad=True)
    masters = MasterWeights([master_model])
    opt = optim.SGD(masters.parameters(), lr=1e-4)
    for _ in range(1000):
        for p in (w16, master_model):
            p.grad = ad.tensor(np.full(4, -1.0, np.float16))   # update = +1e-4 < 2**-11
        stalled.step()
        masters.copy_grads_to_masters()
        opt.step()
        masters.copy_masters_to_model()
    np.testing.assert_array_equal(w16.data, 1.0)                # every update rounded away
    assert masters.masters[0].data == pytest.approx(1.1, rel=1e-4)
    assert float(master_model.data[0]) == float(np.float16(masters.masters[0].data[0]))
    assert repeated_update(1.0, 1e-4, 1000, "float16") == 1.0
    assert repeated_update(1.0, 1e-4, 1000, "float32") == pytest.approx(1.1, rel=1e-4)


def test_master_weights_with_a_scaler_on_a_float16_model_match_torch():
    """fp16 model + fp32 masters + GradScaler, engine vs torch, same data."""
    torch.manual_seed(0)
    reference = torch.nn.Linear(8, 3)
    ours = nn.Linear(8, 3)
    ours.load_state_dict(reference.state_dict())
    ours.half()
    theirs = torch.nn.Linear(8, 3)
    theirs.load_state_dict(reference.state_dict())
    theirs.half()
    setups = {}
    for name, model in (("engine", ours), ("torch", theirs)):
        params = list(model.parameters())
        masters = [p.detach().float().requires_grad_() for p in params] if name == "torch" \
            else MasterWeights(params)
        opt_params = masters if name == "torch" else masters.parameters()
        opt_cls = torch.optim.SGD if name == "torch" else optim.SGD
        scaler = torch.amp.GradScaler("cpu", init_scale=2.0**14) if name == "torch" \
            else GradScaler("cpu", init_scale=2.0**14)
        setups[name] = (model, params, masters, opt_cls(opt_params, lr=0.1), scaler)
    rng = np.random.default_rng(1)
    for _ in range(20):
        x = rng.standard_normal((16, 8)).astype(np.float16)
        y = rng.integers(0, 3, 16)
        for name, (model, params, masters, opt, scaler) in setups.items():
            lib = torch if name == "torch" else ad
            F = torch.nn.functional if name == "torch" else ad.functional
            loss = F.cross_entropy(model(lib.tensor(x)).float(), lib.tensor(y))
            scaler.scale(loss).backward()
            if name == "torch":
                for p, m in zip(params, masters, strict=True):
                    m.grad = p.grad.float()
            else:
                masters.copy_grads_to_masters()
            scaler.step(opt)
            scaler.update()
            if name == "torch":
                with torch.no_grad():
                    for p, m in zip(params, masters, strict=True):
                        p.copy_(m.half())
                        p.grad = None
            else:
                masters.copy_masters_to_model()
                masters.zero_grad()
    assert setups["engine"][4].get_scale() == setups["torch"][4].get_scale()
    for p, q in zip(setups["engine"][2].masters, setups["torch"][2], strict=True):
        np.testing.assert_allclose(p.data, q.detach().numpy(), rtol=2e-3, atol=2e-3)


def test_master_weights_bad_input():
    with pytest.raises(ValueError, match="no parameters"):
        MasterWeights([])
    p = ad.tensor(np.ones(2, np.float16), requires_grad=True)
    masters = MasterWeights([p])
    masters.copy_grads_to_masters()
    assert masters.masters[0].grad is None   # no gradient yet: nothing to copy


@pytest.fixture(scope="module")
def runs():
    return compare(steps=80)


def test_amp_matches_float32_and_pure_float16_does_not(runs):
    f32, amp = runs["float32"], runs["amp"]
    assert f32.train_loss < 0.2 * f32.losses[0] and f32.test_accuracy > 0.9   # it trained
    np.testing.assert_allclose(amp.losses[:10], f32.losses[:10], rtol=0.02)
    assert amp.train_loss == pytest.approx(f32.train_loss, rel=0.15)
    assert abs(amp.test_accuracy - f32.test_accuracy) <= 0.02
    static = runs["float16 static scale"]
    assert static.train_loss == pytest.approx(f32.train_loss, rel=0.15)
    assert runs["float16"].train_loss > 5 * f32.train_loss    # underflowed gradients: no learning
    assert runs["float16"].test_accuracy < 0.5


def test_underflow_fractions_order_the_recipes(runs):
    mean = {r: np.mean(list(runs[r].underflow.values())) for r in RECIPES}
    assert mean["float32"] == 0.0
    assert mean["float16"] > 0.2                 # a fifth or more of gradients flush to zero
    assert mean["float16 static scale"] < 0.1 * mean["float16"]
    assert mean["amp"] < 0.01


def test_dynamic_scale_backs_off_on_overflow_and_grows_back():
    """Start far too high (2**40: scaled gradients overflow float16): the scaler
    skips and halves until the gradients fit, then grows every growth_interval."""
    amp = train("amp", steps=40, init_scale=2.0**40, growth_interval=5, probe_every=40)
    assert amp.skipped_steps[:2] == [0, 1]
    for step in range(len(amp.scales) - 1):
        if step in amp.skipped_steps:
            assert amp.scales[step + 1] == amp.scales[step] / 2
        else:
            assert amp.scales[step + 1] in (amp.scales[step], amp.scales[step] * 2)
    lowest = min(amp.scales)
    assert max(amp.scales[amp.scales.index(lowest):]) > lowest   # it grew back
    assert np.isfinite(amp.train_loss)


def test_unknown_recipe_is_an_error():
    with pytest.raises(ValueError, match="unknown recipe 'bf8'"):
        train("bf8", steps=1)
