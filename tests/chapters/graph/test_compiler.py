import warnings

import numpy as np
import pytest

from chapters.graph import TracerWarning, compile, run_eager
from chapters.torchcheck import assert_close


def gelu_mlp(x, w1, b1, w2):
    h = x @ w1 + b1
    return (0.5 * h * (1 + (0.7978845608 * (h + 0.044715 * h ** 3)).tanh())) @ w2


def weights(rng, d=8, h=16):
    return (rng.standard_normal((d, h)).astype(np.float32),
            rng.standard_normal(h).astype(np.float32),
            rng.standard_normal((h, 4)).astype(np.float32))


def test_compiled_equals_eager_and_is_cached_per_signature():
    rng = np.random.default_rng(0)
    w = weights(rng)
    fast = compile(gelu_mlp)
    assert fast.__name__ == "gelu_mlp"
    for batch in (5, 5, 9, 5):
        x = rng.standard_normal((batch, 8)).astype(np.float32)
        assert_close(fast(x, *w), run_eager(gelu_mlp, x, *w).outputs, rtol=1e-5, atol=1e-5,
                     what=f"compiled, batch {batch}")
    assert fast.traces == 2 and len(fast.cache) == 2  # batch 5 once, batch 9 once (a re-trace)
    entry = fast.entry_for(x, *w)
    assert [n.op for n in entry.graph.topological_order()].count("fused") == 1
    assert any(r.changed for r in entry.reports)


def test_a_new_dtype_is_a_new_signature():
    fast = compile(lambda x: x * 2)
    fast(np.ones(3, np.float32))
    assert fast(np.ones(3, np.float64)).dtype == np.float64 and fast.traces == 2


def test_decorator_with_options_and_shape_errors():
    @compile(passes=False)
    def add(a, b):
        return a + b

    assert_close(add(np.ones(3), np.ones(3)), np.full(3, 2.0), rtol=0, atol=0)
    assert all(n.op != "fused" for n in add.entry_for(np.ones(3), np.ones(3)).graph)
    with pytest.raises(RuntimeError, match=r"add: shapes \(3,\) and \(4,\) cannot be broadcas"):
        add(np.ones(3), np.ones(4))


def test_compile_bakes_data_dependent_branches_like_jit_trace():
    @compile
    def clip(x):
        return x * 1 if x.sum() < 1 else x * 0  # a Python branch on data

    with pytest.warns(TracerWarning):
        out = clip(np.zeros(3, np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        wrong = clip(np.full(3, 5.0, np.float32))  # same signature: cached, no re-trace
    assert np.array_equal(out, np.zeros(3)) and np.array_equal(wrong, np.full(3, 5.0))
    assert clip.traces == 1
