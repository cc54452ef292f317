"""Chapter 2's reference engine: automatic differentiation (自动微分).

A reverse-mode tensor engine over numpy, with PyTorch's names and semantics:
``Tensor`` records each op as a chapter 1 graph node (:mod:`.core`), each op
family's module in :mod:`.ops` registers its ops' kernels, derivative rules
and facts (:mod:`.rules` holds the tables), and :mod:`.engine` walks the
history backwards. Mode state is per thread (:mod:`.modes`).
``functional`` holds ``torch.nn.functional``'s names.
"""

from . import functional
from . import ops as _ops  # noqa: F401  (registers every op's kernel, rules and facts)
from .anomaly import detect_anomaly
from .dtypes import bfloat16, bool_, float16, float32, float64, int32, int64, uint8
from .engine import backward, grad
from .factories import (
    arange,
    as_tensor,
    empty,
    eye,
    full,
    full_like,
    ones,
    ones_like,
    rand,
    randn,
    randn_like,
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
    where,
)
from .grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .gradcheck import GradcheckError, gradcheck
from .node import AccumulateGrad, BackwardNode, saved_tensor_bytes
from .random import manual_seed
from .tensor import Tensor

# isort: split
# nn, optim and data build on everything above, so they are imported last
from . import data, nn, optim

__all__ = [
    "data", "nn", "optim",
    "functional",
    "AccumulateGrad", "BackwardNode", "GradcheckError", "Tensor", "abs", "add", "amax",
    "arange", "argmax", "as_tensor", "backward", "bfloat16", "bool_", "cat", "clamp", "concat",
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
