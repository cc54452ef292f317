"""Op-table entries for the grid, block, position-indexing and search ops
(chapters/autodiff/ops/grids.py, blocks.py, take_put.py, search.py);
opdb._build adds them."""

from __future__ import annotations

import numpy as np

from tests.chapters.autodiff.opdb import (
    OpEntry,
    Sample,
    entry,
    error,
    forms,
    one,
    ones_,
    transposed,
    x,
)


def _ints(*values_) -> np.ndarray:
    return np.array(values_, dtype=np.int64)


def _call(name: str, *extra):
    """``lib.name(*tensors, *extra, **kw)``."""
    return lambda lib, F, *t, **kw: getattr(lib, name)(*t, *extra, **kw)


def _grid_entries() -> list[OpEntry]:
    return [
        entry("meshgrid", {"meshgrid": _call("meshgrid")}, lambda rng: [
            one("ij", x(rng, 3), x(rng, 4), indexing="ij"),
            one("xy", x(rng, 3), x(rng, 4), indexing="xy"),
            one("three-xy", x(rng, 2), x(rng, 3), x(rng, 2), indexing="xy"),
            one("0d", x(rng, 3), x(rng), indexing="ij"),
            one("empty", x(rng, 0), x(rng, 3), indexing="ij"),
            one("strided", x(rng, 6), x(rng, 2), indexing="ij", view=lambda t: t[::2])],
            errors=[error("2-d input", lambda lib, F, a, b: lib.meshgrid(a, b, indexing="ij"),
                          ones_(2), ones_(2, 2)),
                    error("dtypes differ", lambda lib, F, a, b: lib.meshgrid(
                        a, b, indexing="ij"), ones_(2), np.ones(2, np.int64)),
                    error("unknown indexing", lambda lib, F, a: lib.meshgrid(a, indexing="ab"),
                          ones_(2))]),
        entry("broadcast_tensors", {"broadcast_tensors": _call("broadcast_tensors")},
              lambda rng: [
            one("column-row", x(rng, 3, 1), x(rng, 4)),
            one("0d", x(rng), x(rng, 2, 3)),
            one("empty", x(rng, 0, 1), x(rng, 3)),
            one("transposed", x(rng, 4, 3), x(rng, 1, 4), view=transposed)],
            errors=[error("shapes that do not broadcast", _call("broadcast_tensors"),
                          ones_(2), ones_(3))]),
        entry("broadcast_shapes", {"broadcast_shapes": lambda lib, F, x, **kw: x.expand(
            lib.broadcast_shapes(x.shape, (2, 1, 1), 1))}, lambda rng: [
            one("2d", x(rng, 3, 4)), one("0d", x(rng)), one("empty", x(rng, 0, 4))],
            errors=[error("shapes that do not broadcast", lambda lib, F, x: lib.broadcast_shapes(
                (2,), (3,)), ones_(1))]),
        entry("cartesian_prod", {"cartesian_prod": _call("cartesian_prod")}, lambda rng: [
            one("two", x(rng, 2), x(rng, 3)), one("three", x(rng, 2), x(rng, 2), x(rng, 3)),
            one("one", x(rng, 3)), one("empty", x(rng, 0), x(rng, 3)),
            one("strided", x(rng, 6), x(rng, 2), view=lambda t: t[::2])],
            errors=[error("2-d input", _call("cartesian_prod"), ones_(2, 2), ones_(2))]),
        entry("combinations", {"combinations": _call("combinations")}, lambda rng: [
            one("pairs", x(rng, 4)), one("triples", x(rng, 5), r=3),
            one("with-replacement", x(rng, 3), with_replacement=True),
            one("r-past-n", x(rng, 2), r=3), one("empty", x(rng, 0)),
            one("strided", x(rng, 8), view=lambda t: t[::2])],
            errors=[error("2-d input", _call("combinations"), ones_(2, 2))]),
    ] + [
        entry(name, {name: lambda lib, F, n=name, **kw: getattr(lib, n)(**kw)}, lambda rng: [
            Sample("3x4", kwargs={"row": 3, "col": 4}),
            Sample("offset", kwargs={"row": 4, "col": 3, "offset": -1}),
            Sample("offset-past", kwargs={"row": 3, "col": 4, "offset": 10}),
            Sample("empty", kwargs={"row": 0, "col": 4})],
            differentiable=False,
            errors=[error("negative row", lambda lib, F, n=name: getattr(lib, n)(-1, 4))])
        for name in ("tril_indices", "triu_indices")]


def _block_entries() -> list[OpEntry]:
    return [
        entry("block_diag", {"block_diag": _call("block_diag")}, lambda rng: [
            one("matrices", x(rng, 2, 2), x(rng, 1, 3)),
            one("vector-and-0d", x(rng, 3), x(rng), x(rng, 2, 1)),
            one("empty-block", x(rng, 0, 2), x(rng, 2, 2)),
            one("transposed", x(rng, 3, 2), x(rng, 2, 2), view=transposed)],
            errors=[error("3-d block", _call("block_diag"), ones_(2, 2, 2))]),
        entry("kron", forms("kron"), lambda rng: [
            one("matrices", x(rng, 2, 3), x(rng, 2, 2)),
            one("ranks-differ", x(rng, 3), x(rng, 2, 2)),
            one("0d", x(rng), x(rng, 2)),
            one("empty", x(rng, 0, 2), x(rng, 2, 2))]),  # torch's kron refuses some views:
        # test_ops_struct.py checks a transposed input against torch on a contiguous copy
        entry("trace", forms("trace"), lambda rng: [
            one("wide", x(rng, 3, 4)), one("tall", x(rng, 4, 2)), one("empty", x(rng, 0, 3)),
            one("transposed", x(rng, 4, 3), view=transposed)],
            errors=[error("1-d input", _call("trace"), ones_(3))]),
        entry("cdist", {"cdist": _call("cdist")}, lambda rng: [
            one("p2", x(rng, 3, 2), x(rng, 4, 2)),
            one("p1", x(rng, 3, 2), x(rng, 4, 2), p=1.0),
            one("p3", x(rng, 3, 2), x(rng, 2, 2), p=3.0),
            one("p-inf", x(rng, 3, 2), x(rng, 2, 2), p=float("inf")),
            one("p0", x(rng, 3, 2), x(rng, 2, 2), p=0.0),
            one("batch-broadcast", x(rng, 2, 3, 2), x(rng, 1, 4, 2)),
            one("empty", x(rng, 0, 2), x(rng, 3, 2)),
            one("transposed", x(rng, 2, 3), x(rng, 4, 2), view=transposed)],
            errors=[error("int input", _call("cdist"), np.ones((2, 2), np.int64),
                          np.ones((2, 2), np.int64)),
                    error("columns differ", _call("cdist"), ones_(2, 3), ones_(2, 2)),
                    error("1-d input", _call("cdist"), ones_(2), ones_(2, 2)),
                    error("negative p", lambda lib, F, a, b: lib.cdist(a, b, -1.0),
                          ones_(2, 2), ones_(2, 2))]),
    ]


class T(int):
    """``T(k)`` in an argument template: the k-th tensor after x."""


def _fill(template: tuple, tensors) -> list:
    return [tensors[a] if isinstance(a, T) else a for a in template]


def _positional(name: str, *template):
    """``lib.name(x, *args, ...)`` and ``x.name(*args, ...)``, with args the
    ``template`` where each ``T(k)`` is the k-th tensor after x."""
    return {name: lambda lib, F, x, *t, **kw: getattr(lib, name)(x, *_fill(template, t), **kw),
            f"Tensor.{name}": lambda lib, F, x, *t, **kw: getattr(x, name)(
                *_fill(template, t), **kw)}


def _inplace(name: str, *template):
    """``x.name_(...)`` on a detached copy (the engine refuses in-place writes to
    tensors that require grad, as torch does to leaves)."""
    return {f"Tensor.{name}": lambda lib, F, x, *t, **kw: getattr(x.detach().clone(), name)(
        *_fill(template, [u.detach() for u in t]), **kw)}


def _take_entries() -> list[OpEntry]:
    m23 = ones_(2, 3)
    return [
        entry("take", _positional("take", T(0)), lambda rng: [
            Sample("2d", (x(rng, 3, 4),), (_ints([0, 11], [5, -1]),)),
            Sample("0d-input", (x(rng),), (_ints(0, -1, 0),)),
            Sample("0d-index", (x(rng, 2, 3),), (np.array(4),)),
            Sample("empty-index", (x(rng, 2, 3),), (np.zeros(0, np.int64),)),
            Sample("transposed", (x(rng, 4, 3),), (_ints(1, 2, 1),), view=transposed)],
            errors=[error("index out of range", lambda lib, F, x, i: x.take(i), m23, _ints(6)),
                    error("float index", lambda lib, F, x, i: x.take(i), m23, ones_(1))]),
        entry("take_along_dim", _positional("take_along_dim", T(0)), lambda rng: [
            Sample("dim1", (x(rng, 3, 4),), (_ints([0, 3], [1, 1], [-1, 2]),), {"dim": 1}),
            Sample("broadcast", (x(rng, 3, 4),), (_ints([0, 2, 1]),), {"dim": 1}),
            Sample("index-broadcasts", (x(rng, 3, 1),), (_ints([0], [0]),), {"dim": 0}),
            Sample("flat", (x(rng, 2, 3),), (_ints([5, 0]),)),
            Sample("transposed", (x(rng, 4, 3),), (_ints([[3], [0], [1]]).reshape(3, 1),),
                   {"dim": 1}, view=transposed)],
            errors=[error("int32 indices", lambda lib, F, x, i: x.take_along_dim(i, 1), m23,
                          np.zeros((1, 1), np.int32)),
                    error("ranks differ", lambda lib, F, x, i: x.take_along_dim(i, 1), m23,
                          _ints(0))]),
    ]


def _indices_as_tuple(form):
    """``form(lib, F, x, (i0, i1, ...), values)`` from the sample order x, values, i0, i1..."""
    return lambda lib, F, x, v, *i, **kw: form(lib, F, x, tuple(i), v, **kw)


def _write_entries() -> list[OpEntry]:
    m23, i01 = ones_(2, 3), _ints(0, 1)
    out = [
        entry("index_add", _positional("index_add", 0, T(1), T(0)), lambda rng: [
            Sample("repeated", (x(rng, 3, 2), x(rng, 4, 2)), (_ints(2, 0, 2, 1),)),
            Sample("alpha", (x(rng, 3, 2), x(rng, 2, 2)), (_ints(1, 0),), {"alpha": 2}),
            Sample("empty-index", (x(rng, 3, 2), x(rng, 0, 2)), (np.zeros(0, np.int64),)),
            Sample("transposed", (x(rng, 2, 3), x(rng, 1, 2)), (_ints(2),), view=transposed)],
            errors=[error("dtypes differ", lambda lib, F, x, s, i: x.index_add(0, i, s), m23,
                          np.ones((2, 3)), i01),
                    error("source rows differ", lambda lib, F, x, s, i: x.index_add(0, i, s),
                          m23, ones_(3, 3), i01),
                    error("float index", lambda lib, F, x, s, i: x.index_add(0, i, s), m23,
                          m23, ones_(2)),
                    error("index out of range", lambda lib, F, x, s, i: x.index_add(0, i, s),
                          m23, m23, _ints(0, 5))]),
        entry("index_copy", _positional("index_copy", 1, T(1), T(0)), lambda rng: [
            Sample("dim1", (x(rng, 2, 3), x(rng, 2, 2)), (_ints(2, 0),)),
            Sample("empty-index", (x(rng, 2, 3), x(rng, 2, 0)), (np.zeros(0, np.int64),)),
            Sample("transposed", (x(rng, 3, 2), x(rng, 2, 1)), (_ints(1),), view=transposed)],
            errors=[error("dtypes differ", lambda lib, F, x, s, i: x.index_copy(0, i, s), m23,
                          np.ones((2, 3)), i01),
                    error("index out of range", lambda lib, F, x, s, i: x.index_copy(0, i, s),
                          m23, m23, _ints(4, 0))]),
        entry("index_fill", _positional("index_fill", 1, T(0), -1.5), lambda rng: [
            Sample("dim1", (x(rng, 2, 3),), (_ints(2, 0),)),
            Sample("negative", (x(rng, 2, 3),), (_ints(-1),)),
            Sample("empty-index", (x(rng, 2, 3),), (np.zeros(0, np.int64),)),
            Sample("transposed", (x(rng, 3, 2),), (_ints(1),), view=transposed)],
            errors=[error("index out of range", lambda lib, F, x, i: x.index_fill(1, i, 5), m23,
                          _ints(3)),
                    error("1-d value", lambda lib, F, x, i, v: x.index_fill(1, i, v), m23,
                          i01, ones_(1))]),
        entry("index_fill.tensor", {"index_fill": lambda lib, F, x, v, i: lib.index_fill(
            x, 0, i, v)}, lambda rng: [Sample("0d-value", (x(rng, 3, 2), x(rng)),
                                             (_ints(0, 2),))]),
        entry("index_put", _positional("index_put", T(0), T(1)), lambda rng: [
            Sample("rows", (x(rng, 3, 2), x(rng, 2)), (_ints(2, 0),)),
            Sample("pairs", (x(rng, 3, 2), x(rng, 2)), (_ints(0, 2), _ints(1, 0))),
            Sample("0d-value", (x(rng, 3, 2), x(rng)), (_ints(1),)),
            Sample("transposed", (x(rng, 2, 3), x(rng, 2)), (_ints(1),), view=transposed)]),
        entry("index_put.accumulate", _positional("index_put", T(0), T(1), True), lambda rng: [
            Sample("repeated", (x(rng, 3, 2), x(rng, 3)), (_ints(0, 2, 0), _ints(1, 1, 1))),
            Sample("empty", (x(rng, 3, 2), x(rng, 0, 2)), (np.zeros(0, np.int64),))]),
    ]
    for e in out[-2:]:  # the index tensors travel as one tuple
        e.fns = {k: _indices_as_tuple(f) for k, f in e.fns.items()}
    out += [
        entry("index_add_", _inplace("index_add_", 0, T(1), T(0)), lambda rng: [
            Sample("repeated", (x(rng, 3, 2), x(rng, 3, 2)), (_ints(2, 0, 2),))],
            differentiable=False),
        entry("index_copy_", _inplace("index_copy_", 0, T(1), T(0)), lambda rng: [
            Sample("rows", (x(rng, 3, 2), x(rng, 1, 2)), (_ints(1),))],
            differentiable=False),
        entry("index_fill_", _inplace("index_fill_", 0, T(0), 2), lambda rng: [
            Sample("rows", (x(rng, 3, 2),), (_ints(1),))], differentiable=False),
        entry("index_put_", {
            "Tensor.index_put_": lambda lib, F, x, v, i: x.detach().clone().index_put_(
                (i,), v.detach(), accumulate=True),
            "index_put_": lambda lib, F, x, v, i: lib.index_put_(x.detach().clone(), (i,),
                                                                 v.detach())},
            lambda rng: [Sample("rows", (x(rng, 3, 2), x(rng, 2)), (_ints(1, 1),))],
            differentiable=False,
            errors=[error("values of another dtype", lambda lib, F, x, v, i: x.index_put(
                (i,), v), m23, np.ones(3), i01),
                error("index out of range", lambda lib, F, x, v, i: x.index_put((i,), v), m23,
                      ones_(3), _ints(5)),
                error("float index", lambda lib, F, x, v, i: x.index_put((i,), v), m23,
                      ones_(3), ones_(1)),
                error("values that do not broadcast", lambda lib, F, x, v, i: x.index_put(
                    (i,), v), m23, ones_(3, 3), i01)]),
    ]
    return out


def _search_entries() -> list[OpEntry]:
    b = np.array([-1.0, 0.0, 0.0, 2.0])
    return [
        entry("isin", {"isin": _call("isin")}, lambda rng: [
            one("2d", np.round(x(rng, 3, 4)), np.array([1.0, -2.0, 0.0])),
            one("invert", np.round(x(rng, 3)), np.array([1.0, 2.0]), invert=True),
            one("0d", np.array(2.0), np.array([2.0, 1.0])),
            one("empty", np.round(x(rng, 0, 2)), np.array([1.0])),
            one("transposed", np.round(x(rng, 4, 3)), np.array([0.0]), view=transposed)],
            differentiable=False,
            errors=[error("bool input", _call("isin"), np.array([True]), np.array([True]))]),
        entry("isin.scalar", {"isin": lambda lib, F, x: lib.isin(x, 1)}, lambda rng: [
            one("1d", np.round(x(rng, 5)))], differentiable=False),
        entry("searchsorted", {"searchsorted": _call("searchsorted")}, lambda rng: [
            one("left", b, np.round(x(rng, 2, 3))),
            one("right", b, np.round(x(rng, 2, 3)), right=True),
            one("side-right", b, np.round(x(rng, 4)), side="right"),
            one("int32", b, np.round(x(rng, 4)), out_int32=True),
            one("batched", np.sort(np.round(x(rng, 2, 4)), axis=1), np.round(x(rng, 2, 3))),
            one("0d", b, np.array(0.0)),
            one("empty", b, x(rng, 0))],
            differentiable=False,
            errors=[error("side and right disagree", lambda lib, F, s, v: lib.searchsorted(
                s, v, side="left", right=True), ones_(2), ones_(1)),
                error("batch rows differ", _call("searchsorted"), ones_(2, 2), ones_(3, 1)),
                error("0-d boundaries", _call("searchsorted"), np.float32(1), ones_(1))]),
        entry("bucketize", {"bucketize": _call("bucketize")}, lambda rng: [
            one("left", np.round(x(rng, 2, 3)), b),
            one("right", np.round(x(rng, 4)), b, right=True),
            one("0d", np.array(0.0), b),
            one("transposed", np.round(x(rng, 4, 3)), b, view=transposed)],
            differentiable=False,
            errors=[error("2-d boundaries", _call("bucketize"), ones_(2), ones_(2, 2))]),
        entry("histc", forms("histc"), lambda rng: [
            one("default", x(rng, 20), bins=4),
            one("range", x(rng, 3, 5), bins=5, min=-1, max=2),
            one("one-value", np.ones(3), bins=4),
            one("empty", x(rng, 0), bins=3),
            one("transposed", x(rng, 4, 3), bins=6, view=transposed)],
            differentiable=False,
            errors=[error("no bins", lambda lib, F, x: x.histc(bins=0), ones_(2)),
                    error("min above max", lambda lib, F, x: x.histc(4, 3, 1), ones_(2))]),
    ]


def entries() -> list[OpEntry]:
    return _grid_entries() + _block_entries() + _take_entries() + _write_entries() \
        + _search_entries()
