"""Chapter 2's op library (算子库), one module per op family.

In each module an op's kernel (or a pointer to chapter 1's kernel in
:mod:`chapters.graph.ops`), its shape/dtype rule, its VJP and its JVP sit
next to each other, with the math in each docstring, and one
:func:`~chapters.autodiff.rules.register` call gives the op its chapter 2
entry (rules and facts). Importing this package registers every op.

==============  ===================================================================
arith           add, sub, mul, div, pow, maximum, minimum, where, compare, dropout
bitwise         bitwise_and/or/xor/not, bitwise_left/right_shift (& | ^ ~ << >>)
unary           neg, exp, log, sqrt, abs, tanh, sigmoid, relu, sign, leaky_relu,
                clamp, cast
erf_gelu        erf, normal_cdf (Phi), gelu
elementwise     sin, cos, tan, asin, acos, atan, log2, log10, log1p, expm1,
                isnan, isinf, isfinite, isclose, copysign (lerp: a composition)
transcendental  reciprocal, exp2, sinh, cosh, asinh, acosh, atanh, sinc; deg2rad,
                rad2deg, nan_to_num, logical_not/and/or/xor (compositions)
binary_math     atan2, hypot, fmax, fmin, xlogy, logaddexp (float_power: a composition)
aliases         multiply, subtract, divide, true_divide, absolute, negative, greater,
                less, ...: torch's other names for existing ops (no kernels, no rules)
rounding        floor, ceil, trunc, round, frac, remainder, fmod, div_rounded
reduce          sum, mean, amax, amin, var, logsumexp, softmax, log_softmax
scan            cumsum, cumprod, prod, logical_reduce (all, any; cummax/cummin: a gather)
shape           reshape, transpose, permute, broadcast_to, cat, stack
rearrange       flip, roll, repeat, tile, tril, triu, diag: compositions, no rules
gather          getitem (and its adjoint), gather, scatter_add, embedding
select          scatter (gather, scatter_add, index_select, masked_fill: compositions)
scatter_reduce  scatter_reduce (sum, prod, mean, amax, amin)
sorting         sort, argsort, topk, unique: numpy permutations read with gather
split           chunk, split, tensor_split, unbind, narrow, unflatten, movedim: views,
                compositions of getitem, reshape and permute (no rules)
count           masked_select, argwhere, count_nonzero, bincount, diff,
                repeat_interleave (getitem, sub, scatter_add compositions)
linalg          matmul, linear
contract        einsum (dot, outer, bmm, baddbmm: matmul, mul, add with torch's checks)
products        mm, addmm, mv, addmv, addcmul, addcdiv: compositions with torch's checks
comparison      allclose, equal (Python bools), clamp_min, clamp_max (clamp)
norms           vector_norm (p-norms, its rule), matrix_norm, norm, dist (compositions)
conv            im2col, col2im, conv2d (stride, padding, dilation, groups)
pool            max_pool2d, avg_pool2d (ceil_mode, dilation, count_include_pad)
conv_transpose  conv_transpose2d (conv2d's input adjoint, run forward)
normalization   layer_norm, batch_norm
pad             pad (constant, reflect, replicate, circular) and its adjoint
grids           meshgrid, broadcast_tensors, broadcast_shapes, cartesian_prod,
                combinations, tril_indices, triu_indices (expand, getitem: no rules)
blocks          block_diag, kron, trace, cdist (cat, mul, diag, vector_norm: no rules)
take_put        take, take_along_dim, index_add/copy/fill/put and their in-place
                forms (getitem, gather, scatter, scatter_add: no rules)
search          isin, searchsorted, bucketize, histc (positions and counts, no gradient)
stacking        hstack, vstack, dstack, column_stack, row_stack, atleast_1d/2d/3d, rot90,
                fliplr, flipud (cat, reshape, flip, transpose: no rules)
stats           var_mean, std_mean, aminmax, median, kthvalue, mode (reductions and a
                gather at a position numpy chooses: no rules)
logcumsumexp    logcumsumexp (a running logaddexp, its rule a logcumsumexp of log|g|)
quantile        quantile, nanquantile (sort, gather and a lerp: no rules)
==============  ===================================================================

``resample`` holds the resize matrices of ``F.interpolate`` (no op of its own).

The losses are compositions of these ops (``cross_entropy`` is
``log_softmax`` then ``nll_loss``, itself a ``gather``), so they have no rule
of their own and live with the user API in :mod:`chapters.autodiff.functional`
(its ``losses`` and ``distances`` modules).
"""

from . import (
    aliases,
    arith,
    binary_math,
    bitwise,
    blocks,
    comparison,
    contract,
    conv,
    conv_transpose,
    count,
    elementwise,
    erf_gelu,
    gather,
    grids,
    linalg,
    logcumsumexp,
    normalization,
    norms,
    pad,
    pool,
    products,
    quantile,
    rearrange,
    reduce,
    rounding,
    scan,
    scatter_reduce,
    search,
    select,
    shape,
    sorting,
    split,
    stacking,
    stats,
    take_put,
    transcendental,
    unary,
)

__all__ = ["aliases", "arith", "binary_math", "bitwise", "blocks", "comparison", "contract",
           "conv", "conv_transpose", "count", "elementwise", "erf_gelu", "gather", "grids",
           "linalg", "logcumsumexp", "normalization", "norms", "pad", "pool", "products",
           "quantile", "rearrange", "reduce", "rounding", "scan", "scatter_reduce", "search",
           "select", "shape", "sorting", "split", "stacking", "stats", "take_put",
           "transcendental", "unary"]
