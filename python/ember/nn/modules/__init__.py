"""Building blocks of networks."""

from ember.nn.modules.activation import ReLU, Sigmoid, Tanh
from ember.nn.modules.batchnorm import BatchNorm1d, BatchNorm2d
from ember.nn.modules.container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from ember.nn.modules.conv import Conv1d, Conv2d, ConvTranspose2d
from ember.nn.modules.flatten import Flatten, Unflatten
from ember.nn.modules.linear import Identity, Linear
from ember.nn.modules.loss import MSELoss
from ember.nn.modules.module import Module
from ember.nn.modules.normalization import GroupNorm, LayerNorm
from ember.nn.modules.pooling import AdaptiveAvgPool2d, AvgPool1d, AvgPool2d, MaxPool1d, MaxPool2d
from ember.nn.modules import fold as _fold, padding as _padding, rnn as _rnn, transformer as _transformer  # noqa: E402
from ember.nn.modules import upsampling as _upsampling  # noqa: E402
from ember.nn.modules.fold import *  # noqa: F401,F403
from ember.nn.modules.padding import *  # noqa: F401,F403
from ember.nn.modules.rnn import *  # noqa: F401,F403
from ember.nn.modules.transformer import *  # noqa: F401,F403
from ember.nn.modules.upsampling import *  # noqa: F401,F403

__all__ = [
    "Module",
    "Linear",
    "Identity",
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
]
