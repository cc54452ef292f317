"""Op-table entries for the tensor questions (chapters/autodiff/introspect.py),
the stacks and turns (ops/stacking.py) and the order statistics and moments
(ops/stats.py); ``opdb._build`` adds them. Ties, named tuples and the dtype
limits are in test_ops_stats.py."""

from __future__ import annotations

import numpy as np

from tests.chapters.autodiff.opdb import (
    OpEntry,
    distinct,
    entry,
    error,
    forms,
    one,
    ones_,
    reductions,
    scans,
    sortings,
    transposed,
    x,
)


def _as_tensor(name: str, method: bool = False):
    """``lib.name(x)`` (or ``x.name()``), a Python number or bool, as a 0-d tensor."""
    if method:
        return lambda lib, F, t: lib.tensor(getattr(t, name)())
    return lambda lib, F, t: lib.tensor(getattr(lib, name)(t))


def _question_entries() -> list[OpEntry]:
    def inputs(rng):
        return [one("2d", x(rng, 3, 4)), one("0d", x(rng)), one("empty", x(rng, 0, 3)),
                one("transposed", x(rng, 4, 3), view=transposed)]

    return [
        entry("numel", {"numel": _as_tensor("numel")}, inputs, differentiable=False,
              errors=[error("a list", lambda lib, F: lib.numel([1, 2]))]),
        entry("is_floating_point", {"is_floating_point": _as_tensor("is_floating_point")},
              inputs, differentiable=False),
        entry("is_tensor", {"is_tensor": _as_tensor("is_tensor")}, inputs,
              differentiable=False),
        entry("result_type", {"result_type": lambda lib, F, a, b, **kw: lib.zeros(
            2, dtype=lib.result_type(a, b))}, lambda rng: [
                one("tensor-tensor", x(rng, 3), x(rng, 3)),
                one("0d-with-1d", x(rng), x(rng, 3)),
                one("empty", x(rng, 0), x(rng, 0))], differentiable=False),
        entry("result_type.number", {"result_type": lambda lib, F, a, **kw: lib.zeros(
            2, dtype=lib.result_type(a, 2.5))}, lambda rng: [one("float", x(rng, 3))],
            differentiable=False),
    ]


def _stack_entries() -> list[OpEntry]:
    def joined(name):
        return {name: lambda lib, F, *t: getattr(lib, name)(list(t))}

    def pairs(rng, *more):
        return [one("1d", x(rng, 3), x(rng, 3)), one("0d", x(rng), x(rng)),
                one("2d", x(rng, 2, 3), x(rng, 2, 3)), *more,
                one("transposed", x(rng, 3, 2), x(rng, 2, 3), view=transposed)]

    m23 = ones_(2, 3)
    return [
        entry("hstack", joined("hstack"), lambda rng: pairs(
            rng, one("columns", x(rng, 2, 1), x(rng, 2, 3)), one("empty", x(rng, 0), x(rng, 2))),
            errors=[error("no tensors", lambda lib, F: lib.hstack([])),
                    error("ndims differ", lambda lib, F, a, b: lib.hstack([a, b]),
                          ones_(2), m23)]),
        entry("vstack", {**joined("vstack"), **joined("row_stack")}, lambda rng: pairs(
            rng, one("rows", x(rng, 1, 3), x(rng, 3)), one("empty", x(rng, 0, 3), x(rng, 3))),
            errors=[error("sizes differ", lambda lib, F, a, b: lib.vstack([a, b]),
                          ones_(2), ones_(3))]),
        entry("dstack", joined("dstack"), lambda rng: pairs(
            rng, one("3d", x(rng, 2, 1, 2), x(rng, 2, 1, 3)))),
        entry("column_stack", joined("column_stack"), lambda rng: pairs(
            rng, one("vector-and-matrix", x(rng, 2), x(rng, 2, 3)),
            one("empty", x(rng, 0), x(rng, 0, 2))),
            errors=[error("rows differ", lambda lib, F, a, b: lib.column_stack([a, b]),
                          ones_(2), ones_(3))]),
        *[entry(f"atleast_{n}d", forms(f"atleast_{n}d", meth=False), lambda rng: [
                one("0d", x(rng)), one("1d", x(rng, 3)), one("2d", x(rng, 2, 3)),
                one("3d", x(rng, 2, 1, 3)), one("empty", x(rng, 0)),
                one("transposed", x(rng, 3, 2), view=transposed)]) for n in (1, 2, 3)],
        entry("atleast_2d.many", {"atleast_2d": lambda lib, F, *t: lib.atleast_2d(*t),
                                  "atleast_3d": lambda lib, F, *t: lib.atleast_3d(list(t))},
              lambda rng: [one("0d-and-1d", x(rng), x(rng, 3))]),
        entry("rot90", forms("rot90"), lambda rng: [
            one("once", x(rng, 2, 3)), one("twice", x(rng, 2, 3), k=2),
            one("three-times-3d", x(rng, 2, 3, 4), k=3, dims=(2, 0)),
            one("negative", x(rng, 2, 3), k=-1, dims=[1, 0]), one("none", x(rng, 2, 3), k=4),
            one("empty", x(rng, 0, 3)),
            one("transposed", x(rng, 3, 2), view=transposed)],
            errors=[error("1-d", lambda lib, F, t: lib.rot90(t), ones_(3)),
                    error("one dim", lambda lib, F, t: t.rot90(1, [0]), m23),
                    error("same dims", lambda lib, F, t: t.rot90(1, [0, -2]), m23),
                    error("dim out of range", lambda lib, F, t: t.rot90(1, [0, 2]), m23)]),
        entry("fliplr", forms("fliplr"), lambda rng: [
            one("2d", x(rng, 2, 3)), one("3d", x(rng, 2, 3, 2)), one("empty", x(rng, 0, 3)),
            one("transposed", x(rng, 3, 2), view=transposed)],
            errors=[error("1-d", lambda lib, F, t: lib.fliplr(t), ones_(3))]),
        entry("flipud", forms("flipud"), lambda rng: [
            one("1d", x(rng, 3)), one("2d", x(rng, 2, 3)), one("empty", x(rng, 0, 3)),
            one("transposed", x(rng, 3, 2), view=transposed)],
            errors=[error("0-d", lambda lib, F, t: t.flipud(), np.float32(1))]),
    ]


def _stats_entries() -> list[OpEntry]:
    def order_samples(rng, **kwargs):
        return [s for s in sortings(rng, **kwargs) if s.desc != "0d"] + [
            one("0d", distinct(rng, ()), dim=0, **kwargs),
            one("keepdim", distinct(rng, (3, 4)), dim=0, keepdim=True, **kwargs)]

    def moment(name):
        return {name: lambda lib, F, t, **kw: getattr(lib, name)(t, **kw)}

    empty_dim = error("empty dim", lambda lib, F, t: t.median(1), ones_(3, 0))
    return [
        entry("var_mean", moment("var_mean"), lambda rng: reductions(rng, empty=False) + [
            one("population", x(rng, 3, 4), dim=1, correction=0)],
            errors=[error("integers", lambda lib, F, t: lib.var_mean(t), np.arange(3))]),
        entry("std_mean", moment("std_mean"), lambda rng: reductions(rng, empty=False) + [
            one("dims-keepdim", x(rng, 3, 4, 2), dim=(0, 2), keepdim=True)],
            errors=[error("integers", lambda lib, F, t: lib.std_mean(t), np.arange(3))]),
        entry("aminmax", forms("aminmax"), lambda rng: [
            one("all", distinct(rng, (3, 4))), one("dim1", distinct(rng, (3, 4)), dim=1),
            one("keepdim", distinct(rng, (3, 4)), dim=0, keepdim=True),
            one("0d", distinct(rng, ())), one("empty-rows", x(rng, 0, 3), dim=1),
            one("transposed", distinct(rng, (4, 3)), dim=-1, view=transposed)],
            errors=[error("no elements", lambda lib, F, t: t.aminmax(), ones_(0, 3)),
                    error("empty dim", lambda lib, F, t: t.aminmax(dim=1), ones_(3, 0))]),
        entry("median.all", forms("median"), lambda rng: [
            one("odd", distinct(rng, (3, 3))), one("even-lower", distinct(rng, (2, 4))),
            one("0d", distinct(rng, ())), one("empty", x(rng, 0, 3)),
            one("transposed", distinct(rng, (4, 3)), view=transposed)]),
        entry("median.dim", forms("median"), order_samples, errors=[empty_dim]),
        entry("kthvalue", {"kthvalue": lambda lib, F, t, **kw: lib.kthvalue(t, 1, **kw),
                           "Tensor.kthvalue": lambda lib, F, t, **kw: t.kthvalue(1, **kw)},
              order_samples,
              errors=[error("k too large", lambda lib, F, t: t.kthvalue(4), ones_(3)),
                      error("k zero", lambda lib, F, t: t.kthvalue(0), ones_(3))]),
        entry("kthvalue.last", {"kthvalue": lambda lib, F, t: lib.kthvalue(t, 4, 1)},
              lambda rng: [one("k=n", distinct(rng, (3, 4)))]),
        entry("mode", forms("mode"), lambda rng: [
            one("ties", np.round(x(rng, 3, 6)), dim=1),
            one("ties-dim0", np.round(x(rng, 6, 3)), dim=0, keepdim=True),
            one("0d", x(rng)), one("empty-rows", x(rng, 0, 3)),
            one("transposed", np.round(x(rng, 5, 3)), view=transposed)],
            errors=[error("empty dim", lambda lib, F, t: t.mode(1), ones_(3, 0))]),
    ]


def _scan_entries() -> list[OpEntry]:
    return [
        entry("logcumsumexp", forms("logcumsumexp"), lambda rng: scans(rng) + [
            one("far-apart", np.array([-1000.0, 0.0, 3.0, -50.0]), dim=0),
            one("large", x(rng, 3, 5) * 40, dim=1)],
            errors=[error("dim out of range", lambda lib, F, t: t.logcumsumexp(2), ones_(2, 3))]),
    ]


def _quantile_entries() -> list[OpEntry]:
    def with_q(name, q_tensor=None):
        if q_tensor is None:
            return forms(name)
        return {name: lambda lib, F, t, **kw: getattr(lib, name)(
                    t, lib.tensor(q_tensor, dtype=t.dtype), **kw),
                f"Tensor.{name}": lambda lib, F, t, **kw: getattr(t, name)(
                    lib.tensor(q_tensor, dtype=t.dtype), **kw)}

    def samples(rng):
        nan_row = x(rng, 3, 5)
        nan_row[0, 2] = np.nan
        nan_row[2] = np.nan
        return [one("all", x(rng, 3, 4), q=0.3), one("dim1", x(rng, 3, 5), q=0.25, dim=1),
                one("keepdim", x(rng, 4, 3), q=0.5, dim=0, keepdim=True),
                one("all-keepdim", x(rng, 2, 3), q=1.0, keepdim=True),
                one("0d", x(rng), q=0.7), one("ties", np.round(x(rng, 2, 6)), q=0.4, dim=1),
                one("nan", nan_row, q=0.6, dim=1),
                one("transposed", x(rng, 5, 3), q=0.1, dim=-1, view=transposed),
                *[one(m, x(rng, 3, 5), q=0.375, dim=1, interpolation=m)
                  for m in ("lower", "higher", "midpoint", "nearest")]]

    def tensor_q(rng):
        return [one("q-1d", x(rng, 3, 5), dim=1), one("q-1d-all", x(rng, 2, 4)),
                one("q-1d-keepdim", x(rng, 3, 4), dim=0, keepdim=True, interpolation="nearest")]

    refused = [error("q out of range", lambda lib, F, t: t.quantile(1.5), ones_(3)),
               error("empty", lambda lib, F, t: t.quantile(0.5), ones_(0)),
               error("bad interpolation", lambda lib, F, t: t.quantile(0.5, interpolation="x"),
                     ones_(3)),
               error("2-d q", lambda lib, F, t, q: t.quantile(q), ones_(3), ones_(1, 1)),
               error("q dtype differs", lambda lib, F, t, q: t.quantile(q), ones_(3),
                     np.ones(1))]
    return [entry("quantile", with_q("quantile"), samples, errors=refused),
            entry("nanquantile", with_q("nanquantile"), samples),
            entry("quantile.tensor", with_q("quantile", [0.1, 0.5, 0.75]), tensor_q),
            entry("nanquantile.tensor", with_q("nanquantile", [0.0, 0.9]), tensor_q)]


def entries() -> list[OpEntry]:
    return (_question_entries() + _stack_entries() + _stats_entries() + _scan_entries()
            + _quantile_entries())
