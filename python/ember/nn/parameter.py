"""Parameter: a Tensor that a Module registers as learnable."""

from __future__ import annotations

from ember._tensor import Tensor


class Parameter(Tensor):
    """A tensor that is a module parameter (requires grad by default)."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            from ember import empty

            data = empty(0)
        return Tensor._make_subclass(cls, data, requires_grad)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.data.clone(), self.requires_grad)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, proto):
        return (Parameter, (self.data, self.requires_grad))


class Buffer(Tensor):
    """Marks a tensor to be registered as a module buffer on assignment."""

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            from ember import empty

            data = empty(0)
        t = data.detach()
        t._is_buffer_marker = persistent
        return t
