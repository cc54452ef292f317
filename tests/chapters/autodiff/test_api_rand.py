"""Random draws, devices, modes and memory facts that everyday torch code uses
(chapters/autodiff/factories.py, sampling.py, device.py, cuda.py, layout.py,
grad_mode.inference_mode, condition.where, nn.Module.apply).

The engine's generator is not torch's: draws are compared with torch by shape
and dtype only, and checked on their own for range, reproducibility under
``manual_seed`` and distribution (generous bounds, fixed seeds)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chapters.autodiff as ad
from chapters.torchcheck import assert_close
from tests.chapters.autodiff.parity import raises_like_torch

N = 20_000


def same_kind(fn):
    """``fn(lib)`` on both engines: the same shape and dtype (values differ)."""
    ours, theirs = fn(ad), fn(torch)
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch.")
    return ours


def bool_dtype(L):
    return L.bool_ if L is ad else L.bool


def same_result(fn):
    """``fn(lib)`` on both engines gives the same Python value."""
    ours, theirs = fn(ad), fn(torch)
    assert ours == theirs, f"engine {ours!r}, torch {theirs!r}"


# ------------------------------------------------------------------ factories

KINDS = {
    "randint-high": lambda L: L.randint(10, (3, 4)),
    "randint-low-high": lambda L: L.randint(-5, 5, (2,)),
    "randint-size-kw": lambda L: L.randint(3, 5, size=(2, 0)),
    "randint-keywords": lambda L: L.randint(low=2, high=4, size=(3,)),
    "randint-high-kw": lambda L: L.randint(high=4, size=[2]),
    "randint-dtype": lambda L: L.randint(0, 3, (4,), dtype=L.float16),
    "randint-0d": lambda L: L.randint(3, ()),
    "randperm": lambda L: L.randperm(7),
    "randperm-empty": lambda L: L.randperm(0),
    "randperm-dtype": lambda L: L.randperm(5, dtype=L.int32),
    "rand_like": lambda L: L.rand_like(L.ones(2, 3, dtype=L.float64)),
    "randint_like": lambda L: L.randint_like(L.ones(2, dtype=L.int32), 3, 9),
    "randn_like-0d": lambda L: L.randn_like(L.ones(())),
    "normal-tensors": lambda L: L.normal(L.zeros(2, 1), L.ones(3)),
    "normal-numbers": lambda L: L.normal(0.0, 1.0, (2, 3)),
    "normal-float64-mean": lambda L: L.normal(L.zeros(3, dtype=L.float64), 2.0),
    "normal-number-mean": lambda L: L.normal(1.0, L.ones(4)),
    "bernoulli": lambda L: L.bernoulli(L.full((3, 2), 0.5, dtype=L.float64)),
    "bernoulli-p": lambda L: L.bernoulli(L.ones(4, dtype=L.int64), 0.3),
    "multinomial": lambda L: L.multinomial(L.tensor([0.2, 0.8]), 5, replacement=True),
    "multinomial-rows": lambda L: L.multinomial(L.tensor([[1.0, 2.0, 3.0]] * 2), 3),
    "normal_": lambda L: L.zeros(2, 3).normal_(1.0, 2.0),
    "uniform_": lambda L: L.zeros(3, dtype=L.float16).uniform_(-1, 1),
    "bernoulli_": lambda L: L.zeros(3, dtype=L.int64).bernoulli_(0.4),
    "random_": lambda L: L.zeros(3, dtype=L.uint8).random_(),
    "exponential_": lambda L: L.zeros(2, 2, dtype=L.float64).exponential_(3.0),
}


@pytest.mark.parametrize("name", KINDS)
def test_draws_have_torchs_shape_and_dtype(name):
    same_kind(KINDS[name])


def test_randint_and_randperm_ranges():
    ad.manual_seed(1)
    x = ad.randint(-3, 4, (N,)).numpy()
    assert x.min() == -3 and x.max() == 3
    assert sorted(ad.randperm(50).tolist()) == list(range(50))


def test_random_fill_ranges_follow_the_dtype():
    ad.manual_seed(2)
    assert set(ad.zeros(N, dtype=ad.bool_).random_().tolist()) == {False, True}
    u8 = ad.zeros(N, dtype=ad.uint8).random_().numpy()
    assert u8.min() < 10 and u8.max() > 245
    f32 = ad.zeros(N).random_().numpy()
    assert f32.min() >= 0 and f32.max() <= 2 ** 24 and f32.max() > 2 ** 23
    assert np.all(f32 == np.round(f32))
    part = ad.zeros(N, dtype=ad.int8).random_(-5, 3).numpy()
    assert part.min() == -5 and part.max() == 2
    assert set(ad.zeros(100).random_(4).tolist()) == {0.0, 1.0, 2.0, 3.0}


def test_uniform_and_exponential_ranges():
    ad.manual_seed(3)
    u = ad.empty(N).uniform_(2.0, 5.0).numpy()
    assert u.min() >= 2.0 and u.max() < 5.0
    assert ad.empty(N).exponential_().numpy().min() >= 0


DRAWS = {
    "randint": lambda: ad.randint(0, 100, (50,)),
    "randperm": lambda: ad.randperm(50),
    "rand_like": lambda: ad.rand_like(ad.ones(50)),
    "randint_like": lambda: ad.randint_like(ad.ones(50), 9),
    "normal": lambda: ad.normal(ad.zeros(50), 1.0),
    "bernoulli": lambda: ad.bernoulli(ad.full((50,), 0.5)),
    "multinomial": lambda: ad.multinomial(ad.ones(50), 10),
    "normal_": lambda: ad.empty(50).normal_(),
    "uniform_": lambda: ad.empty(50).uniform_(),
    "bernoulli_": lambda: ad.empty(50).bernoulli_(),
    "random_": lambda: ad.empty(50).random_(),
    "exponential_": lambda: ad.empty(50).exponential_(),
}


@pytest.mark.parametrize("name", DRAWS)
def test_manual_seed_repeats_a_draw(name):
    ad.manual_seed(7)
    first = DRAWS[name]().numpy().copy()
    second = DRAWS[name]().numpy()
    ad.manual_seed(7)
    again = DRAWS[name]().numpy()
    assert np.array_equal(first, again)
    assert not np.array_equal(first, second), "two draws in a row should differ"


def test_a_generator_argument_is_its_own_stream():
    a = ad.randint(0, 1000, (20,), generator=np.random.default_rng(5))
    b = ad.randint(0, 1000, (20,), generator=np.random.default_rng(5))
    assert a.tolist() == b.tolist()


def test_generator_seeds_as_torchs():
    same_result(lambda L: L.Generator().initial_seed())
    same_result(lambda L: L.Generator().manual_seed(42).initial_seed())
    g = ad.Generator().manual_seed(42)
    first = ad.randperm(10, generator=g).tolist()
    assert ad.randperm(10, generator=g).tolist() != first, "the stream moves on"
    assert ad.randperm(10, generator=g.manual_seed(42)).tolist() == first
    split = ad.data.random_split(list(range(8)), [4, 4], generator=g.manual_seed(1))
    assert sorted(split[0].indices + split[1].indices) == list(range(8))


# ------------------------------------------------------------- distributions


def test_normal_has_its_mean_and_std():
    ad.manual_seed(11)
    x = ad.normal(ad.full((N,), 3.0), ad.full((N,), 0.5)).numpy()
    assert abs(x.mean() - 3.0) < 0.03 and abs(x.std() - 0.5) < 0.02
    y = ad.empty(N).normal_(-1.0, 2.0).numpy()
    assert abs(y.mean() + 1.0) < 0.1 and abs(y.std() - 2.0) < 0.08


def test_bernoulli_and_exponential_means():
    ad.manual_seed(12)
    assert abs(ad.bernoulli(ad.full((N,), 0.3)).numpy().mean() - 0.3) < 0.02
    assert abs(ad.empty(N).bernoulli_(0.7).numpy().mean() - 0.7) < 0.02
    assert abs(ad.empty(N).exponential_(4.0).numpy().mean() - 0.25) < 0.01


def test_randint_is_uniform():
    ad.manual_seed(13)
    counts = np.bincount(ad.randint(0, 5, (N,)).numpy(), minlength=5)
    assert np.all(np.abs(counts / N - 0.2) < 0.02), counts


def test_randperm_puts_each_value_anywhere():
    ad.manual_seed(14)
    firsts = np.bincount([ad.randperm(4)[0].item() for _ in range(4000)], minlength=4)
    assert np.all(np.abs(firsts / 4000 - 0.25) < 0.04), firsts


@pytest.mark.parametrize("replacement", [True, False])
def test_multinomial_first_draw_follows_the_weights(replacement):
    ad.manual_seed(15)
    weights = ad.tensor([[1.0, 0.0, 3.0, 4.0]] * N)
    draws = ad.multinomial(weights, 2, replacement=replacement).numpy()
    freq = np.bincount(draws[:, 0], minlength=4) / N
    assert np.all(np.abs(freq - np.array([1, 0, 3, 4]) / 8) < 0.02), freq
    if not replacement:
        assert np.all(draws[:, 0] != draws[:, 1]), "without replacement, no category twice"
        assert not np.any(draws == 1), "a zero weight is never drawn while others remain"


# ------------------------------------------------------------------- errors

ERRORS = {
    "randint empty range": lambda L: L.randint(5, 3, (2,)),
    "randint float bound": lambda L: L.randint(2.5, (3,)),
    "randint size as int": lambda L: L.randint(2, 10),
    "randint no arguments": lambda L: L.randint(),
    "randint out of bool": lambda L: L.randint(10, (2,), dtype=bool_dtype(L)),
    "randperm negative": lambda L: L.randperm(-1),
    "randperm beyond uint8": lambda L: L.randperm(300, dtype=L.uint8),
    "randn int dtype": lambda L: L.randn(2, dtype=L.int64),
    "rand_like int": lambda L: L.rand_like(L.ones(2, dtype=L.int64)),
    "normal negative std": lambda L: L.normal(0.0, -1.0, (2,)),
    "normal int mean": lambda L: L.normal(L.zeros(3, dtype=L.int64), 1.0),
    "bernoulli int probabilities": lambda L: L.bernoulli(L.ones(3, dtype=L.int64)),
    "bernoulli p above 1": lambda L: L.bernoulli(L.ones(3), 1.5),
    "multinomial 0-d": lambda L: L.multinomial(L.tensor(1.0), 1),
    "uniform_ int": lambda L: L.ones(3, dtype=L.int64).uniform_(),
    "normal_ int": lambda L: L.ones(3, dtype=L.int64).normal_(),
    "exponential_ int": lambda L: L.ones(3, dtype=L.int64).exponential_(),
    "bernoulli_ p of another shape": lambda L: L.ones(2, 3).bernoulli_(L.ones(4)),
    "random_ beyond bool": lambda L: L.ones(2, dtype=bool_dtype(L)).random_(0, 3),
    "fill of a leaf that requires grad": lambda L: L.ones(3, requires_grad=True).normal_(),
    "from_numpy of a list": lambda L: L.from_numpy([1, 2]),
    "from_numpy negative strides": lambda L: L.from_numpy(np.ones(3)[::-1]),
    "from_numpy of a string array": lambda L: L.from_numpy(np.array(["a"])),
    "format a vector": lambda L: f"{L.ones(2):.3f}",
    "where with two arguments": lambda L: L.where(L.tensor([True]), L.ones(1)),
    "stride out of range": lambda L: L.ones(2, 3).stride(2),
    "device index negative": lambda L: L.device("cpu", -1),
    "device string": lambda L: L.device("cuda:x"),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_raise_like_torch(name):
    raises_like_torch(lambda lib: ERRORS[name](lib), [])


# ------------------------------------------------------------ from_numpy


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int8, np.int32,
                                   np.int64, np.uint8, np.bool_])
def test_from_numpy_shares_memory_and_keeps_the_dtype(dtype):
    array = np.zeros((2, 3), dtype)
    x = same_kind(lambda L: L.from_numpy(array))
    array[0, 1] = 1
    assert x[0, 1].item() == 1
    x[1, 2] = 1
    assert array[1, 2] == 1


def test_from_numpy_takes_a_strided_view():
    array = np.arange(12.0).reshape(3, 4)[:, ::2]
    assert_close(ad.from_numpy(array), torch.from_numpy(array), rtol=0, atol=0)


# ---------------------------------------------------------------- devices


def test_device_parses_and_prints_as_torch():
    for args in [("cpu",), ("cuda",), ("cuda:1",), ("cuda", 2), ("cpu", 0), ("mps",)]:
        ours, theirs = ad.device(*args), torch.device(*args)
        assert (str(ours), repr(ours), ours.type, ours.index) == (
            str(theirs), repr(theirs), theirs.type, theirs.index)
    assert ad.device(ad.device("cuda:0")) == ad.device("cuda", 0)
    assert ad.device("cpu") != ad.device("cuda")
    assert ad.device(type="cpu") == ad.device("cpu")


def test_a_tensors_device_equals_the_cpu_device():
    same_result(lambda L: L.ones(2).device == L.device("cpu"))
    same_result(lambda L: L.ones(2).device.type)
    same_result(lambda L: L.ones(2).is_cuda)
    same_result(lambda L: L.ones(2).is_cpu)


def test_device_agnostic_code_runs():
    device = "cuda" if ad.cuda.is_available() else "cpu"
    assert device == "cpu" and ad.cuda.device_count() == 0
    ad.cuda.manual_seed_all(0)
    x = ad.randn(2, 3, device=device).to(device).to(ad.device(device))
    y = ad.zeros(2, 3, device=x.device) + ad.ones_like(x, device=x.device)
    assert y.device == ad.device("cpu") and y.shape == (2, 3)


def test_device_as_a_context_manager():
    with ad.device("cpu"):
        assert ad.ones(2).device == ad.device("cpu")
    with pytest.raises(RuntimeError, match="CPU only"), ad.device("cuda"):
        pass


def test_a_model_moves_to_the_cpu_as_in_device_agnostic_training_code():
    def run(L):
        L.manual_seed(0)
        model = L.nn.Linear(3, 2).to(L.device("cpu")).to("cpu").cpu()
        model.to(device="cpu", dtype=L.float64)
        x = L.ones(4, 3, dtype=L.float64).to(device="cpu")
        return model(x).dtype, model.weight.dtype, x.device == L.device("cpu")

    ours, theirs = run(ad), run(torch)
    assert ours[2] and theirs[2]
    assert str(ours[0]) == str(theirs[0]).removeprefix("torch.") == "float64"
    assert str(ours[1]) == str(theirs[1]).removeprefix("torch.") == "float64"


def test_contiguous_copies_a_strided_view_in_row_order_and_keeps_the_gradient():
    values = np.arange(6.0).reshape(2, 3)
    for L in (ad, torch):
        x = L.tensor(values, requires_grad=True)
        view = x.t()
        assert not view.is_contiguous() and view.contiguous().is_contiguous()
        assert x.contiguous() is x
        (view.contiguous() * L.tensor(values.T.copy())).sum().backward()
        np.testing.assert_array_equal(np.asarray(x.grad.detach()), values)


@pytest.mark.parametrize("make", [lambda: ad.zeros(2, device="cuda"),
                                  lambda: ad.randint(3, (2,), device=ad.device("cuda", 0)),
                                  lambda: ad.tensor([1.0], device="mps"),
                                  lambda: ad.Generator("cuda"),
                                  lambda: ad.ones(2).to(device="cuda"),
                                  lambda: ad.ones(2).cuda(),
                                  lambda: ad.nn.Linear(2, 2).to("cuda"),
                                  lambda: ad.nn.Linear(2, 2).cuda()])
def test_another_device_is_refused_with_what_to_do(make):
    with pytest.raises(RuntimeError, match="CPU only"):
        make()


# ------------------------------------------------------------------ modes


def test_inference_mode_records_no_history():
    def run(L):
        w = L.ones(2, requires_grad=True)
        with L.inference_mode():
            inside = (w * 2).requires_grad, L.is_grad_enabled()
        return inside, L.is_grad_enabled()
    same_result(run)


def test_inference_mode_false_turns_recording_on():
    def run(L):
        with L.no_grad(), L.inference_mode(False):
            return L.is_grad_enabled()
    same_result(run)


def test_inference_mode_as_decorator():
    def run(L):
        @L.inference_mode
        def bare():
            return L.is_grad_enabled()

        @L.inference_mode()
        def called():
            return L.is_grad_enabled()
        return bare(), called(), L.is_grad_enabled()
    same_result(run)


def test_fills_run_under_no_grad_and_bump_the_version():
    w = ad.zeros(3, requires_grad=True)
    before = w._version
    with ad.no_grad():
        assert w.uniform_(-1, 1) is w
    assert w._version == before + 1 and w.requires_grad


def test_module_apply_visits_children_first_and_returns_self():
    def run(L):
        net = L.nn.Sequential(L.nn.Linear(2, 3), L.nn.Sequential(L.nn.ReLU(), L.nn.Linear(3, 1)))
        seen = []
        returned = net.apply(lambda m: seen.append(type(m).__name__))
        return seen, returned is net
    same_result(run)


def test_module_apply_initialises_weights():
    net = ad.nn.Sequential(ad.nn.Linear(4, 4), ad.nn.Linear(4, 2))

    def init(m):
        if isinstance(m, ad.nn.Linear):
            with ad.no_grad():
                m.weight.fill_(0.5)
    net.apply(init)
    assert all(np.all(p.data == 0.5) for n, p in net.named_parameters() if "weight" in n)


# ------------------------------------------------- memory facts and format

LAYOUTS = {
    "fresh": lambda x: x,
    "transposed": lambda x: x.t(),
    "rows-from-1": lambda x: x[1:],
    "every-other-column": lambda x: x[:, ::2],
    "expanded": lambda x: x[:1].expand(4, 4),
    "column-vector": lambda x: x[:, :1],
    "empty": lambda x: x[:0],
}


@pytest.mark.parametrize("name", LAYOUTS)
def test_stride_contiguity_and_offset_match_torch(name):
    def facts(L):
        x = LAYOUTS[name](L.arange(16.0).reshape(4, 4))
        return x.stride(), x.is_contiguous(), x.storage_offset(), x.element_size()
    same_result(facts)


def test_data_ptr_of_views():
    def pointers(L):
        x = L.zeros(3, 4, dtype=L.float64)
        return (x[0].data_ptr() == x.data_ptr(), x.t().data_ptr() == x.data_ptr(),
                x[1].data_ptr() - x.data_ptr(), x.clone().data_ptr() == x.data_ptr())
    same_result(pointers)


@pytest.mark.parametrize("case", [
    lambda L: f"{L.tensor(1.23456):.3f}", lambda L: f"{L.tensor(3):d}",
    lambda L: f"{L.tensor(3):>5}", lambda L: format(L.tensor(2.5)),
    lambda L: f"{L.tensor(0.5, dtype=L.float64):.2%}"])
def test_format_of_a_0d_tensor(case):
    same_result(case)


def test_format_of_a_vector_with_no_spec_is_its_str():
    x = ad.tensor([1.5, 2.0])
    assert f"{x}" == str(x)


@pytest.mark.parametrize("cond", [
    np.array([[True, False], [False, True]]), np.array([0.0, 1.0, 2.0]), np.array(True),
    np.zeros((0, 3), bool)])
def test_where_with_the_condition_alone(cond):
    ours, theirs = ad.where(ad.tensor(cond)), torch.where(torch.from_numpy(cond))
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs, strict=True):
        assert_close(o, t, rtol=0, atol=0)
