"""Bad input gets a clear error (compared with torch where both raise)."""

import numpy as np
import pytest
import torch

import chapters.autodiff as ad
import chapters.autodiff.functional as F
from chapters.graph import ShapeError

LIBS = pytest.mark.parametrize("lib", [ad, torch], ids=["engine", "torch"])


@LIBS
def test_non_scalar_backward_needs_a_gradient(lib):
    y = lib.ones(3, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="only.*scalar outputs"):
        y.backward()


@LIBS
def test_backward_on_a_tensor_that_does_not_require_grad(lib):
    with pytest.raises(RuntimeError, match="does not require grad"):
        lib.ones(3).sum().backward()


@LIBS
def test_integer_tensors_cannot_require_grad(lib):
    with pytest.raises(RuntimeError, match="floating point"):
        lib.tensor([1, 2, 3], requires_grad=True)


@LIBS
def test_in_place_on_a_leaf_that_requires_grad(lib):
    x = lib.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf"):
        x.add_(1)


def test_shape_mismatch_names_op_and_shapes():
    with pytest.raises(ShapeError, match=r"add: shapes \(3, 4\) and \(2, 4\)"):
        ad.ones(3, 4) + ad.ones(2, 4)
    with pytest.raises(RuntimeError):
        torch.ones(3, 4) + torch.ones(2, 4)
    with pytest.raises(ShapeError, match="matmul.*last dimension"):
        ad.ones(3, 4) @ ad.ones(3, 4)
    with pytest.raises(ShapeError, match="linear.*in_features"):
        F.linear(ad.ones(2, 3), ad.ones(4, 5))
    with pytest.raises(ShapeError, match="conv2d.*in_channels"):
        F.conv2d(ad.ones(1, 3, 5, 5), ad.ones(2, 4, 3, 3))


def test_dtype_mismatch_in_matmul_names_both_dtypes():
    with pytest.raises(RuntimeError, match="float32.*float64"):
        ad.ones(2, 2) @ ad.ones(2, 2).double()
    with pytest.raises(RuntimeError):
        torch.ones(2, 2) @ torch.ones(2, 2).double()


def test_gradient_of_the_wrong_shape():
    y = ad.ones(3, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="gradient has shape"):
        y.backward(ad.ones(4))


def test_cross_entropy_needs_integer_targets_in_range():
    with pytest.raises(IndexError, match=r"target values must be in \[0, 2\]"):
        F.cross_entropy(ad.ones(2, 3), ad.tensor([0, 3]))
    with pytest.raises(ValueError, match="batch size 2 does not match the target's 3"):
        F.nll_loss(ad.ones(2, 3), ad.tensor([0, 1, 2]))
    with pytest.raises(ValueError):
        torch.nn.functional.nll_loss(torch.ones(2, 3), torch.tensor([0, 1, 2]))


def test_layer_norm_checks_its_parameters():
    with pytest.raises(RuntimeError, match=r"weight of shape \[4\] must have the normalized_sha"):
        F.layer_norm(ad.ones(2, 3), (3,), ad.ones(4))
    with pytest.raises(RuntimeError):
        torch.nn.functional.layer_norm(torch.ones(2, 3), (3,), torch.ones(4))


def test_mse_loss_refuses_silent_broadcasting():
    with pytest.raises(RuntimeError, match="broadcasting"):
        F.mse_loss(ad.ones(4, 1), ad.ones(4))


def test_unknown_derivative_is_reported_at_forward_time():
    from chapters.graph.ops import REGISTRY, register_op

    name = "double_for_test"
    if name not in REGISTRY:
        register_op(name, lambda x: x)(lambda x: x * 2)
    from chapters.autodiff.tensor import apply

    with pytest.raises(NotImplementedError, match="derivative for 'double_for_test'"):
        apply(name, (ad.ones(2, requires_grad=True),))
    assert np.array_equal(apply(name, (ad.ones(2),)).numpy(), [2, 2])


def test_item_needs_one_element():
    with pytest.raises(RuntimeError, match="cannot be converted"):
        ad.ones(2).item()
