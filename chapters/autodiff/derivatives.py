"""Derivative rules of the tensor ops: one VJP and one JVP per op.

Reading guide. For ``z = op(a, b)`` and a scalar loss L, the VJP rule gets
``g = dL/dz`` and returns ``(dL/da, dL/db)``; the JVP rule gets tangents
``(ta, tb)`` and returns ``tz = dz/da ta + dz/db tb``. Both are the same
Jacobian used from the two sides: ``g^T J`` and ``J t``.

Gradients may be returned in broadcast shape: the engine sums each one back
to its input's shape (:func:`.engine.sum_to`), so the rules stay the math.
"""

from __future__ import annotations

import math

import numpy as np

from chapters.graph.ops import normalize_dims

from .rules import jvp_rule, vjp_rule
from .tensor import Tensor, apply


def masked(g: Tensor, mask: np.ndarray) -> Tensor:
    """g where ``mask``, else 0. Multiplying by the 0/1 mask is an order of
    magnitude faster than ``where`` in numpy, but inf * 0 would give NaN, so a
    gradient holding inf or NaN takes ``where`` (torch gives 0 there too)."""
    if np.isfinite(g.data).all():
        return apply("mul", (g, np.asarray(mask, dtype=g.data.dtype)))
    return apply("where", (mask, g, np.zeros((), g.data.dtype)))


def expand_reduced(g: Tensor, shape: tuple, dim, keepdim: bool) -> Tensor:
    """A reduction's output gradient, re-inserted dims and expanded to ``shape``."""
    if not keepdim:
        dims = normalize_dims("", dim, len(shape))
        g = g.reshape(tuple(1 if i in dims else s for i, s in enumerate(shape)))
    return g.expand(shape)


def _count(shape: tuple, dim) -> int:
    dims = normalize_dims("", dim, len(shape))
    return math.prod(shape[d] for d in dims)


# ---------------------------------------------------------- arithmetic


@vjp_rule("add")
def add_vjp(ctx, g):
    """z = a + b:  dL/da = g,  dL/db = g."""
    return g, g


@jvp_rule("add")
def add_jvp(primals, tangents, out):
    return tangents[0] + tangents[1]


@vjp_rule("sub")
def sub_vjp(ctx, g):
    """z = a - b:  dL/da = g,  dL/db = -g."""
    return g, (-g if ctx.needs_input_grad[1] else None)


@jvp_rule("sub")
def sub_jvp(primals, tangents, out):
    return tangents[0] - tangents[1]


@vjp_rule("mul", saves=(0, 1))
def mul_vjp(ctx, g):
    """z = a * b:  dL/da = g * b,  dL/db = g * a."""
    a, b = ctx.saved
    need_a, need_b = ctx.needs_input_grad
    return (g * b if need_a else None), (g * a if need_b else None)


@jvp_rule("mul")
def mul_jvp(primals, tangents, out):
    (a, b), (ta, tb) = primals, tangents
    return ta * b + a * tb


@vjp_rule("div", saves=(0, 1))
def div_vjp(ctx, g):
    """z = a / b:  dL/da = g / b,  dL/db = -g a / b^2."""
    a, b = ctx.saved
    need_a, need_b = ctx.needs_input_grad
    return (g / b if need_a else None), (-g * a / (b * b) if need_b else None)


@jvp_rule("div")
def div_jvp(primals, tangents, out):
    (a, b), (ta, tb) = primals, tangents
    return ta / b - a * tb / (b * b)


@vjp_rule("pow", saves=(0, 1, "out"))
def pow_vjp(ctx, g):
    """z = a^b:  dL/da = g b a^(b-1),  dL/db = g z ln(a) (0 where a = 0 and
    b >= 0, the limit torch uses)."""
    a, b, z = ctx.saved
    need_a, need_b = ctx.needs_input_grad
    ga = gb = None
    if need_a:
        bd = b.data if isinstance(b, Tensor) else b
        ga = masked(g * b * a ** (b - 1), np.asarray(bd != 0))
    if need_b:
        ad, bd = (a.data if isinstance(a, Tensor) else a), b.data
        log_a = a.log() if isinstance(a, Tensor) else np.log(a)
        gb = masked(g * z * log_a, ~((ad == 0) & (bd >= 0)))
    return ga, gb


@jvp_rule("pow")
def pow_jvp(primals, tangents, out):
    (a, b), (ta, tb) = primals, tangents
    t = ta * b * a ** (b - 1)
    if tb is None or not tb.data.any():  # a constant exponent: skip 0 * log(a < 0) = nan
        return t
    return t + tb * out * a.log()


def _select_vjp(pick_a: np.ndarray, tie: np.ndarray, g):
    ga = masked(g, pick_a) + masked(g, tie) * 0.5
    gb = masked(g, ~(pick_a | tie)) + masked(g, tie) * 0.5
    return ga, gb


@vjp_rule("maximum", saves=(0, 1))
def maximum_vjp(ctx, g):
    """z = max(a, b): g goes to the larger input; on a tie half to each (torch)."""
    a, b = ctx.saved
    ad, bd = np.asarray(a.data if isinstance(a, Tensor) else a), np.asarray(
        b.data if isinstance(b, Tensor) else b)
    return _select_vjp(ad > bd, ad == bd, g)


@vjp_rule("minimum", saves=(0, 1))
def minimum_vjp(ctx, g):
    """z = min(a, b): g goes to the smaller input; on a tie half to each (torch)."""
    a, b = ctx.saved
    ad, bd = np.asarray(a.data if isinstance(a, Tensor) else a), np.asarray(
        b.data if isinstance(b, Tensor) else b)
    return _select_vjp(ad < bd, ad == bd, g)


def _select_jvp(pick_a, tie, ta, tb):
    return masked(ta, pick_a | tie) * np.where(tie, 0.5, 1.0).astype(ta.data.dtype) + masked(
        tb, ~pick_a | tie) * np.where(tie, 0.5, 1.0).astype(tb.data.dtype)


@jvp_rule("maximum")
def maximum_jvp(primals, tangents, out):
    a, b = (p.data for p in primals)
    return _select_jvp(a > b, a == b, *tangents)


@jvp_rule("minimum")
def minimum_jvp(primals, tangents, out):
    a, b = (p.data for p in primals)
    return _select_jvp(a < b, a == b, *tangents)


@vjp_rule("where", saves=(0,))
def where_vjp(ctx, g):
    """z = cond ? a : b:  dL/da = g where cond,  dL/db = g where not cond."""
    (cond,) = ctx.saved
    c = cond.data if isinstance(cond, Tensor) else cond
    _, need_a, need_b = ctx.needs_input_grad
    return None, (masked(g, c) if need_a else None), (masked(g, ~c) if need_b else None)


@jvp_rule("where")
def where_jvp(primals, tangents, out):
    c = primals[0].data
    return masked(tangents[1], c) + masked(tangents[2], ~c)


# --------------------------------------------------------------- unary


@vjp_rule("neg")
def neg_vjp(ctx, g):
    """z = -x:  dL/dx = -g."""
    return (-g,)


@jvp_rule("neg")
def neg_jvp(primals, tangents, out):
    return -tangents[0]


@vjp_rule("exp", saves=("out",))
def exp_vjp(ctx, g):
    """z = e^x:  dL/dx = g z (the output is its own derivative)."""
    (z,) = ctx.saved
    return (g * z,)


@jvp_rule("exp")
def exp_jvp(primals, tangents, out):
    return tangents[0] * out


@vjp_rule("log", saves=(0,))
def log_vjp(ctx, g):
    """z = ln x:  dL/dx = g / x."""
    (x,) = ctx.saved
    return (g / x,)


@jvp_rule("log")
def log_jvp(primals, tangents, out):
    return tangents[0] / primals[0]


@vjp_rule("sqrt", saves=("out",))
def sqrt_vjp(ctx, g):
    """z = sqrt(x):  dL/dx = g / (2 z)."""
    (z,) = ctx.saved
    return (g / (2 * z),)


@jvp_rule("sqrt")
def sqrt_jvp(primals, tangents, out):
    return tangents[0] / (2 * out)


@vjp_rule("abs", saves=(0,))
def abs_vjp(ctx, g):
    """z = |x|:  dL/dx = g sign(x) (0 at x = 0, as torch)."""
    (x,) = ctx.saved
    return (g * np.sign(x.data),)


@jvp_rule("abs")
def abs_jvp(primals, tangents, out):
    return tangents[0] * np.sign(primals[0].data)


@vjp_rule("tanh", saves=("out",))
def tanh_vjp(ctx, g):
    """z = tanh x:  dL/dx = g (1 - z^2)."""
    (z,) = ctx.saved
    return (g * (1 - z * z),)


@jvp_rule("tanh")
def tanh_jvp(primals, tangents, out):
    return tangents[0] * (1 - out * out)


@vjp_rule("sigmoid", saves=("out",))
def sigmoid_vjp(ctx, g):
    """z = 1 / (1 + e^-x):  dL/dx = g z (1 - z)."""
    (z,) = ctx.saved
    return (g * z * (1 - z),)


@jvp_rule("sigmoid")
def sigmoid_jvp(primals, tangents, out):
    return tangents[0] * out * (1 - out)


@vjp_rule("relu", saves=("out",))
def relu_vjp(ctx, g):
    """z = max(x, 0):  dL/dx = g where z > 0 (torch's choice: 0 at x = 0)."""
    (z,) = ctx.saved
    return (masked(g, z.data > 0),)


@jvp_rule("relu")
def relu_jvp(primals, tangents, out):
    return masked(tangents[0], out.data > 0)


@vjp_rule("leaky_relu", saves=(0,))
def leaky_relu_vjp(ctx, g):
    """z = x if x > 0 else s x:  dL/dx = g if x > 0 else s g."""
    (x,) = ctx.saved
    slope = ctx.attrs.get("negative_slope", 0.01)
    return (g * np.where(x.data > 0, 1.0, slope).astype(g.data.dtype),)


@jvp_rule("leaky_relu")
def leaky_relu_jvp(primals, tangents, out, negative_slope=0.01):
    x = primals[0].data
    return tangents[0] * np.where(x > 0, 1.0, negative_slope).astype(x.dtype)


@vjp_rule("clamp", saves=(0,))
def clamp_vjp(ctx, g):
    """z = clamp(x, lo, hi):  dL/dx = g where lo <= x <= hi, else 0 (torch
    keeps the gradient at the bounds themselves)."""
    (x,) = ctx.saved
    return (masked(g, _inside(x.data, ctx.attrs)),)


def _inside(x: np.ndarray, attrs: dict) -> np.ndarray:
    keep = np.ones(x.shape, dtype=bool)
    if attrs.get("min") is not None:
        keep &= x >= attrs["min"]
    if attrs.get("max") is not None:
        keep &= x <= attrs["max"]
    return keep


@jvp_rule("clamp")
def clamp_jvp(primals, tangents, out, min=None, max=None):
    return masked(tangents[0], _inside(primals[0].data, {"min": min, "max": max}))


@vjp_rule("erf", saves=(0,))
def erf_vjp(ctx, g):
    """z = erf(x):  dL/dx = g 2/sqrt(pi) e^(-x^2)."""
    (x,) = ctx.saved
    return (g * (2 / math.sqrt(math.pi)) * (-(x * x)).exp(),)


@jvp_rule("erf")
def erf_jvp(primals, tangents, out):
    x = primals[0]
    return tangents[0] * (2 / math.sqrt(math.pi)) * (-(x * x)).exp()


def gelu_derivative(x: Tensor, approximate: str) -> Tensor:
    """d gelu / dx. Exact: Phi(x) + x phi(x). Tanh form, with
    u = sqrt(2/pi)(x + 0.044715 x^3) and t = tanh u:
    0.5 (1 + t) + 0.5 x (1 - t^2) sqrt(2/pi) (1 + 3 * 0.044715 x^2)."""
    if approximate == "tanh":
        k = math.sqrt(2 / math.pi)
        t = (k * (x + 0.044715 * x * x * x)).tanh()
        return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * 0.044715 * x * x)
    cdf = 0.5 * (1 + apply("erf", (x * (1 / math.sqrt(2)),)))
    pdf = (-0.5 * x * x).exp() * (1 / math.sqrt(2 * math.pi))
    return cdf + x * pdf


@vjp_rule("gelu", saves=(0,))
def gelu_vjp(ctx, g):
    """z = x Phi(x):  dL/dx = g (Phi(x) + x phi(x)) (see gelu_derivative)."""
    (x,) = ctx.saved
    return (g * gelu_derivative(x, ctx.attrs.get("approximate", "none")),)


@jvp_rule("gelu")
def gelu_jvp(primals, tangents, out, approximate="none"):
    return tangents[0] * gelu_derivative(primals[0], approximate)


@vjp_rule("cast")
def cast_vjp(ctx, g):
    """z = x.to(dtype):  dL/dx = g, cast back to x's dtype (the engine does
    the cast, as for every gradient)."""
    return (g,)


@jvp_rule("cast")
def cast_jvp(primals, tangents, out, dtype):
    return tangents[0].to(dtype)


# ------------------------------------------------------------ reductions


@vjp_rule("sum")
def sum_vjp(ctx, g):
    """z = sum_dim x:  dL/dx = g copied along the summed dims."""
    shape = ctx.input_meta[0][0]
    return (expand_reduced(g, shape, ctx.attrs["dim"], ctx.attrs["keepdim"]),)


@jvp_rule("sum")
def sum_jvp(primals, tangents, out, dim=None, keepdim=False):
    return tangents[0].sum(dim, keepdim)


@vjp_rule("mean")
def mean_vjp(ctx, g):
    """z = mean_dim x:  dL/dx = g / N copied along the N averaged elements."""
    shape = ctx.input_meta[0][0]
    dim, keepdim = ctx.attrs["dim"], ctx.attrs["keepdim"]
    return (expand_reduced(g, shape, dim, keepdim) / _count(shape, dim),)


@jvp_rule("mean")
def mean_jvp(primals, tangents, out, dim=None, keepdim=False):
    return tangents[0].mean(dim, keepdim)


@vjp_rule("amax", saves=(0, "out"))
def amax_vjp(ctx, g):
    """z = max_dim x:  g goes to the maximal elements, shared evenly among ties."""
    x, z = ctx.saved
    dim, keepdim = ctx.attrs["dim"], ctx.attrs["keepdim"]
    shape = x.data.shape
    is_max = x.data == expand_reduced(z, shape, dim, keepdim).data
    count = np.sum(is_max, axis=None if dim is None else normalize_dims("", dim, len(shape)),
                   keepdims=True)
    return (masked(expand_reduced(g, shape, dim, keepdim), is_max)
            / count.astype(g.data.dtype),)


@jvp_rule("amax")
def amax_jvp(primals, tangents, out, dim=None, keepdim=False):
    x = primals[0].data
    shape = x.shape
    is_max = x == expand_reduced(out, shape, dim, keepdim).data
    axes = None if dim is None else normalize_dims("", dim, len(shape))
    count = np.sum(is_max, axis=axes, keepdims=keepdim)
    return masked(tangents[0], is_max).sum(dim, keepdim) / count.astype(x.dtype)


@vjp_rule("var", saves=(0,))
def var_vjp(ctx, g):
    """z = sum (x - mean)^2 / (N - c):  dL/dx = g 2 (x - mean) / (N - c)."""
    (x,) = ctx.saved
    dim, keepdim, c = ctx.attrs["dim"], ctx.attrs["keepdim"], ctx.attrs["correction"]
    n = _count(x.data.shape, dim)
    centered = x - x.mean(dim, keepdim=True)
    return (expand_reduced(g, x.data.shape, dim, keepdim) * centered * _var_scale(n, c),)


def _var_scale(n: int, correction: int) -> float:
    """2 / (N - c); infinite when N <= c (the variance itself is then NaN, as in torch)."""
    return 2 / (n - correction) if n > correction else math.inf


@jvp_rule("var")
def var_jvp(primals, tangents, out, dim=None, keepdim=False, correction=1):
    x, t = primals[0], tangents[0]
    n = _count(x.data.shape, dim)
    centered = x - x.mean(dim, keepdim=True)
    return (centered * t).sum(dim, keepdim) * _var_scale(n, correction)


@vjp_rule("logsumexp", saves=(0, "out"))
def logsumexp_vjp(ctx, g):
    """z = log sum_dim e^x:  dL/dx = g e^(x - z) = g softmax(x)."""
    x, z = ctx.saved
    dim, keepdim = ctx.attrs["dim"], ctx.attrs["keepdim"]
    shape = x.data.shape
    return (expand_reduced(g, shape, dim, keepdim) * (x - expand_reduced(z, shape, dim,
                                                                         keepdim)).exp(),)


@jvp_rule("logsumexp")
def logsumexp_jvp(primals, tangents, out, dim, keepdim=False):
    x = primals[0]
    p = (x - expand_reduced(out, x.data.shape, dim, keepdim)).exp()
    return (p * tangents[0]).sum(dim, keepdim)


@vjp_rule("softmax", saves=("out",))
def softmax_vjp(ctx, g):
    """z = softmax(x):  dL/dx = z (g - sum_dim(g z))  (the Jacobian is diag(z) - z z^T)."""
    (z,) = ctx.saved
    dim = ctx.attrs["dim"]
    return (z * (g - (g * z).sum(dim, keepdim=True)),)


@jvp_rule("softmax")
def softmax_jvp(primals, tangents, out, dim=-1):
    t = tangents[0]
    return out * (t - (t * out).sum(dim, keepdim=True))


@vjp_rule("log_softmax", saves=("out",))
def log_softmax_vjp(ctx, g):
    """z = x - logsumexp(x):  dL/dx = g - e^z sum_dim(g)."""
    (z,) = ctx.saved
    dim = ctx.attrs["dim"]
    return (g - z.exp() * g.sum(dim, keepdim=True),)


@jvp_rule("log_softmax")
def log_softmax_jvp(primals, tangents, out, dim):
    t = tangents[0]
    return t - (out.exp() * t).sum(dim, keepdim=True)


# --------------------------------------------------------- linear algebra


@vjp_rule("matmul", saves=(0, 1))
def matmul_vjp(ctx, g):
    """Z = A B:  dL/dA = G B^T,  dL/dB = A^T G. A 1-D operand is treated as a
    row (A) or column (B) vector, then the added dimension is dropped."""
    a, b = ctx.saved
    need_a, need_b = ctx.needs_input_grad
    a2 = a.unsqueeze(0) if a.ndim == 1 else a
    b2 = b.unsqueeze(-1) if b.ndim == 1 else b
    g2 = g.unsqueeze(-2) if a.ndim == 1 else g
    g2 = g2.unsqueeze(-1) if b.ndim == 1 else g2
    ga = gb = None
    if need_a:
        ga = g2 @ b2.mT
        ga = ga.squeeze(-2) if a.ndim == 1 else ga
    if need_b:
        gb = a2.mT @ g2
        gb = gb.squeeze(-1) if b.ndim == 1 else gb
    return ga, gb


@jvp_rule("matmul")
def matmul_jvp(primals, tangents, out):
    (a, b), (ta, tb) = primals, tangents
    return ta @ b + a @ tb


@vjp_rule("linear", saves=(0, 1))
def linear_vjp(ctx, g):
    """y = x W^T + b:  dL/dx = g W,  dL/dW = g^T x (summed over batch dims),
    dL/db = g summed over batch dims (the engine's sum back to b's shape)."""
    x, w = ctx.saved[:2]
    needs = ctx.needs_input_grad
    gx = g @ w if needs[0] else None
    gw = None
    if needs[1]:
        out_features, in_features = w.data.shape
        gw = g.reshape(-1, out_features).mT @ x.reshape(-1, in_features)
    gb = g if len(needs) > 2 and needs[2] else None
    return (gx, gw, gb)[:len(needs)]


@jvp_rule("linear")
def linear_jvp(primals, tangents, out):
    x, w = primals[:2]
    tx, tw = tangents[:2]
    t = tx @ w.mT + x @ tw.mT
    return t + tangents[2] if len(tangents) > 2 and tangents[2] is not None else t


# --------------------------------------------------------------- shapes


@vjp_rule("reshape")
def reshape_vjp(ctx, g):
    """z = reshape(x):  dL/dx = g reshaped back."""
    return (g.reshape(ctx.input_meta[0][0]),)


@jvp_rule("reshape")
def reshape_jvp(primals, tangents, out, shape):
    return tangents[0].reshape(out.shape)


@vjp_rule("transpose")
def transpose_vjp(ctx, g):
    """z = transpose(x, i, j):  dL/dx = transpose(g, i, j) (its own inverse)."""
    return (g.transpose(ctx.attrs["dim0"], ctx.attrs["dim1"]),)


@jvp_rule("transpose")
def transpose_jvp(primals, tangents, out, dim0, dim1):
    return tangents[0].transpose(dim0, dim1)


@vjp_rule("permute")
def permute_vjp(ctx, g):
    """z = permute(x, p):  dL/dx = permute(g, inverse of p)."""
    dims = [d % g.ndim for d in ctx.attrs["dims"]]
    return (g.permute(*np.argsort(dims).tolist()),)


@jvp_rule("permute")
def permute_jvp(primals, tangents, out, dims):
    return tangents[0].permute(*dims)


@vjp_rule("broadcast_to")
def broadcast_to_vjp(ctx, g):
    """z = expand(x):  dL/dx = g summed over the copies; returning g as is lets
    the engine's sum-back-to-shape do exactly that."""
    return (g,)


@jvp_rule("broadcast_to")
def broadcast_to_jvp(primals, tangents, out, shape):
    return tangents[0].expand(shape)


@vjp_rule("getitem")
def getitem_vjp(ctx, g):
    """z = x[i]:  dL/dx = zeros with g added at i (repeated indices add up)."""
    return (apply("getitem_backward", (g,), {"index": ctx.attrs["index"],
                                             "shape": ctx.input_meta[0][0]}),)


@jvp_rule("getitem")
def getitem_jvp(primals, tangents, out, index):
    return apply("getitem", (tangents[0],), {"index": index})


@vjp_rule("getitem_backward")
def getitem_backward_vjp(ctx, g):
    """z = scatter of x at i: a linear map whose adjoint is x[i], so dL/dx = g[i]."""
    return (apply("getitem", (g,), {"index": ctx.attrs["index"]}),)


@jvp_rule("getitem_backward")
def getitem_backward_jvp(primals, tangents, out, index, shape):
    return apply("getitem_backward", (tangents[0],), {"index": index, "shape": shape})


@vjp_rule("gather")
def gather_vjp(ctx, g):
    """z = gather(x, dim, index):  dL/dx = zeros with g added at index along dim."""
    return (apply("scatter_add", (g,), {"dim": ctx.attrs["dim"], "index": ctx.attrs["index"],
                                        "shape": ctx.input_meta[0][0]}),)


@jvp_rule("gather")
def gather_jvp(primals, tangents, out, dim, index):
    return apply("gather", (tangents[0],), {"dim": dim, "index": index})


@vjp_rule("scatter_add")
def scatter_add_vjp(ctx, g):
    """z = scatter_add(x, dim, index): adjoint of gather, so dL/dx = gather(g)."""
    return (apply("gather", (g,), {"dim": ctx.attrs["dim"], "index": ctx.attrs["index"]}),)


@jvp_rule("scatter_add")
def scatter_add_jvp(primals, tangents, out, dim, index, shape):
    return apply("scatter_add", (tangents[0],), {"dim": dim, "index": index, "shape": shape})


@vjp_rule("cat")
def cat_vjp(ctx, g):
    """z = cat(x_1..x_n, dim):  dL/dx_k = the slice of g where x_k landed."""
    d = ctx.attrs["dim"] % g.ndim
    grads, start = [], 0
    for need, size in zip(ctx.needs_input_grad, ctx.attrs["sizes"], strict=True):
        index = (slice(None),) * d + (slice(start, start + size),)
        grads.append(g[index] if need else None)
        start += size
    return tuple(grads)


@jvp_rule("cat")
def cat_jvp(primals, tangents, out, dim=0, sizes=None):
    return apply("cat", tangents, {"dim": dim, "sizes": sizes})


@vjp_rule("stack")
def stack_vjp(ctx, g):
    """z = stack(x_1..x_n, dim):  dL/dx_k = g[..., k, ...] at position dim."""
    d = ctx.attrs.get("dim", 0) % g.ndim
    return tuple(g[(slice(None),) * d + (k,)] if m is not None else None
                 for k, m in enumerate(ctx.input_meta))


@jvp_rule("stack")
def stack_jvp(primals, tangents, out, dim=0):
    return apply("stack", tangents, {"dim": dim})
