"""Op-table entries for matrix products (mm, addmm, mv, addmv), fused
multiply-adds (addcmul, addcdiv), whole-tensor comparisons (allclose,
equal), one-sided clamps, norms (norm, dist) and the in-place twins
(``x.exp_()``); ``opdb._build`` adds them to the table."""

from __future__ import annotations

import math

import numpy as np

from tests.chapters.autodiff.opdb import (
    NONZERO,
    POSITIVE,
    REALS,
    UNIT,
    elementwise,
    entry,
    error,
    forms,
    one,
    ones_,
    reductions,
    transposed,
    x,
)

# ------------------------------------------------------------------ products


def _product_entries() -> list:
    m23, m32 = ones_(2, 3), ones_(3, 2)
    return [
        entry("mm", forms("mm"), lambda rng: [
            one("2d", x(rng, 3, 4), x(rng, 4, 2)),
            one("empty", x(rng, 0, 4), x(rng, 4, 2)),
            one("empty-inner", x(rng, 3, 0), x(rng, 0, 2)),
            one("transposed", x(rng, 4, 3), x(rng, 4, 2), view=transposed)],
            errors=[error("1-d operand", lambda lib, F, a, b: lib.mm(a, b), ones_(3), m32),
                    error("inner sizes differ", lambda lib, F, a, b: lib.mm(a, b), m23, m23),
                    error("dtypes differ", lambda lib, F, a, b: lib.mm(a, b), m23,
                          np.ones((3, 2)))]),
        entry("addmm", forms("addmm"), lambda rng: [
            one("2d", x(rng, 3, 2), x(rng, 3, 4), x(rng, 4, 2)),
            one("broadcast-beta-alpha", x(rng, 2), x(rng, 3, 4), x(rng, 4, 2), beta=0.5,
                alpha=2),
            one("0d-input", x(rng), x(rng, 3, 4), x(rng, 4, 2), alpha=-1),
            one("beta0", x(rng, 3, 2), x(rng, 3, 4), x(rng, 4, 2), beta=0),
            one("empty", x(rng, 0, 2), x(rng, 0, 4), x(rng, 4, 2)),
            one("transposed", x(rng, 2, 3), x(rng, 3, 4), x(rng, 4, 2), view=transposed)],
            errors=[error("input does not broadcast", lambda lib, F, c, a, b: lib.addmm(c, a, b),
                          ones_(3), m23, m32)]),
        entry("mv", forms("mv"), lambda rng: [
            one("2d", x(rng, 3, 4), x(rng, 4)),
            one("empty", x(rng, 0, 4), x(rng, 4)),
            one("transposed", x(rng, 4, 3), x(rng, 4), view=transposed)],
            errors=[error("vector is 2-d", lambda lib, F, a, b: lib.mv(a, b), m23, m32),
                    error("sizes differ", lambda lib, F, a, b: lib.mv(a, b), m23, ones_(2))]),
        entry("addmv", forms("addmv"), lambda rng: [
            one("1d", x(rng, 3), x(rng, 3, 4), x(rng, 4)),
            one("0d-input-beta-alpha", x(rng), x(rng, 3, 4), x(rng, 4), beta=2, alpha=3),
            one("empty", x(rng, 0), x(rng, 0, 4), x(rng, 4))]),
        entry("addcmul", forms("addcmul"), lambda rng: elementwise(rng, REALS, REALS, REALS)),
        entry("addcmul.value", forms("addcmul"),
              lambda rng: elementwise(rng, REALS, REALS, REALS, kwargs={"value": -2})),
        entry("addcdiv", forms("addcdiv"),
              lambda rng: elementwise(rng, REALS, REALS, NONZERO, kwargs={"value": 0.5})),
    ]


# --------------------------------------------------------------- comparisons


def _comparison_entries() -> list:
    def boolean(name, method=False):
        if method:
            return lambda lib, F, a, b, **kw: lib.tensor(getattr(a, name)(b, **kw))
        return lambda lib, F, a, b, **kw: lib.tensor(getattr(lib, name)(a, b, **kw))

    def pairs(rng):
        a = x(rng, 3, 4)
        return [one("equal-values", a, a.copy()), one("close", a, a + 1e-9),
                one("far", a, a + 0.5), one("0d", x(rng), x(rng)),
                one("empty", x(rng, 0, 3), x(rng, 0, 3))]

    return [
        entry("allclose", {"allclose": boolean("allclose"),
                           "Tensor.allclose": boolean("allclose", method=True)},
              lambda rng: [*pairs(rng), one("broadcast", x(rng, 3, 1), x(rng, 1, 4)),
                           one("loose", x(rng, 3), x(rng, 3), atol=10.0)],
              differentiable=False,
              errors=[error("dtypes differ", lambda lib, F, a, b: lib.allclose(a, b),
                            ones_(3), np.ones(3))]),
        entry("equal", {"equal": boolean("equal"), "Tensor.equal": boolean("equal", method=True)},
              lambda rng: [*pairs(rng), one("shapes differ", x(rng, 3), x(rng, 1, 3))],
              differentiable=False,
              errors=[error("a number", lambda lib, F, a: lib.equal(a, 1), ones_(3))]),
        entry("clamp_min", forms("clamp_min"),
              lambda rng: elementwise(rng, REALS, kwargs={"min": 0.5})),
        entry("clamp_max", forms("clamp_max"),
              lambda rng: elementwise(rng, REALS, kwargs={"max": -0.5})),
    ]


# --------------------------------------------------------------------- norms


def _norm_entries() -> list:
    def with_p(p):
        return lambda rng: [one(s.desc, *s.arrays, view=s.view, p=p, **s.kwargs)
                            for s in reductions(rng, NONZERO)]

    out = [entry("norm", forms("norm"), lambda rng: reductions(rng, NONZERO),
                 errors=[error("integer input", lambda lib, F, x: x.norm(),
                               np.arange(3))])]
    for name, p in {"1": 1, "3": 3, "half": 0.5, "minus1": -1, "0": 0}.items():
        out.append(entry(f"norm.p{name}", forms("norm"), lambda rng, p=p: [
            s for s in with_p(p)(rng) if p > 0 or not s.desc.startswith("empty")]))
    for name, p in {"inf": math.inf, "minusinf": -math.inf}.items():
        out.append(entry(f"norm.{name}", forms("norm"), lambda rng, p=p: [
            s for s in with_p(p)(rng) if not s.desc.startswith("empty")],
            errors=[error("no elements", lambda lib, F, x, p=p: x.norm(p), ones_(0, 3))]))
    out += [
        entry("norm.fro-dims", forms("norm"), lambda rng: [
            one("3d", x(rng, 2, 3, 4), p="fro", dim=(0, 2)),
            one("3d-keepdim", x(rng, 2, 3, 4), p="fro", dim=(-1, 1), keepdim=True),
            one("tuple-p1", x(rng, 2, 3, 4), p=1, dim=(0, 1, 2))],
            errors=[error("fro over three dims", lambda lib, F, x: x.norm(
                "fro", dim=(0, 1, 2)), ones_(2, 2, 2))]),
        entry("dist", forms("dist"), lambda rng: elementwise(rng, REALS, REALS)),
        entry("dist.p", forms("dist"), lambda rng: [
            one(f"p{p}", x(rng, 3, 4), x(rng, 1, 4), p=p) for p in (1, 3, math.inf)]),
    ]
    return out


# ---------------------------------------------------------- in-place twins

#: twin name -> (extra arguments, domains of x and the tensor operands)
_TWINS = {
    **{f"{n}_": ((), (REALS,)) for n in (
        "abs", "neg", "sign", "relu", "sigmoid", "tanh", "exp", "expm1", "square", "erf",
        "sin", "cos", "atan", "arctan", "floor", "ceil", "round", "trunc", "fix", "frac",
        "bitwise_not")},
    **{f"{n}_": ((), (POSITIVE,)) for n in ("log", "log2", "log10", "log1p", "sqrt", "rsqrt")},
    **{f"{n}_": ((), (UNIT,)) for n in ("tan", "asin", "acos", "arcsin", "arccos")},
    "pow_": ((), (POSITIVE, (0.0, 3.0))),
    **{f"{n}_": ((), (REALS, NONZERO)) for n in ("remainder", "fmod", "floor_divide")},
    **{f"{n}_": ((), (REALS, REALS)) for n in (
        "copysign", "eq", "ne", "lt", "le", "gt", "ge", "bitwise_and", "bitwise_or",
        "bitwise_xor")},
    **{f"{n}_": ((), (POSITIVE, (0.0, 3.0))) for n in (
        "bitwise_left_shift", "bitwise_right_shift")},
    "clip_": ((-1, 1), (REALS,)), "clamp_min_": ((0.5,), (REALS,)),
    "clamp_max_": ((-0.5,), (REALS,)), "cumsum_": ((0,), (REALS,)),
    "cumprod_": ((0,), (REALS,)),
}


def inplace(name, *args):
    """``x.name(...)`` on a fresh copy with detached operands (the engine
    refuses in-place ops on tensors that require grad, as opdb explains)."""
    return lambda lib, F, x, *t, **kw: getattr(x.detach().clone(), name)(
        *(u.detach() for u in t), *args, **kw)


def _same_shape(rng, *domains):
    return [s for s in elementwise(rng, *domains) if s.desc in ("2d", "0d", "empty")]


def _inplace_entries() -> list:
    out = [entry(name, {f"Tensor.{name}": inplace(name, *args)},
                 lambda rng, d=domains: _same_shape(rng, *d), differentiable=False)
           for name, (args, domains) in _TWINS.items()]
    matrices = [s for s in _same_shape(np.random.default_rng(0), REALS) if s.desc != "0d"]
    index = np.array([[0, 1, 2, 0], [2, 0, 1, 1]])
    out += [
        entry("tril_", {"Tensor.tril_": inplace("tril_")}, lambda rng: matrices,
              differentiable=False),
        entry("triu_", {"Tensor.triu_": inplace("triu_", 1)}, lambda rng: matrices,
              differentiable=False),
        entry("masked_fill_", {"Tensor.masked_fill_": inplace("masked_fill_", 0.5)},
              lambda rng: [one("2d", x(rng, 3, 4), fixed=(x(rng, 3, 4) > 0,))],
              differentiable=False),
        entry("scatter_", {"Tensor.scatter_": lambda lib, F, x, src, i: x.detach().clone(
            ).scatter_(0, i, src.detach())},
            lambda rng: [one("2d", x(rng, 3, 4), x(rng, 2, 4), fixed=(index,))],
            differentiable=False),
        entry("scatter_add_", {"Tensor.scatter_add_": lambda lib, F, x, src, i: x.detach(
            ).clone().scatter_add_(0, i, src.detach())},
            lambda rng: [one("2d", x(rng, 3, 4), x(rng, 2, 4), fixed=(index,))],
            differentiable=False),
        entry("scatter_reduce_", {"Tensor.scatter_reduce_": lambda lib, F, x, src, i: x.detach(
            ).clone().scatter_reduce_(0, i, src.detach(), "amax")},
            lambda rng: [one("2d", x(rng, 3, 4), x(rng, 2, 4), fixed=(index,))],
            differentiable=False),
        entry("addmm_", {"Tensor.addmm_": inplace("addmm_")}, lambda rng: [
            one("2d", x(rng, 3, 2), x(rng, 3, 4), x(rng, 4, 2))], differentiable=False,
            errors=[error("self too small", lambda lib, F, c, a, b: c.addmm_(a, b), ones_(2),
                          ones_(3, 4), ones_(4, 2))]),
        entry("addmv_", {"Tensor.addmv_": inplace("addmv_", )}, lambda rng: [
            one("1d", x(rng, 3), x(rng, 3, 4), x(rng, 4), beta=0.5)], differentiable=False),
        entry("baddbmm_", {"Tensor.baddbmm_": inplace("baddbmm_")}, lambda rng: [
            one("3d", x(rng, 2, 3, 2), x(rng, 2, 3, 4), x(rng, 2, 4, 2))],
            differentiable=False),
    ]
    by_name = {e.name: e for e in out}
    by_name["pow_"].errors.append(error("output would broadcast", lambda lib, F, a, b: a.pow_(b),
                                        ones_(3), ones_(2, 3)))
    by_name["sqrt_"].errors.append(error("float result into int", lambda lib, F, a: a.sqrt_(),
                                         np.arange(3)))
    return out


def entries() -> list:
    return _product_entries() + _comparison_entries() + _norm_entries() + _inplace_entries()
