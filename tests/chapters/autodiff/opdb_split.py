"""Op-table entries for the cutting, counting and repeating ops
(chapters/autodiff/ops/split.py and ops/count.py); opdb._build adds them."""

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
    reductions,
    transposed,
    x,
)


def _counts(rng, *shape):
    """Non-negative integer values (as floats), so every integer dtype keeps them."""
    return rng.integers(0, 5, size=shape).astype(np.float64)


def _positional(name: str) -> dict:
    """``lib.name(x, at, ...)`` and ``x.name(at, ...)``: torch names the second
    argument differently in the two forms, so the samples pass it as ``at``."""
    return {name: lambda lib, F, x, at, **kw: getattr(lib, name)(x, at, **kw),
            f"Tensor.{name}": lambda lib, F, x, at, **kw: getattr(x, name)(at, **kw)}


def _view_entries() -> list[OpEntry]:
    m23 = ones_(2, 3)
    return [
        entry("chunk", forms("chunk"), lambda rng: [
            one("dim0", x(rng, 5, 3), chunks=2), one("dim1-more-than-size", x(rng, 2, 3),
                                                      chunks=4, dim=1),
            one("empty", x(rng, 0, 3), chunks=2), one("transposed", x(rng, 4, 3), chunks=3,
                                                       dim=-1, view=transposed)],
            errors=[error("0-d input", lambda lib, F, x: lib.chunk(x, 2), np.float32(1)),
                    error("no chunks", lambda lib, F, x: x.chunk(0), m23)]),
        entry("split", _positional("split"), lambda rng: [
            one("int", x(rng, 5, 3), at=2),
            one("sizes-dim1", x(rng, 2, 5), at=[1, 0, 4], dim=1),
            one("empty", x(rng, 0, 3), at=2),
            one("transposed", x(rng, 4, 3), at=[1, 3], dim=1,
                view=transposed)],
            errors=[error("sizes that miss the total", lambda lib, F, x: x.split([1, 2]), m23),
                    error("size 0 on a non-empty dim", lambda lib, F, x: x.split(0), m23),
                    error("0-d input", lambda lib, F, x: lib.split(x, 1), np.float32(1))]),
        entry("tensor_split", _positional("tensor_split"), lambda rng: [
            one("sections", x(rng, 7, 2), at=3),
            one("indices-dim1", x(rng, 2, 6), at=[1, 4, 2, 9], dim=1),
            one("negative-index", x(rng, 5), at=[-2]),
            one("empty", x(rng, 0, 3), at=2),
            one("transposed", x(rng, 4, 3), at=2, dim=1, view=transposed)],
            errors=[error("float index tensor", lambda lib, F, x: x.tensor_split(x), ones_(3)),
                    error("0 sections", lambda lib, F, x: x.tensor_split(0), m23)]),
        entry("tensor_split.tensor", {
            "tensor_split": lambda lib, F, x, i: lib.tensor_split(x, i, dim=1)}, lambda rng: [
            Sample("indices", (x(rng, 2, 6),), (np.array([2, 3]),)),
            Sample("sections-0d", (x(rng, 2, 5),), (np.array(2),))]),
        entry("unbind", forms("unbind"), lambda rng: [
            one("dim0", x(rng, 3, 2)), one("dim-1", x(rng, 2, 3), dim=-1),
            one("empty-rows", x(rng, 0, 3), dim=1),  # no slices at all: test_ops_split.py
            one("transposed", x(rng, 4, 3), view=transposed)],
            errors=[error("0-d input", lambda lib, F, x: lib.unbind(x), np.float32(1)),
                    error("dim out of range", lambda lib, F, x: x.unbind(2), m23)]),
        entry("narrow", forms("narrow"), lambda rng: [
            one("dim0", x(rng, 5, 3), dim=0, start=1, length=3),
            one("negative-start", x(rng, 2, 5), dim=1, start=-3, length=2),
            one("empty", x(rng, 4, 3), dim=0, start=4, length=0),
            one("transposed", x(rng, 4, 3), dim=1, start=2, length=2, view=transposed)],
            errors=[error("past the end", lambda lib, F, x: x.narrow(1, 2, 2), m23),
                    error("start out of range", lambda lib, F, x: x.narrow(1, 4, 0), m23),
                    error("0-d input", lambda lib, F, x: lib.narrow(x, 0, 0, 1),
                          np.float32(1))]),
        entry("narrow.tensor-start", {
            "narrow": lambda lib, F, x, s: lib.narrow(x, 0, s, 2)}, lambda rng: [
            Sample("0d-start", (x(rng, 4, 3),), (np.array(1),))]),
        entry("unflatten", forms("unflatten"), lambda rng: [
            one("dim1", x(rng, 2, 6), dim=1, sizes=(2, 3)),
            one("inferred", x(rng, 6, 2), dim=0, sizes=(-1, 2, 1)),
            one("empty", x(rng, 0, 4), dim=1, sizes=(2, 2)),
            one("transposed", x(rng, 4, 3), dim=1, sizes=[2, 2], view=transposed)],
            errors=[error("sizes that miss the total", lambda lib, F, x: x.unflatten(1, (2, 2)),
                          m23),
                    error("no sizes", lambda lib, F, x: x.unflatten(1, ()), m23),
                    error("two inferred", lambda lib, F, x: x.unflatten(1, (-1, -1)), m23)]),
        entry("movedim", forms("movedim", moveaxis=lambda lib, F, x, **kw: lib.moveaxis(x, **kw),
                               **{"Tensor.moveaxis": lambda lib, F, x, **kw: x.moveaxis(**kw)}),
              lambda rng: [
            one("one-dim", x(rng, 2, 3, 4), source=0, destination=-1),
            one("two-dims", x(rng, 2, 3, 4), source=(0, 1), destination=(2, 0)),
            one("0d", x(rng), source=0, destination=0),
            one("empty", x(rng, 0, 3), source=1, destination=0),
            one("transposed", x(rng, 4, 3), source=0, destination=1, view=transposed)],
            errors=[error("repeated source", lambda lib, F, x: x.movedim((0, 0), (0, 1)), m23),
                    error("lengths differ", lambda lib, F, x: x.movedim((0, 1), (1,)), m23),
                    error("dim out of range", lambda lib, F, x: x.movedim(2, 0), m23)]),
    ]


def _count_entries() -> list[OpEntry]:
    m23, ints = ones_(2, 3), np.array([0, 1])
    mask = np.array([True, False, True])
    return [
        entry("masked_select", forms("masked_select"), lambda rng: [
            Sample("2d", (x(rng, 3, 4),), (x(rng, 3, 4) > 0,)),
            Sample("mask-broadcasts", (x(rng, 3, 4),), (x(rng, 1, 4) > 0,)),
            Sample("input-broadcasts", (x(rng, 4),), (x(rng, 2, 1, 4) > 0,)),
            Sample("0d", (x(rng),), (np.array(True),)),
            Sample("empty", (x(rng, 0, 3),), (mask,)),
            Sample("transposed", (x(rng, 4, 3),), (x(rng, 3, 4) > 0,), view=transposed)],
            errors=[error("mask not bool", lambda lib, F, x, m: x.masked_select(m), m23,
                          np.array([1, 0, 1])),
                    error("shapes that do not broadcast", lambda lib, F, x, m: x.masked_select(
                        m), m23, np.array([True, False]))]),
        entry("argwhere", forms("argwhere"), lambda rng: [
            one("2d", x(rng, 3, 4)), one("0d", x(rng)), one("empty", x(rng, 0, 3)),
            one("zeros", np.zeros((2, 2))), one("transposed", x(rng, 4, 3), view=transposed)],
            differentiable=False),
        entry("count_nonzero", forms("count_nonzero"), lambda rng: [
            *[Sample(s.desc, (np.round(s.arrays[0]),), kwargs=s.kwargs, view=s.view)
              for s in reductions(rng, keepdim=False)],
            one("dims", np.round(x(rng, 2, 3, 4)), dim=(0, 2)),
            one("no-dims", np.round(x(rng, 2, 3)), dim=())],
            differentiable=False,
            errors=[error("repeated dim", lambda lib, F, x: x.count_nonzero((0, 0)), m23),
                    error("dim out of range", lambda lib, F, x: x.count_nonzero(2), m23)]),
        entry("bincount", forms("bincount"), lambda rng: [
            one("1d", _counts(rng, 8)), one("minlength", _counts(rng, 4), minlength=9),
            one("empty", _counts(rng, 0)), one("strided", _counts(rng, 8),
                                              view=lambda t: t[::2])],
            differentiable=False,
            errors=[error("negative value", lambda lib, F, i: lib.bincount(i), np.array([-1, 2])),
                    error("2-d input", lambda lib, F, i: lib.bincount(i), np.array([[1, 2]])),
                    error("negative minlength", lambda lib, F, i: i.bincount(minlength=-1),
                          ints),
                    error("weights of another length", lambda lib, F, i, w: lib.bincount(
                        i, weights=w), ints, ones_(3))]),
        # torch records bincount with weights but defines no derivative
        entry("bincount.weights", {
            "bincount": lambda lib, F, w, i, **kw: lib.bincount(i, weights=w, **kw),
            "Tensor.bincount": lambda lib, F, w, i, **kw: i.bincount(w, **kw)}, lambda rng: [
            Sample("1d", (x(rng, 5),), (np.array([0, 3, 3, 1, 0]),)),
            Sample("minlength", (x(rng, 3),), (np.array([2, 0, 2]),), {"minlength": 5}),
            Sample("empty", (x(rng, 0),), (np.zeros(0, np.int64),))],
            differentiable=None),
        entry("diff", forms("diff"), lambda rng: [
            one("last-dim", x(rng, 3, 5)), one("n2-dim0", x(rng, 4, 3), n=2, dim=0),
            one("n-past-size", x(rng, 2, 3), n=5), one("n0", x(rng, 2, 3), n=0),
            one("empty", x(rng, 0, 3), dim=0), one("empty-dim", x(rng, 3, 0)),
            one("transposed", x(rng, 4, 3), view=transposed)],
            errors=[error("0-d input", lambda lib, F, x: lib.diff(x), np.float32(1)),
                    error("negative order", lambda lib, F, x: x.diff(n=-1), m23),
                    error("prepend of another rank", lambda lib, F, x, p: x.diff(prepend=p),
                          m23, ones_(2)),
                    error("append of another size", lambda lib, F, x, p: x.diff(append=p),
                          m23, ones_(3, 1))]),
        entry("diff.prepend-append", {
            "diff": lambda lib, F, x, p, a, **kw: lib.diff(x, prepend=p, append=a, **kw)},
            lambda rng: [one("dim1", x(rng, 2, 3), x(rng, 2, 1), x(rng, 2, 2), n=2),
                         one("dim0", x(rng, 2, 3), x(rng, 1, 3), x(rng, 2, 3), dim=0)]),
        entry("repeat_interleave", forms("repeat_interleave"), lambda rng: [
            one("flat", x(rng, 2, 3), repeats=2), one("dim1", x(rng, 2, 3), repeats=3, dim=1),
            one("0d", x(rng), repeats=3), one("zero", x(rng, 2, 3), repeats=0, dim=0),
            one("empty", x(rng, 0, 3), repeats=2, dim=0),
            one("output_size", x(rng, 2, 3), repeats=2, dim=0, output_size=4),
            one("transposed", x(rng, 4, 3), repeats=2, dim=0, view=transposed)],
            errors=[error("negative repeats", lambda lib, F, x: x.repeat_interleave(-1), m23),
                    error("0-d input with dim", lambda lib, F, x: x.repeat_interleave(2, dim=0),
                          np.float32(1)),
                    error("wrong output_size", lambda lib, F, x: x.repeat_interleave(
                        2, dim=0, output_size=5), m23),
                    error("repeats of another length", lambda lib, F, x, r: x.repeat_interleave(
                        r, dim=1), m23, ints),
                    error("float repeats", lambda lib, F, x: x.repeat_interleave(x, dim=1),
                          m23)]),
        entry("repeat_interleave.tensor", {
            "repeat_interleave": lambda lib, F, x, r, **kw: lib.repeat_interleave(x, r, **kw),
            "Tensor.repeat_interleave": lambda lib, F, x, r, **kw: x.repeat_interleave(r, **kw)},
            lambda rng: [
            Sample("dim0", (x(rng, 3, 2),), (np.array([2, 0, 1]),), {"dim": 0}),
            Sample("one-count", (x(rng, 2, 3),), (np.array([2]),), {"dim": 1}),
            Sample("0d-count", (x(rng, 2, 3),), (np.array(2),), {"dim": -1}),
            Sample("flat", (x(rng, 2, 2),), (np.array([1, 0, 3, 1]),))]),
        entry("repeat_interleave.counts", {
            "repeat_interleave": lambda lib, F, r: lib.repeat_interleave(r)}, lambda rng: [
            Sample("1d", fixed=(np.array([2, 0, 3]),)),
            Sample("empty", fixed=(np.zeros(0, np.int64),))],
            differentiable=False,
            errors=[error("negative count", lambda lib, F, r: lib.repeat_interleave(r),
                          np.array([-1, 2])),
                    error("2-d counts", lambda lib, F, r: lib.repeat_interleave(r),
                          np.array([[1, 2]]))]),
    ]


def entries() -> list[OpEntry]:
    return _view_entries() + _count_entries()
