import ml_dtypes
import numpy as np
import pytest
import torch

from chapters.torchcheck import TorchSavedBytes, assert_close, to_numpy, to_torch


def test_round_trip_keeps_values_and_dtype():
    for dtype in (np.float32, np.float64, np.int64, ml_dtypes.bfloat16):
        a = np.arange(6, dtype=np.float32).reshape(2, 3).astype(dtype)
        t = to_torch(a)
        back = to_numpy(t)
        assert back.dtype == a.dtype and np.array_equal(back.astype(np.float32),
                                                        a.astype(np.float32))
    assert to_torch(np.ones(2, ml_dtypes.bfloat16)).dtype == torch.bfloat16


def test_assert_close_names_the_worst_element():
    with pytest.raises(AssertionError, match=r"worst at index \(1, 0\)"):
        assert_close(np.array([[1.0, 2.0], [3.5, 4.0]]), np.array([[1.0, 2.0], [3.0, 4.0]]),
                     rtol=0, atol=1e-3)
    with pytest.raises(AssertionError, match="shape"):
        assert_close(np.ones(2), np.ones(3), rtol=0, atol=0)
    with pytest.raises(AssertionError, match="NaN mismatch"):
        assert_close(np.array([np.nan]), np.array([0.0]), rtol=0, atol=1)
    assert_close(np.array([np.inf, np.nan]), np.array([np.inf, np.nan]), rtol=0, atol=0)


def test_torch_saved_bytes_counts_what_backward_needs_and_frees_it():
    """exp saves its output for backward: two float32 exps of 1000 elements hold
    2 * 1000 * 4 bytes; backward() frees them; a graph built under no_grad saves nothing."""
    start = TorchSavedBytes.live[0]
    with TorchSavedBytes():
        x = torch.ones(1000, requires_grad=True)
        y = x.exp().exp().sum()
        held = TorchSavedBytes.live[0] - start
        y.backward()
        after_backward = TorchSavedBytes.live[0] - start
        with torch.no_grad():
            x.exp().exp()
        under_no_grad = TorchSavedBytes.live[0] - start
    assert (held, after_backward, under_no_grad) == (8000, 0, 0)
