"""ember.nn: modules, parameters, functional and init, as torch.nn."""

from ember.nn import functional, init  # noqa: F401
from ember.nn import utils  # noqa: F401
from ember.nn.modules import *  # noqa: F401,F403
from ember.nn.modules import __all__ as _modules_all
from ember.nn import attention, common_types, grad, parallel  # noqa: F401
from ember.nn.parallel import DataParallel  # noqa: F401
from ember.nn.parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter  # noqa: F401

__all__ = [
    "Parameter",
    "Buffer",
    "UninitializedParameter",
    "UninitializedBuffer",
    "DataParallel",
    "functional",
    "init",
    *_modules_all,
]
