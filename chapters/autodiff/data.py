"""Feeding a model: ``Dataset``, ``TensorDataset``, ``Subset``, ``random_split``,
``DataLoader`` and the digits data set (``torch.utils.data``'s names; the
module is also reachable as ``chapters.autodiff.utils.data``).

``DataLoader`` mirrors the part of ``torch.utils.data.DataLoader`` that a
training loop touches: batches of ``batch_size`` samples, an optional reshuffle
every epoch, and ``drop_last`` to skip a short final batch. The shuffle order
comes from a numpy generator seeded with ``seed`` (or, without one, from the
engine's global generator, so ``manual_seed`` decides it as torch's does), so the
same seed gives the same batches on every run — which is how the course feeds *identical* batches
to the engine and to a torch model (:meth:`DataLoader.batch_indices` tells
both the same story).

Digits: scikit-learn ships 1797 labelled 8x8 images of handwritten digits
(values 0..16) inside the package, so no download is needed.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import NamedTuple

import numpy as np

from .factories import tensor
from .interop import to_numpy
from .random import default_generator
from .tensor import Tensor


class Dataset:
    """What a ``DataLoader`` reads: ``len(dataset)`` samples, ``dataset[i]`` the i-th.
    Subclass it and define ``__getitem__`` and ``__len__``."""

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__(index)")

    def __len__(self) -> int:
        raise NotImplementedError(f"{type(self).__name__} must define __len__()")


class TensorDataset(Dataset):
    """Samples are rows of several aligned arrays: ``dataset[i] = (x[i], y[i])``."""

    def __init__(self, *arrays):
        if not arrays:
            raise ValueError("TensorDataset needs at least one array")
        self.arrays = tuple(to_numpy(a) for a in arrays)
        sizes = {len(a) for a in self.arrays}
        if len(sizes) != 1:
            raise ValueError(f"TensorDataset: arrays have different first dims "
                             f"{[len(a) for a in self.arrays]}; every array needs one row "
                             "per sample")

    def __len__(self) -> int:
        return len(self.arrays[0])

    def __getitem__(self, index):
        return tuple(tensor(a[index]) for a in self.arrays)


class Subset(Dataset):
    """The samples of ``dataset`` at ``indices``, in that order."""

    def __init__(self, dataset, indices):
        self.dataset, self.indices = dataset, [int(i) for i in indices]

    def __getitem__(self, index):
        return self.dataset[self.indices[index]]

    def __len__(self) -> int:
        return len(self.indices)


def _split_lengths(total: int, lengths) -> list[int]:
    """Counts, or fractions summing to 1 turned into counts (floors, then the
    remainder handed out one by one from the first part, as torch does)."""
    lengths = list(lengths)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        counts = [int(math.floor(total * f)) for f in lengths]
        for i in range(total - sum(counts)):
            counts[i % len(counts)] += 1
        lengths = counts
    if sum(lengths) != total:
        raise ValueError(f"Sum of input lengths {sum(lengths)} does not equal the length of the "
                         f"input dataset ({total}): give counts summing to {total}, or fractions "
                         "summing to 1")
    return lengths


def random_split(dataset, lengths, generator: np.random.Generator | None = None) -> list[Subset]:
    """Split ``dataset`` into non-overlapping random ``Subset``s of the given
    lengths (or fractions). The permutation comes from ``generator`` or the
    engine's global one (``manual_seed``): the same seed, the same split, though
    not the split torch's generator would draw."""
    lengths = _split_lengths(len(dataset), lengths)
    order = (generator or default_generator()).permutation(len(dataset))
    ends = np.cumsum(lengths)
    return [Subset(dataset, order[end - n:end]) for n, end in zip(lengths, ends, strict=True)]


class DataLoader:
    """Iterate over a dataset in batches of engine tensors.

    ``dataset_or_arrays`` is a :class:`TensorDataset`, any object with
    ``__len__`` and ``__getitem__`` returning a tuple of tensors or arrays, or a
    tuple of arrays (wrapped in a ``TensorDataset``). A ``TensorDataset`` is
    batched by fancy indexing (one copy per array per batch); other datasets
    are read sample by sample and stacked.
    """

    def __init__(self, dataset_or_arrays, batch_size: int = 1, shuffle: bool = False,
                 drop_last: bool = False, seed: int | None = None):
        if isinstance(dataset_or_arrays, tuple | list):
            dataset_or_arrays = TensorDataset(*dataset_or_arrays)
        if batch_size < 1:
            raise ValueError(f"DataLoader: batch_size must be >= 1, got {batch_size}")
        self.dataset, self.batch_size = dataset_or_arrays, batch_size
        self.shuffle, self.drop_last = shuffle, drop_last
        if seed is None:  # like torch: the global seed (chapters.autodiff.manual_seed) decides
            seed = int(default_generator().integers(2**63))
        self.generator = np.random.default_rng(seed)

    def __len__(self) -> int:
        n = len(self.dataset)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def batch_indices(self) -> list[np.ndarray]:
        """The sample indices of every batch of the *next* epoch (advances the
        shuffle generator exactly as iterating would)."""
        n = len(self.dataset)
        order = self.generator.permutation(n) if self.shuffle else np.arange(n)
        batches = [order[i:i + self.batch_size] for i in range(0, n, self.batch_size)]
        if self.drop_last and batches and len(batches[-1]) < self.batch_size:
            batches.pop()
        return batches

    def __iter__(self) -> Iterator[Tensor | tuple[Tensor, ...]]:
        for index in self.batch_indices():
            yield self._collate(index)

    def _collate(self, index: np.ndarray) -> Tensor | tuple[Tensor, ...]:
        if isinstance(self.dataset, TensorDataset):
            return tuple(tensor(a[index]) for a in self.dataset.arrays)
        samples = [self.dataset[int(i)] for i in index]
        if not isinstance(samples[0], tuple | list):  # one tensor per sample: one batch tensor
            return tensor(np.stack([to_numpy(s) for s in samples]))
        return tuple(tensor(np.stack([to_numpy(s[k]) for s in samples]))
                     for k in range(len(samples[0])))


class DigitsSplit(NamedTuple):
    x_train: np.ndarray
    y_train: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray


def load_digits_split(test_fraction: float = 0.2, seed: int = 0,
                      images: bool = False) -> DigitsSplit:
    """scikit-learn's 8x8 digits as ``(x_train, y_train, x_test, y_test)``.

    ``x`` is float32 scaled to [0, 1] (pixel / 16), shaped ``(N, 64)``, or
    ``(N, 1, 8, 8)`` with ``images=True`` for a convolutional net; ``y`` is int64.
    The split is a seeded random permutation (not stratified): with 1797
    samples each class still gets about 36 test images at the default fraction.
    """
    from sklearn.datasets import load_digits  # imported on first use: it takes about 1 s

    if not 0 < test_fraction < 1:
        raise ValueError(f"test_fraction must be in (0, 1), got {test_fraction}")
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int64)
    if images:
        x = x.reshape(-1, 1, 8, 8)
    order = np.random.default_rng(seed).permutation(len(x))
    n_test = int(round(len(x) * test_fraction))
    test, train = order[:n_test], order[n_test:]
    return DigitsSplit(x[train], y[train], x[test], y[test])
