"""``torch.func``'s transforms (函数变换): ``grad``, ``vjp``, ``jvp``.

Each takes a function and returns a function (or its results), and they
compose: ``jvp(grad(f), (x,), (v,))`` is the Hessian-vector product H v by
forward-over-reverse, ``grad(lambda x: (grad(f)(x) * v).sum())`` the same
product by reverse-over-reverse.

* ``grad`` and ``vjp`` are reverse mode: the function runs on a fresh alias
  of each differentiated argument that requires grad, and
  ``autograd.grad(..., create_graph=True)`` gives the gradient *with its own
  history*, so an outer ``grad`` can differentiate it again and an outer
  ``jvp`` (:mod:`.forward_mode`) sees its ops.
* ``jvp`` is forward mode, in a new level of :mod:`.forward_mode`.

Deliberate difference from torch: torch.func keeps one level per transform
and hands back a plain tensor at the top level; here the reverse-mode
results keep their history (``.grad_fn``), since the engine cannot tell that
no outer transform wants it. Call ``.detach()`` on a result you keep.
"""

from __future__ import annotations

import numpy as np

from .engine import grad as autograd_grad
from .forward_mode import jvp
from .grad_mode import enable_grad
from .tensor import Tensor, apply


def _tracked(x) -> Tensor:
    """A fresh alias of ``x`` that requires grad: its gradient is taken apart
    from any other use of ``x``, and its history still reaches ``x``."""
    if not isinstance(x, Tensor):
        raise TypeError(f"func.grad/vjp: expected Tensor arguments to differentiate, got "
                        f"{type(x).__name__}")
    alias = apply("reshape", (x,), {"shape": x.data.shape})
    if not alias.requires_grad:
        alias.requires_grad_()
    return alias


def _gradients(out, inputs: list, cotangents) -> tuple:
    """d(out)/d(inputs) with history, zeros for an input ``out`` does not use."""
    got = autograd_grad(out, inputs, cotangents, retain_graph=True, create_graph=True,
                        allow_unused=True)
    return tuple(g if g is not None else Tensor(np.zeros(x.data.shape, dtype=x.data.dtype))
                 for g, x in zip(got, inputs, strict=True))


def grad(f, argnums: int | tuple = 0, has_aux: bool = False):
    """``torch.func.grad``: the function ``x -> df/dx`` for a ``f`` that returns
    one number (or ``(number, aux)`` with ``has_aux=True``)."""
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)

    def grad_f(*args):
        with enable_grad():
            xs = list(args)
            for i in nums:
                xs[i] = _tracked(args[i])
            result = f(*xs)
            out, aux = result if has_aux else (result, None)
            if not isinstance(out, Tensor) or out.data.size != 1:
                raise RuntimeError(
                    "func.grad: f must return one number (a tensor with one element); "
                    f"got {getattr(out, 'shape', type(out).__name__)}. Reduce it (.sum()), or "
                    "use func.vjp with a cotangent for a non-scalar output.")
            gs = _gradients(out, [xs[i] for i in nums], None)
        gs = gs[0] if isinstance(argnums, int) else gs
        return (gs, aux) if has_aux else gs

    return grad_f


def vjp(f, *primals):
    """``torch.func.vjp``: ``(f(*primals), vjp_fn)`` with ``vjp_fn(cotangent)``
    giving one gradient per primal, v^T J."""
    with enable_grad():
        xs = [_tracked(p) for p in primals]
        out = f(*xs)

    def vjp_fn(*cotangents):
        outs = out if isinstance(out, tuple) else (out,)
        if len(cotangents) == 1 and isinstance(cotangents[0], tuple):
            cotangents = cotangents[0]
        if len(cotangents) != len(outs):
            raise RuntimeError(f"vjp_fn: expected {len(outs)} cotangents (one per output of "
                               f"f), got {len(cotangents)}")
        with enable_grad():
            return _gradients(outs, xs, cotangents)

    return out, vjp_fn


__all__ = ["grad", "jvp", "vjp"]
