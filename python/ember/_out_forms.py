"""The out= forms of outer, ger, diag, take_along_dim and msort.

The operators have no out= variant of their own: each result is computed by
the operator (so its argument checks come first, as in PyTorch's out=
kernels), then written into ``out`` with the checks PyTorch's out= kernel
makes: requires-grad arguments, the dtype rule (a cast for outer and ger,
which write through mul; the exact dtype for the others), resizing, and
internal overlap.
"""

from __future__ import annotations

from ember import _C
from ember._ops_math import _scalar_name

__all__ = ["diag", "ger", "msort", "outer", "take_along_dim"]

_functions = _C._VariableFunctions

# The C++ type names PyTorch's "Expected out tensor to have dtype" message prints.
_CPP_NAMES = {
    "bool": "bool",
    "uint8": "unsigned char",
    "int8": "signed char",
    "int16": "short int",
    "int32": "int",
    "int64": "long int",
    "float16": "c10::Half",
    "bfloat16": "c10::BFloat16",
    "float32": "float",
    "float64": "double",
    "complex64": "c10::complex<float>",
    "complex128": "c10::complex<double>",
}


def _cpp_name(dtype):
    name = str(dtype).rsplit(".", 1)[-1]
    return _CPP_NAMES.get(name, name)


def _check_no_grad(op, tensors):
    from ember import is_grad_enabled

    if is_grad_enabled() and any(t.requires_grad for t in tensors):
        raise RuntimeError(
            f"{op}(): functions with out=... arguments don't support automatic differentiation, "
            "but one of the arguments requires grad."
        )


def _refuse_overlap(out):
    if any(stride == 0 and size > 1 for size, stride in zip(out.shape, out.stride())):
        raise RuntimeError(
            "unsupported operation: more than one element of the written-to tensor refers to a single memory "
            "location. Please clone() the tensor before performing the operation."
        )


def _write(result, out, overlap_first=False):
    """result (of out's dtype) into out: resized to result's shape, then
    refused when elements of out share memory, as PyTorch's out= kernels (a
    TensorIterator's out, mul's, is refused before it is resized)."""
    if overlap_first:
        _refuse_overlap(out)
    if tuple(out.shape) != tuple(result.shape):
        out.resize_(result.shape)
    _refuse_overlap(out)
    from ember import no_grad

    with no_grad():
        out.copy_(result)
    return out


def _exact_dtype(result, out):
    if out.dtype != result.dtype:
        raise RuntimeError(
            f"Expected out tensor to have dtype {_cpp_name(result.dtype)}, but got {_cpp_name(out.dtype)} instead"
        )


def _outer_out(name, input, vec2, out):  # noqa: A002
    result = getattr(_functions, name)(input, vec2)
    # PyTorch writes it with mul(out=): grad check, then the cast rule.
    _check_no_grad("mul", (input, vec2))
    from ember import can_cast

    if not can_cast(result.dtype, out.dtype):
        raise RuntimeError(
            f"result type {_scalar_name(result.dtype)} can't be cast to the desired output type "
            f"{_scalar_name(out.dtype)}"
        )
    return _write(result.to(out.dtype), out, overlap_first=True)


def outer(input, vec2, *, out=None):  # noqa: A002
    if out is None:
        return _functions.outer(input, vec2)
    return _outer_out("outer", input, vec2, out)


def ger(input, vec2, *, out=None):  # noqa: A002
    if out is None:
        return _functions.ger(input, vec2)
    return _outer_out("ger", input, vec2, out)


def diag(input, diagonal=0, *, out=None):  # noqa: A002
    if out is None:
        return _functions.diag(input, diagonal)
    result = _functions.diag(input.detach(), diagonal)
    from ember import can_cast

    if not can_cast(result.dtype, out.dtype):
        raise RuntimeError(
            f"diag: result type {_scalar_name(result.dtype)} can't be cast to the desired out= type "
            f"{_scalar_name(out.dtype)}"
        )
    _exact_dtype(result, out)
    return _write(result, out)


def take_along_dim(input, indices, dim=None, *, out=None):  # noqa: A002
    if out is None:
        return _functions.take_along_dim(input, indices, dim)
    if dim is None and isinstance(input, _C.TensorBase) and isinstance(out, _C.TensorBase):
        # Without a dim PyTorch gathers from the flattened input: gather's out check comes first.
        _exact_dtype(input, out)
    result = _functions.take_along_dim(input, indices, dim)
    _check_no_grad("gather", (input,))
    _exact_dtype(result, out)
    return _write(result, out)


def msort(input, *, out=None):  # noqa: A002
    if out is None:
        return _functions.msort(input)
    result = _functions.msort(input)
    _check_no_grad("sort", (input,))
    _exact_dtype(result, out)
    return _write(result, out)
