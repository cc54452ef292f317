"""What the op table cannot say about the dtype questions, the stacks and the
order statistics: dtype limits and promotion pairs against torch's, named
tuples, and the choices among ties."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

import chapters.autodiff as ad
from tests.chapters.autodiff.opdb import DTYPES, dtype_of

FLOATS = ("float16", "bfloat16", "float32", "float64")
INTS = ("uint8", "int8", "int16", "int32", "int64")


def _name(dtype) -> str:
    return str(dtype).removeprefix("torch.")


@pytest.mark.parametrize("name", FLOATS)
def test_finfo_matches_torch(name):
    ours, theirs = ad.finfo(dtype_of(ad, name)), torch.finfo(getattr(torch, name))
    for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution",
                  "dtype"):
        assert getattr(ours, field) == getattr(theirs, field), field
    assert ad.finfo().eps == torch.finfo().eps  # the default dtype's


@pytest.mark.parametrize("name", INTS)
def test_iinfo_matches_torch(name):
    ours, theirs = ad.iinfo(dtype_of(ad, name)), torch.iinfo(getattr(torch, name))
    assert (ours.bits, ours.min, ours.max, ours.dtype) == (
        theirs.bits, theirs.min, theirs.max, theirs.dtype)


@pytest.mark.parametrize(("make", "dtype"), [(lambda lib: lib.finfo, "int32"),
                                             (lambda lib: lib.iinfo, "float32"),
                                             (lambda lib: lib.iinfo, "bool")])
def test_info_of_the_wrong_kind_is_a_type_error_like_torch(make, dtype):
    with pytest.raises(TypeError):
        make(torch)(dtype_of(torch, dtype))
    with pytest.raises(TypeError, match="use torch"):
        make(ad)(dtype_of(ad, dtype))


def test_promote_types_and_can_cast_match_torch_for_every_pair():
    for a, b in itertools.product(DTYPES, DTYPES):
        ta, tb, ea, eb = (dtype_of(torch, a), dtype_of(torch, b), dtype_of(ad, a),
                          dtype_of(ad, b))
        assert ad.promote_types(ea, eb).name == _name(torch.promote_types(ta, tb)), (a, b)
        assert ad.can_cast(ea, eb) == torch.can_cast(ta, tb), (a, b)


def test_dtype_questions_refuse_numbers_like_torch():
    for fn in (lambda lib: lib.can_cast(1, lib.float32),
               lambda lib: lib.promote_types(lib.float32, 2.0)):
        with pytest.raises(TypeError):
            fn(torch)
        with pytest.raises(TypeError, match="dtype"):
            fn(ad)


@pytest.mark.parametrize(("a", "b"), [
    (np.arange(3), 2.5), (np.arange(3), True), (np.float64(1.0), np.arange(3, dtype=np.int32)),
    (np.ones(2, np.float16), 3), (np.ones(2, bool), 7), (2, 3.0)])
def test_result_type_with_numbers_and_0d_tensors_matches_torch(a, b):
    def operand(lib, v):
        return lib.tensor(v) if isinstance(v, np.ndarray | np.generic) else v

    assert (_name(ad.result_type(operand(ad, a), operand(ad, b)))
            == _name(torch.result_type(operand(torch, a), operand(torch, b))))


def test_default_dtype_is_float32_and_numel_needs_a_tensor():
    assert _name(ad.get_default_dtype()) == _name(torch.get_default_dtype()) == "float32"
    assert ad.is_tensor(ad.ones(2)) and not ad.is_tensor(np.ones(2))
    with pytest.raises(TypeError, match="torch.tensor"):
        ad.is_floating_point(np.ones(2))


def test_named_tuples_have_torchs_field_names():
    x = ad.tensor([[3.0, 1, 2], [0, 5, 4]])
    assert set(ad.aminmax(x)._fields) == {"min", "max"}
    for result in (x.median(1), x.kthvalue(1), x.mode(0)):
        values, indices = result
        assert result._fields == ("values", "indices")
        assert indices.dtype == ad.int64 and values is result.values
    assert isinstance(ad.atleast_1d(x, x), tuple) and isinstance(ad.atleast_2d([x]), tuple)


def test_mode_picks_the_smallest_most_frequent_value_at_its_last_position():
    rows = [[2.0, 2, 1, 1, 5, 5], [0, 4, 4, 0, 4, 0], [7, 3, 3, 7, 1, 1]]
    ours, theirs = ad.tensor(rows).mode(1), torch.tensor(rows).mode(1)
    np.testing.assert_array_equal(ours.values.numpy(), theirs.values.numpy())
    np.testing.assert_array_equal(ours.indices.numpy(), theirs.indices.numpy())


@pytest.mark.parametrize("op", [lambda x: x.median(1), lambda x: x.kthvalue(2, 1)])
def test_order_statistics_with_ties_name_an_equal_element_and_send_it_the_gradient(op):
    """torch's index among ties is not specified: any position holding the
    value is right, and the gradient goes to that position alone."""
    rows = [[3.0, 1, 3, 2], [1, 1, 2, 2], [4, 4, 4, 4]]
    x = ad.tensor(rows, requires_grad=True)
    values, indices = op(x)
    expected = op(torch.tensor(rows)).values.numpy()
    np.testing.assert_array_equal(values.detach().numpy(), expected)
    picked = np.take_along_axis(np.array(rows), indices.numpy()[:, None], 1)[:, 0]
    np.testing.assert_array_equal(picked, expected)
    values.sum().backward()
    grad = np.zeros((3, 4))
    grad[np.arange(3), indices.numpy()] = 1
    np.testing.assert_array_equal(x.grad.numpy(), grad)


def test_global_median_shares_its_gradient_among_ties_and_nans_like_torch():
    for values in ([1.0, 1, 2, 0], [1.0, np.nan, 2, np.nan], [5.0, 5, 5]):
        ours, theirs = ad.tensor(values, requires_grad=True), torch.tensor(
            values, requires_grad=True)
        ad.median(ours).backward()
        torch.median(theirs).backward()
        np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=0, atol=1e-12)


def test_median_of_a_slice_with_nan_is_that_nan_like_torch():
    rows = [[1.0, np.nan, 2, 0], [3, 1, 2, 0]]
    ours, theirs = ad.tensor(rows).median(1), torch.tensor(rows).median(1)
    np.testing.assert_array_equal(ours.values.numpy(), theirs.values.numpy())
    np.testing.assert_array_equal(ours.indices.numpy()[0], theirs.indices.numpy()[0])


def test_rot90_four_turns_and_its_inverse_give_the_input_back():
    x = ad.tensor(np.arange(24.0).reshape(2, 3, 4))
    np.testing.assert_array_equal(x.rot90(4, (1, 2)).numpy(), x.numpy())
    np.testing.assert_array_equal(x.rot90(1, (1, 2)).rot90(-1, (1, 2)).numpy(), x.numpy())
    np.testing.assert_array_equal(x.rot90(1, (1, 2)).numpy(), np.rot90(x.numpy(), 1, (1, 2)))


def test_logcumsumexp_forward_mode_and_second_derivative_match_torch():
    rng = np.random.default_rng(3)
    x, t, w = rng.standard_normal((3, 4)), rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    _, ours = ad.jvp(lambda a: a.logcumsumexp(1), (ad.tensor(x),), (ad.tensor(t),))
    _, theirs = torch.func.jvp(lambda a: torch.logcumsumexp(a, 1), (torch.tensor(x),),
                               (torch.tensor(t),))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-10, atol=1e-12)

    def second(lib, grad):
        a = lib.tensor(x, requires_grad=True)
        (g,) = grad((lib.logcumsumexp(a, 1) * lib.tensor(w)).sum(), a, create_graph=True)
        (gg,) = grad((g * g).sum(), a)
        return gg.detach().numpy()

    np.testing.assert_allclose(
        second(ad, lambda out, a, **kw: ad.grad(out, [a], **kw)),
        second(torch, lambda out, a, **kw: torch.autograd.grad(out, [a], **kw)),
        rtol=1e-9, atol=1e-10)
    assert ad.gradcheck(lambda a: a.logcumsumexp(0),
                        (ad.tensor(rng.standard_normal((4, 2)), requires_grad=True),))


def test_logcumsumexp_keeps_a_very_negative_prefix_and_its_gradient_finite():
    """One shift by the slice's max would give log 0 = -inf for the first
    value here; the running logaddexp keeps -1000, and the rule (sums in log
    space) gives torch's finite gradient."""
    values = np.array([-1000.0, 0.0, 500.0, -3.0])  # float64: float32 rounds 500 + (-500 + e)
    ours, theirs = ad.tensor(values, requires_grad=True), torch.tensor(values, requires_grad=True)
    out = ours.logcumsumexp(0)
    np.testing.assert_allclose(out.detach().numpy(),
                               torch.logcumsumexp(theirs, 0).detach().numpy(), rtol=1e-12)
    assert out.detach().numpy()[0] == -1000.0
    out.sum().backward()
    torch.logcumsumexp(theirs, 0).sum().backward()
    assert np.isfinite(ours.grad.numpy()).all()
    np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-9, atol=1e-300)
