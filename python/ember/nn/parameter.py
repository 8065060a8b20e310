"""Parameter: a Tensor that a Module registers as learnable."""

from __future__ import annotations

from ember import _C
from ember._tensor import Tensor


class Parameter(Tensor):
    """A tensor that is a module parameter (requires grad by default)."""

    # Operations on parameters give plain tensors.
    __torch_function__ = _C._disabled_torch_function_impl

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


class UninitializedParameter(Parameter):
    """A parameter whose shape is not known yet (of a lazy module); materialize()
    gives it one and makes it a plain Parameter."""

    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        from ember import empty

        p = Tensor._make_subclass(cls, empty(0, dtype=dtype), requires_grad)
        p._lazy_factory = {"device": device, "dtype": dtype}
        return p

    def __repr__(self):
        return "<UninitializedParameter>"

    def materialize(self, shape, device=None, dtype=None):
        from ember import empty

        factory = getattr(self, "_lazy_factory", {})
        device = device if device is not None else factory.get("device")
        dtype = dtype if dtype is not None else factory.get("dtype")
        self.data = empty(shape, device=device, dtype=dtype)
        self.__class__ = self.cls_to_become

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.requires_grad)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, proto):
        return (UninitializedParameter, (self.requires_grad,))


def is_lazy(param):
    return isinstance(param, UninitializedParameter)


class UninitializedBuffer(Tensor):
    """A buffer whose shape is not known yet (of a lazy module); materialize() gives it one."""

    __torch_function__ = _C._disabled_torch_function_impl
    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None, persistent=True):
        from ember import empty

        b = Tensor._make_subclass(cls, empty(0, dtype=dtype), requires_grad)
        b._lazy_factory = {"device": device, "dtype": dtype}
        b.persistent = persistent
        return b

    def __repr__(self):
        return "<UninitializedBuffer>"

    def materialize(self, shape, device=None, dtype=None):
        from ember import empty

        factory = getattr(self, "_lazy_factory", {})
        device = device if device is not None else factory.get("device")
        dtype = dtype if dtype is not None else factory.get("dtype")
        self.data = empty(shape, device=device, dtype=dtype)
        self.__class__ = self.cls_to_become
