"""BatchedTensor: a tensor seen by one vmap level as one sample of a batch.

The batch lives in dimension 0 of ``value`` (Note [vmap representation] in
docs/decisions/0030-func-transforms-vmap.md). ``value`` is a plain tensor or,
under nested vmap, the BatchedTensor of an outer level, so a rule written for
one level runs again, level by level, when it calls an operator on ``value``.
Operators reach the rules through dispatchers that vmap puts over the
functions of ``ember`` and ``ember.nn.functional`` while it runs and through
this class's methods.
"""

from __future__ import annotations

import ember
from ember import _C

# Active vmap levels, outermost first: [(level, batch_size, randomness)].
LEVELS = []
# How many grad/vjp transforms (ember.func) are running.
_GRAD_DEPTH = [0]


class BatchedTensor:
    __slots__ = ("value", "level", "__weakref__")
    # Python binary operators on (Tensor, BatchedTensor) reach __rop__ here.
    __array_priority__ = 2000

    def __init__(self, value, level):
        self.value = value
        self.level = level

    # ---- metadata of one sample ----
    @property
    def shape(self):
        return ember.Size(tuple(self.value.shape)[1:])

    def size(self, dim=None):
        shape = self.shape
        if dim is None:
            return shape
        return shape[_wrap_dim(dim, len(shape))]

    def dim(self):
        return self.value.dim() - 1

    ndim = property(dim)

    def numel(self):
        n = 1
        for s in self.shape:
            n *= s
        return n

    nelement = numel

    def __len__(self):
        if self.dim() == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    dtype = property(lambda self: self.value.dtype)
    device = property(lambda self: self.value.device)
    layout = property(lambda self: self.value.layout)
    is_cuda = property(lambda self: self.value.is_cuda)
    is_sparse = property(lambda self: False)
    is_quantized = property(lambda self: False)
    is_meta = property(lambda self: False)
    is_nested = property(lambda self: False)

    def is_floating_point(self):
        return self.value.is_floating_point()

    def is_complex(self):
        return self.value.is_complex()

    def is_contiguous(self, memory_format=None):
        return True

    def get_device(self):
        return self.value.get_device()

    def element_size(self):
        return self.value.element_size()

    def stride(self, dim=None):
        strides = tuple(self.value.stride())[1:]
        return strides if dim is None else strides[_wrap_dim(dim, len(strides))]

    @property
    def requires_grad(self):
        return self.value.requires_grad

    @property
    def grad_fn(self):
        return self.value.grad_fn

    @property
    def is_leaf(self):
        return self.value.is_leaf

    def requires_grad_(self, requires_grad=True):
        self.value.requires_grad_(requires_grad)
        return self

    @property
    def data(self):
        return BatchedTensor(self.value.data, self.level)

    @property
    def T(self):
        return self.permute(*reversed(range(self.dim())))

    @property
    def mT(self):
        return self.transpose(-2, -1)

    @property
    def H(self):
        return self.T.conj()

    @property
    def mH(self):
        return self.mT.conj()

    @property
    def real(self):
        return BatchedTensor(self.value.real, self.level)

    @property
    def imag(self):
        return BatchedTensor(self.value.imag, self.level)

    # ---- what vmap cannot batch ----
    def item(self):
        raise RuntimeError(
            "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over calling "
            ".item() on a Tensor, please try to rewrite what you're doing with other operations."
        )

    def _data_dependent(self, *args):
        raise RuntimeError(
            "vmap: It looks like you're attempting to use a Tensor in some data-dependent control flow. "
            "We don't support that yet, please rewrite the function with operations that do not "
            "depend on the tensor's values (ember.where, for example)."
        )

    __bool__ = __int__ = __float__ = __complex__ = __index__ = _data_dependent

    def tolist(self):
        raise RuntimeError(
            "vmap: It looks like you're calling .tolist() on a Tensor, which is data-dependent. "
            "We don't support vmap over it."
        )

    def numpy(self, *args, **kwargs):
        raise RuntimeError("vmap: numpy() cannot be called on a Tensor inside vmap.")

    def __iter__(self):
        if self.dim() == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __hash__(self):
        return id(self)

    def __repr__(self):
        return f"BatchedTensor(lvl={self.level}, bdim=0, value=\n{self.value!r}\n)"

    # ---- operators: everything else goes through the rules ----
    def __getattr__(self, name):
        if name.startswith("__") or not hasattr(ember.Tensor, name):
            raise AttributeError(f"'Tensor' object has no attribute '{name}'")
        from ember._functorch import dispatch

        return dispatch.bound_method(self, name)


def _wrap_dim(dim, ndim):
    if not -max(ndim, 1) <= dim < max(ndim, 1):
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-max(ndim, 1)}, {max(ndim, 1) - 1}], but got {dim})"
        )
    return dim + ndim if dim < 0 else dim


def _install_operators():
    from ember._functorch import dispatch

    binary = [
        "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul",
        "and", "or", "xor", "lshift", "rshift",
    ]
    for name in binary:
        for form in (f"__{name}__", f"__r{name}__", f"__i{name}__"):
            if form in dispatch._FORMS:
                setattr(BatchedTensor, form, dispatch.operator_method(form))
    for form in ("__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__neg__", "__pos__", "__abs__",
                 "__invert__", "__getitem__", "__setitem__"):
        setattr(BatchedTensor, form, dispatch.operator_method(form))


def current_level():
    return LEVELS[-1] if LEVELS else None


def maybe_wrap(value, level):
    return BatchedTensor(value, level)


def is_tensor_like(x):
    return isinstance(x, (_C.TensorBase, BatchedTensor))
