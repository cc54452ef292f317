"""The engine's core behaviour, each checked against torch with one shared lambda."""

import numpy as np
import torch

import chapters.autodiff as ad
from chapters.graph import topological_sort
from chapters.torchcheck import assert_close


def test_source_text_example_gives_seven_in_both_engines():
    for lib in (ad, torch):
        x = lib.tensor(2.0, requires_grad=True)
        y = x**2 + 3 * x
        y.backward()
        assert x.grad.item() == 7.0


def test_history_is_a_chapter1_graph():
    x = ad.randn(3, requires_grad=True)
    y = (x * 2).exp().sum()
    order = topological_sort([y.grad_fn])
    assert [n.name for n in order] == ["AccumulateGrad", "MulBackward0", "ExpBackward0",
                                       "SumBackward0"]
    assert y.grad_fn.name() == "SumBackward0"
    assert y.grad_fn.next_functions[0][0] is order[2]
    assert order[-1].meta.shape == ()


def test_node_used_twice_gets_the_sum_of_its_gradients():
    a = np.random.default_rng(0).standard_normal(5).astype(np.float32)
    grads = []
    for lib in (ad, torch):
        x = lib.tensor(a, requires_grad=True)
        y = x.tanh()
        (y * y + y).sum().backward()
        grads.append(x.grad)
    assert_close(grads[0], grads[1], rtol=1e-6, atol=1e-6, what="x.grad")


def test_hundred_thousand_op_chain_needs_no_recursion():
    x = ad.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y.backward()
    assert x.grad.item() == 1.0


def test_grad_mode_is_per_thread_like_torch():
    import threading

    def observe(lib):
        seen = {}
        with lib.no_grad():
            worker = threading.Thread(target=lambda: seen.update(thread=lib.is_grad_enabled()))
            worker.start()
            worker.join()
            seen["caller"] = lib.is_grad_enabled()
        seen["after"] = lib.is_grad_enabled()
        return seen

    assert observe(ad) == observe(torch) == {"thread": True, "caller": False, "after": True}


def test_no_grad_records_nothing():
    x = ad.randn(3, requires_grad=True)
    with ad.no_grad():
        y = x * 2
        with ad.enable_grad():
            z = x * 2
    assert y.grad_fn is None and not y.requires_grad
    assert z.grad_fn is not None and ad.is_grad_enabled()


GRAD_FN_CASES = {
    "add": lambda a, v, b, w, c, F: a + a,
    "matmul 2-D @ 2-D": lambda a, v, b, w, c, F: a @ b,
    "matmul 2-D @ 1-D": lambda a, v, b, w, c, F: a @ v,
    "matmul 1-D @ 1-D": lambda a, v, b, w, c, F: v @ v,
    "sum": lambda a, v, b, w, c, F: a.sum(),
    "sum over a dim": lambda a, v, b, w, c, F: a.sum(dim=0),
    "mean over a dim": lambda a, v, b, w, c, F: a.mean(1, keepdim=True),
    "max of all": lambda a, v, b, w, c, F: a.max(),
    "expand": lambda a, v, b, w, c, F: a.expand(2, 3, 4),
    "cast": lambda a, v, b, w, c, F: a.double(),
    "reshape": lambda a, v, b, w, c, F: a.reshape(12),
    "linear": lambda a, v, b, w, c, F: F.linear(a, w, c),
    "linear without bias": lambda a, v, b, w, c, F: F.linear(a, w),
    "log_softmax": lambda a, v, b, w, c, F: F.log_softmax(a, dim=1),
}


def test_grad_fn_names_are_torchs_including_dispatch_dependent_ones():
    import torch.nn.functional as torch_F

    import chapters.autodiff.functional as engine_F

    rng = np.random.default_rng(0)
    shapes = ((3, 4), (4,), (4, 5), (5, 4), (5,))
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    for case, fn in GRAD_FN_CASES.items():
        names = [fn(*[lib.tensor(x, requires_grad=True) for x in arrays], F).grad_fn.name()
                 for lib, F in ((ad, engine_F), (torch, torch_F))]
        assert names[0] == names[1], (case, names)
