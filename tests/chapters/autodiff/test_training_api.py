"""The training API beyond layers, against torch: containers, gradient clipping,
parameter vectors, learning-rate schedulers and torch's namespaces
(``autograd``, ``utils.data``). Each test drives both libraries with one lambda."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import torch

import chapters.autodiff as ad
from chapters.autodiff import nn, optim
from chapters.torchcheck import assert_close, to_numpy, to_torch

pytestmark = pytest.mark.usefixtures("one_torch_thread")

BOTH = [(torch, "torch"), (ad, "engine")]


# ------------------------------------------------------------------ containers

def build_net(T):
    """A model whose every weight sits in a container; ``T`` is torch or the engine."""
    m = T.nn

    class Net(m.Module):
        def __init__(self):
            super().__init__()
            self.layers = m.ModuleList([m.Linear(4, 6), m.Linear(6, 6)])
            self.layers.append(m.Linear(6, 3))
            self.heads = m.ModuleDict({"a": m.Linear(3, 2)})
            self.heads["b"] = m.Linear(3, 2)
            self.scales = m.ParameterList([T.ones(2), m.Parameter(T.full((2,), 0.5))])
            self.shifts = m.ParameterDict({"a": m.Parameter(T.zeros(2))})
            self.shifts.update([("b", m.Parameter(T.full((2,), 0.1)))])

        def forward(self, x):
            for layer in self.layers[:-1]:
                x = T.tanh(layer(x))
            x = self.layers[-1](x)
            outs = [self.heads[k](x) * self.scales[i] + self.shifts[k]
                    for i, k in enumerate(self.heads)]
            return outs[0] * outs[1]

    return Net()


def test_containers_register_like_torch_and_train_the_same():
    torch.manual_seed(0)
    theirs, ours = build_net(torch), build_net(ad)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert "layers.2.weight" in ours.state_dict() and "shifts.b" in ours.state_dict()
    ours.load_state_dict(theirs.state_dict())
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    out_t, out_e = theirs(to_torch(x)), ours(ad.tensor(x))
    assert_close(out_e, out_t, rtol=1e-5, atol=1e-6, what="forward")
    cotangent = np.random.default_rng(1).standard_normal((5, 2)).astype(np.float32)
    out_t.backward(to_torch(cotangent))
    out_e.backward(ad.tensor(cotangent))
    grads = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        assert_close(p.grad, grads[name].grad, rtol=1e-5, atol=1e-6, what=f"grad {name}")


def _summary(container) -> tuple:
    """What a container holds, comparable across engines: each entry's shape and
    the state_dict keys."""
    shapes = [tuple(v.weight.shape) if hasattr(v, "weight") else tuple(v.shape)
              for v in container]
    return shapes, list(container.state_dict())


MODULE_LIST_CASES = {
    "negative index": lambda m, ml: _summary(m.ModuleList([ml[-1], ml[-3]])),
    "slice is a ModuleList": lambda m, ml: (type(ml[1:4]).__name__, _summary(ml[1:4])),
    "step slice": lambda m, ml: _summary(ml[::-2]),
    "insert": lambda m, ml: (ml.insert(1, m.Linear(9, 1)), _summary(ml))[1],
    "delete renumbers": lambda m, ml: (ml.__delitem__(1), _summary(ml))[1],
    "delete slice": lambda m, ml: (ml.__delitem__(slice(1, 3)), _summary(ml))[1],
    "pop": lambda m, ml: (tuple(ml.pop(1).weight.shape), _summary(ml)),
    "extend and +=": lambda m, ml: (ml.extend([m.Linear(7, 1)]).__iadd__([m.Linear(8, 1)]),
                                    _summary(ml))[1],
    "add": lambda m, ml: _summary(ml + m.ModuleList([m.Linear(7, 1)])),
    "setitem": lambda m, ml: (ml.__setitem__(-1, m.Linear(9, 2)), _summary(ml))[1],
    "len and in": lambda m, ml: (len(ml), ml[2] in ml, m.Linear(1, 1) in ml),
}


@pytest.mark.parametrize("case", MODULE_LIST_CASES)
def test_module_list_behaves_as_torch(case):
    results = [MODULE_LIST_CASES[case](T.nn, T.nn.ModuleList([T.nn.Linear(i + 1, 1)
                                                                for i in range(5)]))
               for T, _ in BOTH]
    assert results[1] == results[0]


DICT_CASES = {
    "module dict": lambda T: (lambda d: (list(d), list(d.keys()), "b" in d, "z" in d, len(d),
                                         [type(v).__name__ for v in d.values()],
                                         [k for k, _ in d.items()], list(d.state_dict())))(
        T.nn.ModuleDict([("b", T.nn.Linear(2, 1)), ("a", T.nn.Tanh())])),
    "module dict pop and del": lambda T: (lambda d: (type(d.pop("a")).__name__,
                                                     d.__delitem__("c"), list(d)))(
        T.nn.ModuleDict({"a": T.nn.Tanh(), "b": T.nn.Tanh(), "c": T.nn.Tanh()})),
    "parameter list converts tensors": lambda T: (lambda p: (
        [type(v).__name__ for v in p], [tuple(v.shape) for v in p[::-1]],
        list(p.state_dict()), len(list(p.parameters()))))(
        T.nn.ParameterList([T.ones(2), T.zeros(3, 1)]).extend([T.ones(1)])),
    "parameter dict": lambda T: (lambda p: (
        list(p), type(p["w"]).__name__, "v" in p, p.get("q"), len(p),
        [tuple(v.shape) for v in p.values()], list(p.state_dict())))(
        T.nn.ParameterDict({"w": T.ones(2), "v": T.nn.Parameter(T.zeros(1))})),
    "parameter dict pop": lambda T: (lambda p: (tuple(p.pop("w").shape), list(p)))(
        T.nn.ParameterDict({"w": T.ones(2), "v": T.zeros(1)})),
}


@pytest.mark.parametrize("case", DICT_CASES)
def test_dict_and_parameter_containers_behave_as_torch(case):
    expected, got = (DICT_CASES[case](T) for T, _ in BOTH)
    assert got == expected


CONTAINER_ERRORS = {
    "non-module in ModuleList": lambda T: T.nn.ModuleList([T.nn.Tanh(), 3]),
    "append a tensor": lambda T: T.nn.ModuleList().append(T.ones(1)),
    "index out of range": lambda T: T.nn.ModuleList([T.nn.Tanh()])[1],
    "negative index out of range": lambda T: T.nn.ModuleList([T.nn.Tanh()])[-2],
    "extend with a module": lambda T: T.nn.ModuleList().extend(5),
    "non-module in ModuleDict": lambda T: T.nn.ModuleDict({"a": 1.0}),
    "update with a number": lambda T: T.nn.ModuleDict().update(5),
    "update with a short pair": lambda T: T.nn.ModuleDict().update([("a",)]),
    "missing key": lambda T: T.nn.ModuleDict()["a"],
    "missing parameter": lambda T: T.nn.ParameterDict()["a"],
    "parameter list index": lambda T: T.nn.ParameterList([T.ones(1)])[3],
}


@pytest.mark.parametrize("case", CONTAINER_ERRORS)
def test_container_errors_have_torch_types(case):
    with pytest.raises(Exception) as theirs:
        CONTAINER_ERRORS[case](torch)
    with pytest.raises(type(theirs.value)) as ours:
        CONTAINER_ERRORS[case](ad)
    assert str(ours.value)


# ------------------------------------------------------------ gradient clipping

def _params_with_grads(T, nonfinite=None):
    """Four parameters, three with the same random gradients in both engines
    (one non-contiguous, one 0-d), one without a gradient."""
    rng = np.random.default_rng(3)
    values = [rng.standard_normal(s).astype(np.float32) for s in [(3, 4), (5,), ()]]
    grads = [rng.standard_normal(s).astype(np.float32) for s in [(4, 3), (5,), ()]]
    grads[0] = grads[0].T  # a transposed (non-contiguous) gradient
    if nonfinite is not None:
        grads[1][2] = nonfinite
    params = [T.nn.Parameter(T.tensor(v)) for v in values]
    for p, g in zip(params, grads, strict=True):
        p.grad = T.tensor(g.copy(order="C")) if T is torch else T.tensor(g)
    return [*params, T.nn.Parameter(T.zeros(2))]


@pytest.mark.parametrize("norm_type", [2.0, 1, math.inf, 3.5, "inf"])
@pytest.mark.parametrize("max_norm", [0.5, 1e3])
def test_clip_grad_norm_matches_torch(norm_type, max_norm):
    results = []
    for T, _ in BOTH:
        params = _params_with_grads(T)
        total = T.nn.utils.clip_grad_norm_(params, max_norm, norm_type=norm_type)
        results.append((total, [p.grad for p in params]))
    (total_t, grads_t), (total_e, grads_e) = results
    assert total_e.dtype == ad.float32 and total_e.shape == ()
    assert_close(total_e, total_t, rtol=1e-6, atol=0, what="total norm")
    for i, (g_e, g_t) in enumerate(zip(grads_e, grads_t, strict=True)):
        assert (g_e is None) == (g_t is None)
        if g_t is not None:
            assert_close(g_e, g_t, rtol=1e-6, atol=1e-7, what=f"grad {i}")


def test_clipped_norm_is_max_norm():
    params = _params_with_grads(ad)
    before = float(ad.nn.utils.clip_grad_norm_(params, 0.5).item())
    joined = np.concatenate([to_numpy(p.grad).ravel() for p in params if p.grad is not None])
    assert before > 0.5 and np.linalg.norm(joined) == pytest.approx(0.5, rel=1e-5)


@pytest.mark.parametrize("bad", [math.inf, math.nan])
def test_nonfinite_norm_errors_or_scales_as_torch(bad):
    for T, _ in BOTH:
        with pytest.raises(RuntimeError, match="non-finite"):
            T.nn.utils.clip_grad_norm_(_params_with_grads(T, bad), 1.0, error_if_nonfinite=True)
    got = []
    for T, _ in BOTH:
        params = _params_with_grads(T, bad)
        total = T.nn.utils.clip_grad_norm_(params, 1.0)
        got.append((to_numpy(total), [to_numpy(p.grad) for p in params[:3]]))
    np.testing.assert_array_equal(got[1][0], got[0][0])
    for g_e, g_t in zip(got[1][1], got[0][1], strict=True):
        np.testing.assert_allclose(g_e, g_t, rtol=1e-6, equal_nan=True)


def test_clip_without_gradients_returns_zero_like_torch():
    for T, _ in BOTH:
        total = T.nn.utils.clip_grad_norm_([T.nn.Parameter(T.ones(2))], 1.0)
        assert float(total) == 0.0 and total.shape == ()


@pytest.mark.parametrize("clip_value", [0.3, 5])
def test_clip_grad_value_matches_torch(clip_value):
    grads = []
    for T, _ in BOTH:
        params = _params_with_grads(T)
        assert T.nn.utils.clip_grad_value_(params, clip_value) is None
        grads.append([to_numpy(p.grad) for p in params[:3]])
    for g_e, g_t in zip(grads[1], grads[0], strict=True):
        np.testing.assert_array_equal(g_e, g_t)
        assert np.abs(g_e).max() <= clip_value


def test_total_norm_then_clip_is_clip_grad_norm():
    for T, _ in BOTH:
        params = _params_with_grads(T)
        total = T.nn.utils.get_total_norm([p.grad for p in params[:3]], 1.0)
        T.nn.utils.clip_grads_with_norm_(params, 2.0, total)
        reference = _params_with_grads(T)
        T.nn.utils.clip_grad_norm_(reference, 2.0, 1.0)
        for p, q in zip(params[:3], reference[:3], strict=True):
            np.testing.assert_array_equal(to_numpy(p.grad), to_numpy(q.grad))


def test_parameter_vectors_match_torch():
    vectors = []
    for T, _ in BOTH:
        params = _params_with_grads(T)
        vec = T.nn.utils.parameters_to_vector(params)
        (vec * T.arange(vec.shape[0])).sum().backward()  # the flattening is differentiable
        T.nn.utils.vector_to_parameters(vec.detach() * 2, params)
        vectors.append((to_numpy(vec), [to_numpy(p) for p in params],
                        [to_numpy(p.grad) for p in params]))
    (vec_t, params_t, grads_t), (vec_e, params_e, grads_e) = vectors
    np.testing.assert_array_equal(vec_e, vec_t)
    for a, b in zip(params_e + grads_e, params_t + grads_t, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    for T, _ in BOTH:
        with pytest.raises(TypeError):
            T.nn.utils.vector_to_parameters(np.zeros(3), [T.nn.Parameter(T.ones(3))])
        with pytest.raises(RuntimeError):
            T.nn.utils.vector_to_parameters(T.zeros(2), [T.nn.Parameter(T.ones(3))])


# --------------------------------------------------------------------- schedulers

def _optimizer(T, kind="sgd"):
    """Two param groups with different base rates."""
    a, b = T.nn.Parameter(T.ones(2)), T.nn.Parameter(T.ones(3))
    groups = [{"params": [a]}, {"params": [b], "lr": 0.03}]
    if kind == "adam":
        return T.optim.Adam(groups, lr=0.1)
    return T.optim.SGD(groups, lr=0.1, momentum=0.9)


SCHEDULES = {
    "StepLR": lambda s, o: s.StepLR(o, step_size=7, gamma=0.5),
    "MultiStepLR": lambda s, o: s.MultiStepLR(o, milestones=[3, 10, 10, 25], gamma=0.3),
    "ExponentialLR": lambda s, o: s.ExponentialLR(o, gamma=0.9),
    "CosineAnnealingLR": lambda s, o: s.CosineAnnealingLR(o, T_max=12, eta_min=0.001),
    "LambdaLR": lambda s, o: s.LambdaLR(o, lr_lambda=lambda t: 0.95 ** t / (1 + t % 4)),
    "LambdaLR per group": lambda s, o: s.LambdaLR(o, [lambda t: 1 / (t + 1), lambda t: t]),
    "LinearLR": lambda s, o: s.LinearLR(o, start_factor=0.1, end_factor=0.8, total_iters=9),
    "LinearLR decay": lambda s, o: s.LinearLR(o, start_factor=1.0, end_factor=0.2),
    "ConstantLR": lambda s, o: s.ConstantLR(o, factor=0.25, total_iters=6),
    "OneCycleLR": lambda s, o: s.OneCycleLR(o, max_lr=[1.0, 0.2], total_steps=40),
    "OneCycleLR linear": lambda s, o: s.OneCycleLR(o, max_lr=0.5, epochs=4, steps_per_epoch=10,
                                                    pct_start=0.25, anneal_strategy="linear",
                                                    div_factor=10.0),
    "OneCycleLR three phases": lambda s, o: s.OneCycleLR(o, max_lr=0.8, total_steps=40,
                                                          three_phase=True, pct_start=0.2),
    "SequentialLR": lambda s, o: s.SequentialLR(
        o, [s.LinearLR(o, start_factor=0.1, total_iters=5), s.CosineAnnealingLR(o, T_max=20),
            s.ExponentialLR(o, gamma=0.8)], milestones=[5, 25]),
}
STEPS = 39  # OneCycleLR's total_steps is 40, step 0 included


def _lr_sequence(T, build, kind="sgd", steps=STEPS):
    """Rates and momenta seen by the optimizer at every step, with torch's call
    order (optimizer.step() then scheduler.step()); any warning fails."""
    opt = _optimizer(T, kind)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        scheduler = build(T.optim.lr_scheduler, opt)
        seen = []
        for _ in range(steps):
            opt.step()
            scheduler.step()
            seen.append((scheduler.get_last_lr(), [g["lr"] for g in opt.param_groups],
                         [g.get("momentum", g.get("betas")) for g in opt.param_groups]))
    return seen, scheduler


def _assert_sequences_equal(ours, theirs):
    assert len(ours) == len(theirs)
    for step, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        for x, y in zip(_flat(a), _flat(b), strict=True):
            assert math.isclose(x, y, rel_tol=1e-12, abs_tol=1e-15), (step, a, b)


def _flat(value) -> list[float]:
    if isinstance(value, list | tuple):
        return [x for v in value for x in _flat(v)]
    return [float(value)]


@pytest.mark.parametrize("name", SCHEDULES)
def test_schedule_matches_torch(name):
    theirs, sched_t = _lr_sequence(torch, SCHEDULES[name])
    ours, sched_e = _lr_sequence(ad, SCHEDULES[name])
    _assert_sequences_equal(ours, theirs)
    assert len({tuple(lrs) for lrs, _, _ in ours}) > 1  # the schedule moved
    for key in {"last_epoch", "base_lrs", "_last_lr", "_step_count"} & set(sched_t.state_dict()):
        assert _flat(sched_e.state_dict()[key]) == pytest.approx(_flat(sched_t.state_dict()[key]),
                                                                 rel=1e-12), key


def test_two_schedulers_on_one_optimizer_compose_as_torch():
    runs = []
    for T, _ in BOTH:
        opt, s = _optimizer(T), T.optim.lr_scheduler
        schedulers = (s.StepLR(opt, step_size=5, gamma=0.5), s.CosineAnnealingLR(opt, T_max=8))
        seen = []
        for _ in range(STEPS):
            opt.step()
            for scheduler in schedulers:
                scheduler.step()
            seen.append([g["lr"] for g in opt.param_groups])
        runs.append(seen)
    _assert_sequences_equal(runs[1], runs[0])


def test_one_cycle_cycles_adam_beta1_as_torch():
    build = SCHEDULES["OneCycleLR"]
    _assert_sequences_equal(_lr_sequence(ad, build, "adam")[0],
                            _lr_sequence(torch, build, "adam")[0])


def test_one_cycle_refuses_a_step_past_the_end():
    for T, _ in BOTH:
        opt = _optimizer(T)
        scheduler = T.optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=3)
        for _ in range(3):
            opt.step()
            scheduler.step()
        with pytest.raises(ValueError, match="total steps"):
            scheduler.step()


@pytest.mark.parametrize("name", ["StepLR", "CosineAnnealingLR", "LinearLR", "LambdaLR",
                                  "SequentialLR"])
def test_scheduler_state_dict_resumes_the_schedule(name):
    """Checkpoint at step 12, rebuild optimizer and scheduler, load both: the rest
    of the sequence equals the uninterrupted one (itself checked against torch)."""
    build = SCHEDULES[name]
    uninterrupted, _ = _lr_sequence(ad, build, steps=30)
    opt = _optimizer(ad)
    scheduler = build(optim.lr_scheduler, opt)
    for _ in range(12):
        opt.step()
        scheduler.step()
    saved_opt, saved_sched = opt.state_dict(), scheduler.state_dict()
    opt = _optimizer(ad)
    scheduler = build(optim.lr_scheduler, opt)
    opt.load_state_dict(saved_opt)
    scheduler.load_state_dict(saved_sched)
    resumed = []
    for _ in range(18):
        opt.step()
        scheduler.step()
        resumed.append(scheduler.get_last_lr())
    _assert_sequences_equal(resumed, [lrs for lrs, _, _ in uninterrupted[12:]])


@pytest.mark.parametrize("name", ["StepLR", "ExponentialLR", "CosineAnnealingLR", "LinearLR"])
def test_resuming_with_last_epoch_matches_torch(name):
    """A scheduler rebuilt with ``last_epoch=`` on an optimizer that already carries
    ``initial_lr`` continues as torch's does (cosine's restart-from-closed-form branch)."""
    build = SCHEDULES[name]
    runs = []
    for T, _ in BOTH:
        opt = _optimizer(T)
        scheduler = build(T.optim.lr_scheduler, opt)
        for _ in range(10):
            opt.step()
            scheduler.step()
        resumed = build(_with_last_epoch(T.optim.lr_scheduler, 9), opt)
        seen = [resumed.get_last_lr()]
        for _ in range(15):
            opt.step()
            resumed.step()
            seen.append(resumed.get_last_lr())
        runs.append(seen)
    _assert_sequences_equal(runs[1], runs[0])


def _with_last_epoch(module, last_epoch: int):
    """``module`` whose scheduler classes are built with ``last_epoch`` given."""

    class WithLastEpoch:
        def __getattr__(self, name):
            cls = getattr(module, name)
            return lambda *args, **kwargs: cls(*args, **kwargs, last_epoch=last_epoch)

    return WithLastEpoch()


@pytest.mark.parametrize("name", ["StepLR", "MultiStepLR", "CosineAnnealingLR", "ConstantLR"])
def test_step_with_an_epoch_jumps_to_the_closed_form_as_torch(name):
    runs = []
    for T, _ in BOTH:
        opt = _optimizer(T)
        scheduler = SCHEDULES[name](T.optim.lr_scheduler, opt)
        seen = []
        for epoch in [3, 17, 4, 30, 11]:
            opt.step()
            with pytest.warns(UserWarning, match="deprecated"):
                scheduler.step(epoch)
            seen.append(scheduler.get_last_lr())
        runs.append(seen)
    _assert_sequences_equal(runs[1], runs[0])


@pytest.mark.parametrize("kwargs", [
    dict(patience=2),
    dict(mode="max", factor=0.5, patience=1, cooldown=2, threshold_mode="abs", threshold=0.05),
    dict(factor=0.5, patience=0, min_lr=[0.01, 0.02], threshold=0.1),
])
def test_reduce_on_plateau_matches_torch(kwargs):
    metrics = [1.0, 0.8, 0.79, 0.8, 0.81, 0.6, 0.6, 0.61, 0.59, 0.9, 1.2, 1.25, 1.3, 1.3,
               1.29, 1.31, 1.4, 1.4, 1.4, 1.4, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3]
    runs = []
    for T, _ in BOTH:
        opt = _optimizer(T)
        scheduler = T.optim.lr_scheduler.ReduceLROnPlateau(opt, **kwargs)
        seen = []
        for value in metrics:
            opt.step()
            scheduler.step(T.tensor(value))
            seen.append(scheduler.get_last_lr())
        runs.append(seen)
    _assert_sequences_equal(runs[1], runs[0])
    assert len({tuple(lrs) for lrs in runs[1]}) > 1


def test_scheduler_before_optimizer_warns_as_torch():
    for T, _ in BOTH:
        opt = _optimizer(T)
        scheduler = T.optim.lr_scheduler.StepLR(opt, step_size=2)
        with pytest.warns(UserWarning, match=r"lr_scheduler.step\(\)` before `optimizer.step"):
            scheduler.step()


SCHEDULER_ERRORS = {
    "not an optimizer": lambda s, o: s.StepLR([1.0], step_size=2),
    "resume without initial_lr": lambda s, o: s.ExponentialLR(o, gamma=0.9, last_epoch=4),
    "lambdas per group": lambda s, o: s.LambdaLR(o, [lambda t: 1.0]),
    "LinearLR factor": lambda s, o: s.LinearLR(o, start_factor=0.0),
    "OneCycleLR without a length": lambda s, o: s.OneCycleLR(o, max_lr=1.0),
    "plateau factor": lambda s, o: s.ReduceLROnPlateau(o, factor=1.5),
    "sequential milestones": lambda s, o: s.SequentialLR(o, [s.StepLR(o, 2)], milestones=[3]),
}


@pytest.mark.parametrize("case", SCHEDULER_ERRORS)
def test_scheduler_errors_have_torch_types(case):
    with pytest.raises(Exception) as theirs:
        SCHEDULER_ERRORS[case](torch.optim.lr_scheduler, _optimizer(torch))
    with pytest.raises(type(theirs.value)):
        SCHEDULER_ERRORS[case](optim.lr_scheduler, _optimizer(ad))


# --------------------------------------------------------------------- namespaces

def test_namespaces_import_under_torch_names():
    import chapters.autodiff.utils.data as data

    import chapters.autodiff.autograd as autograd
    import chapters.autodiff.nn.utils as nn_utils
    import chapters.autodiff.optim.lr_scheduler as lr_scheduler

    assert data is ad.utils.data is ad.data
    assert autograd is ad.autograd and autograd.grad is ad.grad
    assert nn_utils is nn.utils and lr_scheduler is optim.lr_scheduler
    for name in ("Dataset", "TensorDataset", "DataLoader", "Subset", "random_split"):
        assert hasattr(data, name) and hasattr(torch.utils.data, name)


def train_with(T, initial_state: dict) -> tuple:
    """Torch-style training code, unchanged whether ``T`` is torch or the engine."""
    rng = np.random.default_rng(7)
    x = T.tensor(rng.standard_normal((24, 3)).astype(np.float32))
    y = T.tensor(rng.standard_normal((24, 2)).astype(np.float32))
    loader = T.utils.data.DataLoader(T.utils.data.TensorDataset(x, y), batch_size=8)
    model = T.nn.Sequential(T.nn.Linear(3, 5), T.nn.Tanh(), T.nn.Linear(5, 2))
    model.load_state_dict(initial_state)
    opt = T.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
    scheduler = T.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=4)
    norms = []
    for _ in range(4):
        for xb, yb in loader:
            opt.zero_grad()
            T.nn.functional.mse_loss(model(xb), yb).backward()
            norms.append(float(T.nn.utils.clip_grad_norm_(model.parameters(), 0.1)))
            opt.step()
        scheduler.step()
    w = model[0].weight
    (g,) = T.autograd.grad((w ** 3).sum(), w, create_graph=True)
    (h,) = T.autograd.grad(g.sum(), w)
    return norms, to_numpy(w.detach()), to_numpy(h)


def test_torch_style_training_code_runs_unchanged():
    torch.manual_seed(0)
    initial = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.Tanh(),
                                  torch.nn.Linear(5, 2)).state_dict()
    (norms_t, w_t, h_t), (norms_e, w_e, h_e) = (train_with(T, initial) for T, _ in BOTH)
    np.testing.assert_allclose(norms_e, norms_t, rtol=1e-4)
    assert max(norms_e) > 0.1  # clipping was active
    np.testing.assert_allclose(w_e, w_t, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(h_e, h_t, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("n, lengths", [(10, [0.3, 0.3, 0.4]), (7, [0.5, 0.5]), (9, [2, 3, 4]),
                                        (5, [0.2, 0.2, 0.2, 0.2, 0.2])])
def test_random_split_lengths_match_torch_and_partition(n, lengths):
    theirs = torch.utils.data.random_split(range(n), lengths)
    ad.manual_seed(0)
    ours = ad.utils.data.random_split(list(range(n)), lengths)
    assert [len(s) for s in ours] == [len(s) for s in theirs]
    assert sorted(i for s in ours for i in s) == list(range(n))


def test_random_split_refuses_wrong_lengths_as_torch():
    for T, _ in BOTH:
        with pytest.raises(ValueError, match="Sum of input lengths"):
            T.utils.data.random_split(list(range(5)), [2, 2])


def test_data_loader_batches_a_dataset_subclass_of_single_tensors():
    class Squares(ad.utils.data.Dataset):
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return ad.tensor([float(i * i)])

    batches = [to_numpy(b) for b in ad.utils.data.DataLoader(Squares(), batch_size=2)]
    assert [b.shape for b in batches] == [(2, 1), (2, 1), (1, 1)]
    np.testing.assert_array_equal(np.concatenate(batches).ravel(), [0, 1, 4, 9, 16])
    with pytest.raises(NotImplementedError, match="__getitem__"):
        ad.utils.data.Dataset()[0]
