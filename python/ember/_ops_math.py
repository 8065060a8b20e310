"""Operators of the torch namespace composed in Python from Ember's kernels:
elementwise number functions (frexp, gcd, nextafter ...), scans
(cummax, logcumsumexp), reductions (aminmax, quantile, nanmean, mode ...) and
statistics (cov, corrcoef, histogram). Autograd comes from the operators
they are built of."""

from __future__ import annotations

import builtins
import math
import operator

from ember import _C, _argcheck
from ember._warnings import user_stacklevel

# The names PyTorch's kernels use for dtypes in their messages.
_SCALAR_NAMES = {
    "bool": "Bool",
    "uint8": "Byte",
    "int8": "Char",
    "int16": "Short",
    "int32": "Int",
    "int64": "Long",
    "float16": "Half",
    "bfloat16": "BFloat16",
    "float32": "Float",
    "float64": "Double",
    "complex32": "ComplexHalf",
    "complex64": "ComplexFloat",
    "complex128": "ComplexDouble",
}


def _ember():
    import ember

    return ember


def _name(dtype):
    return str(dtype).split(".")[-1]


def _scalar_name(dtype):
    return _SCALAR_NAMES[_name(dtype)]


def _not_implemented(kernel, dtype):
    raise NotImplementedError(f"\"{kernel}\" not implemented for '{_scalar_name(dtype)}'")


def _require_float(kernel, *tensors):
    for t in tensors:
        if not t.dtype.is_floating_point:
            _not_implemented(kernel, t.dtype)


def _wrap(value, like):
    """A number as a 0-dim tensor of like's device (PyTorch's wrapped scalar)."""
    if isinstance(value, _C.TensorBase):
        return value
    return _ember().tensor(value, device=like.device)


def return_type(name, fields):
    """A tuple subclass printed as PyTorch's torch.return_types.<name>."""

    def __repr__(self):  # noqa: N807
        body = ",".join(f"\n{f}={v!r}" for f, v in zip(fields, self))
        return f"torch.return_types.{name}({body})"

    def __new__(cls, values):  # noqa: N807
        return tuple.__new__(cls, values)

    namespace = {
        "__slots__": (),
        "__repr__": __repr__,
        "__new__": __new__,
        "_fields": tuple(fields),
        "__module__": "torch.return_types",
        "n_fields": len(fields),
        "n_sequence_fields": len(fields),
    }
    for i, f in enumerate(fields):
        namespace[f] = property(lambda self, i=i: self[i])
    return type(name, (tuple,), namespace)


_aminmax_t = return_type("aminmax", ("min", "max"))
_cummax_t = return_type("cummax", ("values", "indices"))
_cummin_t = return_type("cummin", ("values", "indices"))
_mode_t = return_type("mode", ("values", "indices"))
_frexp_t = return_type("frexp", ("mantissa", "exponent"))
_histogram_t = return_type("histogram", ("hist", "bin_edges"))


def _write(result, out):
    """result into out through an exact out= operator, which resizes out and
    casts to its dtype as PyTorch's elementwise out= does (a complex product by
    1 is not exact: inf * 0 in its cross terms makes nan)."""
    ember = _ember()
    r = result.detach()
    if r.dtype == ember.bool:
        ember.logical_and(r, r, out=out)
    elif r.is_complex() and out.dtype.is_complex:
        r = r.to(out.dtype)
        ember.where(ember.ones((), dtype=ember.bool), r, r, out=out)
    else:
        ember.mul(r, 1, out=out)


def _out(result, out):
    if out is None:
        return result
    if isinstance(result, tuple):
        for o, r in zip(out, result):
            _write(r, o)
        return type(result)(out) if type(result) is not tuple else tuple(out)
    _write(result, out)
    return out


# ---- elementwise ---------------------------------------------------------------------------


def frexp(input, *, out=None):  # noqa: A002
    """input = mantissa * 2**exponent with |mantissa| in [0.5, 1), exponent int32."""
    ember = _ember()
    _argcheck.tensor("frexp", "input", 1, input)
    if not input.dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    x = input.detach().to(ember.float64)
    finite_nonzero = ember.isfinite(x) & (x != 0)
    # Subnormals are scaled into the normal range first, their exponent corrected after.
    tiny = x.abs() < 2.0**-1022
    scaled = ember.where(tiny, x * 2.0**54, x)
    bits = scaled.view(ember.int64)
    biased = (bits >> 52) & 0x7FF
    exponent = biased - 1022 - ember.where(tiny, 54, 0)
    exponent = ember.where(finite_nonzero, exponent, 0)
    mantissa = ember.where(finite_nonzero, x * ember.pow(2.0, (-exponent).to(ember.float64)), x)
    return _out(_frexp_t((mantissa.to(input.dtype), exponent.to(ember.int32))), out)


def _float_power_dtype(*operands):
    """complex128 when an operand is complex, else float64."""
    ember = _ember()
    for v in operands:
        if isinstance(v, builtins.complex) or (isinstance(v, _C.TensorBase) and v.is_complex()):
            return ember.complex128
    return ember.float64


def float_power(input, exponent, *, out=None):  # noqa: A002
    """pow computed in double precision."""
    ember = _ember()
    dtype = _float_power_dtype(input, exponent)
    if out is not None and out.dtype != dtype:
        raise RuntimeError(
            f"the output given to float_power has dtype {_scalar_name(out.dtype)} but the operation's result "
            f"requires dtype {_scalar_name(dtype)}"
        )
    if isinstance(input, _C.TensorBase):
        input = input.to(dtype)  # noqa: A001
    if isinstance(exponent, _C.TensorBase):
        exponent = exponent.to(dtype)
    elif isinstance(exponent, (builtins.int, builtins.float)):
        exponent = builtins.float(exponent)
    return _out(ember.pow(input, exponent), out)


def float_power_(self, exponent):
    dtype = _float_power_dtype(self, exponent)
    if self.dtype != dtype:
        raise RuntimeError(
            f"the base given to float_power_ has dtype {_scalar_name(self.dtype)} but the operation's result "
            f"requires dtype {_scalar_name(dtype)}"
        )
    return self.copy_(float_power(self, exponent))


def _broadcast_shape(a, b):
    """The shape a and b broadcast to, refused with the elementwise ops' message."""
    shape = []
    for i in range(1, builtins.max(len(a), len(b)) + 1):
        m = a[-i] if i <= len(a) else 1
        n = b[-i] if i <= len(b) else 1
        if m != n and m != 1 and n != 1:
            dim = builtins.max(len(a), len(b)) - i
            raise RuntimeError(
                f"The size of tensor a ({m}) must match the size of tensor b ({n}) at non-singleton dimension {dim}"
            )
        shape.append(n if m == 1 else m)
    return shape[::-1]


def _binary_checks(a, b, out, inplace=False):
    """PyTorch's checks of a binary elementwise op, in its order, before its
    kernel's dtype check: the written tensor's internal overlap, the broadcast
    shape (an in-place result keeps self's), the result type's cast to the
    output's dtype. Returns the common dtype."""
    ember = _ember()
    if out is not None and any(st == 0 and n > 1 for n, st in zip(out.shape, out.stride())):
        raise RuntimeError(
            "unsupported operation: more than one element of the written-to tensor refers to a single memory "
            "location. Please clone() the tensor before performing the operation."
        )
    shape = _broadcast_shape(a.shape, b.shape)
    if inplace and tuple(out.shape) != tuple(shape):
        raise RuntimeError(f"output with shape {list(out.shape)} doesn't match the broadcast shape {list(shape)}")
    dtype = ember.result_type(a, b)
    if out is not None and not ember.can_cast(dtype, out.dtype):
        raise RuntimeError(
            f"result type {_scalar_name(dtype)} can't be cast to the desired output type {_scalar_name(out.dtype)}"
        )
    return dtype


def _integer_operands(kernel, a, b, out=None, inplace=False):
    ember = _ember()
    a, b = _wrap(a, b), _wrap(b, a)
    dtype = _binary_checks(a, b, a if inplace else out, inplace)
    if dtype.is_floating_point or dtype.is_complex or dtype == ember.bool:
        _not_implemented(kernel, dtype)
    return a.to(dtype), b.to(dtype)


def gcd(input, other, *, out=None):  # noqa: A002
    """Greatest common divisor, elementwise (Euclid's algorithm on whole tensors)."""
    return _gcd(input, other, out, False)


def _gcd(input, other, out, inplace):  # noqa: A002
    ember = _ember()
    a, b = _integer_operands("gcd_cpu", input, other, out, inplace)
    a, b = ember.broadcast_tensors(a.abs(), b.abs())
    while builtins.bool((b != 0).any()):
        nonzero = b != 0
        a, b = ember.where(nonzero, b, a), ember.where(nonzero, a % ember.where(nonzero, b, 1), 0)
    return _out(a, out)


def lcm(input, other, *, out=None):  # noqa: A002
    return _lcm(input, other, out, False)


def _lcm(input, other, out, inplace):  # noqa: A002
    ember = _ember()
    a, b = _integer_operands("lcm_cpu", input, other, out, inplace)
    g = gcd(a, b)
    result = ember.where(g == 0, 0, (a // ember.where(g == 0, 1, g) * b).abs())
    return _out(result.to(g.dtype), out)


def gcd_(self, other):
    return self.copy_(_gcd(self, other, None, True))


def lcm_(self, other):
    return self.copy_(_lcm(self, other, None, True))


def heaviside(input, values, *, out=None):  # noqa: A002
    """0 where input < 0, values where input == 0, 1 where input > 0."""
    ember = _ember()
    _argcheck.tensor("heaviside", "input", 1, input)
    _argcheck.tensor("heaviside", "values", 2, values)
    written = out if isinstance(out, _C.TensorBase) else None
    if input.is_complex() or values.is_complex() or (written is not None and written.is_complex()):
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    if input.dtype != values.dtype or (written is not None and written.dtype != input.dtype):
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    result = ember.where(input == 0, values, (input > 0).to(input.dtype))
    return _out(result, out)


def heaviside_(self, values):
    return self.copy_(heaviside(self, values))


_INT_VIEWS = {"float32": ("int32", 1), "float64": ("int64", 1), "float16": ("int16", 1), "bfloat16": ("int16", 1)}


def nextafter(input, other, *, out=None):  # noqa: A002
    """The next representable value after input in the direction of other."""
    result = _nextafter(input, other, out, False)
    ember = _ember()
    tensors = [t for t in (input, other) if isinstance(t, ember.Tensor)]
    if out is None and ember.is_grad_enabled() and any(t.requires_grad for t in tensors):
        # PyTorch's formula: the gradient passes to input where it differs from other; other gets zeros.
        return _nextafter_function().apply(_wrap(input, other), _wrap(other, input), result)
    return result


_NEXTAFTER = []


def _nextafter_function():
    """nextafter's autograd node (NextafterBackward0), made on first use."""
    if not _NEXTAFTER:
        ember = _ember()

        class Nextafter(ember.autograd.Function):
            @staticmethod
            def forward(ctx, input, other, result):  # noqa: A002
                ctx.input_meta = (input.shape, input.dtype)
                ctx.other_meta = (other.shape, other.dtype)
                ctx.moved = input.detach() != other.detach()  # no step where input equals other
                return result.clone()

            @staticmethod
            def backward(ctx, grad):
                shape, dtype = ctx.input_meta
                g_input = (grad * ctx.moved).sum_to_size(shape).to(dtype)
                oshape, odtype = ctx.other_meta
                return g_input, ember.zeros(oshape, dtype=odtype, device=grad.device), None

            @staticmethod
            def jvp(ctx, input_t, other_t, result_t):
                return input_t * ctx.moved

        Nextafter._backward_cls.__name__ = Nextafter._backward_cls.__qualname__ = "NextafterBackward0"
        _NEXTAFTER.append(Nextafter)
    return _NEXTAFTER[0]


def _nextafter(input, other, out, inplace):  # noqa: A002
    ember = _ember()
    input, other = _wrap(input, other), _wrap(other, input)  # noqa: A001
    dtype = _binary_checks(input, other, input if inplace else out, inplace)
    if not dtype.is_floating_point:
        _not_implemented("nextafter_cpu", dtype)
    x, y = ember.broadcast_tensors(input.detach().to(dtype), other.detach().to(dtype))
    x, y = x.contiguous(), y.contiguous()
    int_dtype = getattr(ember, _INT_VIEWS[_name(dtype)][0])
    bits = x.view(int_dtype)
    up = (y > x) == (x > 0)
    stepped = ember.where(up, bits + 1, bits - 1).view(dtype)
    smallest = ember.ones((), dtype=int_dtype).view(dtype)
    from_zero = ember.where(y > 0, smallest, -smallest)
    result = ember.where(x == 0, from_zero, stepped)
    result = ember.where(x == y, y, result)
    result = ember.where(ember.isnan(x) | ember.isnan(y), x + y, result)
    return _out(result, out)


def nextafter_(self, other):
    return self.copy_(_nextafter(self, other, None, True))


def isposinf(input, *, out=None):  # noqa: A002
    _argcheck.tensor("isposinf", "input", 1, input)
    if input.is_complex():
        raise RuntimeError("isposinf does not support complex inputs.")
    if out is not None and out.dtype != _ember().bool:
        raise RuntimeError("isposinf does not support non-boolean outputs.")
    return _out(
        input == math.inf if input.dtype.is_floating_point else _ember().zeros_like(input, dtype=_ember().bool), out
    )


def isneginf(input, *, out=None):  # noqa: A002
    _argcheck.tensor("isneginf", "input", 1, input)
    if input.is_complex():
        raise RuntimeError("isneginf does not support complex inputs.")
    if out is not None and out.dtype != _ember().bool:
        raise RuntimeError("isneginf does not support non-boolean outputs.")
    ember = _ember()
    return _out(input == -math.inf if input.dtype.is_floating_point else ember.zeros_like(input, dtype=ember.bool), out)


def addr(input, vec1, vec2, *, beta=1, alpha=1, out=None):  # noqa: A002
    """beta * input + alpha * outer(vec1, vec2)."""
    ember = _ember()
    for i, (n, v) in enumerate((("vec1", vec1), ("vec2", vec2))):
        _argcheck.tensor("addr", n, i + 2, v)
        if v.dim() != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {n}, but got {v.dim()}-D")
    input = input.expand(vec1.size(0), vec2.size(0))  # noqa: A001 - PyTorch's expand_size: no broadcast of the result
    dtype = ember.promote_types(input.dtype, ember.promote_types(vec1.dtype, vec2.dtype))
    if not (dtype.is_floating_point or dtype.is_complex):
        for n, v in (("beta", beta), ("alpha", alpha)):
            if isinstance(v, builtins.float):
                raise RuntimeError(f"For integral input tensors, argument {n} must not be a floating point number.")
    if dtype == ember.bool:
        result = (input & builtins.bool(beta)) | (ember.outer(vec1, vec2) & builtins.bool(alpha))
        return _out(result, out)
    return _out(_C._VariableFunctions._addr(input.to(dtype), vec1.to(dtype), vec2.to(dtype), beta, alpha), out)


def addr_(self, vec1, vec2, *, beta=1, alpha=1):
    return self.copy_(addr(self, vec1, vec2, beta=beta, alpha=alpha))


def dist(input, other, p=2):  # noqa: A002
    """The p-norm of input - other."""
    ember = _ember()
    difference = input - other  # norm(input - other): the difference's dtype is the one checked
    if not (difference.dtype.is_floating_point or difference.dtype.is_complex):
        raise RuntimeError(
            "norm(): input dtype should be either floating point or complex. "
            f"Got {_scalar_name(difference.dtype)} instead."
        )
    return _recorded("DistBackward0", lambda a, b: ember.linalg.vector_norm(a - b, p), input, other)


def renorm(input, p, dim, maxnorm, *, out=None):  # noqa: A002
    """Each sub-tensor along dim whose p-norm exceeds maxnorm is scaled down to it."""
    ember = _ember()
    if not p > 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if not maxnorm >= 0:  # NaN included
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm}")
    if input.dim() < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.dim()} dimensions")
    _check_dim(dim, input.dim())
    if not input.dtype.is_floating_point:
        raise RuntimeError(
            f"linalg.vector_norm: Expected a floating point or complex tensor as input. Got {_scalar_name(input.dtype)}"
        )
    ndim = input.dim()
    dim = dim + ndim if dim < 0 else dim
    reduce = [d for d in range(ndim) if d != dim]
    acc = ember.float32 if input.dtype in (ember.float16, ember.bfloat16) else input.dtype

    def scale(x):
        norm = ember.linalg.vector_norm(x, p, reduce, keepdim=True, dtype=acc)
        factor = ember.where(norm > maxnorm, maxnorm / (norm + 1e-7), ember.ones((), dtype=acc))
        return (x * factor).to(x.dtype)

    return _out(_recorded("RenormBackward0", scale, input), out)


def renorm_(self, p, dim, maxnorm):
    return self.copy_(renorm(self, p, dim, maxnorm))


# ---- scans ----------------------------------------------------------------------------------


def _recorded(node, fn, *inputs, mask=None):
    """fn(*inputs) recorded as one autograd node named as PyTorch's."""
    from ember._linalg_autograd import named

    return named(node, fn, *inputs, mask=mask)


def _check_dim(dim, ndim):
    """PyTorch's range check of a dim (a 0-dim tensor takes -1 and 0)."""
    _argcheck.wrap_dim(dim, ndim)


def _scan_extreme(input, dim, is_max, kernel, result_type):  # noqa: A002
    """(values, indices) of the running max or min along dim, by a
    log-step scan: each step combines every position with the one 2**k before."""
    ember = _ember()
    _argcheck.tensor(kernel, "input", 1, input)
    ndim = max(input.dim(), 1)
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got {dim})")
    if input.dim() == 0:
        return result_type((input.clone(), ember.zeros((), dtype=ember.int64, device=input.device)))
    dim = dim % ndim
    x = input.detach()
    n = x.shape[dim]
    shape = [1] * x.dim()
    shape[dim] = n
    vals = x.clone()
    idx = ember.arange(n, device=x.device).view(shape).expand(x.shape).contiguous()
    floating = x.dtype.is_floating_point
    shift = 1
    while shift < n:
        early_v = vals.narrow(dim, 0, n - shift)
        early_i = idx.narrow(dim, 0, n - shift)
        late_v = vals.narrow(dim, shift, n - shift)
        late_i = idx.narrow(dim, shift, n - shift)
        if x.dtype == ember.bool:
            better = late_v >= early_v if is_max else late_v <= early_v
        else:
            better = late_v >= early_v if is_max else late_v <= early_v
        if floating:
            better = ember.isnan(late_v) | (better & ~ember.isnan(early_v))
        new_v = ember.where(better, late_v, early_v)
        new_i = ember.where(better, late_i, early_i)
        vals = ember.cat([vals.narrow(dim, 0, shift), new_v], dim)
        idx = ember.cat([idx.narrow(dim, 0, shift), new_i], dim)
        shift *= 2
    values = input.gather(dim, idx) if input.requires_grad or _is_dual(input) else vals
    return result_type((values, idx))


def _recorded_scan(node, input, dim, is_max, kernel, result_type):  # noqa: A002
    _argcheck.tensor(kernel, "input", 1, input)

    def scan(x):
        return tuple(_scan_extreme(x, dim, is_max, kernel, tuple))

    return result_type(_recorded(node, scan, input, mask=[True, False]))


def cummax(input, dim, *, out=None):  # noqa: A002
    return _out(_recorded_scan("CummaxBackward0", input, dim, True, "cummax", _cummax_t), out)


def cummin(input, dim, *, out=None):  # noqa: A002
    return _out(_recorded_scan("CumminBackward0", input, dim, False, "cummin", _cummin_t), out)


def _complex_logcumsumexp_scan(input, dim):
    """PyTorch's complex scan: element by element, logaddexp(x, running) from
    -inf, the running value in complex128 (its accumulation type)."""
    ember = _ember()
    wide = input.to(ember.complex128)
    result = ember.empty_like(input)
    running = ember.full_like(wide.select(dim, 0), float("-inf"))
    for i in range(input.shape[dim]):
        running = ember.logaddexp(wide.select(dim, i), running)
        result.select(dim, i).copy_(running)
    return result


def _complex_logcumsumexp_class():
    from ember.autograd.function import Function

    class LogcumsumexpComplex(Function):
        """The scan forward; PyTorch's complex gradient backward:
        conj(exp(reverse_scan(log(conj(g)) - result) + input))."""

        @staticmethod
        def forward(ctx, input, dim):
            with _ember().no_grad():
                result = _complex_logcumsumexp_scan(input, dim)
            ctx.dim = dim
            ctx.save_for_backward(input, result)
            return result

        @staticmethod
        def backward(ctx, grad):
            input, result = ctx.saved_tensors
            dim = ctx.dim
            log_grad = grad.conj().log()
            reverse = logcumsumexp((log_grad - result).flip(dim), dim).flip(dim)
            return (reverse + input).exp().conj(), None

    LogcumsumexpComplex._backward_cls.__name__ = "LogcumsumexpBackward0"
    LogcumsumexpComplex._backward_cls.__qualname__ = "LogcumsumexpBackward0"
    return LogcumsumexpComplex


_LOGCUMSUMEXP_COMPLEX = []


def _complex_logcumsumexp(input, dim):
    if input.dim() == 0 or input.numel() == 0:
        return input.clone()
    if not _LOGCUMSUMEXP_COMPLEX:
        _LOGCUMSUMEXP_COMPLEX.append(_complex_logcumsumexp_class())
    return _LOGCUMSUMEXP_COMPLEX[0].apply(input, dim % input.dim())


def logcumsumexp(input, dim, *, out=None):  # noqa: A002
    """log(cumsum(exp(input))) along dim, by a log-step scan of logaddexp."""
    ember = _ember()
    _argcheck.tensor("logcumsumexp", "input", 1, input)
    if out is not None and out.dtype != input.dtype:
        raise RuntimeError(f"expected scalar_type {_scalar_name(input.dtype)} but found {_scalar_name(out.dtype)}")
    _check_dim(dim, input.dim())
    if input.is_complex():
        return _out(_complex_logcumsumexp(input, dim), out)
    _require_float("logcumsumexp_out_cpu", input)
    if input.dim() == 0:
        return _out(input.clone(), out)
    dim = dim % input.dim()
    n = input.shape[dim]

    def scan(acc):
        shift = 1
        while shift < n:
            head = acc.narrow(dim, 0, shift)
            tail = ember.logaddexp(acc.narrow(dim, shift, n - shift), acc.narrow(dim, 0, n - shift))
            acc = ember.cat([head, tail], dim)
            shift *= 2
        return acc if shift > 1 else acc.clone()

    return _out(_recorded("LogcumsumexpBackward0", scan, input), out)


# ---- reductions -----------------------------------------------------------------------------


def aminmax(input, *, dim=None, keepdim=False, out=None):  # noqa: A002
    ember = _ember()
    _argcheck.tensor("aminmax", "input", 1, input)
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError(
                "aminmax(): cannot compute aminmax over an empty dimension as the operation has no identity."
            )
        if input.is_complex():
            raise NotImplementedError(f"\"aminmax_cpu\" not implemented for '{_scalar_name(input.dtype)}'")
    elif input.is_complex():
        raise NotImplementedError(f"\"aminmax_cpu\" not implemented for '{_scalar_name(input.dtype)}'")

    def extremes(x):
        if dim is not None:
            return ember.amin(x, dim, keepdim=keepdim), ember.amax(x, dim, keepdim=keepdim)
        lo, hi = x.min(), x.max()
        if keepdim:
            shape = [1] * x.dim()
            lo, hi = lo.reshape(shape), hi.reshape(shape)
        return lo, hi

    return _out(_aminmax_t(_recorded("AminmaxBackward0", extremes, input)), out)


def nanmean(input, dim=None, keepdim=False, *, dtype=None, out=None):  # noqa: A002
    ember = _ember()
    _argcheck.tensor("nanmean", "input", 1, input)
    if not input.dtype.is_floating_point:
        raise RuntimeError(
            f"nanmean(): expected input to have floating point or complex dtype but got {_scalar_name(input.dtype)}"
        )
    if dtype is not None and not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError(
            "nanmean(): could not infer output dtype. Optional dtype must be either a floating point or complex "
            f"dtype. Got: {_scalar_name(dtype)}"
        )
    kw = {"keepdim": keepdim, "dtype": dtype}
    dims = () if dim is None else dim
    count = (~ember.isnan(input)).sum(dims, keepdim=keepdim)
    if out is not None:  # PyTorch: nansum into out, then divided there (in out's dtype)
        return ember.nansum(input, dims, **kw, out=out).div_(count)
    return ember.nansum(input, dims, **kw) / count


def mode(input, dim=-1, keepdim=False, *, out=None):  # noqa: A002
    """The most frequent value along dim (the smallest among ties) and its last index."""
    ember = _ember()
    _argcheck.tensor("mode", "input", 1, input)
    _check_dim(dim, input.dim())
    if input.is_complex():
        _not_implemented("mode_cpu", input.dtype)
    if input.dim() == 0:
        return _out(_mode_t((input.clone(), ember.zeros((), dtype=ember.int64, device=input.device))), out)
    dim = dim % input.dim()
    x = input.detach().movedim(dim, -1)
    n = x.shape[-1]
    if n == 0:
        raise IndexError(f"mode(): Expected reduction dim {dim} to have non-zero size.")
    if input.is_cpu:  # PyTorch's kernel (Note [mode in PyTorch's order])
        return _out(_mode_t(_C._VariableFunctions._mode(input, dim, keepdim)), out)
    sorted_x = ember.sort(x, -1)[0]
    same_as_prev = ember.cat(
        [ember.zeros_like(sorted_x[..., :1], dtype=ember.bool), sorted_x[..., 1:] == sorted_x[..., :-1]], -1
    )
    if x.dtype.is_floating_point:
        both_nan = ember.isnan(sorted_x[..., 1:]) & ember.isnan(sorted_x[..., :-1])
        same_as_prev[..., 1:] |= both_nan
    # the length of the run of equal values ending at each position
    pos = ember.arange(n, device=sorted_x.device).expand(sorted_x.shape)
    run_start = ember.where(same_as_prev, ember.zeros((), dtype=ember.int64), pos)
    run_start = _scan_extreme(run_start, -1, True, "mode", tuple)[0]
    counts = pos - run_start + 1
    best = counts.max(-1, keepdim=True).values
    first_best = (counts == best).to(ember.int64).argmax(-1, keepdim=True)
    values = sorted_x.gather(-1, first_best)
    equal = x == values
    if x.dtype.is_floating_point:
        equal |= ember.isnan(x) & ember.isnan(values)
    indices = ember.where(equal, pos, -1).max(-1, keepdim=True).values
    if not keepdim:
        values, indices = values.squeeze(-1), indices.squeeze(-1)
    else:
        values, indices = values.movedim(-1, dim), indices.movedim(-1, dim)
    if input.requires_grad or _is_dual(input):
        values = input.gather(dim, indices if keepdim else indices.unsqueeze(dim))
        values = values if keepdim else values.squeeze(dim)
    return _out(_mode_t((values, indices)), out)


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(name, input, q, dim, keepdim, interpolation, ignore_nan, out):  # noqa: A002
    ember = _ember()
    _argcheck.tensor(name, "input", 1, input)
    if input.dtype not in (ember.float32, ember.float64):
        raise RuntimeError(f"{name}() input tensor must be either float or double dtype")
    if isinstance(q, _C.TensorBase):
        if q.dtype != input.dtype:
            raise RuntimeError(f"{name}() q tensor must be same dtype as the input tensor")
        if q.dim() > 1:
            raise RuntimeError(f"{name}() q must be a scalar or 1D tensor")
        scalar_q = q.dim() == 0
        qt = q.reshape(-1)
        if qt.numel() and not builtins.bool(((qt >= 0) & (qt <= 1)).all()):
            raise RuntimeError(f"{name}() q values must be in the range [0, 1]")
    else:
        if not 0 <= q <= 1:
            raise RuntimeError(f"{name}() q must be in the range [0, 1] but got {q:g}")
        scalar_q = True
        qt = ember.tensor([builtins.float(q)], dtype=input.dtype, device=input.device)
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(
            f"{name}() interpolation must be one of linear, lower, higher, midpoint or nearest, but got {interpolation}"
        )
    if input.numel() == 0 and dim is None:
        raise RuntimeError(f"{name}() input tensor must be non-empty")
    # Sorted along the last dim, then viewed as out_shape + (n,): the result's shape with the
    # q values last (the graph of PyTorch's quantile: View over Sort).
    if dim is None:
        sorted_x = ember.sort(input.flatten(), -1)[0]  # NaN sorts last
        out_shape = (1,) * input.dim() if keepdim else ()
    else:
        nd = max(input.dim(), 1)
        if not -nd <= dim < nd:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, {nd - 1}], but got {dim})")
        red = dim % nd
        x = input if red == input.dim() - 1 else input.unsqueeze(-1).transpose(red, -1)
        sorted_x = ember.sort(x, -1)[0]
        out_shape = list(input.shape)
        if out_shape:
            out_shape[red : red + 1] = [1] if keepdim else []
        out_shape = tuple(out_shape)
    n = sorted_x.shape[-1]
    sorted_x = sorted_x.view(out_shape + (n,))
    # ranks: shape (..., len(q))
    if ignore_nan:
        valid = (~ember.isnan(sorted_x)).sum(-1, keepdim=True).to(input.dtype)
        ranks = qt * (valid - 1)
        ranks = ember.where(valid == 0, ember.zeros((), dtype=input.dtype), ranks)
    else:
        ranks = qt * (n - 1) + ember.zeros(sorted_x.shape[:-1] + (1,), dtype=input.dtype, device=input.device)
        has_nan = ember.isnan(sorted_x).any(-1, keepdim=True)
        ranks = ember.where(has_nan, ember.full((), n - 1, dtype=input.dtype), ranks)
    if interpolation == "lower":
        ranks = ranks.floor()
    elif interpolation == "higher":
        ranks = ranks.ceil()
    elif interpolation == "nearest":
        ranks = ranks.round()
    below = ranks.to(ember.int64)
    values = sorted_x.gather(-1, below)
    if interpolation in ("linear", "midpoint"):
        above = ranks.ceil().to(ember.int64)
        weights = ember.full_like(ranks, 0.5) if interpolation == "midpoint" else ranks - below
        values = ember.lerp(values, sorted_x.gather(-1, above), weights)
    # out_shape + (len(q),) -> out_shape, or (len(q),) + out_shape, as PyTorch's in-place views
    from ember.autograd.function import _linear_node

    if not scalar_q:
        values = _linear_node("UnsqueezeBackward1", values, lambda t: t.unsqueeze(0), lambda g: g.squeeze(0))
        values = _linear_node("TransposeBackward1", values, lambda t: t.transpose(0, -1), lambda g: g.transpose(0, -1))
    values = _linear_node("SqueezeBackward4", values, lambda t: t.squeeze(-1), lambda g: g.unsqueeze(-1))
    return _out(values, out)


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):  # noqa: A002
    return _quantile("quantile", input, q, dim, keepdim, interpolation, False, out)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):  # noqa: A002
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, True, out)


# ---- statistics -----------------------------------------------------------------------------


def _cov_weights(name, w, n_obs):
    if w.dim() > 1:
        raise RuntimeError(
            f"cov(): expected {name} to have one or fewer dimensions but got {name} with {w.dim()} dimensions"
        )
    integral = name == "fweights"
    if w.is_floating_point() == integral:
        want = "integral" if integral else "floating point"
        raise RuntimeError(
            f"cov(): expected {name} to have {want} dtype but got {name} with {_scalar_name(w.dtype)} dtype"
        )
    if w.numel() != n_obs:
        raise RuntimeError(
            f"cov(): expected {name} to have the same numel as there are observations in the input but got "
            f"{w.numel()} != {n_obs}"
        )
    if builtins.bool((w < 0).any()):
        raise RuntimeError(f"cov(): {name} cannot be negative")
    return w


def cov(input, *, correction=1, fweights=None, aweights=None):  # noqa: A002
    """Covariance of the rows of input (variables) over its columns (observations)."""
    ember = _ember()
    _argcheck.tensor("cov", "input", 1, input)
    if input.dim() > 2:
        raise RuntimeError(
            f"cov(): expected input to have two or fewer dimensions but got an input with {input.dim()} dimensions"
        )
    if isinstance(correction, _C.TensorBase):
        correction = operator.index(correction)  # an integer 0-dim tensor, as PyTorch's int argument
    x = input if input.dim() == 2 else input.reshape(1, -1)
    n_obs = x.shape[1]
    w = None
    if fweights is not None:
        w = _cov_weights("fweights", fweights, n_obs)
    if aweights is not None:
        aweights = _cov_weights("aweights", aweights, n_obs)
        w = aweights if w is None else w * aweights
    w_sum = ember.tensor(n_obs, dtype=ember.int64) if w is None else w.sum()
    avg = (x if w is None else x * w).sum(1) / w_sum
    if w is None:
        norm_factor = ember.tensor(n_obs - correction, dtype=ember.int64)
    elif correction == 0:
        norm_factor = w_sum
    elif aweights is None:
        norm_factor = w_sum - correction
    elif fweights is None and n_obs == 1 and correction == 1:
        # one observation, aweights only: no degrees of freedom (NumPy's answer)
        norm_factor = ember.tensor(0, dtype=ember.int64)
    else:
        norm_factor = w_sum - correction * (w * aweights).sum() / w_sum
    if builtins.bool(norm_factor <= 0):
        import warnings

        warnings.warn(
            "cov(): degrees of freedom is <= 0. Correction should be strictly less than the number of observations.",
            UserWarning,
            stacklevel=user_stacklevel(),
        )
        norm_factor = ember.zeros_like(norm_factor)
    if n_obs == 1 and (fweights is None) != (aweights is None):
        # one observation and one kind of weights: the average is the input itself
        xc = ember.zeros_like(x)
        if not (xc.is_floating_point() or xc.is_complex()):
            xc = xc.float()
    else:
        xc = x - avg.unsqueeze(1)
    c = ember.mm(xc, (xc if w is None else xc * w).t().conj())
    if c.is_complex() and (xc.shape[0] == 1 or xc.shape[1] == 1):
        # a vector times its conjugate: the imaginary part is zero, not rounding noise
        c = ember.complex(c.real, ember.zeros_like(c.real))
    return (c / norm_factor).squeeze()


def corrcoef(input):  # noqa: A002
    ember = _ember()
    _argcheck.tensor("corrcoef", "input", 1, input)
    if input.dim() > 2:
        raise RuntimeError(
            f"corrcoef(): expected input to have two or fewer dimensions but got an input with {input.dim()} dimensions"
        )
    c = cov(input)
    if c.dim() == 0:
        return c / c
    d = ember.diagonal(c)
    stddev = (d.real if d.is_complex() else d).sqrt()
    c = c / stddev.view(-1, 1)
    c = c / stddev.view(1, -1)
    if c.is_complex():
        return ember.complex(c.real.clip(-1, 1), c.imag.clip(-1, 1))
    return c.clip(-1, 1)


def histogram(input, bins, *, range=None, weight=None, density=False, out=None):  # noqa: A002
    """Counts (or weights) of input in bins: a number of equal bins over range
    (default the input's min and max), or a 1-D tensor of bin edges."""
    ember = _ember()
    _argcheck.tensor("histogram", "input", 1, input)
    # CPU kernels only in PyTorch (the bins and edges below are built on the host)
    tensor_bins = isinstance(bins, _C.TensorBase)
    _argcheck.cpu_only(f"aten::histogram.{'bins_tensor' if tensor_bins else 'bin_ct'}", input, bins, weight)
    if input.dtype not in (ember.float32, ember.float64):
        _not_implemented("histogramdd", input.dtype)
    x = input.reshape(-1)
    if tensor_bins:
        if bins.dim() != 1:
            raise RuntimeError(
                f"torch.histogram(): bins tensor should have one dimension, but got {bins.dim()} dimensions"
            )
        if bins.dtype != input.dtype:
            raise RuntimeError(
                "torch.histogram(): input tensor and bins tensors should have the same dtype, but got input "
                f"{_scalar_name(input.dtype)} and bins {_scalar_name(bins.dtype)}"
            )
        edges = bins.clone()
    else:
        if bins <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
        if range is not None:
            lo, hi = builtins.float(range[0]), builtins.float(range[1])
        elif x.numel():
            lo, hi = x.min().item(), x.max().item()
        else:
            lo, hi = 0.0, 0.0
        if lo > hi:
            raise RuntimeError("torch.histogram(): max must be larger than min")
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        edges = ember.linspace(lo, hi, bins + 1, dtype=input.dtype)
    nb = edges.numel() - 1
    lo, hi = edges[0], edges[-1]
    keep = (x >= lo) & (x <= hi)
    pos = ember.searchsorted(edges, x.contiguous(), right=True) - 1
    pos = pos.clamp(0, max(nb - 1, 0))
    vals = ember.ones_like(x) if weight is None else weight.reshape(-1).to(input.dtype)
    vals = ember.where(keep, vals, ember.zeros((), dtype=input.dtype))
    hist = ember.zeros(nb, dtype=input.dtype).index_add_(0, pos, vals)
    if density:
        widths = edges[1:] - edges[:-1]
        hist = hist / (hist.sum() * widths)
    result = _histogram_t((hist, edges))
    return _out(result, out)


# ---- gradient ----------------------------------------------------------------------------------
def _gradient_spacings(input, spacing, dims):
    """One spacing per differentiated dimension: a number or a coordinates tensor."""
    import ember

    if spacing is None:
        return [1.0] * len(dims)
    if isinstance(spacing, (int, float)):
        return [spacing] * len(dims)
    spacing = list(spacing)
    if len(spacing) == 1 and len(dims) > 1 and not isinstance(spacing[0], ember.Tensor):
        spacing = spacing * len(dims)
    if len(spacing) != len(dims):
        raise RuntimeError(
            f"torch.gradient expected spacing to be unspecified, a scalar, or a list of length equal to 'self.dim() "
            f"= {input.dim()}', since dim argument was not given, but got a list of length {len(spacing)}"
        )
    return spacing


def gradient(input, *, spacing=None, dim=None, edge_order=1):
    """Second-order central differences inside, one-sided (edge_order 1 or 2)
    differences at the ends, per dimension; spacing is a step or the
    coordinates of each dimension."""
    import ember

    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    if dim is None:
        dims = list(range(input.dim()))
    else:
        dims = [dim] if isinstance(dim, int) else list(dim)
    rank = max(input.dim(), 1)
    for d in dims:
        if not -rank <= d < rank:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-rank}, {rank - 1}], but got {d})")
    dims = [d + input.dim() if d < 0 else d for d in dims]
    for i, d in enumerate(dims):
        if d in dims[:i]:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    spacings = _gradient_spacings(input, spacing, dims)
    for d in dims:
        if input.size(d) < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least edge_order+1")
    out = []
    for d, h in zip(dims, spacings):
        n = input.size(d)

        def at(start, length=1, d=d):
            return input.narrow(d, start, length)

        first, second, last, before = at(0), at(1), at(n - 1), at(n - 2)
        if isinstance(h, ember.Tensor):  # coordinates: steps may differ
            steps = h.diff()
            shape = [1] * input.dim()
            shape[d] = -1
            dx1, dx2 = steps[:-1], steps[1:]
            a = (-dx2 / (dx1 * (dx1 + dx2))).reshape(shape)
            b = ((dx2 - dx1) / (dx1 * dx2)).reshape(shape)
            c = (dx1 / (dx2 * (dx1 + dx2))).reshape(shape)
            center = a * at(0, n - 2) + b * at(1, n - 2) + c * at(2, n - 2)
            if edge_order == 1:
                head = (second - first) / steps[0]
                tail = (last - before) / steps[-1]
            else:
                h0, h1, hl, hl2 = steps[0], steps[1], steps[-1], steps[-2]
                head = (
                    (-(2.0 * h0 + h1) / (h0 * (h0 + h1))) * first
                    + ((h0 + h1) / (h0 * h1)) * second
                    + (-h0 / (h1 * (h0 + h1))) * at(2)
                )
                tail = (
                    (hl / (hl2 * (hl + hl2))) * at(n - 3)
                    + (-(hl + hl2) / (hl * hl2)) * before
                    + ((2 * hl + hl2) / (hl * (hl + hl2))) * last
                )
        else:
            center = (at(2, n - 2) - at(0, n - 2)) / h / 2
            if edge_order == 1:
                head = (second - first) / h
                tail = (last - before) / h
            else:
                head = (-1.5 * first + 2 * second - 0.5 * at(2)) / h
                tail = (0.5 * at(n - 3) - 2 * before + 1.5 * last) / h
        out.append(ember.cat([head, center, tail], d))
    return tuple(out)


__all__ = [
    "gradient",
    "frexp",
    "float_power",
    "gcd",
    "gcd_",
    "lcm",
    "lcm_",
    "heaviside",
    "nextafter",
    "isposinf",
    "isneginf",
    "addr",
    "dist",
    "renorm",
    "cummax",
    "cummin",
    "logcumsumexp",
    "aminmax",
    "nanmean",
    "mode",
    "quantile",
    "nanquantile",
    "cov",
    "corrcoef",
    "histogram",
]

# Tensor methods of the same names (self first) and the in-place ones.
METHODS = [
    "frexp",
    "float_power",
    "float_power_",
    "gcd",
    "gcd_",
    "lcm",
    "lcm_",
    "heaviside",
    "heaviside_",
    "nextafter",
    "nextafter_",
    "isposinf",
    "isneginf",
    "addr",
    "addr_",
    "dist",
    "renorm",
    "renorm_",
    "cummax",
    "cummin",
    "logcumsumexp",
    "aminmax",
    "nanmean",
    "mode",
    "quantile",
    "nanquantile",
    "cov",
    "corrcoef",
    "histogram",
]
_LOCAL = {"float_power_", "gcd_", "lcm_", "heaviside_", "nextafter_", "addr_", "renorm_"}


def _is_dual(tensor):
    from ember.autograd.forward_ad import _is_dual as is_dual

    return is_dual(tensor)
