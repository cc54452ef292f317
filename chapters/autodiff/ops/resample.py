"""Resampling for ``F.interpolate``: each spatial dim is resized by a matrix.

Nearest and (bi)linear interpolation are linear and separable: resizing a
dim of n samples to m is multiplying by an m x n matrix R whose row i holds
the weights output i gives the inputs, so a 2-D resize is

    y = R_h x R_w^T      (for each batch element and channel)

and its gradient is dL/dx = R_h^T g R_w, which the matmul op already knows:
``interpolate`` needs no rule of its own. Row i of R, with ``scale = n / m``
(or ``1 / scale_factor`` when the caller gave one, as torch):

    nearest                 1 at floor(i * scale)
    linear, align_corners   src = i (n - 1) / (m - 1): the corner samples meet
    linear, otherwise       src = max((i + 0.5) scale - 0.5, 0): pixel centres meet
    linear weights          1 - f at floor(src), f at floor(src) + 1 (f = src - floor(src))
"""

from __future__ import annotations

import numpy as np


def source_positions(m: int, n: int, scale: float, align_corners: bool) -> np.ndarray:
    """Where each of the m outputs samples the n inputs (linear modes)."""
    i = np.arange(m, dtype=np.float64)
    if align_corners:
        return i * ((n - 1) / (m - 1)) if m > 1 else np.zeros(m)
    return np.maximum((i + 0.5) * scale - 0.5, 0.0)


def resize_matrix(m: int, n: int, mode: str, scale: float, align_corners: bool,
                  dtype) -> np.ndarray:
    """The m x n matrix R that resizes one dim (see the module docstring)."""
    rows = np.arange(m)
    matrix = np.zeros((m, n), dtype=np.float64)
    if mode == "nearest":
        matrix[rows, np.minimum(np.floor(rows * scale).astype(np.int64), n - 1)] = 1
        return matrix.astype(dtype)
    src = source_positions(m, n, scale, align_corners)
    low = np.minimum(np.floor(src).astype(np.int64), n - 1)
    high = np.minimum(low + 1, n - 1)
    frac = src - low
    np.add.at(matrix, (rows, low), 1 - frac)
    np.add.at(matrix, (rows, high), frac)
    return matrix.astype(dtype)
