"""Module hooks, ``nn.Sequential``, module look-ups and the adaptive optimizers,
each driven the same way on torch and on the engine and compared."""

from collections import OrderedDict

import numpy as np
import pytest
import torch

import chapters.autodiff as ad
from chapters.autodiff import nn as enn
from chapters.autodiff import optim as eoptim
from chapters.torchcheck import to_numpy

LIBS = {"torch": (torch, torch.nn, torch.optim), "engine": (ad, enn, eoptim)}
FORWARD_TOL = dict(rtol=1e-12, atol=1e-12)
GRAD_TOL = dict(rtol=1e-12, atol=1e-12)


def both(factory):
    """``factory(lib, nn, optim)`` run on torch and on the engine."""
    return [factory(*LIBS[name]) for name in ("torch", "engine")]


def as_arrays(values):
    return [None if v is None else to_numpy(v) for v in values]


def assert_logs_equal(torch_log, engine_log):
    assert [entry[:2] for entry in torch_log] == [entry[:2] for entry in engine_log]
    for (_, _, *t_arrays), (_, _, *e_arrays) in zip(torch_log, engine_log, strict=True):
        for t, e in zip(t_arrays, e_arrays, strict=True):
            for a, b in zip(t, e, strict=True):
                assert (a is None) == (b is None)
                if a is not None:
                    np.testing.assert_allclose(b, a, **GRAD_TOL)


def mlp(nn):
    torch.manual_seed(0)
    reference = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(),
                                    torch.nn.Linear(4, 2)).double()
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2)).double()
    model.load_state_dict(reference.state_dict())
    return model


X = np.linspace(-1.0, 1.0, 6).reshape(2, 3)


# ------------------------------------------------------------------- hooks


def hooked_run(lib, nn, _optim):
    """Every kind of hook on every layer; returns the log of calls, the output
    and the input gradient."""
    model = mlp(nn)
    log = []
    for name, layer in model.named_children():
        layer.register_forward_pre_hook(
            lambda m, args, name=name: log.append(("pre", name, as_arrays(args))))
        layer.register_forward_hook(
            lambda m, args, out, name=name: log.append(("forward", name, as_arrays([out]))))
        layer.register_full_backward_hook(
            lambda m, gi, go, name=name: log.append(("backward", name, as_arrays(gi),
                                                     as_arrays(go))))
    x = lib.tensor(X, requires_grad=True)
    out = model(x)
    (out * out).sum().backward()
    return log, to_numpy(out), to_numpy(x.grad)


def test_hook_order_and_arguments_match_torch():
    (t_log, t_out, t_grad), (e_log, e_out, e_grad) = both(hooked_run)
    assert [e[:2] for e in e_log][:3] == [("pre", "0"), ("forward", "0"), ("pre", "1")]
    assert [e[:2] for e in e_log][-3:] == [("backward", "2"), ("backward", "1"),
                                          ("backward", "0")]
    assert_logs_equal(t_log, e_log)
    np.testing.assert_allclose(e_out, t_out, **FORWARD_TOL)
    np.testing.assert_allclose(e_grad, t_grad, **GRAD_TOL)


def test_removed_hooks_are_not_called_and_call_is_plain_without_hooks():
    model = mlp(enn)
    assert model._module_hooks is None  # the fast path of __call__
    calls = []
    handles = [model.register_forward_pre_hook(lambda m, a: calls.append("pre")),
               model.register_forward_hook(lambda m, a, o: calls.append("forward")),
               model.register_full_backward_hook(lambda m, gi, go: calls.append("backward"))]
    model(ad.tensor(X, requires_grad=True)).sum().backward()
    assert calls == ["pre", "forward", "backward"]
    for handle in handles:
        handle.remove()
    calls.clear()
    model(ad.tensor(X, requires_grad=True)).sum().backward()
    assert calls == []


def replaced_run(lib, nn, _optim):
    """A pre-hook scaling the input, a forward hook replacing the output, and
    a prepended forward hook that runs first."""
    model = mlp(nn)
    seen = []
    model.register_forward_pre_hook(lambda m, args: (args[0] * 2,))
    model.register_forward_hook(lambda m, args, out: out + 1)
    model.register_forward_hook(lambda m, args, out: seen.append(to_numpy(out)), prepend=True)
    x = lib.tensor(X, requires_grad=True)
    out = model(x)
    out.sum().backward()
    return to_numpy(out), seen[0], to_numpy(x.grad)


def test_forward_hooks_replace_arguments_and_output_as_torch():
    (t_out, t_seen, t_grad), (e_out, e_seen, e_grad) = both(replaced_run)
    np.testing.assert_allclose(e_out, e_seen + 1, **FORWARD_TOL)  # the replacement is used
    for e, t in ((e_out, t_out), (e_seen, t_seen), (e_grad, t_grad)):
        np.testing.assert_allclose(e, t, **FORWARD_TOL)


def kwargs_run(lib, nn, _optim):
    class Scale(nn.Module):
        def forward(self, x, *, factor=1.0):
            return x * factor

    module, seen = Scale(), []
    module.register_forward_pre_hook(lambda m, args, kwargs: (args, {"factor": 3.0}),
                                     with_kwargs=True)
    module.register_forward_hook(
        lambda m, args, kwargs, out: seen.append(kwargs["factor"]), with_kwargs=True)
    return to_numpy(module(lib.tensor(X), factor=2.0)), seen


def test_hooks_with_kwargs_as_torch():
    (t_out, t_seen), (e_out, e_seen) = both(kwargs_run)
    assert e_seen == t_seen == [3.0]
    np.testing.assert_allclose(e_out, t_out, **FORWARD_TOL)
    np.testing.assert_allclose(e_out, 3 * X, **FORWARD_TOL)


def two_input_run(lib, nn, _optim, needs_grad=(True, False)):
    """A module of two tensors and a number; the hook halves grad_input."""
    class Mix(nn.Module):
        def forward(self, a, scale, b):
            return a * b * scale + a, b.sum()

    module, log = Mix(), []

    def hook(m, grad_input, grad_output):
        log.append((as_arrays(grad_input), as_arrays(grad_output)))
        return tuple(None if g is None else g / 2 for g in grad_input)

    module.register_full_backward_hook(hook)
    a = lib.tensor(X, requires_grad=needs_grad[0])
    b = lib.tensor(X[::-1].copy(), requires_grad=needs_grad[1])
    y, s = module(a, 3.0, b)
    ((y * y).sum() + 2 * s).backward()
    grads = [None if t.grad is None else to_numpy(t.grad) for t in (a, b)]
    return log, grads


@pytest.mark.parametrize("needs_grad", [(True, False), (True, True), (False, True)])
def test_full_backward_hook_gradients_and_replacement_match_torch(needs_grad):
    (t_log, t_grads), (e_log, e_grads) = both(
        lambda *libs: two_input_run(*libs, needs_grad=needs_grad))
    assert len(e_log) == len(t_log) == 1
    for t_part, e_part in zip(t_log[0], e_log[0], strict=True):
        assert len(t_part) == len(e_part)
        for t, e in zip(t_part, e_part, strict=True):
            assert (t is None) == (e is None)
            if t is not None:
                np.testing.assert_allclose(e, t, **GRAD_TOL)
    for t, e in zip(t_grads, e_grads, strict=True):
        assert (t is None) == (e is None)
        if t is not None:
            np.testing.assert_allclose(e, t, **GRAD_TOL)


def test_full_backward_hook_with_wrong_gradient_count_says_what_to_return():
    module = enn.Linear(3, 2)
    module.register_full_backward_hook(lambda m, gi, go: (gi[0], gi[0]))
    out = module(ad.tensor(X, requires_grad=True, dtype=ad.float32))
    with pytest.raises(RuntimeError, match="one gradient"):
        out.sum().backward()


def test_a_hook_must_be_callable():
    with pytest.raises(TypeError, match="callable"):
        enn.Linear(2, 2).register_forward_hook(3)


# -------------------------------------------------------------- Sequential


def named_sequential(nn):
    return nn.Sequential(OrderedDict([("enc", nn.Linear(3, 4)), ("act", nn.Tanh()),
                                      ("dec", nn.Linear(4, 2))]))


def test_sequential_from_ordered_dict_loads_torch_state_dict():
    torch.manual_seed(1)
    reference = named_sequential(torch.nn).double()
    model = named_sequential(enn).double()
    assert list(model.state_dict()) == list(reference.state_dict())
    model.load_state_dict(reference.state_dict())
    np.testing.assert_allclose(to_numpy(model(ad.tensor(X))),
                               to_numpy(reference(torch.tensor(X))), **FORWARD_TOL)


EDITS = {
    "slice": lambda s, nn: s[1:],
    "negative slice": lambda s, nn: s[::-2],
    "del": lambda s, nn: s.__delitem__(0) or s,
    "del slice": lambda s, nn: s.__delitem__(slice(0, 2)) or s,
    "append": lambda s, nn: s.append(nn.ReLU()),
    "extend": lambda s, nn: s.extend([nn.ReLU(), nn.Tanh()]),
    "setitem": lambda s, nn: s.__setitem__(-1, nn.ReLU()) or s,
    "pop": lambda s, nn: s.pop(1) and s,
    "add": lambda s, nn: s + nn.Sequential(nn.ReLU()),
    "iadd": lambda s, nn: s.__iadd__(nn.Sequential(nn.ReLU())),
}


@pytest.mark.parametrize("edit", EDITS)
def test_sequential_edits_give_torch_names_and_types(edit):
    torch_result, engine_result = both(lambda lib, nn, _: EDITS[edit](named_sequential(nn), nn))
    assert type(engine_result).__name__ == type(torch_result).__name__ == "Sequential"
    assert list(engine_result._modules) == list(torch_result._modules)
    assert ([type(m).__name__ for m in engine_result]
            == [type(m).__name__ for m in torch_result])
    assert len(engine_result) == len(torch_result)


def test_sequential_insert_and_positions_as_torch():
    torch_seq, engine_seq = both(
        lambda lib, nn, _: nn.Sequential(nn.ReLU(), nn.Tanh()).insert(1, nn.Identity()))
    assert list(engine_seq._modules) == list(torch_seq._modules)
    assert [type(m).__name__ for m in engine_seq] == [type(m).__name__ for m in torch_seq]
    for seq in (torch_seq, engine_seq):
        with pytest.raises(IndexError):
            seq[3]
    assert type(engine_seq[-1]).__name__ == "Tanh"


def test_sequential_is_not_a_module_list_and_rejects_non_modules():
    assert not isinstance(enn.Sequential(), enn.ModuleList)
    for nn in (torch.nn, enn):
        with pytest.raises(TypeError):
            nn.Sequential(OrderedDict(a=nn.ReLU()), nn.ReLU())
        with pytest.raises(ValueError):
            nn.Sequential(nn.ReLU()) + [nn.ReLU()]
        with pytest.raises(ValueError):
            seq = nn.Sequential(nn.ReLU())
            seq += [nn.ReLU()]


# ------------------------------------------------------------ look-ups


def nested(nn):
    return nn.Sequential(OrderedDict(block=nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))))


@pytest.mark.parametrize("lookup, target", [
    ("get_submodule", "block.1"), ("get_submodule", ""),
    ("get_parameter", "block.0.weight"), ("get_buffer", "block.1.running_mean")])
def test_lookups_find_what_torch_finds(lookup, target):
    torch_found, engine_found = both(lambda lib, nn, _: getattr(nested(nn), lookup)(target))
    assert type(engine_found).__name__ in (type(torch_found).__name__, "Tensor")
    if lookup != "get_submodule":
        assert tuple(engine_found.shape) == tuple(torch_found.shape)


@pytest.mark.parametrize("lookup, target", [
    ("get_submodule", "block.7"), ("get_parameter", "block.0.foo"),
    ("get_parameter", "block.0"), ("get_buffer", "block.1.weight")])
def test_failed_lookups_raise_attribute_error_as_torch(lookup, target):
    for nn in (torch.nn, enn):
        with pytest.raises(AttributeError):
            getattr(nested(nn), lookup)(target)


def test_requires_grad_and_zero_grad_as_torch():
    model = mlp(enn)
    model(ad.tensor(X)).sum().backward()
    model.zero_grad(set_to_none=False)
    assert all(p.grad is not None and not p.grad.numpy().any() for p in model.parameters())
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())
    assert model.requires_grad_(False) is model
    assert not any(p.requires_grad for p in model.parameters())


# ------------------------------------------------------------- optimizers

OPTIMIZERS = [
    ("RMSprop", {}),
    ("RMSprop", dict(lr=0.01, alpha=0.9, momentum=0.9, centered=True, weight_decay=0.1)),
    ("RMSprop", dict(centered=True)),
    ("Adagrad", {}),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.5,
                     eps=1e-6)),
    ("Adamax", {}),
    ("Adamax", dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1)),
    ("RAdam", {}),
    ("RAdam", dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1)),
    ("RAdam", dict(weight_decay=0.1, decoupled_weight_decay=True)),
    ("NAdam", {}),
    ("NAdam", dict(lr=0.01, betas=(0.8, 0.9), weight_decay=0.1, momentum_decay=0.1)),
    ("NAdam", dict(weight_decay=0.1, decoupled_weight_decay=True)),
]


def trajectory(lib, optim, name, settings, dtype):
    """20 steps from the same weights with the same gradients; a second
    parameter group has its own learning rate."""
    rng = np.random.default_rng(0)
    w = lib.tensor(rng.standard_normal((3, 4)).astype(dtype), requires_grad=True)
    b = lib.tensor(rng.standard_normal(4).astype(dtype), requires_grad=True)
    opt = getattr(optim, name)([w], **settings)
    opt.add_param_group({"params": [b], "lr": 0.05})
    steps = []
    for _ in range(20):
        w.grad = lib.tensor(rng.standard_normal((3, 4)).astype(dtype))
        b.grad = lib.tensor(rng.standard_normal(4).astype(dtype))
        opt.step()
        steps.append(np.concatenate([to_numpy(w).ravel(), to_numpy(b).ravel()]))
    return np.array(steps), opt.state_dict()


@pytest.mark.parametrize("dtype, tol", [(np.float64, 1e-12), (np.float32, 1e-6)])
@pytest.mark.parametrize("name, settings", OPTIMIZERS)
def test_optimizer_trajectory_and_state_match_torch(name, settings, dtype, tol):
    (t_steps, t_state), (e_steps, e_state) = both(
        lambda lib, nn, optim: trajectory(lib, optim, name, settings, dtype))
    np.testing.assert_allclose(e_steps, t_steps, rtol=0, atol=tol)
    assert e_state["state"].keys() == t_state["state"].keys()
    for index, t_entry in t_state["state"].items():
        e_entry = e_state["state"][index]
        assert list(e_entry) == list(t_entry)
        for key, value in t_entry.items():
            np.testing.assert_allclose(to_numpy(e_entry[key]), to_numpy(value), atol=tol)
    own_settings = {k for k in e_state["param_groups"][1] if k != "params"}
    assert own_settings <= set(t_state["param_groups"][1])
    assert e_state["param_groups"][1]["lr"] == 0.05


@pytest.mark.parametrize("name", ["RMSprop", "Adagrad", "Adamax", "RAdam", "NAdam"])
def test_negative_settings_are_refused_as_torch(name):
    for lib, _, optim in LIBS.values():
        with pytest.raises(ValueError):
            getattr(optim, name)([lib.zeros(2, requires_grad=True)], lr=-1.0)


def backward_pre_run(lib, nn, _optim):
    """A pre-hook doubling grad_output, seen by the backward hook after it."""
    model, log = mlp(nn), []
    model.register_full_backward_pre_hook(
        lambda m, go: (log.append(("pre", as_arrays(go))), (go[0] * 2,))[1])
    model.register_full_backward_hook(
        lambda m, gi, go: log.append(("backward", as_arrays(gi), as_arrays(go))))
    x = lib.tensor(X, requires_grad=True)
    (model(x) ** 2).sum().backward()
    return log, to_numpy(x.grad)


def test_full_backward_pre_hook_replaces_grad_output_as_torch():
    (t_log, t_grad), (e_log, e_grad) = both(backward_pre_run)
    assert [entry[0] for entry in e_log] == [entry[0] for entry in t_log] == ["pre", "backward"]
    for t_entry, e_entry in zip(t_log, e_log, strict=True):
        for t_part, e_part in zip(t_entry[1:], e_entry[1:], strict=True):
            for t, e in zip(t_part, e_part, strict=True):
                np.testing.assert_allclose(e, t, **GRAD_TOL)
    np.testing.assert_allclose(e_log[1][2][0], 2 * e_log[0][1][0], **GRAD_TOL)
    np.testing.assert_allclose(e_grad, t_grad, **GRAD_TOL)


@pytest.mark.parametrize("listing", [
    lambda m: m.named_parameters(), lambda m: m.named_parameters(prefix="model"),
    lambda m: m.named_parameters(recurse=False), lambda m: m.parameters(recurse=False),
    lambda m: m.named_parameters(remove_duplicate=False),
    lambda m: m.named_buffers(prefix="x", recurse=True), lambda m: m.buffers(recurse=False)])
def test_parameter_and_buffer_listings_take_torch_arguments(listing):
    def tied(lib, nn, _optim):
        model = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2), nn.Linear(2, 2))
        model[2].weight = model[0].weight
        model.register_parameter("scale", nn.Parameter(lib.ones(1)))
        return [name if isinstance(name, str) else tuple(name.shape)
                for entry in listing(model)
                for name in (entry if isinstance(entry, tuple) else (entry,))
                if isinstance(name, str) or not isinstance(entry, tuple)]
    torch_names, engine_names = both(tied)
    assert engine_names == torch_names


def shared_layer_run(lib, nn, _optim):
    """One layer called twice in one graph: its hooks run once per call."""
    layer = mlp(nn)[0]
    log = []
    layer.register_full_backward_hook(
        lambda m, gi, go: log.append((as_arrays(gi), as_arrays(go))))
    x = lib.tensor(X, requires_grad=True)
    first = layer(x)
    second = layer(x * 3)
    (first.sum() + (second * second).sum()).backward()
    return log, to_numpy(x.grad)


def test_full_backward_hook_runs_once_per_call_as_torch():
    (t_log, t_grad), (e_log, e_grad) = both(shared_layer_run)
    assert len(e_log) == len(t_log) == 2
    for t_call, e_call in zip(t_log, e_log, strict=True):
        for t_part, e_part in zip(t_call, e_call, strict=True):
            for t, e in zip(t_part, e_part, strict=True):
                np.testing.assert_allclose(e, t, **GRAD_TOL)
    np.testing.assert_allclose(e_grad, t_grad, **GRAD_TOL)


def test_pre_hook_results_as_torch():
    for lib, nn, _ in LIBS.values():
        module = nn.Identity()
        module.register_forward_pre_hook(lambda m, args: args[0] * 2)  # one value, no tuple
        np.testing.assert_allclose(to_numpy(module(lib.tensor(X))), 2 * X, **FORWARD_TOL)
        module = nn.Identity()
        module.register_forward_pre_hook(lambda m, args, kwargs: 5, with_kwargs=True)
        with pytest.raises(RuntimeError, match="new_args, new_kwargs"):
            module(lib.tensor(X))
