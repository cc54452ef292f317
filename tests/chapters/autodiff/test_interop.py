"""The engine reads torch tensors without importing torch (chapters.autodiff.interop):
every dtype, grad-requiring, non-contiguous and conjugated tensors, checked against
torch's own conversion."""

import ml_dtypes
import numpy as np
import pytest
import torch

from chapters.autodiff import Tensor, nn
from chapters.autodiff.interop import to_numpy

DTYPES = [torch.float32, torch.float64, torch.float16, torch.int64, torch.int8, torch.uint8,
          torch.bool, torch.bfloat16, torch.float8_e4m3fn, torch.float8_e5m2]


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_a_torch_tensor_arrives_with_its_values_and_dtype(dtype):
    base = torch.tensor([[-448.0, -1.5, 0.0, 0.25], [3.0, 17.0, 240.0, 2.0 ** -6]])
    t = base.to(dtype).t()  # non-contiguous
    got = to_numpy(t)
    name = str(dtype).removeprefix("torch.")
    expected_dtype = np.dtype(getattr(ml_dtypes, name) if hasattr(ml_dtypes, name) else name)
    assert got.dtype == expected_dtype and got.shape == tuple(t.shape)
    # torch's own float64 view of the same values is the independent reference
    np.testing.assert_array_equal(got.astype(np.float64), t.double().numpy())


def test_nan_and_infinities_survive_the_float32_route():
    t = torch.tensor([float("nan"), float("inf"), -float("inf"), -0.0], dtype=torch.bfloat16)
    got = to_numpy(t)
    assert np.isnan(got[0]) and got[1] == np.inf and got[2] == -np.inf
    assert np.signbit(got[3].astype(np.float32))


def test_grad_requiring_and_conjugated_tensors_are_read_like_torch_numpy_force():
    w = torch.randn(3, 2, requires_grad=True)
    np.testing.assert_array_equal(to_numpy(w), w.detach().numpy())
    z = torch.tensor([1 + 2j, 3 - 1j]).conj()
    np.testing.assert_array_equal(to_numpy(z), np.array([1 - 2j, 3 + 1j]))
    x = Tensor(np.ones(2, np.float32), requires_grad=True)
    assert to_numpy(x).dtype == np.float32  # engine tensors are detached, like torch's
    assert to_numpy(3.5) == np.float64(3.5) and to_numpy([1, 2]).tolist() == [1, 2]


def test_a_bfloat16_torch_state_dict_seeds_an_engine_model():
    torch.manual_seed(0)
    reference = torch.nn.Linear(4, 3).to(torch.bfloat16)
    model = nn.Linear(4, 3)
    model.load_state_dict(reference.state_dict())
    np.testing.assert_array_equal(model.weight.data,
                                  reference.weight.detach().float().numpy())
