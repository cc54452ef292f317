"""Custom autograd functions (``autograd.Function``): each function body is
written once, as a factory of the library, and run on both engines."""

import numpy as np
import pytest
import torch

import chapters.autodiff as ad
from chapters.autodiff.autograd.function import once_differentiable  # torch's import path
from chapters.autodiff.node import saved_tensor_bytes
from chapters.torchcheck import assert_close

LIBS = (ad, torch)
X0 = np.array([[0.5, -1.0, 2.0], [0.25, 1.5, -0.75]], dtype=np.float32)
Y0 = np.array([[1.0, 2.0, -0.5], [0.5, -2.0, 3.0]], dtype=np.float32)
FWD = {"rtol": 1e-6, "atol": 1e-6}
GRAD = {"rtol": 1e-5, "atol": 1e-6}


def exp_fn(lib):
    """e^x, saving its output: d/dx e^x = e^x."""

    class Exp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y

    return Exp


def cube_fn(lib):
    """x^3, saving its input: d/dx = 3 x^2, whose derivative 6x needs the backward's graph."""

    class Cube(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return g * 3 * x * x

    return Cube


def scale_fn(lib):
    """x * k for a Python number k (a non-tensor argument: its gradient is None)."""

    class Scale(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.k = k
            return x * k

        @staticmethod
        def backward(ctx, g):
            return g * ctx.k, None

    return Scale


def polar_fn(lib):
    """Two outputs (x*y, x+y): dL/dx = g1*y + g2, dL/dy = g1*x + g2."""

    class Pair(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.save_for_backward(x, y)
            return x * y, x + y

        @staticmethod
        def backward(ctx, g1, g2):
            x, y = ctx.saved_tensors
            return g1 * y + g2, g1 * x + g2

    return Pair


def leaves(lib, *arrays):
    return [lib.tensor(a, requires_grad=True) for a in arrays]


def both(run):
    """``run(lib)`` on each engine."""
    return [run(lib) for lib in LIBS]


def test_single_output_value_gradient_and_node_name():
    def run(lib):
        (x,) = leaves(lib, X0)
        y = exp_fn(lib).apply(x)
        (y * y).sum().backward()
        return y, x.grad, type(y.grad_fn).__name__, y.grad_fn.name()

    (y_ad, g_ad, *names_ad), (y_t, g_t, *names_t) = both(run)
    assert_close(y_ad, y_t, **FWD, what="Exp forward")
    assert_close(g_ad, g_t, **GRAD, what="Exp gradient")
    assert names_ad == names_t == ["ExpBackward", "ExpBackward"]


def test_two_outputs_and_one_unused_output():
    def run(lib):
        x, y = leaves(lib, X0, Y0)
        a, b = polar_fn(lib).apply(x, y)
        (a.sum() + (b * b).sum()).backward()
        full = (a, b, x.grad, y.grad)
        x.grad = y.grad = None
        a, _ = polar_fn(lib).apply(x, y)
        a.sum().backward()                    # b's gradient never arrives: zeros
        return full + (x.grad, y.grad)

    got, want = both(run)
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        assert_close(g, w, **GRAD, what=f"two-output result {i}")


def test_non_tensor_arguments_get_none_and_refuse_a_gradient():
    def run(lib):
        (x,) = leaves(lib, X0)
        scale_fn(lib).apply(x, 2.5).sum().backward()
        return x.grad

    got, want = both(run)
    assert_close(got, want, **GRAD, what="Scale gradient")
    np.testing.assert_allclose(got.data, np.full_like(X0, 2.5))  # d(kx)/dx = k

    def wrong(lib):
        class Bad(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                return x * k

            @staticmethod
            def backward(ctx, g):
                return g, g

        (x,) = leaves(lib, X0)
        with pytest.raises(RuntimeError, match="not a"):
            Bad.apply(x, 2.0).sum().backward()

    both(wrong)


def test_needs_input_grad():
    def run(lib):
        seen = []

        class Add3(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y, k):
                return x + y * k

            @staticmethod
            def backward(ctx, g):
                seen.append(tuple(ctx.needs_input_grad))
                return g, g * 2.0, None

        (x,) = leaves(lib, X0)
        Add3.apply(x, lib.tensor(Y0), 2.0).sum().backward()
        return seen

    got, want = both(run)
    assert got == want == [(True, False, False)]


def test_mark_non_differentiable_output():
    def run(lib):
        class MaxWithIndex(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                flat = x.reshape(-1)
                i = flat.argmax()
                ctx.mark_non_differentiable(i)
                ctx.save_for_backward(i)
                ctx.shape = x.shape
                return flat[i], i

            @staticmethod
            def backward(ctx, g, g_index):
                (i,) = ctx.saved_tensors
                onehot = (lib.arange(6) == i).to(g.dtype)
                return (onehot * g).reshape(ctx.shape)

        (x,) = leaves(lib, X0)
        m, i = MaxWithIndex.apply(x)
        (m * 3).backward()
        return m, x.grad, i.requires_grad, i.grad_fn is None

    (m_ad, g_ad, *flags_ad), (m_t, g_t, *flags_t) = both(run)
    assert_close(m_ad, m_t, **FWD, what="max")
    assert_close(g_ad, g_t, **GRAD, what="max gradient")
    assert flags_ad == flags_t == [False, True]


def test_mark_non_differentiable_output_gets_zero_gradient():
    def run(lib):
        got = []

        class Pair(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                mask = x > 0
                ctx.mark_non_differentiable(mask)
                return x * 2, mask

            @staticmethod
            def backward(ctx, g, g_mask):
                got.append((tuple(g_mask.shape), int(g_mask.sum())))
                return g * 2

        (x,) = leaves(lib, X0)
        y, _ = Pair.apply(x)
        y.sum().backward()
        return got

    got, want = both(run)
    assert got == want == [((2, 3), 0)]


def test_materialize_grads_off_gives_none():
    def run(lib):
        seen = []

        class Two(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(False)
                return x * 2, x * 3

            @staticmethod
            def backward(ctx, ga, gb):
                seen.append((ga is None, gb is None))
                return (0 if ga is None else ga * 2) + (0 if gb is None else gb * 3)

        (x,) = leaves(lib, X0)
        a, _b = Two.apply(x)
        a.sum().backward()
        return seen, x.grad

    (seen_ad, g_ad), (seen_t, g_t) = both(run)
    assert seen_ad == seen_t == [(False, True)]
    assert_close(g_ad, g_t, **GRAD, what="gradient through the used output")


def test_saved_tensor_modified_in_place_raises():
    def run(lib):
        (x,) = leaves(lib, X0)
        y = lib.tensor(Y0)
        a, b = polar_fn(lib).apply(x, y)
        y.mul_(2)  # saved by the function, changed before backward
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            (a + b).sum().backward()

    both(run)


def test_saved_tensors_are_counted_like_a_builtin_ops_and_freed():
    """torch's saved-tensor hooks see what the function saved; the engine's
    saved-bytes count must grow by the same bytes, and fall back after backward."""
    seen = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: seen.append(t.nbytes) or t,
                                                  lambda t: t):
        (xt,) = leaves(torch, X0)
        yt = polar_fn(torch).apply(xt, torch.tensor(Y0))
    (x,) = leaves(ad, X0)
    before = saved_tensor_bytes()
    a, b = polar_fn(ad).apply(x, ad.tensor(Y0))
    held = saved_tensor_bytes() - before
    assert held == sum(seen) == 2 * X0.nbytes
    (a + b).sum().backward()
    assert saved_tensor_bytes() == before
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        (a + b).sum().backward()
    del yt
    y = exp_fn(ad).apply(x)  # a graph dropped without backward frees its saved output at once
    assert saved_tensor_bytes() == before + X0.nbytes
    del y
    assert saved_tensor_bytes() == before


def test_double_backward_through_a_differentiable_backward():
    def run(lib):
        (x,) = leaves(lib, X0)
        (g,) = lib.autograd.grad(cube_fn(lib).apply(x).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        (e,) = lib.autograd.grad(exp_fn(lib).apply(x).sum(), x, create_graph=True)
        (ee,) = lib.autograd.grad(e.sum(), x)
        return g, gg, ee

    got, want = both(run)
    for name, g, w in zip(("3x^2", "6x", "e^x"), got, want, strict=True):
        assert_close(g, w, **GRAD, what=name)
    np.testing.assert_allclose(got[1].data, 6 * X0, rtol=1e-6)


def test_once_differentiable_refuses_a_second_derivative():
    def run(lib):
        class Exp(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x.exp()

            @staticmethod
            @lib.autograd.function.once_differentiable
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g * x.exp()

        (x,) = leaves(lib, X0)
        y = Exp.apply(x)
        (g,) = lib.autograd.grad((y * y).sum(), x, create_graph=True)
        with pytest.raises(RuntimeError, match="once_differentiable"):
            g.sum().backward()
        return g

    got, want = both(run)
    assert_close(got, want, **GRAD, what="first derivative")


@pytest.mark.filterwarnings("ignore::UserWarning")  # torch's notes on anomaly mode
def test_anomaly_detection_names_the_function():
    def run(lib):
        class NanGrad(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                return g * float("nan")

        (x,) = leaves(lib, X0)
        with lib.autograd.detect_anomaly(), pytest.raises(RuntimeError, match="NanGradBackward"):
            NanGrad.apply(x).sum().backward()

    both(run)


def test_gradcheck_on_a_custom_function():
    def run(lib):
        x = lib.tensor(X0.astype(np.float64), requires_grad=True)
        y = lib.tensor(Y0.astype(np.float64), requires_grad=True)
        pair = polar_fn(lib)
        return lib.autograd.gradcheck(lambda a, b: pair.apply(a, b), (x, y), eps=1e-6, atol=1e-5)

    assert both(run) == [True, True]

    class Wrong(ad.autograd.Function):  # a rule off by a factor 2 must be caught
        @staticmethod
        def forward(ctx, x):
            return x * x

        @staticmethod
        def backward(ctx, g):
            return g

    x = ad.tensor(X0.astype(np.float64), requires_grad=True)
    assert not ad.autograd.gradcheck(Wrong.apply, (x,), raise_exception=False)


@pytest.mark.parametrize("case", ["too_few", "too_many", "shape"])
def test_wrong_gradient_count_or_shape(case):
    def run(lib):
        class Bad(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                return (x * y).sum()

            @staticmethod
            def backward(ctx, g):
                if case == "too_few":
                    return (g,)
                if case == "too_many":
                    return g, g, g
                return lib.ones(5), None

        x, y = leaves(lib, X0, Y0)
        match = "invalid gradient" if case == "shape" else "incorrect number of gradients"
        with pytest.raises(RuntimeError, match=match):
            Bad.apply(x, y).backward()

    both(run)


def test_extra_none_gradients_and_broadcast_gradients_are_accepted():
    def run(lib):
        class Loose(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 1

            @staticmethod
            def backward(ctx, g):
                return g.expand(4, 2, 3), None, None  # sums down to x's shape

        (x,) = leaves(lib, X0)
        Loose.apply(x).sum().backward()
        return x.grad

    got, want = both(run)
    assert_close(got, want, **GRAD, what="broadcast gradient summed down")


def split_form(lib):
    """torch 2's split form, with a forward-mode rule: tanh, d tanh = (1 - tanh^2) dx."""

    class Tanh(lib.autograd.Function):
        @staticmethod
        def forward(x):
            return x.tanh()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(output)
            ctx.save_for_forward(output)

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * (1 - y * y)

        @staticmethod
        def jvp(ctx, dx):
            (y,) = ctx.saved_tensors
            return dx * (1 - y * y)

    return Tanh


def test_split_form_and_forward_mode():
    jvps = {ad: ad.jvp, torch: torch.func.jvp}

    def run(lib):
        tanh = split_form(lib)
        (x,) = leaves(lib, X0)
        y = tanh.apply(x)
        y.sum().backward()
        out, tangent = jvps[lib](tanh.apply, (lib.tensor(X0),), (lib.tensor(Y0),))
        return y, x.grad, out, tangent

    got, want = both(run)
    for name, g, w in zip(("tanh", "gradient", "jvp primal", "jvp tangent"), got, want,
                          strict=True):
        assert_close(g, w, **GRAD, what=name)
    np.testing.assert_allclose(got[3].data, Y0 * (1 - np.tanh(X0) ** 2), rtol=1e-5)


def test_forward_mode_without_jvp_and_mark_dirty_are_refused_clearly():
    with pytest.raises(NotImplementedError, match="defines no jvp"):
        ad.jvp(exp_fn(ad).apply, (ad.tensor(X0),), (ad.tensor(Y0),))

    class Dirty(ad.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, g):
            return g

    with pytest.raises(NotImplementedError, match="Return a new tensor"):
        Dirty.apply(leaves(ad, X0)[0])


def test_no_history_under_no_grad_and_returned_inputs_are_new_tensors():
    def run(lib):
        (x,) = leaves(lib, X0)
        with lib.no_grad():
            y = exp_fn(lib).apply(x)

        class Identity(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x

            @staticmethod
            def backward(ctx, g):
                return g

        z = Identity.apply(x)
        return y.requires_grad, z is x, type(z.grad_fn).__name__

    got, want = both(run)
    assert got == want == (False, False, "IdentityBackward")


def mixed_fn(lib):
    """Two outputs of different dtypes, both saved: e^x (float32) and the float64
    column sums of 2x. With L = f(a, b): dL/dx = ga * a + 2 * (column of gb)."""

    class Mixed(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            a = x.exp()
            b = (x * 2).double().sum(0)
            ctx.save_for_backward(a, b)
            return a, b

        @staticmethod
        def backward(ctx, ga, gb):
            a, b = ctx.saved_tensors
            return ga * a + (gb * b).float().expand(2, 3)

    return Mixed


def test_several_outputs_of_mixed_dtypes_differentiate_twice():
    def run(lib):
        (x,) = leaves(lib, X0)
        a, b = mixed_fn(lib).apply(x)
        (g,) = lib.autograd.grad((a * a).sum() + (b * b).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad(g.sum(), x)
        return b.dtype == lib.float64, a.grad_fn.name(), g, gg

    (*facts_ad, g_ad, gg_ad), (*facts_t, g_t, gg_t) = both(run)
    assert facts_ad == facts_t == [True, "MixedBackward"]
    assert_close(g_ad, g_t, **GRAD, what="first derivative")
    assert_close(gg_ad, gg_t, **GRAD, what="second derivative through saved outputs")


def test_hooks_and_retain_grad_on_an_output():
    def run(lib):
        (x,) = leaves(lib, X0)
        a, _b = mixed_fn(lib).apply(x)
        a.register_hook(lambda g: g * 10)
        a.retain_grad()
        a.sum().backward()
        return x.grad, a.grad

    got, want = both(run)
    assert_close(got[0], want[0], **GRAD, what="gradient after the hook")
    assert_close(got[1], want[1], **GRAD, what="retained gradient")
    np.testing.assert_allclose(got[1].data, np.full_like(X0, 10.0))


def test_only_tensors_can_be_saved_and_the_torch_import_path():
    assert once_differentiable is ad.autograd.function.once_differentiable

    def run(lib):
        class SavesNumber(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(3.0)
                return x * 1

        with pytest.raises(TypeError, match="save"):
            SavesNumber.apply(leaves(lib, X0)[0])

    both(run)


def test_keyword_arguments_take_their_place_among_the_inputs():
    def run(lib):
        seen = []

        class Scaled(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, k=2.0):
                seen.append(len(ctx.needs_input_grad))
                return x * k

            @staticmethod
            def backward(ctx, g):
                return (g * 3.0,)  # one gradient: too few once k is passed by keyword

        class SplitScaled(lib.autograd.Function):
            @staticmethod
            def forward(x, k=2.0):
                return x * k

            @staticmethod
            def setup_context(ctx, inputs, output):
                seen.append(len(inputs))

            @staticmethod
            def backward(ctx, g):
                return g * 2.0, None

        (x,) = leaves(lib, X0)
        Scaled.apply(x).sum().backward()
        with pytest.raises(RuntimeError, match="incorrect number of gradients"):
            Scaled.apply(x, k=3.0).sum().backward()
        value = SplitScaled.apply(x, k=3.0)
        SplitScaled.apply(x)
        return seen, value

    (seen_ad, v_ad), (seen_t, v_t) = both(run)
    assert seen_ad == seen_t == [1, 2, 2, 2]
    assert_close(v_ad, v_t, **FWD, what="keyword argument passed on")
