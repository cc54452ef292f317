"""Chapter 2's op library (算子库), one module per op family.

In each module an op's kernel (or a pointer to chapter 1's kernel in
:mod:`chapters.graph.ops`), its shape/dtype rule, its VJP and its JVP sit
next to each other, with the math in each docstring, and one
:func:`~chapters.autodiff.rules.register` call gives the op its chapter 2
entry (rules and facts). Importing this package registers every op.

========  ===========================================================
arith     add, sub, mul, div, pow, maximum, minimum, where, compare, dropout
bitwise   bitwise_and/or/xor/not, bitwise_left/right_shift (& | ^ ~ << >>)
unary     neg, exp, log, sqrt, abs, tanh, sigmoid, relu, sign, leaky_relu,
          clamp, erf, gelu, cast
reduce    sum, mean, amax, amin, var, logsumexp, softmax, log_softmax
shape     reshape, transpose, permute, broadcast_to, cat, stack
index     getitem (and its adjoint), gather, scatter_add, embedding
linalg    matmul, linear
conv      im2col, col2im, conv2d, max_pool2d, avg_pool2d
norm      layer_norm, batch_norm
========  ===========================================================

The losses are compositions of these ops (``cross_entropy`` is
``log_softmax`` then ``nll_loss``, itself a ``gather``), so they have no rule
of their own and live with the user API in :mod:`chapters.autodiff.functional`.
"""

from . import arith, bitwise, conv, index, linalg, norm, reduce, shape, unary

__all__ = ["arith", "bitwise", "conv", "index", "linalg", "norm", "reduce", "shape", "unary"]
