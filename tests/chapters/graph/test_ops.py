"""The op registry against torch: one lambda drives both, forward only (the
ops' derivative rules are chapter 2's and are tested there)."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from chapters.graph import ShapeError, UnknownOpError, broadcast_shapes, get_op, run_eager
from chapters.graph.frontend import where
from chapters.torchcheck import assert_close, to_torch

RTOL, ATOL = 1e-5, 1e-6  # float32 forward tolerances

# (name, shared lambda, input shapes); inputs are drawn in (0.5, 2) so log/sqrt/pow are defined
CASES = [
    ("add", lambda a, b: a + b, [(3, 4), (4,)]),
    ("sub", lambda a, b: a - b, [(2, 1, 4), (3, 1)]),
    ("mul", lambda a, b: a * b, [(3, 4), (3, 1)]),
    ("div", lambda a, b: a / b, [(3, 4), (4,)]),
    ("pow", lambda a, b: a ** b, [(3, 4), (3, 4)]),
    ("neg", lambda a: -a, [(5,)]),
    ("exp", lambda a: a.exp(), [(3, 4)]),
    ("log", lambda a: a.log(), [(3, 4)]),
    ("sqrt", lambda a: a.sqrt(), [(3, 4)]),
    ("tanh", lambda a: (a - 1.2).tanh(), [(3, 4)]),
    ("relu", lambda a: (a - 1.2).relu(), [(3, 4)]),
    ("sigmoid", lambda a: (a * 30 - 40).sigmoid(), [(3, 4)]),
    ("abs", lambda a: (a - 1.2).abs(), [(6,)]),
    ("maximum", lambda a, b: a.maximum(b), [(3, 4), (4,)]),
    ("minimum", lambda a, b: a.minimum(b), [(3, 4), (3, 1)]),
    ("matmul", lambda a, b: a @ b, [(3, 4), (4, 5)]),
    ("matmul batched", lambda a, b: a @ b, [(2, 3, 4), (4, 5)]),
    ("matmul vector", lambda a, b: a @ b, [(4,), (2, 4, 5)]),
    ("sum all", lambda a: a.sum(), [(3, 4)]),
    ("sum dim", lambda a: a.sum(dim=1), [(2, 3, 4)]),
    ("sum dims keepdim", lambda a: a.sum(dim=(0, 2), keepdim=True), [(2, 3, 4)]),
    ("mean dim", lambda a: a.mean(dim=-1, keepdim=True), [(2, 3, 4)]),
    ("softmax", lambda a: (a * 20).softmax(dim=-1), [(3, 5)]),
    ("softmax dim0", lambda a: a.softmax(0), [(3, 5)]),
    ("reshape", lambda a: a.reshape(4, -1), [(2, 3, 4)]),
    ("transpose", lambda a: a.transpose(0, 2), [(2, 3, 4)]),
    ("permute", lambda a: a.permute(2, 0, 1), [(2, 3, 4)]),
    ("broadcast_to", lambda a: a.broadcast_to((2, 3, 4)), [(3, 1)]),
    ("gt", lambda a, b: a > b, [(3, 4), (4,)]),
    ("eq", lambda a, b: a == b, [(3, 4), (3, 4)]),
]


def torch_where(cond, a, b):
    return torch.where(cond, a, b) if isinstance(a, torch.Tensor) else where(cond, a, b)


CASES.append(("where", lambda a, b: torch_where(a > b, a, b * 2), [(3, 4), (4,)]))


@pytest.mark.parametrize("name,fn,shapes", CASES, ids=[c[0] for c in CASES])
def test_op_matches_torch(name, fn, shapes):
    rng = np.random.default_rng(0)
    arrays = [rng.uniform(0.5, 2.0, s).astype(np.float32) for s in shapes]
    ours = run_eager(fn, *arrays, record=False).outputs
    theirs = fn(*(to_torch(a) for a in arrays))
    assert_close(ours, theirs, rtol=RTOL, atol=ATOL, what=name)


def test_python_scalars_are_weak_as_in_torch():
    for fn in (lambda a: a * 0.5, lambda a: 2 - a, lambda a: a / 3, lambda a: a ** 2):
        a32 = np.ones(3, np.float32)
        assert run_eager(fn, a32, record=False).outputs.dtype == np.float32
        assert fn(to_torch(a32)).dtype == torch.float32
    ints = np.arange(3)
    assert run_eager(lambda a: a / 2, ints, record=False).outputs.dtype == np.float32
    assert (to_torch(ints) / 2).dtype == torch.float32


shape_st = st.lists(st.integers(1, 4), min_size=0, max_size=4).map(tuple)


@settings(max_examples=60, deadline=None)
@given(a=shape_st, b=shape_st, ones=st.lists(st.booleans(), min_size=4, max_size=4))
def test_broadcasting_agrees_with_torch(a, b, ones):
    b = tuple(1 if one else s for s, one in zip(b, ones[:len(b)], strict=True))  # some 1s
    try:
        expected = tuple(torch.broadcast_shapes(a, b))
    except RuntimeError:
        with pytest.raises(ShapeError, match=r"add: shapes .* cannot be broadcast"):
            broadcast_shapes("add", a, b)
        return
    assert broadcast_shapes("add", a, b) == expected


def test_shape_mismatch_names_the_op_and_shapes():
    x, y = np.ones((3, 4), np.float32), np.ones((5,), np.float32)
    with pytest.raises(ShapeError, match=r"mul: shapes \(3, 4\) and \(5,\)"):
        run_eager(lambda a, b: a * b, x, y)
    with pytest.raises(ShapeError, match=r"matmul: shapes \(3, 4\) and \(3, 4\) do not fit"):
        run_eager(lambda a, b: a @ b, x, x)
    with pytest.raises(ShapeError, match="reshape: cannot reshape"):
        run_eager(lambda a: a.reshape(5, -1), x)
    with pytest.raises(ShapeError, match="sum: dim 2 is out of range"):
        run_eager(lambda a: a.sum(dim=2), x)


def test_unknown_op_suggests_close_names():
    # chapter 2 registers more ops ('tan'), so 'tanh' need not be the first suggestion
    with pytest.raises(UnknownOpError, match=r"unknown op 'tahn'.*Did you mean [^?]*'tanh'"):
        get_op("tahn")
