"""Neural-network building blocks with ``torch.nn``'s names: modules, layers,
losses and ``nn.init``. A torch ``state_dict`` loads into the matching engine
model, so both engines can start from identical weights.

``nn.functional`` is :mod:`chapters.autodiff.functional` under torch's name,
so ``import chapters.autodiff.nn.functional as F`` works as
``import torch.nn.functional as F`` does (one module, two names, as
``os.path``)."""

import sys

from .. import functional
from . import init, utils
from .activation import (
    CELU,
    ELU,
    GELU,
    GLU,
    SELU,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    LeakyReLU,
    LogSigmoid,
    LogSoftmax,
    Mish,
    PReLU,
    ReLU,
    ReLU6,
    Sigmoid,
    SiLU,
    Softmax,
    Softmin,
    Softplus,
    Softsign,
    Tanh,
    Tanhshrink,
    Threshold,
)
from .attention import MultiheadAttention
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .conv import Conv1d, Conv2d, ConvTranspose2d
from .distance import CosineSimilarity, PairwiseDistance
from .dropout import Dropout, Dropout1d, Dropout2d
from .flatten import Flatten, Unflatten
from .fold import Fold, Unfold
from .instancenorm import InstanceNorm1d, InstanceNorm2d
from .linear import Bilinear, Identity, Linear
from .loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    HuberLoss,
    KLDivLoss,
    L1Loss,
    MarginRankingLoss,
    MSELoss,
    NLLLoss,
    SmoothL1Loss,
    TripletMarginLoss,
)
from .module import Module, Parameter
from .normalization import BatchNorm1d, BatchNorm2d, GroupNorm, LayerNorm
from .pixelshuffle import PixelShuffle, PixelUnshuffle
from .pooling import (
    AdaptiveAvgPool2d,
    AdaptiveMaxPool2d,
    AvgPool1d,
    AvgPool2d,
    MaxPool1d,
    MaxPool2d,
)
from .sparse import Embedding
from .transformer import TransformerEncoderLayer

sys.modules[f"{__name__}.functional"] = functional

__all__ = [
    "GELU", "AvgPool2d", "BCELoss", "BCEWithLogitsLoss", "BatchNorm1d", "BatchNorm2d",
    "Conv1d", "Conv2d", "ConvTranspose2d", "MaxPool2d",
    "CrossEntropyLoss", "Dropout", "Embedding", "Flatten", "Identity", "LayerNorm", "Linear",
    "MSELoss", "Module", "MultiheadAttention", "Parameter", "ReLU", "Sequential", "Sigmoid",
    "Tanh", "TransformerEncoderLayer", "functional", "init",
    "CELU", "ELU", "SELU", "Hardsigmoid", "Hardswish", "Hardtanh", "LeakyReLU", "LogSigmoid",
    "LogSoftmax", "Mish", "ReLU6", "SiLU", "Softmax", "Softplus",
    "GroupNorm", "AdaptiveAvgPool2d", "AdaptiveMaxPool2d", "AvgPool1d", "MaxPool1d",
    "CosineSimilarity", "HuberLoss", "KLDivLoss", "L1Loss", "NLLLoss", "PairwiseDistance",
    "SmoothL1Loss", "ModuleDict", "ModuleList", "ParameterDict", "ParameterList", "utils",
    "GLU", "PReLU", "Softmin", "Softsign", "Tanhshrink", "Threshold", "Dropout1d", "Dropout2d",
    "InstanceNorm1d", "InstanceNorm2d", "PixelShuffle", "PixelUnshuffle", "Unflatten",
    "Bilinear", "MarginRankingLoss", "TripletMarginLoss", "Fold", "Unfold",
]
