"""Grid, block, position-indexing and search ops against torch, for what a
row of the op table (opdb_struct.py) cannot say: tuples of outputs, repeated
indices, search sides, cdist's gradient where points coincide, in-place forms."""

import numpy as np
import pytest
import torch

import chapters.autodiff as ad
from chapters.torchcheck import assert_close

FWD, GRAD = dict(rtol=1e-6, atol=1e-6), dict(rtol=1e-5, atol=1e-6)


def leaves(*arrays):
    """The same float64 leaves requiring grad on both engines."""
    return ([ad.tensor(a, requires_grad=True) for a in arrays],
            [torch.tensor(a, requires_grad=True) for a in arrays])


def backward_all(outs, lib, seed=0):
    """sum_k <c_k, out_k> for random cotangents c_k, backpropagated."""
    rng = np.random.default_rng(seed)
    total = sum((o * lib.tensor(rng.standard_normal(tuple(o.shape)))).sum() for o in outs)
    total.backward()


def check(fn, *arrays, seed=0):
    """fn on both engines: every output's values, then every input's gradient
    for one random cotangent per output."""
    (ours, theirs) = leaves(*arrays)
    out_e, out_t = fn(ad, *ours), fn(torch, *theirs)
    out_e = out_e if isinstance(out_e, tuple | list) else (out_e,)
    out_t = out_t if isinstance(out_t, tuple | list) else (out_t,)
    assert len(out_e) == len(out_t)
    for e, t in zip(out_e, out_t, strict=True):
        assert_close(e, t, **FWD, what="value")
    backward_all(out_e, ad, seed)
    backward_all(out_t, torch, seed)
    for e, t in zip(ours, theirs, strict=True):
        assert_close(e.grad, t.grad, **GRAD, what="gradient")


rng = np.random.default_rng(0)


@pytest.mark.parametrize("indexing", ["ij", "xy"])
def test_meshgrid_every_output_and_gradient(indexing):
    check(lambda lib, a, b, c: lib.meshgrid(a, b, c, indexing=indexing),
          rng.standard_normal(2), rng.standard_normal(3), rng.standard_normal(4))


def test_meshgrid_takes_a_list_and_xy_swaps_the_first_two_dims():
    a, b = ad.arange(2.0), ad.arange(3.0)
    x, y = ad.meshgrid([a, b], indexing="xy")
    assert x.shape == (3, 2) and y.shape == (3, 2)
    assert (x.data == np.arange(2.0)[None, :]).all() and (y.data == np.arange(3.0)[:, None]).all()


def test_broadcast_tensors_every_output_and_gradient():
    check(lambda lib, a, b, c: lib.broadcast_tensors(a, b, c),
          rng.standard_normal((3, 1)), rng.standard_normal(4), rng.standard_normal(()))


def test_broadcast_shapes_is_torch_size_as_a_tuple():
    for shapes in [((2, 1), (3,), 1), ((0, 1), (1, 5)), ()]:
        assert ad.broadcast_shapes(*shapes) == tuple(torch.broadcast_shapes(*shapes))


def test_cartesian_prod_and_combinations_gradients():
    check(lambda lib, a, b: lib.cartesian_prod(a, b), rng.standard_normal(3),
          rng.standard_normal(2))
    check(lambda lib, a: lib.combinations(a, 2, with_replacement=True), rng.standard_normal(4))


def test_index_put_accumulate_adds_every_repeat():
    """Position (0, 1) named twice gets both values."""
    rows, cols = np.array([0, 2, 0, 0]), np.array([1, 1, 1, 0])
    check(lambda lib, x, v: x.index_put((lib.tensor(rows), lib.tensor(cols)), v,
                                        accumulate=True),
          rng.standard_normal((3, 2)), rng.standard_normal(4))
    x = ad.zeros(3, 2)
    x.index_put_((ad.tensor(rows), ad.tensor(cols)), ad.tensor([1.0, 2.0, 4.0, 8.0]),
                 accumulate=True)
    assert x.data.tolist() == [[8.0, 1.0 + 4.0], [0.0, 0.0], [0.0, 2.0]]


def test_index_put_with_a_bool_mask_and_broadcast_values():
    mask = np.array([True, False, True])
    check(lambda lib, x, v: x.index_put((lib.tensor(mask),), v),
          rng.standard_normal((3, 2)), rng.standard_normal(2))


def test_index_add_gradients_with_repeats_and_alpha():
    check(lambda lib, x, s: x.index_add(1, lib.tensor([0, 2, 0]), s, alpha=-1.5),
          rng.standard_normal((2, 3)), rng.standard_normal((2, 3)))


@pytest.mark.parametrize("dtype", ["int64", "float32"])
def test_index_add_alpha_as_torch_converts_it(dtype):
    """An integer tensor takes int(alpha): 1 + int(2.5) * -3 = -5."""
    def call(lib):
        x = lib.tensor([1, 2]).to(getattr(lib, dtype))
        return x.index_add(0, lib.tensor([0, 0]), lib.tensor([-3, 1]).to(x.dtype), alpha=2.5)
    assert_close(call(ad), call(torch), rtol=0, atol=0, what="index_add")


def test_index_put_refuses_more_indices_than_dims():
    with pytest.raises(IndexError, match="too many indices"):
        ad.ones(2, 3).index_put((ad.tensor([0]),) * 3, ad.tensor(1.0))


def test_index_fill_gradient_reaches_a_0d_value():
    check(lambda lib, x, v: x.index_fill(0, lib.tensor([2, 0]), v),
          rng.standard_normal((3, 2)), rng.standard_normal(()))


def test_take_and_take_along_dim_sum_repeated_reads():
    idx = np.array([[0, 5, 0], [5, 5, -1]])
    check(lambda lib, x: lib.take(x, lib.tensor(idx)), rng.standard_normal((2, 3)))
    check(lambda lib, x: lib.take_along_dim(x, lib.tensor([[2, 2, 0]]), dim=1),
          rng.standard_normal((4, 3)))


def test_kron_of_a_transposed_input_matches_torch_on_a_copy():
    """torch's kron refuses some non-contiguous inputs; the engine copies as needed."""
    a, b = rng.standard_normal((3, 2)), rng.standard_normal((2, 2))
    ours = ad.kron(ad.tensor(a).transpose(0, 1), ad.tensor(b))
    assert_close(ours, torch.kron(torch.tensor(a.T.copy()), torch.tensor(b)), **FWD, what="kron")


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, 0.5, float("inf"), 0.0])
def test_cdist_gradient_where_points_coincide(p):
    """Row 0 of x1 equals row 1 of x2, and one coordinate of row 1 equals
    x2[0]'s: torch's gradient there (0 for the zero distance) and elsewhere."""
    x1, x2 = rng.standard_normal((3, 2)), rng.standard_normal((2, 2))
    x1[0] = x2[1]
    x1[1, 0] = x2[0, 0]
    check(lambda lib, a, b: lib.cdist(a, b, p), x1, x2)


def test_cdist_p2_on_more_rows_than_torch_computes_directly():
    """Past 25 rows torch's p = 2 uses a matrix product; values agree to rounding."""
    x1, x2 = rng.standard_normal((30, 3)), rng.standard_normal((27, 3))
    check(lambda lib, a, b: lib.cdist(a, b), x1, x2)


@pytest.mark.parametrize("blocks", [
    lambda lib: (lib.tensor([1], dtype=lib.int32), lib.tensor(3)),  # 0-d promotes as 0-d
    lambda lib: (lib.tensor([1], dtype=lib.int32), lib.tensor(3.0)),
    lambda lib: (lib.ones(2, 1, dtype=lib.int64), lib.tensor([2.5], dtype=lib.float64)),
])
def test_block_diag_promotes_as_torch(blocks):
    ours, theirs = ad.block_diag(*blocks(ad)), torch.block_diag(*blocks(torch))
    assert_close(ours, theirs, rtol=0, atol=0, what="block_diag")


def test_trace_gradient_is_the_identity():
    x = ad.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    ad.trace(x).backward()
    assert (x.grad.data == np.eye(3, 4)).all()


@pytest.mark.parametrize("right", [False, True])
def test_searchsorted_counts_boundaries_below_each_value(right):
    """left: #{b < v}; right: #{b <= v} (ties go left or right); batched rows."""
    b = np.array([[1.0, 2.0, 2.0, 4.0], [0.0, 0.0, 3.0, 3.0]])
    v = np.array([[2.0, 0.5, 4.0], [0.0, 3.0, 5.0]])
    below = (b[:, None, :] <= v[:, :, None]) if right else (b[:, None, :] < v[:, :, None])
    ours = ad.searchsorted(ad.tensor(b), ad.tensor(v), right=right)
    assert ours.dtype == ad.int64 and (ours.data == below.sum(-1)).all()
    side = ad.searchsorted(ad.tensor(b), ad.tensor(v), side="right" if right else "left")
    assert (side.data == ours.data).all()
    assert (ad.bucketize(ad.tensor(v[0]), ad.tensor(b[0]), right=right).data
            == below[0].sum(-1)).all()


def test_histc_counts_as_numpy_histogram():
    x = rng.standard_normal(200)
    counts, _ = np.histogram(x, bins=7, range=(-1.0, 1.5))
    ours = ad.histc(ad.tensor(x), bins=7, min=-1.0, max=1.5)
    assert ours.dtype == ad.float64 and (ours.data == counts).all()


def test_isin_and_searchsorted_give_no_gradient():
    x = ad.tensor([1.0, 2.0], requires_grad=True)
    assert not ad.isin(x, ad.tensor([2.0])).requires_grad
    assert not ad.searchsorted(x, x).requires_grad
    assert not x.histc(bins=3).requires_grad


def test_tril_and_triu_indices_read_the_triangles():
    m = np.arange(12.0).reshape(3, 4)
    for name, keep in (("tril_indices", np.tril), ("triu_indices", np.triu)):
        rows, cols = getattr(ad, name)(3, 4, 1, dtype=ad.int32).data
        assert rows.dtype == np.int32
        assert sorted(m[rows, cols]) == sorted(m[keep(np.ones((3, 4), bool), 1)])


@pytest.mark.parametrize("call", [
    lambda x: x.index_add_(0, ad.tensor([0]), ad.full((1, 2), 4.0)),
    lambda x: x.index_copy_(0, ad.tensor([0]), ad.full((1, 2), 5.0)),
    lambda x: x.index_fill_(0, ad.tensor([0]), 5.0),
    lambda x: x.index_put_((ad.tensor([0]),), ad.tensor(5.0)),
    lambda x: ad.index_put_(x, (ad.tensor([0]),), ad.tensor(5.0)),
])
def test_in_place_forms_refuse_a_leaf_that_requires_grad(call):
    x = ad.ones(2, 2, requires_grad=True)
    with pytest.raises(RuntimeError) as refused:
        x.add_(1)
    with pytest.raises(type(refused.value)):
        call(x)
    assert (x.data == 1.0).all(), "a refused write must leave x alone"
    with ad.no_grad():  # an update outside autograd, as an optimizer's
        call(x)
    assert x.data[0].tolist() == [5.0, 5.0] and x.data[1].tolist() == [1.0, 1.0]


def test_in_place_forms_write_into_the_tensor_and_bump_its_version():
    x = ad.zeros(3)
    before = x._version
    out = x.index_add_(0, ad.tensor([1, 1]), ad.tensor([2.0, 3.0]))
    assert out is x and x.data.tolist() == [0.0, 5.0, 0.0] and x._version > before
    x.index_copy_(0, ad.tensor([2]), ad.tensor([7.0])).index_fill_(0, ad.tensor([0]), -1)
    assert x.data.tolist() == [-1.0, 5.0, 7.0]


JVP_CASES = {  # name -> lambda over (lib, x); torch.func.jvp has no forward rule for cdist
    "index_put": lambda lib, x: x.index_put((lib.tensor([0, 0]),), x[1:] * 2, accumulate=True),
    "index_copy": lambda lib, x: x.index_copy(0, lib.tensor([2, 0]), x[:2] * 3),
    "index_add": lambda lib, x: x.index_add(1, lib.tensor([1, 1]), x, alpha=0.5),
    "take_along_dim": lambda lib, x: x.take_along_dim(lib.tensor([[1], [0], [1]]), 1),
    "kron": lambda lib, x: lib.kron(x, x[0]),
    "block_diag": lambda lib, x: lib.block_diag(x, x[0]),
    "meshgrid": lambda lib, x: lib.meshgrid(x[:, 0], x[0], indexing="xy")[0],
}


@pytest.mark.parametrize("name", list(JVP_CASES))
def test_forward_mode_matches_torch_func_jvp(name):
    """The compositions carry tangents through their parts' JVP rules."""
    x, t = rng.standard_normal((3, 2)), rng.standard_normal((3, 2))
    fn = JVP_CASES[name]
    out, tangent = ad.jvp(lambda a: fn(ad, a), (ad.tensor(x),), (ad.tensor(t),))
    out_t, tangent_t = torch.func.jvp(lambda a: fn(torch, a), (torch.tensor(x),),
                                      (torch.tensor(t),))
    assert_close(out, out_t, **FWD, what=f"{name} value")
    assert_close(tangent, tangent_t, **GRAD, what=f"{name} tangent")
