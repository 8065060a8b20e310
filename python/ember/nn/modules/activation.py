"""Activation modules."""

from __future__ import annotations

from ember.nn import functional as F
from ember.nn.modules.module import Module


class ReLU(Module):
    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Sigmoid(Module):
    def forward(self, input):
        return F.sigmoid(input)


class Tanh(Module):
    def forward(self, input):
        return F.tanh(input)


def _inplace_suffix(inplace):
    return ", inplace=True" if inplace else ""


class Threshold(Module):
    def __init__(self, threshold: float, value: float, inplace: bool = False):
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}{_inplace_suffix(self.inplace)}"


class Hardtanh(Module):
    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False, min_value=None,
                 max_value=None):
        super().__init__()
        if min_value is not None:
            import warnings

            warnings.warn("keyword argument `min_value` is deprecated and rename to `min_val`", FutureWarning,
                          stacklevel=2)
            min_val = min_value
        if max_value is not None:
            import warnings

            warnings.warn("keyword argument `max_value` is deprecated and rename to `max_val`", FutureWarning,
                          stacklevel=2)
            max_val = max_value
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace
        assert self.max_val > self.min_val

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}{_inplace_suffix(self.inplace)}"


class ReLU6(Hardtanh):
    def __init__(self, inplace: bool = False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class _InplaceOnly(Module):
    _fn = None

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return type(self)._fn(input, inplace=self.inplace)


class SiLU(_InplaceOnly):
    _fn = staticmethod(F.silu)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Mish(_InplaceOnly):
    _fn = staticmethod(F.mish)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class SELU(_InplaceOnly):
    _fn = staticmethod(F.selu)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Hardsigmoid(_InplaceOnly):
    _fn = staticmethod(F.hardsigmoid)


class Hardswish(_InplaceOnly):
    _fn = staticmethod(F.hardswish)


class LeakyReLU(Module):
    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False):
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}{_inplace_suffix(self.inplace)}"


class ELU(Module):
    def __init__(self, alpha: float = 1.0, inplace: bool = False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}{_inplace_suffix(self.inplace)}"


class CELU(ELU):
    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)


class GELU(Module):
    def __init__(self, approximate: str = "none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Softplus(Module):
    def __init__(self, beta: float = 1.0, threshold: float = 20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class LogSigmoid(Module):
    def forward(self, input):
        return F.logsigmoid(input)


class Softsign(Module):
    def forward(self, input):
        return F.softsign(input)


class Tanhshrink(Module):
    def forward(self, input):
        return F.tanhshrink(input)


class GLU(Module):
    def __init__(self, dim: int = -1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class _SoftmaxBase(Module):
    _fn = None

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "dim"):
            self.dim = None

    def forward(self, input):
        return type(self)._fn(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax(_SoftmaxBase):
    _fn = staticmethod(F.softmax)


class Softmin(_SoftmaxBase):
    _fn = staticmethod(F.softmin)


class LogSoftmax(_SoftmaxBase):
    _fn = staticmethod(F.log_softmax)
