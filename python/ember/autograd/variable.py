"""ember.autograd.variable: the legacy Variable type. Every tensor is a
Variable; calling Variable(data) gives a tensor sharing data's memory."""

from __future__ import annotations

import warnings

from ember import _C

__all__ = ["Variable"]


class VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, _C.TensorBase)


class Variable(metaclass=VariableMeta):
    """Variable(data=None, requires_grad=False, volatile=False): a new leaf
    tensor on data's memory (an empty tensor without data)."""

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        import ember

        if volatile:
            warnings.warn(
                "volatile was removed and now has no effect. Use `with torch.no_grad():` instead.", stacklevel=2
            )
        if data is None:
            data = ember.empty(0)
        elif not isinstance(data, _C.TensorBase):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        result = data.detach()
        if requires_grad:
            result.requires_grad_(True)
        return result
