"""Building blocks of networks."""

from ember.nn.modules.activation import (
    CELU, ELU, GELU, GLU, SELU, Hardsigmoid, Hardswish, Hardtanh, LeakyReLU, LogSigmoid, LogSoftmax, Mish, ReLU, ReLU6,
    Sigmoid, SiLU, Softmax, Softmin, Softplus, Softsign, Tanh, Tanhshrink, Threshold,
)
from ember.nn.modules.dropout import Dropout, Dropout1d, Dropout2d
from ember.nn.modules.sparse import Embedding, EmbeddingBag
from ember.nn.modules.batchnorm import BatchNorm1d, BatchNorm2d, SyncBatchNorm
from ember.nn.modules.container import Container, ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from ember.nn.modules.conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ember.nn.modules.flatten import Flatten, Unflatten
from ember.nn.modules.linear import Identity, LazyLinear, Linear
from ember.nn.modules.loss import (
    BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss, KLDivLoss, L1Loss, MSELoss, NLLLoss, SmoothL1Loss,
)
from ember.nn.modules.module import Module
from ember.nn.modules.normalization import GroupNorm, LayerNorm
from ember.nn.modules.pooling import (
    AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d, AdaptiveMaxPool1d, AdaptiveMaxPool2d, AdaptiveMaxPool3d,
    AvgPool1d, AvgPool2d, AvgPool3d, MaxPool1d, MaxPool2d, MaxPool3d, MaxUnpool1d, MaxUnpool2d, MaxUnpool3d,
)
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
from ember.nn.modules import lazy as _lazy  # noqa: E402
from ember.nn.modules.lazy import *  # noqa: F401,F403
from ember.nn.modules import rest as _rest  # noqa: E402
from ember.nn.modules import adaptive  # noqa: E402,F401
from ember.nn.modules.rest import *  # noqa: F401,F403

__all__ = [
    "Module",
    "Linear",
    "Identity",
    "LazyLinear",
    "ReLU",
    "Sigmoid",
    "Tanh",
    "Sequential",
    "Container",
    "ModuleList",
    "ModuleDict",
    "ParameterList",
    "ParameterDict",
    "MSELoss",
    "Conv1d",
    "Conv2d",
    "Conv3d",
    "ConvTranspose1d",
    "ConvTranspose2d",
    "ConvTranspose3d",
    "MaxPool1d",
    "MaxPool2d",
    "AvgPool1d",
    "AvgPool2d",
    "AdaptiveAvgPool2d",
    "AdaptiveAvgPool1d",
    "AdaptiveAvgPool3d",
    "AvgPool3d",
    "MaxPool3d",
    "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d",
    "AdaptiveMaxPool3d",
    "MaxUnpool1d",
    "MaxUnpool2d",
    "MaxUnpool3d",
    "BatchNorm1d",
    "BatchNorm2d",
    "SyncBatchNorm",
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
    *_rest.__all__,
    *[n for n in _lazy.__all__ if n != "LazyModuleMixin"],
    "CELU", "ELU", "GELU", "GLU", "SELU", "Hardsigmoid", "Hardswish", "Hardtanh", "LeakyReLU", "LogSigmoid",
    "LogSoftmax", "Mish", "ReLU6", "SiLU", "Softmax", "Softmin", "Softplus", "Softsign", "Tanhshrink", "Threshold",
    "Dropout", "Dropout1d", "Dropout2d", "Embedding", "EmbeddingBag",
    "BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "HuberLoss", "KLDivLoss", "L1Loss", "NLLLoss", "SmoothL1Loss",
]

# Classes defined beside others are also reachable where PyTorch defines them (nn.modules.activation.PReLU).
from ember.nn.modules import (  # noqa: E402
    activation as _activation, batchnorm as _batchnorm, container as _container, conv as _conv, dropout as _dropout,
    linear as _linear, loss as _loss, normalization as _normalization, pooling as _pooling,
)
from ember.nn.modules import channelshuffle, distance, instancenorm, pixelshuffle, utils  # noqa: E402,F401

_HOMES = {
    _activation: ["Hardshrink", "PReLU", "RReLU", "Softmax2d", "Softshrink"],
    _linear: ["Bilinear"],
    _conv: ["LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d",
            "LazyConvTranspose3d"],
    _loss: [*_loss_more.__all__, "CTCLoss"],
    _pooling: ["LPPool1d", "LPPool2d", "LPPool3d", "FractionalMaxPool2d", "FractionalMaxPool3d"],
    _normalization: ["LocalResponseNorm", "RMSNorm", "CrossMapLRN2d"],
    _dropout: ["AlphaDropout", "Dropout3d", "FeatureAlphaDropout"],
    _batchnorm: ["BatchNorm3d", "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d"],
}
for _home, _names in _HOMES.items():
    for _name in _names:
        if _name in globals() and not hasattr(_home, _name):
            setattr(_home, _name, globals()[_name])
