"""``torch.nn.functional``'s names on the engine (``import ... as F``).

Some functions are single ops with their own derivative rule (``linear``,
``conv2d``, ``layer_norm``, ...); others are compositions, exactly as in
PyTorch: ``cross_entropy`` is ``log_softmax`` followed by ``nll_loss``, and
its gradient comes from theirs. Every function is one public op for the
autocast hook, whatever it does inside (``pad``, as torch's, picks one of
several by mode: :data:`PADDING_OPS`).

One module per topic; this package re-exports their public names:

=============  ================================================================
activations    relu, gelu, silu, softplus, elu, selu, celu, mish, logsigmoid,
               softmax, log_softmax, softmin, softsign, tanhshrink, threshold,
               glu, prelu
piecewise      hardtanh, relu6, hardsigmoid, hardswish
layers         linear, bilinear, dropout, dropout1d, dropout2d, embedding
convolution    conv1d, conv2d, conv_transpose2d
pooling        max/avg_pool1d and 2d, adaptive_avg/max_pool2d
normalization  layer_norm, batch_norm, group_norm, instance_norm, normalize
losses         nll_loss, cross_entropy, binary_cross_entropy(_with_logits), one_hot
distances      mse_loss, l1_loss, smooth_l1_loss, huber_loss, kl_div,
               cosine_similarity, pairwise_distance, margin_ranking_loss,
               triplet_margin_loss
attention      scaled_dot_product_attention
folding        unfold, fold
resampling     pad, interpolate, pixel_shuffle, pixel_unshuffle
=============  ================================================================
"""

from .activations import (
    celu,
    elu,
    gelu,
    glu,
    leaky_relu,
    log_softmax,
    logsigmoid,
    mish,
    prelu,
    relu,
    selu,
    sigmoid,
    silu,
    softmax,
    softmin,
    softplus,
    softsign,
    tanh,
    tanhshrink,
    threshold,
)
from .attention import attention_bias, scaled_dot_product_attention
from .convolution import conv1d, conv2d, conv_transpose2d
from .distances import (
    cosine_similarity,
    huber_loss,
    kl_div,
    l1_loss,
    margin_ranking_loss,
    mse_loss,
    pairwise_distance,
    smooth_l1_loss,
    triplet_margin_loss,
)
from .folding import fold, unfold
from .layers import bilinear, dropout, dropout1d, dropout2d, embedding, linear
from .losses import (
    binary_cross_entropy,
    binary_cross_entropy_with_logits,
    cross_entropy,
    nll_loss,
    one_hot,
)
from .normalization import batch_norm, group_norm, instance_norm, layer_norm, normalize
from .piecewise import hardsigmoid, hardswish, hardtanh, relu6
from .pooling import (
    adaptive_avg_pool2d,
    adaptive_max_pool2d,
    avg_pool1d,
    avg_pool2d,
    max_pool1d,
    max_pool2d,
)
from .resampling import (
    INTERPOLATE_MODES,
    PADDING_OPS,
    interpolate,
    pad,
    pixel_shuffle,
    pixel_unshuffle,
)

__all__ = [
    "INTERPOLATE_MODES", "PADDING_OPS", "adaptive_avg_pool2d", "adaptive_max_pool2d",
    "attention_bias", "avg_pool1d", "avg_pool2d", "batch_norm", "binary_cross_entropy",
    "binary_cross_entropy_with_logits", "celu", "conv1d", "conv2d", "conv_transpose2d",
    "cosine_similarity", "cross_entropy", "dropout", "elu", "embedding", "gelu", "group_norm",
    "hardsigmoid", "hardswish", "hardtanh", "huber_loss", "interpolate", "kl_div", "l1_loss",
    "layer_norm", "leaky_relu", "linear", "log_softmax", "logsigmoid", "max_pool1d",
    "max_pool2d", "mish", "mse_loss", "nll_loss", "normalize", "one_hot", "pad",
    "pairwise_distance", "relu", "relu6", "scaled_dot_product_attention", "selu", "sigmoid",
    "silu", "smooth_l1_loss", "softmax", "softplus", "tanh",
    "dropout1d", "dropout2d", "instance_norm", "glu", "prelu", "softmin", "softsign",
    "tanhshrink", "threshold", "pixel_shuffle", "pixel_unshuffle",
    "margin_ranking_loss", "triplet_margin_loss", "bilinear",
    "fold", "unfold",
]
