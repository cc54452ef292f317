"""Chapter 2's reference engine: automatic differentiation (自动微分).

A reverse-mode tensor engine over numpy, with PyTorch's names and semantics:
``Tensor`` records each op as a chapter 1 graph node (:mod:`.core`), each op
family's module in :mod:`.ops` registers its ops' kernels, derivative rules
and facts (:mod:`.rules` holds the tables), and :mod:`.engine` walks the
history backwards. Mode state is per thread (:mod:`.modes`).
``functional`` holds ``torch.nn.functional``'s names.
"""

from . import cuda, functional, linalg
from . import inplace as _inplace  # noqa: F401  (attaches the in-place twins, x.exp_())
from . import layout as _layout  # noqa: F401  (attaches stride, is_contiguous, data_ptr, ...)
from . import ops as _ops  # noqa: F401  (registers every op's kernel, rules and facts)
from .anomaly import detect_anomaly
from .condition import where
from .device import device
from .dtypes import (
    bfloat16,
    bool_,
    double,
    float16,
    float32,
    float64,
    half,
    int8,
    int16,
    int32,
    int64,
    long,
    short,
    uint8,
)
from .engine import backward, grad
from .factories import (
    arange,
    as_tensor,
    empty,
    eye,
    from_numpy,
    full,
    full_like,
    linspace,
    logspace,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randint_like,
    randn,
    randn_like,
    randperm,
    tensor,
    zeros,
    zeros_like,
)
from .forward_mode import jvp
from .functions import (
    abs,
    add,
    amax,
    amin,
    argmax,
    bitwise_and,
    bitwise_left_shift,
    bitwise_not,
    bitwise_or,
    bitwise_right_shift,
    bitwise_xor,
    cat,
    clamp,
    concat,
    div,
    exp,
    flatten,
    log,
    log_softmax,
    logsumexp,
    matmul,
    max,
    maximum,
    mean,
    min,
    minimum,
    mul,
    permute,
    pow,
    relu,
    reshape,
    sigmoid,
    sign,
    softmax,
    sqrt,
    squeeze,
    stack,
    std,
    sub,
    sum,
    tanh,
    transpose,
    unsqueeze,
    var,
)
from .grad_mode import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from .gradcheck import GradcheckError, gradcheck
from .node import AccumulateGrad, BackwardNode, saved_tensor_bytes
from .ops.aliases import (
    absolute,
    divide,
    eq,
    ge,
    greater,
    greater_equal,
    gt,
    le,
    less,
    less_equal,
    lt,
    multiply,
    ne,
    negative,
    not_equal,
    subtract,
    true_divide,
)
from .ops.binary_math import (
    arctan2,
    atan2,
    float_power,
    fmax,
    fmin,
    hypot,
    logaddexp,
    xlogy,
)
from .ops.blocks import block_diag, cdist, kron, trace
from .ops.comparison import allclose, clamp_max, clamp_min, equal
from .ops.contract import baddbmm, bmm, dot, einsum, outer
from .ops.count import (
    argwhere,
    bincount,
    count_nonzero,
    diff,
    masked_select,
    repeat_interleave,
)
from .ops.elementwise import (
    acos,
    arccos,
    arcsin,
    arctan,
    asin,
    atan,
    copysign,
    cos,
    erf,
    expm1,
    isclose,
    isfinite,
    isinf,
    isnan,
    lerp,
    log1p,
    log2,
    log10,
    sin,
    tan,
)
from .ops.grids import (
    broadcast_shapes,
    broadcast_tensors,
    cartesian_prod,
    combinations,
    meshgrid,
    tril_indices,
    triu_indices,
)
from .ops.norms import dist, norm
from .ops.products import addcdiv, addcmul, addmm, addmv, mm, mv
from .ops.rearrange import diag, flip, repeat, roll, tile, tril, triu
from .ops.rounding import ceil, fix, floor, floor_divide, fmod, frac, remainder, round, trunc
from .ops.scan import all, any, cummax, cummin, cumprod, cumsum, prod
from .ops.scatter_reduce import scatter_reduce
from .ops.search import bucketize, histc, isin, searchsorted
from .ops.select import gather, index_select, masked_fill, nonzero, scatter, scatter_add
from .ops.sorting import argsort, msort, sort, topk, unique
from .ops.split import chunk, moveaxis, movedim, narrow, split, tensor_split, unbind, unflatten
from .ops.take_put import (
    index_add,
    index_copy,
    index_fill,
    index_put,
    index_put_,
    take,
    take_along_dim,
)
from .ops.transcendental import (
    acosh,
    arccosh,
    arcsinh,
    arctanh,
    asinh,
    atanh,
    cosh,
    deg2rad,
    exp2,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    nan_to_num,
    rad2deg,
    reciprocal,
    rsqrt,
    sinc,
    sinh,
    square,
)
from .random import Generator, manual_seed
from .sampling import bernoulli, multinomial, normal
from .tensor import Tensor

# isort: split
# nn, optim and data build on everything above, so they are imported last;
# autograd and utils are torch's namespaces (torch.autograd, torch.utils.data)
from . import autograd, data, func, nn, optim, utils

__all__ = [
    "data", "func", "nn", "optim",
    "functional",
    "AccumulateGrad", "BackwardNode", "GradcheckError", "Tensor", "abs", "add", "amax",
    "arange", "argmax", "as_tensor", "backward", "bfloat16", "bool_", "cat", "clamp", "concat",
    "linspace", "logspace",
    "detect_anomaly", "div", "empty", "enable_grad", "exp", "eye", "flatten", "float16",
    "float32", "float64", "full", "full_like", "grad", "gradcheck", "int32", "int64",
    "is_grad_enabled", "jvp", "log", "log_softmax", "logsumexp", "manual_seed", "matmul", "max",
    "maximum", "mean", "min", "minimum", "mul", "no_grad", "ones", "ones_like", "permute",
    "pow", "rand", "randn", "randn_like", "relu", "reshape", "saved_tensor_bytes",
    "set_grad_enabled", "sigmoid", "softmax", "sqrt", "squeeze", "stack", "std", "sub", "sum",
    "tanh", "tensor", "transpose", "uint8", "unsqueeze", "var", "where", "zeros", "zeros_like",
    "amin", "bitwise_and", "bitwise_left_shift", "bitwise_not", "bitwise_or",
    "bitwise_right_shift", "bitwise_xor", "sign",
]
__all__ += [  # elementwise math and rounding (ops.elementwise, ops.rounding)
    "acos", "arccos", "arcsin", "arctan", "asin", "atan", "ceil", "copysign", "cos", "erf",
    "expm1", "fix", "floor", "floor_divide", "fmod", "frac", "isclose", "isfinite", "isinf",
    "isnan", "lerp", "log10", "log1p", "log2", "remainder", "round", "sin", "tan", "trunc",
    "all", "any", "cummax", "cummin", "cumprod", "cumsum", "prod",
    "diag", "flip", "repeat", "roll", "tile", "tril", "triu",  # ops.rearrange
    "gather", "index_select", "masked_fill", "nonzero", "scatter", "scatter_add",  # ops.select
    "argsort", "msort", "sort", "topk", "unique",  # ops.sorting
    "baddbmm", "bmm", "dot", "einsum", "outer",  # ops.contract
    "int8", "int16", "scatter_reduce",
    "chunk", "movedim", "moveaxis", "narrow", "split", "tensor_split", "unbind",  # ops.split
    "unflatten",
    "argwhere", "bincount", "count_nonzero", "diff", "masked_select",  # ops.count
    "repeat_interleave",
    "addcdiv", "addcmul", "addmm", "addmv", "mm", "mv",  # ops.products
    "allclose", "clamp_max", "clamp_min", "equal",  # ops.comparison
    "dist", "linalg", "norm",  # ops.norms, and torch.linalg's namespace
]
__all__ += ["autograd", "utils"]
__all__ += [  # ops.grids, ops.blocks, ops.take_put, ops.search
    "broadcast_shapes", "broadcast_tensors", "cartesian_prod", "combinations", "meshgrid",
    "tril_indices", "triu_indices", "block_diag", "cdist", "kron", "trace",
    "index_add", "index_copy", "index_fill", "index_put", "index_put_", "take",
    "take_along_dim", "bucketize", "histc", "isin", "searchsorted",
]
__all__ += [  # ops.transcendental, ops.binary_math, ops.aliases
    "acosh", "arccosh", "arcsinh", "arctanh", "asinh", "atanh", "cosh", "deg2rad", "exp2",
    "logical_not", "nan_to_num", "rad2deg", "reciprocal", "rsqrt", "sinc", "sinh", "square",
    "arctan2", "atan2", "float_power", "fmax", "fmin", "hypot", "logaddexp", "logical_and",
    "logical_or", "logical_xor", "xlogy",
    "absolute", "divide", "eq", "ge", "greater", "greater_equal", "gt", "le", "less",
    "less_equal", "lt", "multiply", "ne", "negative", "not_equal", "subtract", "true_divide",
]
__all__ += [  # random draws, devices, modes (factories, sampling, device, cuda, grad_mode)
    "Generator", "bernoulli", "cuda", "device", "from_numpy", "inference_mode", "multinomial",
    "normal", "rand_like", "randint", "randint_like", "randperm",
]
from .introspect import (  # noqa: E402
    can_cast,
    finfo,
    get_default_dtype,
    iinfo,
    is_floating_point,
    is_tensor,
    numel,
    promote_types,
    result_type,
)

__all__ += [  # introspect: tensors and dtypes
    "can_cast", "finfo", "get_default_dtype", "iinfo", "is_floating_point", "is_tensor",
    "numel", "promote_types", "result_type",
]
from .ops.stacking import (  # noqa: E402
    atleast_1d,
    atleast_2d,
    atleast_3d,
    column_stack,
    dstack,
    fliplr,
    flipud,
    hstack,
    rot90,
    row_stack,
    vstack,
)

__all__ += [  # ops.stacking
    "atleast_1d", "atleast_2d", "atleast_3d", "column_stack", "dstack", "fliplr", "flipud",
    "hstack", "rot90", "row_stack", "vstack",
]
from .ops.logcumsumexp import logcumsumexp  # noqa: E402
from .ops.quantile import nanquantile, quantile  # noqa: E402
from .ops.stats import aminmax, kthvalue, median, mode, std_mean, var_mean  # noqa: E402

__all__ += ["aminmax", "kthvalue", "median", "mode", "std_mean", "var_mean"]  # ops.stats
__all__ += ["logcumsumexp", "nanquantile", "quantile"]  # ops.logcumsumexp, ops.quantile

# isort: split
# torch's dtype names that are Python builtins (torch.float, torch.int, torch.bool),
# bound last so no code above sees them; as in torch's __all__, a star import takes them too
from .dtypes import bool, float, int  # noqa: E402, A004

__all__ += ["double", "half", "long", "short", "bool", "float", "int"]  # dtype aliases
