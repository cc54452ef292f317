"""Property tests over shapes: broadcasting, size-1 dims, non-contiguous inputs."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, mutually_broadcastable_shapes

from .parity import FLOAT64, check_both

SETTINGS = settings(max_examples=15, deadline=None)

BINARY = {
    "add": lambda lib, F, a, b: a + b,
    "sub": lambda lib, F, a, b: a - b,
    "mul": lambda lib, F, a, b: a * b,
    "div": lambda lib, F, a, b: a / (b * b + 0.5),
    "pow": lambda lib, F, a, b: (a * a + 0.5) ** b,
    "maximum": lambda lib, F, a, b: lib.maximum(a, b),
    "minimum": lambda lib, F, a, b: lib.minimum(a, b),
    "where": lambda lib, F, a, b: lib.where(a > 0, a, b),
    "remainder": lambda L, F, a, b: a % (b * b + 0.5),
    "fmod": lambda L, F, a, b: L.fmod(a, b * b + 0.5),
    "copysign": lambda L, F, a, b: L.copysign(a, b),
    "lerp": lambda L, F, a, b: L.lerp(a, b, 0.25),
}

UNARY = {
    "neg": lambda lib, F, x: -x,
    "exp": lambda lib, F, x: x.exp(),
    "log": lambda lib, F, x: (x * x + 0.1).log(),
    "sqrt": lambda lib, F, x: (x * x + 0.1).sqrt(),
    "abs": lambda lib, F, x: x.abs(),
    "tanh": lambda lib, F, x: x.tanh(),
    "sigmoid": lambda lib, F, x: x.sigmoid(),
    "relu": lambda lib, F, x: F.relu(x),
    "leaky_relu": lambda lib, F, x: F.leaky_relu(x, 0.05),
    "gelu": lambda lib, F, x: F.gelu(x),
    "clamp": lambda lib, F, x: x.clamp(min=-0.5, max=0.5),
    "scalar_ops": lambda lib, F, x: 2 * x - 1.5 / (x * x + 1) + x**2,
    "sin": lambda L, F, x: x.sin(),
    "atan": lambda L, F, x: L.atan(x),
    "log1p": lambda L, F, x: (x * x).log1p(),
    "expm1": lambda L, F, x: x.expm1(),
    "frac": lambda L, F, x: (x * 3).frac(),
    "floor_plus_x": lambda L, F, x: x.floor() + x,
}

REDUCTIONS = {
    "sum": lambda lib, F, x, d, k: x.sum(dim=d, keepdim=k),
    "mean": lambda lib, F, x, d, k: x.mean(dim=d, keepdim=k),
    "amax": lambda lib, F, x, d, k: x.amax(dim=d, keepdim=k),
    "max": lambda lib, F, x, d, k: x.max(dim=d, keepdim=k).values,
    "var": lambda lib, F, x, d, k: x.var(dim=d, keepdim=k),
    "logsumexp": lambda lib, F, x, d, k: x.logsumexp(dim=d, keepdim=k),
    "softmax": lambda lib, F, x, d, k: x.softmax(dim=d),
    "log_softmax": lambda lib, F, x, d, k: F.log_softmax(x, dim=d),
}


def _array(seed: int, shape, transposed: bool) -> np.ndarray:
    """A float64 array of ``shape``; when ``transposed``, a non-contiguous view."""
    rng = np.random.default_rng(seed)
    if transposed and len(shape) >= 2:
        return rng.standard_normal(shape[::-1]).T
    return rng.standard_normal(shape)


@pytest.mark.parametrize("name", sorted(BINARY))
@SETTINGS
@given(shapes=mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, max_side=3),
       seed=st.integers(0, 2**16), transposed=st.booleans())
def test_binary_ops_broadcast_like_torch(name, shapes, seed, transposed):
    a = _array(seed, shapes.input_shapes[0], transposed)
    b = _array(seed + 1, shapes.input_shapes[1], False)
    check_both(BINARY[name], [a, b], FLOAT64, seed=seed)


@pytest.mark.parametrize("name", sorted(UNARY))
@SETTINGS
@given(shape=array_shapes(min_dims=0, max_dims=4, min_side=1, max_side=4),
       seed=st.integers(0, 2**16), transposed=st.booleans())
def test_unary_ops_over_shapes(name, shape, seed, transposed):
    check_both(UNARY[name], [_array(seed, shape, transposed)], FLOAT64, seed=seed)


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
@SETTINGS
@given(shape=array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=4),
       data=st.data(), seed=st.integers(0, 2**16), keepdim=st.booleans())
def test_reductions_over_dims_like_torch(name, shape, data, seed, keepdim):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1), label="dim")
    fn = REDUCTIONS[name]
    check_both(lambda lib, F, x: fn(lib, F, x, dim, keepdim), [_array(seed, shape, True)],
               FLOAT64, seed=seed)


@SETTINGS
@given(shape=array_shapes(min_dims=2, max_dims=4, min_side=1, max_side=3),
       seed=st.integers(0, 2**16), keepdim=st.booleans())
def test_multi_dim_sum_and_mean(shape, seed, keepdim):
    dims = (0, len(shape) - 1)
    check_both(lambda lib, F, x: x.sum(dim=dims, keepdim=keepdim) + x.mean(dim=dims,
                                                                         keepdim=keepdim),
               [_array(seed, shape, False)], FLOAT64, seed=seed)


@SETTINGS
@given(shapes=mutually_broadcastable_shapes(signature="(m?,n),(n,p?)->(m?,p?)", max_dims=2,
                                            max_side=3),
       seed=st.integers(0, 2**16))
def test_batched_matmul_broadcasts_like_torch(shapes, seed):
    a = _array(seed, shapes.input_shapes[0], True)
    b = _array(seed + 1, shapes.input_shapes[1], False)
    check_both(lambda lib, F, a, b: a @ b, [a, b], FLOAT64, seed=seed)


ALONG_DIM = {
    "cumsum": lambda L, F, x, d: x.cumsum(d),
    "cumprod": lambda L, F, x, d: x.cumprod(d),
    "cummax": lambda L, F, x, d: x.cummax(d).values,
    "prod": lambda L, F, x, d: x.prod(d),
    "flip": lambda L, F, x, d: x.flip(d),
    "roll": lambda L, F, x, d: x.roll(2, d),
    "sort": lambda L, F, x, d: x.sort(d, descending=True).values,
    "topk": lambda L, F, x, d: x.topk(1, d).values,
    "index_select": lambda L, F, x, d: x.index_select(d, L.tensor([0, 0])),
}


@pytest.mark.parametrize("name", sorted(ALONG_DIM))
@SETTINGS
@given(shape=array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=4),
       data=st.data(), seed=st.integers(0, 2**16))
def test_ops_along_every_dim_like_torch(name, shape, data, seed):
    dim = data.draw(st.integers(-len(shape), len(shape) - 1), label="dim")
    fn = ALONG_DIM[name]
    check_both(lambda L, F, x: fn(L, F, x, dim), [_array(seed, shape, True)], FLOAT64,
               seed=seed)


@SETTINGS
@given(shapes=mutually_broadcastable_shapes(signature="(m,n),(n,p)->(m,p)", max_dims=2,
                                            max_side=3),
       seed=st.integers(0, 2**16))
def test_einsum_with_ellipsis_broadcasts_like_matmul(shapes, seed):
    a = _array(seed, shapes.input_shapes[0], True)
    b = _array(seed + 1, shapes.input_shapes[1], False)
    check_both(lambda L, F, a, b: L.einsum("...ij,...jk->...ik", a, b), [a, b], FLOAT64,
               seed=seed)
