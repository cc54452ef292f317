"""torch code run unchanged on the engine: values, dtypes, gradients and
exception types, class by class.

Each class of mistake (integer semantics, default dtypes, ops whose
derivative is zero, torch's indexing rule, loss targets, dim checking, 0-d
tensors, Python scalars, bools in min/max, integer pooling, exception types)
is covered by the example that revealed it and by more members of the same
class. Every case is ONE lambda ``fn(lib, F, *tensors)`` run on both engines
(:func:`.parity.check_both`: forward and gradient tolerances explicit, the
gradient against a random cotangent); error cases check that the engine's
exception is an instance of the class torch raises, so ``except`` clauses
written for torch catch ours.
"""

import numpy as np
import pytest
import torch
import torch.nn.functional as TF

import chapters.autodiff as ad
import chapters.autodiff.functional as F
from chapters.graph import ShapeError
from chapters.graph.ops import DimError
from chapters.torchcheck import to_torch

from .parity import FLOAT32, FLOAT64, check_both

rng = np.random.default_rng(20261203)

I32 = np.array([1, -8, 2**31 - 1, -(2**31)], dtype=np.int32)
I64 = np.array([5, -3, 0, 77], dtype=np.int64)
SHIFTS = np.array([1, 0, 3, 2], dtype=np.int64)
U8 = np.array([0, 3, 200, 255], dtype=np.uint8)
BOOLS = np.array([True, False, True, False])
BOOLS2 = np.array([True, True, False, False])


def normal(*shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def same_values(fn, arrays, tol=FLOAT32):
    """The lambda gives torch's values, dtypes and gradients."""
    check_both(fn, [np.asarray(a) for a in arrays], tol)


def same_error(fn, arrays=()):
    """The lambda raises on both engines, and the engine's exception is an
    instance of the class torch raised (``except TorchsType`` catches it)."""
    arrays = [np.asarray(a) for a in arrays]
    with pytest.raises(Exception) as from_torch:
        fn(torch, TF, *(to_torch(a) for a in arrays))
    with pytest.raises(Exception) as from_engine:
        fn(ad, F, *(ad.tensor(a) for a in arrays))
    assert isinstance(from_engine.value, type(from_torch.value)), (
        f"torch raises {type(from_torch.value).__name__}, the engine "
        f"{type(from_engine.value).__mro__}: {from_engine.value}")
    return from_engine.value


def cases(table: dict):
    return pytest.mark.parametrize("fn, arrays", list(table.values()), ids=list(table))


# ------------------------------------------------- integer semantics: bits

BITWISE = {
    # the examples: & and | on integers are bitwise, not logical
    "and_int32_scalar": (lambda lib, F, a: a & 0x1337, [I32]),
    "or_int64": (lambda lib, F, a, b: a | b, [I64, SHIFTS]),
    # more members of the class
    "xor_int32": (lambda lib, F, a: a ^ 0x0F0F, [I32]),
    "invert_int32": (lambda lib, F, a: ~a, [I32]),
    "lshift": (lambda lib, F, a, b: a << b, [I64, SHIFTS]),
    "rshift_negative": (lambda lib, F, a: a >> 2, [I64]),
    "rshift_reflected": (lambda lib, F, a: 1024 >> a, [SHIFTS]),
    "and_reflected": (lambda lib, F, a: 6 & a, [I64]),
    "shift_out_of_range": (lambda lib, F, a: a << lib.tensor([-1, 64, 70, 3]), [I64]),
    "rshift_out_of_range": (lambda lib, F, a: a >> lib.tensor([64, 70, -1, 1]), [I64]),
    "int32_rshift_past_width": (lambda lib, F, a: a >> 40, [I32]),
    "uint8_xor_negative_scalar": (lambda lib, F, a: a ^ -1, [U8]),
    "uint8_lshift_wraps": (lambda lib, F, a: a << 1, [U8]),
    "bool_and_is_logical": (lambda lib, F, a, b: a & b, [BOOLS, BOOLS2]),
    "bool_or_is_logical": (lambda lib, F, a, b: a | b, [BOOLS, BOOLS2]),
    "bool_xor_is_logical": (lambda lib, F, a, b: a ^ b, [BOOLS, BOOLS2]),
    "bool_invert_is_logical_not": (lambda lib, F, a: ~a, [BOOLS]),
    "bool_and_int_promotes": (lambda lib, F, a: a & 3, [BOOLS]),
    "bool_lshift_int_promotes": (lambda lib, F, a: a << 1, [BOOLS]),
    "int32_and_int64_promotes": (lambda lib, F, a, b: a & b, [I32, I64]),
    "zero_dim_int64_with_int32": (lambda lib, F, a: a & lib.tensor(3), [I32]),
    "functions": (lambda lib, F, a, b: (lib.bitwise_and(a, b), lib.bitwise_or(a, 1),
                                        lib.bitwise_xor(a, b), lib.bitwise_not(a),
                                        lib.bitwise_left_shift(a, b),
                                        lib.bitwise_right_shift(a, b)), [I64, SHIFTS]),
    "methods": (lambda lib, F, a, b: (a.bitwise_and(b), a.bitwise_not(), a.bitwise_xor(3)),
                [I64, SHIFTS]),
    # integer arithmetic that must stay exact
    "sum_int32_is_int64": (lambda lib, F, a: a.sum(), [I32]),
    "sum_int32_dim_is_int64": (lambda lib, F, a: a.reshape(2, 2).sum(1), [I32]),
    "uint8_plus_negative_scalar_wraps": (lambda lib, F, a: a + (-1), [U8]),
}


@cases(BITWISE)
def test_integer_ops_are_bitwise_as_torch(fn, arrays):
    same_values(fn, arrays)


BITWISE_ERRORS = {
    "and_float": lambda lib, F, x: x & 1,
    "xor_float_bool": lambda lib, F, x: x ^ lib.tensor([True, False, True]),
    "and_float_scalar": lambda lib, F, x: x.long() & 2.5,
    "invert_float": lambda lib, F, x: ~x,
    "rshift_float": lambda lib, F, x: x >> 1,
    "lshift_bool_bool": lambda lib, F, x: (x > 0) << (x > 0),
    "int_to_negative_power": lambda lib, F, x: lib.tensor([2, 3]) ** -2,
}


@pytest.mark.parametrize("fn", list(BITWISE_ERRORS.values()), ids=list(BITWISE_ERRORS))
def test_integer_only_ops_refuse_what_torch_refuses(fn):
    same_error(fn, [normal(3)])


# ------------------------------------------------------- default dtypes


ARANGE = {
    "float_bounds_issue_example": lambda lib, F: lib.arange(5.5, 10.5, 2.5),
    "float_step": lambda lib, F: lib.arange(0, 5, 0.5),
    "float_start": lambda lib, F: lib.arange(1.0, 4),
    "int_bounds": lambda lib, F: lib.arange(5),
    "int_bounds_negative_step": lambda lib, F: lib.arange(10, 2, -3),
    "explicit_dtype": lambda lib, F: lib.arange(1, 4, dtype=lib.float64),
    "explicit_int32": lambda lib, F: lib.arange(0.0, 4.0, dtype=lib.int32),
}


@pytest.mark.parametrize("fn", list(ARANGE.values()), ids=list(ARANGE))
def test_arange_takes_torchs_default_dtype(fn):
    same_values(fn, [])


LINSPACE = {
    "seven_steps": lambda lib, F: lib.linspace(0, 1, 7),
    "negative_to_positive": lambda lib, F: lib.linspace(-1, 1, 4),
    "decreasing": lambda lib, F: lib.linspace(3.5, -2.25, 10),
    "one_step": lambda lib, F: lib.linspace(2, 5, 1),
    "no_steps": lambda lib, F: lib.linspace(0, 1, 0),
    "tensor_bounds": lambda lib, F: lib.linspace(lib.tensor(0.5), lib.tensor(2.0), 5),
    "float64": lambda lib, F: lib.linspace(0, 1, 11, dtype=lib.float64),
    "int64_truncates": lambda lib, F: lib.linspace(0, 10, 5, dtype=lib.int64),
    "float16": lambda lib, F: lib.linspace(-3, 3, 9, dtype=lib.float16),
    "logspace": lambda lib, F: lib.logspace(0, 2, 5),
    "logspace_base_2": lambda lib, F: lib.logspace(-1, 3, 5, base=2, dtype=lib.float64),
}


@pytest.mark.parametrize("fn", list(LINSPACE.values()), ids=list(LINSPACE))
def test_linspace_and_logspace_give_torchs_values_and_dtypes(fn):
    same_values(fn, [])


def test_linspace_refuses_negative_steps_as_torch():
    same_error(lambda lib, F: lib.linspace(0, 1, -1))


# ------------------------------------------- integer and bool min / max

MIN_MAX = {
    "int32_min_issue_example": (lambda lib, F, a: a.min(), [I32]),
    "int32_max": (lambda lib, F, a: a.max(), [I32]),
    "int32_amin": (lambda lib, F, a: a.amin(), [I32]),
    "int32_min_dim": (lambda lib, F, a: a.min(0), [I32]),
    "int32_amin_dim": (lambda lib, F, a: lib.amin(a.reshape(2, 2), 1), [I32]),
    "uint8_min": (lambda lib, F, a: a.min(), [U8]),
    "bool_min_issue_example": (lambda lib, F, a: a.min(), [BOOLS]),
    "bool_max": (lambda lib, F, a: a.max(), [BOOLS]),
    "bool_min_dim": (lambda lib, F, a: a.reshape(2, 2).min(1), [BOOLS]),
    "bool_amax_dim": (lambda lib, F, a: a.reshape(2, 2).amax(0), [BOOLS]),
    "float_min_gradient": (lambda lib, F, x: x.min(), [np.array([3.0, -1.0, -1.0, 2.0],
                                                               dtype=np.float32)]),
    "float_amin_dim_gradient": (lambda lib, F, x: x.amin(1), [normal(3, 4)]),
}


@cases(MIN_MAX)
def test_min_and_max_of_integers_and_bools(fn, arrays):
    same_values(fn, arrays)


def test_argmax_of_bools_is_refused_as_in_torch():
    same_error(lambda lib, F, x: (x > 0).argmax(0), [normal(3)])


def test_min_of_floats_has_torchs_grad_fn():
    x = ad.tensor([1.0, 2.0], requires_grad=True)
    assert x.min().grad_fn.name == torch.tensor([1.0], requires_grad=True).min().grad_fn.name()


# ----------------------------------- ops whose derivative is zero record history

ZERO_DERIVATIVE = {
    "sign_issue_example": (lambda lib, F, x: x.sign().sum(), [normal(5)]),
    "sign_in_a_product": (lambda lib, F, x: x.sign() * x * x, [normal(2, 3)]),
    "sign_function": (lambda lib, F, x: lib.sign(x) + x, [normal(4)]),
    "sign_of_nan_is_zero": (lambda lib, F, x: x.sign(),
                            [np.array([np.nan, 2.0, -3.0, 0.0], dtype=np.float32)]),
    "sign_of_ints": (lambda lib, F, a: a.sign(), [I64]),
    "sign_of_bools": (lambda lib, F, a: a.sign(), [BOOLS]),
    "clamp_outside_the_bounds": (lambda lib, F, x: x.clamp(min=10.0), [normal(4)]),
    "relu_of_negatives": (lambda lib, F, x: (-(x * x) - 1).relu(), [normal(4)]),
}


@cases(ZERO_DERIVATIVE)
def test_zero_derivative_ops_give_zero_gradients(fn, arrays):
    same_values(fn, arrays)


def test_sign_records_torchs_grad_fn_and_gives_zeros_in_both_modes():
    x = ad.tensor([1.5, -2.0, 0.0], requires_grad=True)
    y = x.sign()
    assert y.grad_fn.name == torch.tensor([1.0], requires_grad=True).sign().grad_fn.name()
    (g,) = ad.grad(y.sum(), x)
    np.testing.assert_array_equal(g.data, np.zeros(3, np.float32))
    _, tangent = ad.jvp(lambda t: t.sign(), (x.detach(),), (ad.ones(3),))
    np.testing.assert_array_equal(tangent.data, np.zeros(3, np.float32))


def test_sign_passes_gradcheck():
    x = ad.tensor(np.array([0.7, -1.3, 2.1]), requires_grad=True)
    assert ad.gradcheck(lambda t: t.sign() * t, (x,))


# ------------------------------------------------ torch's indexing rule

INDEXING = {
    "int_slice_list_issue_example": (lambda lib, F, x: x[0, :, [1, 2]], [normal(2, 3, 4)]),
    "list_slice_int": (lambda lib, F, x: x[[0, 1], :, 1], [normal(2, 3, 4)]),
    "int_slice_two_lists": (lambda lib, F, x: x[0, :, [1, 2], [0, 1]], [normal(2, 3, 4, 5)]),
    "slice_int_slice_list": (lambda lib, F, x: x[:, 0, :, [1, 2]], [normal(2, 3, 4, 5)]),
    "ellipsis_int_list": (lambda lib, F, x: x[..., 0, [1, 2]], [normal(2, 3, 4)]),
    "none_int_slice_list": (lambda lib, F, x: x[None, 0, :, [1, 2]], [normal(2, 3, 4)]),
    "int_slice_repeated_list": (lambda lib, F, x: x[1, :, [2, 2, 0]], [normal(2, 3, 4)]),
    "int_slice_mask": (lambda lib, F, x: x[0, :, lib.tensor([True, False, True, True])],
                       [normal(2, 3, 4)]),
    "adjacent_int_and_list": (lambda lib, F, x: x[0, [1, 2]], [normal(2, 3, 4)]),
}


@cases(INDEXING)
def test_mixed_advanced_indexing_follows_torch(fn, arrays):
    same_values(fn, arrays)


def test_mixed_index_assignment_follows_torch():
    def assign(lib, F, x):
        y = x.detach().clone()
        y[0, :, [1, 2]] = lib.tensor([[1.0, 2.0]] * 3)
        return y

    same_values(assign, [normal(2, 3, 4)])


def test_mixed_indexing_passes_gradcheck():
    x = ad.tensor(rng.standard_normal((2, 3, 4)), requires_grad=True)
    assert ad.gradcheck(lambda t: t[1, :, [0, 3, 3]], (x,))


# ----------------------------------------------- cross_entropy and nll_loss

LOSSES = {
    "cross_entropy_unbatched_issue_example": (
        lambda lib, F, x: F.cross_entropy(x, lib.tensor(1)), [normal(3)]),
    "cross_entropy_unbatched_probabilities": (
        lambda lib, F, x, p: F.cross_entropy(x, p), [normal(4), np.array([.1, .2, .3, .4],
                                                                       dtype=np.float32)]),
    "cross_entropy_unbatched_none": (
        lambda lib, F, x: F.cross_entropy(x, lib.tensor(2), reduction="none"), [normal(3)]),
    "cross_entropy_unbatched_label_smoothing": (
        lambda lib, F, x: F.cross_entropy(x, lib.tensor(0), label_smoothing=0.2), [normal(5)]),
    "nll_loss_unbatched": (lambda lib, F, x: F.nll_loss(x.log_softmax(0), lib.tensor(2)),
                           [normal(3)]),
    "cross_entropy_batched_still": (
        lambda lib, F, x: F.cross_entropy(x, lib.tensor([0, 2, 1, 1])), [normal(4, 3)]),
}


@cases(LOSSES)
def test_losses_accept_what_torch_accepts(fn, arrays):
    same_values(fn, arrays)


LOSS_ERRORS = {
    "float_target_of_another_shape_issue_example":
        lambda lib, F, x: F.cross_entropy(x, lib.ones(4, 1)),
    "float_target_other_width": lambda lib, F, x: F.cross_entropy(x, lib.ones(4, 2)),
    "index_target_with_extra_dim":
        lambda lib, F, x: F.cross_entropy(x, lib.zeros(4, 1, dtype=lib.int64)),
    "index_target_batch_mismatch":
        lambda lib, F, x: F.cross_entropy(x, lib.zeros(3, dtype=lib.int64)),
    "nll_loss_float_target": lambda lib, F, x: F.nll_loss(x, lib.ones(4)),
    "cat_of_nothing": lambda lib, F, x: lib.cat([]),
}


@pytest.mark.parametrize("fn", list(LOSS_ERRORS.values()), ids=list(LOSS_ERRORS))
def test_losses_refuse_bad_targets_as_torch(fn):
    same_error(fn, [normal(4, 3)])


def test_unbatched_cross_entropy_passes_gradcheck():
    x = ad.tensor(rng.standard_normal(4), requires_grad=True)
    assert ad.gradcheck(lambda t: F.cross_entropy(t, ad.tensor(3)), (x,))


# --------------------------------------------------------- dim checking

DIM_ERRORS = {
    "squeeze_issue_example": lambda lib, F, x: x.squeeze(5),
    "squeeze_tuple": lambda lib, F, x: x.squeeze((0, -4)),
    "unsqueeze": lambda lib, F, x: x.unsqueeze(4),
    "unsqueeze_negative": lambda lib, F, x: x.unsqueeze(-5),
    "flatten": lambda lib, F, x: x.flatten(0, 3),
    "transpose": lambda lib, F, x: x.transpose(0, 5),
    "permute": lambda lib, F, x: x.permute(0, 1, 7),
    "sum": lambda lib, F, x: x.sum(4),
    "mean_negative": lambda lib, F, x: x.mean(-4),
    "amax": lambda lib, F, x: x.amax(3),
    "softmax": lambda lib, F, x: x.softmax(3),
    "log_softmax": lambda lib, F, x: F.log_softmax(x, -4),
    "logsumexp": lambda lib, F, x: x.logsumexp(3),
    "argmax": lambda lib, F, x: x.argmax(5),
    "max_dim": lambda lib, F, x: x.max(5),
    "min_dim": lambda lib, F, x: x.min(-4),
    "stack_issue_example": lambda lib, F, x: lib.stack([x, x], dim=77),
    "cat": lambda lib, F, x: lib.cat([x, x], dim=3),
    "size": lambda lib, F, x: x.size(3),
}


@pytest.mark.parametrize("fn", list(DIM_ERRORS.values()), ids=list(DIM_ERRORS))
def test_a_dim_out_of_range_is_an_index_error(fn):
    err = same_error(fn, [normal(2, 1, 3)])
    assert isinstance(err, DimError) and isinstance(err, IndexError)
    assert "out of range" in str(err)


# ------------------------------------------------------------- 0-d tensors

SCALAR = np.float32(1.5)

ZERO_DIM = {
    "sum_dim0_issue_example": lambda lib, F, x: x.sum(0),
    "logsumexp_issue_example": lambda lib, F, x: x.logsumexp(-1),
    "softmax_dim0_backward_issue_example": lambda lib, F, x: x.softmax(0),
    "log_softmax": lambda lib, F, x: F.log_softmax(x, -1),
    "sum_keepdim": lambda lib, F, x: x.sum(-1, keepdim=True),
    "mean": lambda lib, F, x: x.mean(0),
    "amax": lambda lib, F, x: x.amax(0),
    "amin": lambda lib, F, x: x.amin(-1),
    "max_dim": lambda lib, F, x: x.max(0),
    "min_dim": lambda lib, F, x: x.min(-1),
    "argmax": lambda lib, F, x: x.argmax(0),
    "squeeze": lambda lib, F, x: x.squeeze(0),
    "unsqueeze": lambda lib, F, x: x.unsqueeze(-1),
    "transpose": lambda lib, F, x: x.transpose(0, -1),
    "flatten": lambda lib, F, x: x.flatten(),
    "stack": lambda lib, F, x: lib.stack([x, x * 2], -1),
    "softmax_in_a_chain": lambda lib, F, x: (x * 3).softmax(-1) * x,
}


@pytest.mark.parametrize("fn", list(ZERO_DIM.values()), ids=list(ZERO_DIM))
def test_zero_dim_tensors_accept_dim_0_and_minus_1(fn):
    same_values(fn, [SCALAR])


ZERO_DIM_ERRORS = {
    "sum_dim1": lambda lib, F, x: x.sum(1),
    "softmax_dim_minus2": lambda lib, F, x: x.softmax(-2),
    "cat_of_0d": lambda lib, F, x: lib.cat([x, x]),
    "matmul_of_0d_issue_example": lambda lib, F, x: x @ x,
}


@pytest.mark.parametrize("fn", list(ZERO_DIM_ERRORS.values()), ids=list(ZERO_DIM_ERRORS))
def test_zero_dim_tensors_refuse_what_torch_refuses(fn):
    same_error(fn, [SCALAR])


def test_zero_dim_softmax_passes_gradcheck():
    x = ad.tensor(np.float64(0.3), requires_grad=True)
    assert ad.gradcheck(lambda t: t.softmax(0) * t + t.logsumexp(-1), (x,))


# ---------------------------------------------------------- Python scalars

COND = np.array([True, False, True])

SCALARS = {
    "where_two_ints_issue_example": (lambda lib, F, c: lib.where(c, 4, 2), [COND]),
    "where_float_and_int": (lambda lib, F, c: lib.where(c, 4.0, 2), [COND]),
    "where_int_tensor_float_scalar": (
        lambda lib, F, c: lib.where(c, lib.tensor([1, 2, 3]), 2.5), [COND]),
    "where_half_tensor_float_scalar": (
        lambda lib, F, c: lib.where(c, lib.tensor([1.0, 2.0, 3.0], dtype=lib.float16), 2.5),
        [COND]),
    "where_scalar_first_gradient": (lambda lib, F, c, x: lib.where(c, 0.5, x),
                                    [COND, normal(3)]),
    "where_0d_float64_with_float32": (
        lambda lib, F, c, x: lib.where(c, x, lib.tensor(1.0, dtype=lib.float64)),
        [COND, normal(3)]),
    "bool_plus_int": (lambda lib, F, c: c + 1, [COND]),
    "int32_times_float": (lambda lib, F, a: a * 2.5, [I32[:2]]),
    "int_to_float_power": (lambda lib, F, a: a.abs() ** 0.5, [I64]),
    "int_base_reflected_power": (lambda lib, F, a: 2 ** a, [SHIFTS]),
    "float_base_reflected_power": (lambda lib, F, a: 2.5 ** a, [SHIFTS]),
    "int_clamped_at_a_float": (lambda lib, F, a: a.clamp(min=2.5), [I64]),
    "clamp_at_a_tensor_bound": (lambda lib, F, x: x.clamp(max=lib.tensor(0.25)), [normal(5)]),
}


@cases(SCALARS)
def test_python_scalars_promote_as_torch(fn, arrays):
    same_values(fn, arrays)


def test_where_needs_a_bool_condition_as_torch():
    same_error(lambda lib, F, x: lib.where(x.long(), 1.0, 2.0), [normal(3)])


# --------------------------------------------------------- integer pooling

POOLING = {
    "max_pool2d_int64_padding_issue_example": (
        lambda lib, F, a: F.max_pool2d(a, 2, padding=1), [np.arange(16).reshape(1, 1, 4, 4)]),
    "max_pool2d_int32_negative_padding": (
        lambda lib, F, a: F.max_pool2d(-a, 3, stride=2, padding=1),
        [np.arange(25, dtype=np.int32).reshape(1, 1, 5, 5)]),
    "max_pool2d_float_padding_gradient": (
        lambda lib, F, x: F.max_pool2d(x, 2, padding=1), [normal(2, 3, 4, 4)]),
    "avg_pool2d_int64_padding": (
        lambda lib, F, a: F.avg_pool2d(a, 2, padding=1), [np.arange(16).reshape(1, 1, 4, 4)]),
}


@cases(POOLING)
def test_pooling_integers_with_padding(fn, arrays):
    same_values(fn, arrays)


# ----------------------------------------------------------- exception types

RUNTIME_ERRORS = {
    # the list
    "permute_repeated_dim": lambda lib, F, x: x.permute(0, 0, 1),
    "permute_too_few_dims": lambda lib, F, x: x.permute(0, 1),
    "reshape": lambda lib, F, x: x.reshape(5),
    "reduction_repeated_dim": lambda lib, F, x: x.sum((0, 0)),
    "conv2d_input_smaller_than_kernel":
        lambda lib, F, x: F.conv2d(x.reshape(1, 1, 2, 3), lib.ones(1, 1, 3, 3)),
    "clamp_without_bounds": lambda lib, F, x: x.clamp(),
    "integer_to_negative_power": lambda lib, F, x: x.long() ** -2,
    "matmul_0d": lambda lib, F, x: x.sum() @ x.sum(),
    # more members
    "broadcast": lambda lib, F, x: x + lib.ones(4),
    "matmul_shapes": lambda lib, F, x: x.reshape(2, 3) @ lib.ones(2, 3),
    "matmul_dtypes": lambda lib, F, x: x.reshape(2, 3) @ lib.ones(3, 2, dtype=lib.float64),
    "view": lambda lib, F, x: x.view(4),
    "expand": lambda lib, F, x: x.reshape(2, 3).expand(4, 3),
    "cat_sizes": lambda lib, F, x: lib.cat([x.reshape(2, 3), lib.ones(2, 4)]),
    "linear_shapes": lambda lib, F, x: F.linear(x.reshape(2, 3), lib.ones(4, 5)),
    "negate_bool": lambda lib, F, x: -(x > 0),
    "subtract_bools": lambda lib, F, x: (x > 0) - (x < 0),
    "embedding_float_indices": lambda lib, F, x: F.embedding(x, lib.ones(3, 2)),
    "layer_norm_shape": lambda lib, F, x: F.layer_norm(x.reshape(2, 3), (4,)),
    "flatten_start_after_end": lambda lib, F, x: x.reshape(2, 3).flatten(1, 0),
}


@pytest.mark.parametrize("fn", list(RUNTIME_ERRORS.values()), ids=list(RUNTIME_ERRORS))
def test_errors_are_torchs_exception_types(fn):
    err = same_error(fn, [normal(2, 1, 3)])
    assert isinstance(err, RuntimeError)


def test_shape_errors_are_runtime_errors_with_our_message():
    with pytest.raises(RuntimeError) as caught:
        ad.ones(2, 3) + ad.ones(4)
    assert isinstance(caught.value, ShapeError)
    assert "cannot be broadcast" in str(caught.value)
    assert issubclass(DimError, ShapeError) and issubclass(DimError, IndexError)


def test_gradients_flow_through_the_fixed_ops_in_float64():
    """The ops changed here keep torch's gradients in float64 too."""
    x = normal(3, 4, dtype=np.float64)
    check_both(lambda lib, F, t: t.amin(1) + t[:, 0].sign() * t.sum(1).logsumexp(0), [x],
               FLOAT64)


def test_nn_flatten_checks_its_dims_as_torch():
    same_values(lambda lib, F, x: lib.nn.Flatten()(x), [normal(2, 3, 4)])
    same_error(lambda lib, F, x: lib.nn.Flatten()(x), [normal(3)])


# ---------------------- more members found while fixing the classes above

MORE = {
    # unbatched inputs, as for cross_entropy: one image (C, H, W)
    "conv2d_unbatched": (lambda lib, F, x, w: F.conv2d(x, w, padding=1),
                         [normal(2, 5, 5), normal(3, 2, 3, 3)]),
    "max_pool2d_unbatched": (lambda lib, F, x: F.max_pool2d(x, 2), [normal(3, 4, 4)]),
    "avg_pool2d_unbatched": (lambda lib, F, x: F.avg_pool2d(x, 2, padding=1), [normal(3, 4, 4)]),
    # integer inputs of floating reductions
    "logsumexp_of_ints_is_float32": (lambda lib, F, a: a.logsumexp(0), [I64]),
}


@cases(MORE)
def test_more_members_match_torch(fn, arrays):
    same_values(fn, arrays)


MORE_ERRORS = {
    "var_of_ints": lambda lib, F, x: x.long().var(),
    "log_softmax_of_ints": lambda lib, F, x: F.log_softmax(x.long(), 0),
    "gelu_approximate": lambda lib, F, x: F.gelu(x, approximate="erf"),
    "batch_norm_eval_without_statistics":
        lambda lib, F, x: F.batch_norm(x.reshape(2, 3), None, None, training=False),
    "stack_of_nothing": lambda lib, F, x: lib.stack([]),
    "stack_sizes": lambda lib, F, x: lib.stack([x, x[:3]]),
    "embedding_weight_not_2d": lambda lib, F, x: F.embedding(lib.tensor([0, 1]), x),
    "conv2d_2d_input": lambda lib, F, x: F.conv2d(x.reshape(2, 3), lib.ones(1, 1, 1, 1)),
}


@pytest.mark.parametrize("fn", list(MORE_ERRORS.values()), ids=list(MORE_ERRORS))
def test_more_errors_are_torchs_types(fn):
    same_error(fn, [normal(6)])


def test_jvp_with_a_mismatched_tangent_is_a_runtime_error():
    with pytest.raises(RuntimeError, match="does not match its primal"):
        ad.jvp(lambda t: t * 2, (ad.ones(2),), (ad.ones(3),))
    with pytest.raises(RuntimeError):
        torch.func.jvp(lambda t: t * 2, (torch.ones(2),), (torch.ones(3),))


INTEGER_POWERS = {
    "int_tensor_to_negative_int_tensor": (lambda lib, F, a, b: a ** (-b), [I64, SHIFTS]),
    "int_scalar_base_negative_exponents": (lambda lib, F, b: 2 ** (-b), [SHIFTS]),
    "plus_and_minus_one_to_negative_powers": (
        lambda lib, F, a, b: a ** b, [np.array([1, -1, -1, 3]), np.array([-3, -3, -2, -1])]),
    "int_to_0d_negative_float": (lambda lib, F, a: a ** lib.tensor(-1.0), [I64 + 1]),
}


@cases(INTEGER_POWERS)
def test_integer_powers_as_torch(fn, arrays):
    same_values(fn, arrays)


EMPTY = {
    "max_of_empty": lambda lib, F, x: x.max(),
    "min_of_empty": lambda lib, F, x: x.min(),
    "amax_over_an_empty_dim": lambda lib, F, x: x.amax(0),
    "max_over_an_empty_dim": lambda lib, F, x: x.max(0),
    "argmax_of_empty": lambda lib, F, x: x.argmax(),
    "argmin_over_an_empty_dim": lambda lib, F, x: x.argmin(0),
}


@pytest.mark.parametrize("fn", list(EMPTY.values()), ids=list(EMPTY))
def test_extrema_of_nothing_raise_torchs_types(fn):
    same_error(fn, [np.zeros((0, 3), np.float32)])


EMPTY_OK = {
    "amax_over_a_full_dim": lambda lib, F, x: x.amax(1),
    "logsumexp_of_nothing": lambda lib, F, x: x.logsumexp(0),
    "softmax_over_an_empty_dim": lambda lib, F, x: x.t().softmax(1),
    "sum_of_nothing": lambda lib, F, x: x.sum(0),
}


@pytest.mark.parametrize("fn", list(EMPTY_OK.values()), ids=list(EMPTY_OK))
def test_empty_tensors_reduce_as_torch(fn):
    same_values(fn, [np.zeros((0, 3), np.float32)])


LAYER_ERRORS = {
    "conv2d_bias_shape":
        lambda lib, F, x: F.conv2d(x.reshape(1, 1, 2, 3), lib.ones(2, 1, 1, 1), lib.ones(3)),
    "max_pool2d_zero_stride": lambda lib, F, x: F.max_pool2d(x.reshape(1, 1, 2, 3), 1, stride=0),
    "layer_norm_of_ints": lambda lib, F, x: F.layer_norm(x.long(), (6,)),
    "mse_loss_shapes_that_do_not_fit": lambda lib, F, x: F.mse_loss(x, lib.ones(5)),
}


@pytest.mark.parametrize("fn", list(LAYER_ERRORS.values()), ids=list(LAYER_ERRORS))
def test_layer_errors_are_torchs_types(fn):
    same_error(fn, [normal(6)])


def random_index(pick: np.random.Generator, shape: tuple) -> tuple:
    """A random torch index for ``shape``: integers, slices, lists, masks,
    None and at most one Ellipsis, in any order."""
    parts, dim, ellipsis = [], 0, False
    for _ in range(pick.integers(1, 5)):
        if dim >= len(shape):
            break
        size = shape[dim]
        kind = pick.integers(8)
        if kind == 5 and not ellipsis:
            parts.append(Ellipsis)
            ellipsis = True
            continue
        if kind == 4:
            parts.append(None)
            continue
        parts.append([int(pick.integers(size)), 0] if kind == 3 else
                     [[0], [size - 1]] if kind == 6 else
                     np.arange(size) == pick.integers(size) if kind == 7 else
                     slice(1, None) if kind == 2 else
                     slice(None) if kind in (1, 5) else int(pick.integers(size)))
        dim += 1
    return tuple(parts)


def test_random_mixed_indices_match_torch():
    """400 random indices: the engine reads the same elements as torch, in
    the same shape, or both refuse the index."""
    pick = np.random.default_rng(7)
    x = np.arange(120, dtype=np.float32).reshape(2, 3, 4, 5)
    for _ in range(400):
        index = random_index(pick, x.shape)
        as_tensors = [(lib, tuple(lib.tensor(p) if isinstance(p, list | np.ndarray) else p
                                  for p in index)) for lib in (torch, ad)]
        try:
            expected = torch.from_numpy(x)[as_tensors[0][1]]
        except IndexError:
            with pytest.raises(IndexError):
                ad.tensor(x)[as_tensors[1][1]]
            continue
        got = ad.tensor(x)[as_tensors[1][1]]
        assert tuple(got.shape) == tuple(expected.shape), index
        np.testing.assert_array_equal(got.data, expected.numpy(), err_msg=str(index))
