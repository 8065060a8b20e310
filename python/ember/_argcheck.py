"""PyTorch's TypeErrors for Python-level functions given arguments of the
wrong type (its C++ argument parser raises them; without these checks a
wrapper fails later with an AttributeError), its IndexError for a dim out
of range and its dispatcher's error for an operator without a CUDA kernel."""

from __future__ import annotations

from ember import _C


def _type_name(value):
    kind = type(value)
    if isinstance(value, _C.TensorBase):
        return "Tensor"
    if kind.__module__ == "builtins":
        return kind.__name__
    return "torch." + kind.__name__.split(".")[-1]


def tensor(fn, name, position, value):
    if not isinstance(value, _C.TensorBase):
        raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be Tensor, not {_type_name(value)}")
    return value


def tensor_elements(values, argument=0):
    for i, value in enumerate(values):
        if not isinstance(value, _C.TensorBase):
            raise TypeError(f"expected Tensor as element {i} in argument {argument}, but got {_type_name(value)}")
    return values


def backend_error(op, backend):
    """PyTorch's NotImplementedError for `op` ("aten::histogram.bin_ct") without a kernel for `backend` ("CUDA")."""
    return NotImplementedError(
        f"Could not run '{op}' with arguments from the '{backend}' backend. This could be because the operator "
        "doesn't exist for this backend, or was omitted during the selective/custom build process (if "
        "using custom build)."
    )


def cpu_only(op, *values):
    """Raises PyTorch's NotImplementedError for `op`, an operator with CPU kernels only, when a tensor among
    values lives on CUDA (ops/Dispatch.cpp words it the same)."""
    for value in values:
        if isinstance(value, _C.TensorBase) and value.device.type == "cuda":
            raise backend_error(op, "CUDA")


def string(fn, name, position, value):
    if not isinstance(value, str):
        raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be str, not {_type_name(value)}")
    return value


class Binding:
    """The argument checks of the C++ binding a Python-level function ends in,
    run where PyTorch's Python code calls that binding (after its own checks)."""

    def __init__(self, *signatures):
        self._signatures = list(signatures)
        self._parsed = None

    def __call__(self, *args, **kwargs):
        if self._parsed is None:
            self._parsed = _C._arg_signatures(self._signatures, False)
        _C._check_args(self._parsed, *args, **kwargs)


def wrap_dim(dim, ndim):
    """dim as an index in [0, ndim), PyTorch's IndexError outside [-ndim, ndim) (a 0-dim tensor takes -1 and 0)."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got {dim})")
    return dim % n
