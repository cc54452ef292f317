"""Transformations compose: jvp/grad/vjp nested in each other against torch.func.

One lambda ``f(lib, F, x)`` drives both libraries; every composition is checked
in float64 against torch.func with explicit tolerances, on named functions and
on random chains of ops. What does not compose must raise, never return a
wrong number: the last tests check those refusals.
"""

import zlib

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import chapters.autodiff as ad
import chapters.autodiff.functional as F
from chapters.torchcheck import assert_close

rng = np.random.default_rng(21)
SHAPE = (4, 3)
M = rng.standard_normal((3, 3))
W = rng.standard_normal((3, 5))
ROW = rng.standard_normal(3)
TOL = {"rtol": 1e-9, "atol": 1e-10}

# shape (4, 3) -> (4, 3): links for random chains (elementwise, matmul, reductions,
# broadcasting, softmax)
LINKS = {
    "sin": lambda lib, F, x: x.sin(),
    "tanh": lambda lib, F, x: x.tanh(),
    "square": lambda lib, F, x: x * x,
    "softmax": lambda lib, F, x: x.softmax(dim=1),
    "log_softmax0": lambda lib, F, x: F.log_softmax(x, dim=0),
    "matmul": lambda lib, F, x: x @ lib.tensor(M),
    "center": lambda lib, F, x: x - x.mean(dim=0, keepdim=True),
    "row_scale": lambda lib, F, x: x * lib.tensor(ROW) + 0.5,
    "sigmoid": lambda lib, F, x: x.sigmoid(),
    "gauss": lambda lib, F, x: (-(x * x)).exp(),
    "softplus_like": lambda lib, F, x: (x.exp() + 1).log(),
    "normalize": lambda lib, F, x: x / (x.pow(2).sum(dim=1, keepdim=True) + 1).sqrt(),
    "gelu": lambda lib, F, x: F.gelu(x),
    "gram": lambda lib, F, x: (x @ x.T) @ x * 0.1,
}

# shape (4, 3) -> any shape: named functions
NAMED = {
    "x_sin_x": lambda lib, F, x: x * x.sin(),
    "mlp": lambda lib, F, x: (x @ lib.tensor(W)).tanh() @ lib.tensor(W.T),
    "softmax_attention": lambda lib, F, x: (x @ x.T / 3).softmax(dim=-1) @ x,
    "layer_norm": lambda lib, F, x: F.layer_norm(x, (3,)),
    "standardize": lambda lib, F, x: (x - x.mean(dim=0)) / (x.var(dim=0) + 1).sqrt(),
    "logsumexp": lambda lib, F, x: x.logsumexp(dim=1) * x.sum(dim=1),
    # (a target that depends on x: torch's forward-over-reverse of mse_loss against a
    # constant target raises "ZeroTensors are immutable")
    "mse_linear": lambda lib, F, x: F.mse_loss(F.linear(x, lib.tensor(W.T)),
                                               (x @ lib.tensor(W)).sin()) * x.mean(),
    "cross_entropy": lambda lib, F, x: F.cross_entropy(x, lib.tensor([0, 2, 1, 2])) * x,
}


def chain(seed: int):
    names = np.random.default_rng(seed).choice(sorted(LINKS), size=4, replace=True)

    def f(lib, F, x):
        for name in names:
            x = LINKS[name](lib, F, x)
        return x

    f.names = names
    return f


FUNCTIONS = {**NAMED, **{f"chain{s}": chain(s) for s in range(8)}}
LIBS = ((ad, F), (torch, TF))


def data(name: str, out_shape) -> dict:
    """The same random point, directions and cotangents for both libraries."""
    r = np.random.default_rng(zlib.crc32(name.encode()))
    return {"x": r.standard_normal(SHAPE), "v": r.standard_normal(SHAPE),
            "u": r.standard_normal(SHAPE), "c": r.standard_normal(out_shape),
            "w": r.standard_normal(SHAPE)}


def out_shape(f) -> tuple:
    return tuple(f(torch, TF, torch.tensor(np.zeros(SHAPE) + 0.3)).shape)


COMPOSITIONS = {
    # f: the function, g: its output against a random cotangent c (a scalar), d: the data
    # H v by forward-over-reverse
    "jvp_of_grad": lambda lib, f, g, d: lib.func.jvp(lib.func.grad(g), (d["x"],), (d["v"],))[1],
    # d/dx <w, J_g(x) v>: reverse-over-forward
    "grad_of_jvp": lambda lib, f, g, d: lib.func.grad(
        lambda x: lib.func.jvp(g, (x,), (d["v"],))[1] * d["w"][0, 0])(d["x"]),
    # the derivative along u of J_f(x) v: forward-over-forward
    "jvp_of_jvp": lambda lib, f, g, d: lib.func.jvp(
        lambda x: lib.func.jvp(f, (x,), (d["v"],))[1], (d["x"],), (d["u"],))[1],
    # H w by reverse-over-reverse
    "grad_of_grad": lambda lib, f, g, d: lib.func.grad(
        lambda x: (lib.func.grad(g)(x) * d["w"]).sum())(d["x"]),
    # c^T (d/dx J_f(x) v): a vjp of a jvp, and the jvp of a vjp along v
    "vjp_of_jvp": lambda lib, f, g, d: lib.func.vjp(
        lambda x: lib.func.jvp(f, (x,), (d["v"],))[1], d["x"])[1](d["c"])[0],
    "jvp_of_vjp": lambda lib, f, g, d: lib.func.jvp(
        lambda x: lib.func.vjp(f, x)[1](d["c"])[0], (d["x"],), (d["v"],))[1],
}


# torch.func's second derivatives through layer_norm's forward-mode formula disagree with
# central differences of torch's own (first-order) jvp, which agree with the engine: for
# these the reference is those differences
TORCH_DIFFERS = {("grad_of_jvp", "layer_norm"), ("jvp_of_jvp", "layer_norm"),
                 ("vjp_of_jvp", "layer_norm")}
EPS = 1e-5


def by_differences(composition: str, fn, raw: dict) -> np.ndarray:
    """The composition as central differences of torch's first-order jvp tangent T(x)."""
    v = torch.tensor(raw["v"])

    def tangent(x: np.ndarray) -> np.ndarray:
        return torch.func.jvp(lambda x: fn(torch, TF, x), (torch.tensor(x),), (v,))[1].numpy()

    x = raw["x"]
    if composition == "jvp_of_jvp":
        return (tangent(x + EPS * raw["u"]) - tangent(x - EPS * raw["u"])) / (2 * EPS)
    scale = raw["w"][0, 0] if composition == "grad_of_jvp" else 1.0
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[i] = EPS
        out[i] = scale * np.sum(raw["c"] * (tangent(x + step) - tangent(x - step))) / (2 * EPS)
    return out


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@pytest.mark.parametrize("composition", sorted(COMPOSITIONS))
def test_composition_matches_torch_func(composition, name):
    fn = FUNCTIONS[name]
    raw = data(name + composition, out_shape(fn))
    results = []
    for lib, Fn in LIBS:
        d = {k: lib.tensor(v) for k, v in raw.items()}

        def f(x, lib=lib, Fn=Fn):
            return fn(lib, Fn, x)

        def g(x, f=f, c=d["c"]):
            return (f(x) * c).sum()

        results.append(COMPOSITIONS[composition](lib, f, g, d))
    if (composition, name) in TORCH_DIFFERS:
        assert_close(results[0].detach(), by_differences(composition, fn, raw), rtol=1e-6,
                     atol=1e-7, what=f"{composition} of {name} against central differences")
        return
    assert_close(results[0].detach(), results[1], **TOL, what=f"{composition} of {name}")


def test_hvp_two_ways_and_the_issue_example():
    """f(x) = sum(x sin x): forward-over-reverse with autograd.grad inside jvp, and
    reverse-over-reverse, both equal torch.func's H v (and the closed form)."""
    x0, v0 = np.array([0.3, -1.2, 2.0]), np.array([1.0, 0.5, -2.0])
    want = torch.func.jvp(torch.func.grad(lambda x: (x * x.sin()).sum()),
                          (torch.tensor(x0),), (torch.tensor(v0),))[1]
    closed = (2 * np.cos(x0) - x0 * np.sin(x0)) * v0  # the Hessian is diagonal
    assert_close(want, closed, rtol=1e-12, atol=1e-12, what="torch against the closed form")

    def gradient(x):
        (g,) = ad.autograd.grad((x * x.sin()).sum(), x, create_graph=True)
        return g

    _, forward_over_reverse = ad.jvp(gradient, (ad.tensor(x0, requires_grad=True),),
                                     (ad.tensor(v0),))
    x = ad.tensor(x0, requires_grad=True)
    (reverse_over_reverse,) = ad.autograd.grad((gradient(x) * ad.tensor(v0)).sum(), x)
    assert_close(forward_over_reverse.detach(), want, **TOL, what="forward-over-reverse")
    assert_close(reverse_over_reverse, want, **TOL, what="reverse-over-reverse")


def test_nested_levels_do_not_confuse_perturbations():
    """The inner function closes over the outer dual x: d/dx [d/dy (x*y) v] u = u v."""
    x0, u0, v0 = (rng.standard_normal(5) for _ in range(3))
    for lib in (ad, torch):
        x, u, v = (lib.tensor(a) for a in (x0, u0, v0))
        def inner(x, lib=lib, v=v):
            return lib.func.jvp(lambda y: x * y, (x,), (v,))[1]

        _, t = lib.func.jvp(inner, (x,), (u,))
        assert_close(t, u0 * v0, rtol=1e-12, atol=1e-12, what=f"{lib.__name__} mixed partial")
    x = ad.tensor(x0)
    gg = ad.func.grad(lambda x: ad.func.grad(lambda y: (x * y.sin()).sum())(x).sum())(x)
    assert_close(gg.detach(), np.cos(x0) - x0 * np.sin(x0), rtol=1e-12, atol=1e-12,
                 what="grad of grad with a closure")


def test_a_zero_tangent_that_is_differentiated_is_not_dropped():
    """pow's rule drops the exponent's term for a constant zero tangent; the
    gradient with respect to that tangent must still see the term."""
    a0, b0, ta0 = rng.uniform(0.5, 2, 4), rng.standard_normal(4), rng.standard_normal(4)
    got = []
    for lib in (ad, torch):
        a, b, ta = (lib.tensor(x) for x in (a0, b0, ta0))
        got.append(lib.func.grad(
            lambda tb, lib=lib, a=a, b=b, ta=ta: lib.func.jvp(
                lambda a, b: a**b, (a, b), (ta, tb))[1].sum())(lib.tensor(np.zeros(4))))
    assert_close(got[0].detach(), got[1], **TOL, what="d tangent / d tb at tb = 0")
    assert_close(got[0].detach(), a0**b0 * np.log(a0), **TOL, what="closed form")


def test_forward_ad_dual_tensors_match_torch():
    x0, t0 = rng.standard_normal(SHAPE), rng.standard_normal(SHAPE)
    got = []
    for lib, Fn in LIBS:
        fwd = lib.autograd.forward_ad
        with fwd.dual_level() as level:
            dual = fwd.make_dual(lib.tensor(x0), lib.tensor(t0))
            y = NAMED["softmax_attention"](lib, Fn, dual)
            primal, tangent = fwd.unpack_dual(y)
            assert fwd.unpack_dual(lib.tensor(x0)).tangent is None
            assert fwd.unpack_dual(dual.detach()).tangent is None  # detach drops tangents
        got.append((level, primal, tangent))
    assert got[0][0] == got[1][0] == 0
    assert_close(got[0][1], got[1][1], rtol=1e-12, atol=1e-12, what="primal")
    assert_close(got[0][2], got[1][2], **TOL, what="tangent")


# ------------------------------------------------------------- refused clearly


def test_unsupported_combinations_raise_instead_of_a_wrong_number():
    x, v = ad.tensor(rng.standard_normal(3)), ad.tensor(rng.standard_normal(3))
    with pytest.raises(RuntimeError, match="in-place op .* tangent"):
        ad.jvp(lambda x: x.exp_(), (x,), (v,))
    with pytest.raises(RuntimeError, match="in-place op .* tangent"):
        ad.jvp(lambda x: (x.detach() * 1).add_(x), (x,), (v,))

    def backward_inside(x):
        p = ad.tensor(x.detach().data, requires_grad=True)
        (p * x).sum().backward()
        return p.grad

    with pytest.raises(RuntimeError, match="backward\\(\\) inside forward mode"):
        ad.jvp(backward_inside, (x,), (v,))
    with pytest.raises(RuntimeError, match="needs an active forward-mode level"):
        ad.autograd.forward_ad.unpack_dual(x)
    with ad.autograd.forward_ad.dual_level(), pytest.raises(RuntimeError, match="not active"):
        ad.autograd.forward_ad.make_dual(x, v, level=3)


class Square(ad.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        ctx.save_for_forward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * x * g

    @staticmethod
    def jvp(ctx, t):
        (x,) = ctx.saved_tensors
        return 2 * x * t


class NumpySquare(Square):
    @staticmethod
    @ad.autograd.function.once_differentiable
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return ad.tensor(2 * x.data * g.data)


def test_custom_functions_that_cannot_compose_raise():
    x0, v0 = rng.standard_normal(3), rng.standard_normal(3)
    x, v = ad.tensor(x0), ad.tensor(v0)
    _, t = ad.jvp(Square.apply, (x,), (v,))  # one level: fine
    assert_close(t, 2 * x0 * v0, rtol=1e-12, atol=1e-12, what="custom Function jvp")
    with pytest.raises(RuntimeError, match="cannot be nested"):
        ad.jvp(lambda x: ad.jvp(Square.apply, (x,), (v,))[1], (x,), (v,))
    with pytest.raises(RuntimeError, match="could not be differentiated"):
        ad.func.grad(lambda x: ad.jvp(Square.apply, (x,), (v,))[1].sum())(x)
    fwd = ad.autograd.forward_ad
    for fn in (Square, NumpySquare):  # the backward runs in a level, on a dual cotangent
        x = ad.tensor(x0, requires_grad=True)
        y = fn.apply(x)
        with fwd.dual_level():
            cotangent = fwd.make_dual(ad.tensor(np.ones(3)), v)
            if fn is NumpySquare:
                with pytest.raises(RuntimeError, match="once_differentiable"):
                    ad.autograd.grad(y, x, cotangent)
                continue
            (g,) = ad.autograd.grad(y, x, cotangent)
            assert_close(fwd.unpack_dual(g).tangent, 2 * x0 * v0, rtol=1e-12, atol=1e-12,
                         what="tangent of a gradient through an engine-op backward")
