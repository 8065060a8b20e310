"""ember.Tensor: the Python face of the C++ tensor (methods beyond _C.TensorBase)."""

from __future__ import annotations

from numbers import Number

from ember import _C


class Tensor(_C.TensorBase):
    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Computes the gradient of this tensor w.r.t. the graph leaves."""
        from ember import autograd

        autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def __repr__(self, *, tensor_contents=None):
        from ember import _tensor_str

        return _tensor_str._str(self, tensor_contents=tensor_contents)

    def __format__(self, spec):
        if self.dim() == 0:
            return self.item().__format__(spec)
        return object.__format__(self, spec)

    def __hash__(self):
        return id(self)

    def __reduce_ex__(self, protocol):
        raise NotImplementedError("pickling ember tensors arrives with ember.save")

    def __array__(self, dtype=None):
        import numpy as np

        return np.array(self.tolist(), dtype=dtype)

    def __iter__(self):
        if self.dim() == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    @property
    def T(self):  # noqa: N802
        global _T_WARNED
        if self.dim() != 2 and not _T_WARNED:
            _T_WARNED = True
            import warnings

            warnings.warn(
                "The use of `x.T` on tensors of dimension other than 2 to reverse their shape is deprecated and it "
                "will throw an error in a future release. Consider `x.mT` to transpose batches of matrices or "
                "`x.permute(*torch.arange(x.ndim - 1, -1, -1))` to reverse the dimensions of a tensor.",
                UserWarning,
                stacklevel=2,
            )
        return self.permute(tuple(reversed(range(self.dim()))))

    @property
    def mT(self):  # noqa: N802
        if self.dim() == 0:
            _warn_0d("Tensor.mT is deprecated on 0-D tensors. This function is the identity in these cases.")
            return self
        if self.dim() < 2:
            raise RuntimeError(
                f"tensor.mT is only supported on matrices or batches of matrices. Got {self.dim()}-D tensor."
            )
        return self.transpose(-2, -1)

    @property
    def H(self):  # noqa: N802
        if self.dim() == 0:
            _warn_0d("Tensor.H is deprecated on 0-D tensors. Consider using x.conj().")
            return self
        if self.dim() != 2:
            raise RuntimeError(
                f"tensor.H is only supported on matrices (2-D tensors). Got {self.dim()}-D tensor."
                + (" For batches of matrices, consider using tensor.mH" if self.dim() > 2 else "")
            )
        return self.transpose(-2, -1)

    @property
    def mH(self):  # noqa: N802
        if self.dim() == 0:
            _warn_0d("Tensor.mH is deprecated on 0-D tensors. Consider using x.conj().")
            return self
        if self.dim() < 2:
            raise RuntimeError(
                f"tensor.mH is only supported on matrices or batches of matrices. Got {self.dim()}-D tensor."
            )
        return self.transpose(-2, -1)

    def adjoint(self):
        if self.dim() == 0:
            _warn_0d("adjoint() is deprecated on 0-D tensors. Consider using x.conj().")
            return self
        return self.mH

    def type(self, dtype=None):
        if dtype is None:
            return "torch." + _LEGACY[self.dtype]
        raise NotImplementedError("Tensor.type(dtype) is not supported yet")


_LEGACY = {}
_T_WARNED = False


def _warn_0d(message):
    import warnings

    warnings.warn(message, UserWarning, stacklevel=3)


def _fill_legacy():
    import ember

    names = {
        ember.uint8: "ByteTensor",
        ember.int8: "CharTensor",
        ember.int16: "ShortTensor",
        ember.int32: "IntTensor",
        ember.int64: "LongTensor",
        ember.float16: "HalfTensor",
        ember.float32: "FloatTensor",
        ember.float64: "DoubleTensor",
        ember.bool: "BoolTensor",
        ember.bfloat16: "BFloat16Tensor",
    }
    _LEGACY.update(names)


def _infer(data, shape, flat, depth=0):
    """Walks nested sequences: records the shape, flattens, and returns the kind
    of values seen (0 bool, 1 int, 2 float)."""
    if isinstance(data, Number) or isinstance(data, Tensor):
        if isinstance(data, Tensor):
            if data.dim() != 0:
                raise ValueError("only one element tensors can be converted to Python scalars")
            data = data.item()
        if len(shape) != depth:
            raise ValueError(f"expected sequence of length {shape[depth]} at dim {depth} (got {type(data).__name__})")
        flat.append(data)
        if isinstance(data, bool):
            return 0
        if isinstance(data, int):
            return 1
        if isinstance(data, float):
            return 2
        raise TypeError(f"Could not infer dtype of {type(data).__name__}")
    if isinstance(data, (str, bytes)) or not hasattr(data, "__len__"):
        raise TypeError(f"Could not infer dtype of {type(data).__name__}")
    n = len(data)
    if len(shape) == depth:
        shape.append(n)
    elif shape[depth] != n:
        raise ValueError(f"expected sequence of length {shape[depth]} at dim {depth} (got {n})")
    kind = -1
    for item in data:
        kind = max(kind, _infer(item, shape, flat, depth + 1))
    return kind


def tensor(data, *, dtype=None, device=None, requires_grad=False):
    """Builds a tensor from nested lists/tuples of numbers, inferring the dtype
    as PyTorch does (bool < int64 < default float)."""
    import ember

    if not _LEGACY:
        _fill_legacy()
    if isinstance(data, Tensor):
        out = data.detach().clone()
        if dtype is not None:
            out = out.to(dtype)
    else:
        if hasattr(data, "__array__") and not isinstance(data, (list, tuple)):
            data = data.tolist()
        shape: list[int] = []
        flat: list = []
        kind = _infer(data, shape, flat)
        if dtype is None:
            dtype = {0: ember.bool, 1: ember.int64, 2: ember.get_default_dtype(), -1: ember.get_default_dtype()}[kind]
        out = _C._tensor_from_flat(flat, tuple(shape), dtype)
    if device is not None:
        out = out.to(ember.device(device))
    if requires_grad:
        out.requires_grad_(True)
    return out
