"""Building blocks of networks."""

from ember.nn.modules.activation import (
    CELU, ELU, GELU, GLU, SELU, Hardsigmoid, Hardswish, Hardtanh, LeakyReLU, LogSigmoid, LogSoftmax, Mish, ReLU, ReLU6,
    Sigmoid, SiLU, Softmax, Softmin, Softplus, Softsign, Tanh, Tanhshrink, Threshold,
)
from ember.nn.modules.dropout import Dropout, Dropout1d, Dropout2d
from ember.nn.modules.sparse import Embedding
from ember.nn.modules.batchnorm import BatchNorm1d, BatchNorm2d
from ember.nn.modules.container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from ember.nn.modules.conv import Conv1d, Conv2d, ConvTranspose2d
from ember.nn.modules.flatten import Flatten, Unflatten
from ember.nn.modules.linear import Identity, LazyLinear, Linear
from ember.nn.modules.loss import (
    BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss, KLDivLoss, L1Loss, MSELoss, NLLLoss, SmoothL1Loss,
)
from ember.nn.modules.module import Module
from ember.nn.modules.normalization import GroupNorm, LayerNorm
from ember.nn.modules.pooling import AdaptiveAvgPool2d, AvgPool1d, AvgPool2d, MaxPool1d, MaxPool2d
from ember.nn.modules import fold as _fold, padding as _padding, rnn as _rnn, transformer as _transformer  # noqa: E402
from ember.nn.modules import upsampling as _upsampling  # noqa: E402
from ember.nn.modules import extra as _extra, loss_more as _loss_more  # noqa: E402
from ember.nn.modules.extra import *  # noqa: F401,F403
from ember.nn.modules.loss_more import *  # noqa: F401,F403
from ember.nn.modules.fold import *  # noqa: F401,F403
from ember.nn.modules.padding import *  # noqa: F401,F403
from ember.nn.modules.rnn import *  # noqa: F401,F403
from ember.nn.modules.transformer import *  # noqa: F401,F403
from ember.nn.modules.upsampling import *  # noqa: F401,F403

__all__ = [
    "Module",
    "Linear",
    "Identity",
    "LazyLinear",
    "ReLU",
    "Sigmoid",
    "Tanh",
    "Sequential",
    "ModuleList",
    "ModuleDict",
    "ParameterList",
    "ParameterDict",
    "MSELoss",
    "Conv1d",
    "Conv2d",
    "ConvTranspose2d",
    "MaxPool1d",
    "MaxPool2d",
    "AvgPool1d",
    "AvgPool2d",
    "AdaptiveAvgPool2d",
    "BatchNorm1d",
    "BatchNorm2d",
    "LayerNorm",
    "GroupNorm",
    "Flatten",
    "Unflatten",
    *_fold.__all__,
    *_padding.__all__,
    *_rnn.__all__,
    *_transformer.__all__,
    *_upsampling.__all__,
    *_extra.__all__,
    *_loss_more.__all__,
    "CELU", "ELU", "GELU", "GLU", "SELU", "Hardsigmoid", "Hardswish", "Hardtanh", "LeakyReLU", "LogSigmoid",
    "LogSoftmax", "Mish", "ReLU6", "SiLU", "Softmax", "Softmin", "Softplus", "Softsign", "Tanhshrink", "Threshold",
    "Dropout", "Dropout1d", "Dropout2d", "Embedding",
    "BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "HuberLoss", "KLDivLoss", "L1Loss", "NLLLoss", "SmoothL1Loss",
]
