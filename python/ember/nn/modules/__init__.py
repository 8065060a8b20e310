"""Building blocks of networks."""

from ember.nn.modules.activation import ReLU, Sigmoid, Tanh
from ember.nn.modules.container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from ember.nn.modules.linear import Identity, Linear
from ember.nn.modules.loss import MSELoss
from ember.nn.modules.module import Module

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
]
