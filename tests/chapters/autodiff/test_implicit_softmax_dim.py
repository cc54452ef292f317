"""softmax, softmin and log_softmax without ``dim``, as functions and as modules:
torch's deprecated implicit dim (0 for 0-, 1- and 3-D inputs, else 1), torch's
warning pointing at the caller's line, and the same values and gradients."""

import warnings

import numpy as np
import pytest
import torch

import chapters.autodiff as ad
from chapters.torchcheck import assert_close

SHAPES = [(), (5,), (3, 4), (2, 3, 4), (2, 3, 2, 2)]
CALLS = {
    "F.softmax": lambda lib, x: lib.nn.functional.softmax(x),
    "F.softmin": lambda lib, x: lib.nn.functional.softmin(x),
    "F.log_softmax": lambda lib, x: lib.nn.functional.log_softmax(x),
    "nn.Softmax": lambda lib, x: lib.nn.Softmax()(x),
    "nn.Softmin": lambda lib, x: lib.nn.Softmin()(x),
    "nn.LogSoftmax": lambda lib, x: lib.nn.LogSoftmax()(x),
}


def _run(lib, call, data, cotangent):
    x = lib.tensor(data, requires_grad=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = call(lib, x)  # the line the warning must name
    (y * lib.tensor(cotangent)).sum().backward()
    return y.detach(), x.grad, caught


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("name", CALLS)
def test_no_dim_matches_torch_and_warns_at_the_call(name, shape):
    rng = np.random.default_rng(len(shape))
    data, cotangent = rng.standard_normal(shape), rng.standard_normal(shape)
    ye, ge, we = _run(ad, CALLS[name], data, cotangent)
    yt, gt, wt = _run(torch, CALLS[name], data, cotangent)
    assert_close(ye, yt, rtol=1e-12, atol=1e-14, what=f"{name} forward")
    assert_close(ge, gt, rtol=1e-12, atol=1e-14, what=f"{name} gradient")
    assert [str(w.message) for w in we] == [str(w.message) for w in wt]
    assert we[0].category is UserWarning and "Implicit dimension choice" in str(we[0].message)
    assert we[0].filename == __file__, "the warning names the caller's line"


def test_an_explicit_dim_does_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ad.nn.functional.softmin(ad.tensor([[1.0, 2.0]]), dim=1)
        ad.nn.Softmax(dim=0)(ad.tensor([1.0, 2.0]))
