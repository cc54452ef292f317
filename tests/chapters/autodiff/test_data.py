"""DataLoader, TensorDataset and the digits split."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from chapters.autodiff import data
from chapters.torchcheck import to_numpy


def arrays(n=10):
    return np.arange(n * 2, dtype=np.float32).reshape(n, 2), np.arange(n, dtype=np.int64)


def test_batches_cover_the_data_in_order_without_shuffle():
    x, y = arrays()
    loader = data.DataLoader((x, y), batch_size=4)
    batches = list(loader)
    assert len(loader) == len(batches) == 3
    assert [len(to_numpy(b[1])) for b in batches] == [4, 4, 2]
    np.testing.assert_array_equal(np.concatenate([to_numpy(b[0]) for b in batches]), x)
    assert to_numpy(batches[0][1]).dtype == np.int64


def test_drop_last_matches_torch_lengths():
    x, y = arrays(10)
    for batch_size in (1, 3, 4, 10, 11):
        ours = data.DataLoader((x, y), batch_size=batch_size, drop_last=True)
        theirs = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(
            torch.from_numpy(x), torch.from_numpy(y)), batch_size=batch_size, drop_last=True)
        assert len(ours) == len(theirs) == len(list(ours))
        assert all(len(to_numpy(b[1])) == batch_size for b in ours)


def test_shuffle_is_a_seeded_permutation_that_changes_each_epoch():
    x, y = arrays(50)
    loader = data.DataLoader(data.TensorDataset(x, y), batch_size=8, shuffle=True, seed=3)
    epoch1 = np.concatenate([to_numpy(b[1]) for b in loader])
    epoch2 = np.concatenate([to_numpy(b[1]) for b in loader])
    assert sorted(epoch1) == list(range(50)) and sorted(epoch2) == list(range(50))
    assert not np.array_equal(epoch1, epoch2)
    again = data.DataLoader(data.TensorDataset(x, y), batch_size=8, shuffle=True, seed=3)
    np.testing.assert_array_equal(np.concatenate([to_numpy(b[1]) for b in again]), epoch1)
    # rows stay aligned across arrays
    for xb, yb in data.DataLoader((x, y), batch_size=7, shuffle=True, seed=1):
        np.testing.assert_array_equal(to_numpy(xb)[:, 0], 2 * to_numpy(yb))


def test_batch_indices_tell_the_same_story_as_iteration():
    x, y = arrays(20)
    a = data.DataLoader((x, y), batch_size=6, shuffle=True, seed=9)
    b = data.DataLoader((x, y), batch_size=6, shuffle=True, seed=9)
    for index, (_, yb) in zip(a.batch_indices(), b, strict=True):
        np.testing.assert_array_equal(index, to_numpy(yb))


def test_generic_dataset_is_stacked():
    class Squares:
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return np.array([i, i * i], np.float32), np.int64(i)

    (xb, yb), *_ = data.DataLoader(Squares(), batch_size=3)
    np.testing.assert_array_equal(to_numpy(xb), [[0, 0], [1, 1], [2, 4]])
    np.testing.assert_array_equal(to_numpy(yb), [0, 1, 2])


def test_bad_inputs():
    with pytest.raises(ValueError, match="first dims"):
        data.TensorDataset(np.zeros(3), np.zeros(4))
    with pytest.raises(ValueError, match="batch_size"):
        data.DataLoader((np.zeros(3),), batch_size=0)
    with pytest.raises(ValueError, match="test_fraction"):
        data.load_digits_split(test_fraction=1.5)


def test_digits_split():
    split = data.load_digits_split(test_fraction=0.25, seed=0)
    assert split.x_train.dtype == np.float32 and split.y_train.dtype == np.int64
    assert split.x_train.shape[1] == 64 and len(split.x_train) + len(split.x_test) == 1797
    assert len(split.x_test) == round(1797 * 0.25)
    assert split.x_train.min() == 0.0 and split.x_train.max() == 1.0
    assert set(np.unique(split.y_test)) == set(range(10))
    # disjoint: no test image appears in the training set
    train_rows = {row.tobytes() for row in split.x_train}
    duplicates = sum(row.tobytes() in train_rows for row in split.x_test)
    assert duplicates <= 5  # the raw data holds a few identical images, not more
    images = data.load_digits_split(seed=0, images=True)
    assert images.x_train.shape[1:] == (1, 8, 8)
    np.testing.assert_array_equal(images.x_train.reshape(-1, 64),
                                  data.load_digits_split(seed=0).x_train)


def test_without_a_seed_the_global_seed_decides_the_order():
    import chapters.autodiff as ad

    x, y = arrays(30)
    orders = []
    for _ in range(2):
        ad.manual_seed(5)
        loader = data.DataLoader((x, y), batch_size=30, shuffle=True)
        orders.append(to_numpy(next(iter(loader))[1]))
    np.testing.assert_array_equal(orders[0], orders[1])
    assert not np.array_equal(orders[0], np.arange(30))
