"""Neural-network building blocks with ``torch.nn``'s names: modules, layers,
losses and ``nn.init``. A torch ``state_dict`` loads into the matching engine
model, so both engines can start from identical weights."""

from . import init
from .attention import MultiheadAttention
from .conv import AvgPool2d, Conv1d, ConvTranspose2d, MaxPool2d
from .layers import (
    GELU,
    Conv2d,
    Dropout,
    Embedding,
    Flatten,
    Identity,
    Linear,
    ReLU,
    Sequential,
    Sigmoid,
    Tanh,
)
from .loss import BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, MSELoss
from .module import Module, Parameter
from .normalization import BatchNorm1d, BatchNorm2d, LayerNorm
from .transformer import TransformerEncoderLayer

__all__ = [
    "GELU", "AvgPool2d", "BCELoss", "BCEWithLogitsLoss", "BatchNorm1d", "BatchNorm2d",
    "Conv1d", "Conv2d", "ConvTranspose2d", "MaxPool2d",
    "CrossEntropyLoss", "Dropout", "Embedding", "Flatten", "Identity", "LayerNorm", "Linear",
    "MSELoss", "Module", "MultiheadAttention", "Parameter", "ReLU", "Sequential", "Sigmoid",
    "Tanh", "TransformerEncoderLayer", "init",
]
