"""``gradcheck``: compare the engine's gradients with central differences.

For each input element x_j, the numerical derivative of every output y_i is

    (f(x + eps e_j) - f(x - eps e_j)) / (2 eps),

whose error is O(eps^2) (the O(eps) terms cancel). It runs in float64: in
float32 the rounding error of f, about 1e-7 / eps, would swamp the
difference. The analytical Jacobian comes from one reverse pass per output
element (a VJP with a one-hot cotangent). A mismatch names the input, the
element, the output element and both values.
"""

from __future__ import annotations

import numpy as np

from .engine import grad
from .grad_mode import no_grad
from .tensor import Tensor


class GradcheckError(AssertionError):
    """The analytical and numerical Jacobians differ."""


def _outputs(out) -> tuple:
    return out if isinstance(out, tuple | list) else (out,)


def gradcheck(fn, inputs, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True) -> bool:
    """True when ``fn``'s engine gradients match central differences at ``inputs``."""
    inputs = (inputs,) if isinstance(inputs, Tensor) else tuple(inputs)
    xs = []
    for x in inputs:
        if isinstance(x, Tensor) and x.requires_grad:
            xs.append(Tensor(x.data.astype(np.float64), requires_grad=True))
        else:
            xs.append(x)
    wrt = [i for i, x in enumerate(xs) if isinstance(x, Tensor) and x.requires_grad]
    outs = _outputs(fn(*xs))
    for k, out in enumerate(outs):
        if not out.requires_grad:
            continue
        flat_out = out.data.reshape(-1)
        analytical = {i: np.zeros((flat_out.size, xs[i].data.size)) for i in wrt}
        for r in range(flat_out.size):
            cotangent = np.zeros(out.data.shape, dtype=out.data.dtype)
            cotangent.reshape(-1)[r] = 1
            grads = grad(out, [xs[i] for i in wrt], Tensor(cotangent), retain_graph=True,
                         allow_unused=True)
            for i, g in zip(wrt, grads, strict=True):
                if g is not None:
                    analytical[i][r] = g.data.reshape(-1)
        for i in wrt:
            numerical = _numerical(fn, xs, i, k, eps)
            bad = np.abs(analytical[i] - numerical) > atol + rtol * np.abs(numerical)
            if bad.any():
                r, j = np.argwhere(bad)[0]
                index = tuple(int(v) for v in np.unravel_index(j, xs[i].data.shape))
                message = (
                    f"gradcheck: Jacobian mismatch for output {k} with respect to input {i} "
                    f"at input index {index} (output element {int(r)}): numerical "
                    f"{numerical[r, j]!r} vs analytical {analytical[i][r, j]!r} "
                    f"(atol={atol}, rtol={rtol}, eps={eps}; {int(bad.sum())} entries differ).")
                if raise_exception:
                    raise GradcheckError(message)
                return False
    return True


def _numerical(fn, xs: list, i: int, k: int, eps: float) -> np.ndarray:
    """d output_k / d input_i by central differences, one column per element."""
    x = xs[i]
    flat = x.data.reshape(-1)
    columns = []
    with no_grad():
        for j in range(flat.size):
            orig = flat[j]
            flat[j] = orig + eps
            plus = np.array(_outputs(fn(*xs))[k].data, dtype=np.float64).reshape(-1)
            flat[j] = orig - eps
            minus = np.array(_outputs(fn(*xs))[k].data, dtype=np.float64).reshape(-1)
            flat[j] = orig
            columns.append((plus - minus) / (2 * eps))
    return np.stack(columns, axis=1) if columns else np.zeros((0, 0))
