"""Tensor methods about a tensor's type and layout rather than its values: cfloat/cdouble, dim_order,
to_dense, const_data_ptr, is_distributed, module_load, map2_."""

from __future__ import annotations

import itertools
import math

from ember import _C

__all__: list[str] = []
METHODS = [
    "cdouble",
    "cfloat",
    "chalf",
    "const_data_ptr",
    "dim_order",
    "geometric_",
    "is_distributed",
    "log_normal_",
    "map2_",
    "module_load",
    "symeig",
    "to_dense",
]


def _ember():
    import ember

    return ember


def symeig(self, eigenvectors=False):
    """Removed, as in PyTorch: the method takes eigenvectors only."""
    from ember._removed import symeig as removed

    return removed(self, eigenvectors)


def cfloat(self, memory_format=_C.preserve_format):
    """self as complex64 (self itself when it already is)."""
    return self.to(_ember().complex64, memory_format=memory_format)


def chalf(self, memory_format=_C.preserve_format):
    """self as complex32 (self itself when it already is)."""
    return self.to(_ember().complex32, memory_format=memory_format)


def cdouble(self, memory_format=_C.preserve_format):
    """self as complex128 (self itself when it already is)."""
    return self.to(_ember().complex128, memory_format=memory_format)


def const_data_ptr(self):
    """The address of the first element, for reading."""
    return self.data_ptr()


def is_distributed(self):
    return False


def to_dense(self, dtype=None, *, masked_grad=None):
    """A strided tensor is dense already: self, or self converted to dtype."""
    from ember._sparse_coo import _check_to_dense_args

    _check_to_dense_args(dtype, masked_grad)
    return self if dtype is None else self.to(dtype)


def module_load(self, other, assign=False):
    """What Module.load_state_dict swaps into a parameter: other detached (assign), or self with
    other's values copied in, detached."""
    if assign:
        return other.detach()
    return self.copy_(other).detach()


def _physical_order(t):
    """Dimensions from outermost to innermost by stride; equal strides put the larger dimension outside and
    zero strides stay where they are (PyTorch's elementwise output order)."""
    sizes, strides = t.shape, t.stride()
    if t.dim() <= 1:
        return tuple(range(t.dim()))
    # Contiguous (and not also channels-last) or channels-last only: those
    # orders, whatever the strides of size-1 dimensions say.
    contiguous = t.is_contiguous()
    channels_last = t.dim() == 4 and t.is_contiguous(memory_format=_C.channels_last)
    if contiguous and not channels_last:
        return tuple(range(t.dim()))
    if channels_last and not contiguous:
        return (0, *range(2, t.dim()), 1)

    def should_swap(a, b):
        if strides[a] == 0 or strides[b] == 0:
            return 0
        if strides[a] != strides[b]:
            return -1 if strides[a] < strides[b] else 1
        return 1 if sizes[a] > sizes[b] else 0

    perm = list(reversed(range(t.dim())))
    for i in range(1, t.dim()):
        moving = i
        for j in reversed(range(i)):
            order = should_swap(perm[j], perm[moving])
            if order > 0:
                perm[j], perm[moving] = perm[moving], perm[j]
                moving = j
            elif order < 0:
                break
    return tuple(reversed(perm))


_AMBIGUOUS = "The tensor does not have unique dim order, or cannot map to exact one of the given memory formats."
_BAD_CHECK = "The ambiguity_check argument must be a bool or a list of memory formats."


def dim_order(self, *, ambiguity_check=False):
    """The dimensions in memory order, outermost first; ambiguity_check=True raises when another order
    describes the same memory (a size-1 dimension or two neighbouring equal strides), a list of memory
    formats raises unless exactly one of them fits."""
    if not isinstance(ambiguity_check, bool):
        if not isinstance(ambiguity_check, list) or not all(isinstance(f, _C.memory_format) for f in ambiguity_check):
            raise TypeError(_BAD_CHECK)
    if isinstance(ambiguity_check, list):
        if sum(1 for f in ambiguity_check if self.is_contiguous(memory_format=f)) != 1:
            raise RuntimeError(_AMBIGUOUS)
    elif ambiguity_check:
        strides = self.stride()
        if any(a == b for a, b in itertools.pairwise(strides)) or any(s == 1 for s in self.shape):
            raise RuntimeError(_AMBIGUOUS)
    return _physical_order(self)


def map2_(self, x, y, callable):  # noqa: A002
    """self[i] = callable(self[i], x[i], y[i]) in place, x and y broadcast to self (CPU only)."""
    ember = _ember()
    if self.requires_grad:
        raise RuntimeError("Can't call map2_() on Variable that requires grad. Use var.detach().map2_() instead.")
    for name, other in (("x", x), ("y", y)):
        if other.dtype != self.dtype:
            raise TypeError(f"map2_: expected {self.type()} for argument '{name}' (got {other.type()})")
    xs = x.expand(self.shape).reshape(-1).tolist()
    ys = y.expand(self.shape).reshape(-1).tolist()
    values = [callable(a, b, c) for a, b, c in zip(self.reshape(-1).tolist(), xs, ys)]
    self.copy_(ember.tensor(values, dtype=self.dtype).reshape(self.shape))
    return self


# ---- random fills -------------------------------------------------------------------------------
# Note [log_normal_ and geometric_ streams]
# PyTorch's CPU kernels draw one value per element, serially: log_normal_ takes exp of a double normal
# sample (Box-Muller over two 53-bit uniforms, the second result kept for the next draw), geometric_
# takes ceil(log(u) / log1p(-p)) of one 53-bit uniform. Ember's normal_ of a non-contiguous double
# tensor and uniform_ of a double tensor draw exactly those samples in the same order, so both fills
# are built on them and give PyTorch's values for a seed.
# On CUDA, PyTorch's kernels transform one curand draw per element in the compute type (float, or
# double for float64) in the sampler's launch order: log_normal_ is exp of normal_'s value there,
# geometric_ is ceil(log(u) / log1p(-p)) of uniform_'s raw value (which maps a draw of 1 to 0, put
# back here). A compute-type tensor laid out as self draws the same numbers.


def _number(x):
    return f"{x:g}"


def _compute_dtype(t):
    ember = _ember()
    return ember.float64 if t.dtype == ember.float64 else ember.float32


def _in_memory_order(samples, like):
    """The flat `samples` as a tensor of `like`'s shape whose elements follow
    `like`'s memory order (PyTorch's CPU sampling loops visit a transposed or
    permuted tensor in memory order, as its TensorIterator does)."""
    dense = _ember().empty_like(like, dtype=samples.dtype)
    dense.as_strided((samples.numel(),), (1,)).copy_(samples)
    return dense


def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    """Fills self with exp(N(mean, std^2)) samples, in place."""
    ember = _ember()
    device = self.device.type
    if not std > 0.0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_number(std)}")
    n = self.numel()
    if n == 0:
        return self  # PyTorch's kernel (and its dtype dispatch) runs on elements only
    if not self.is_floating_point():
        from ember._ops_math import _scalar_name

        name = "log_normal_cuda" if device == "cuda" else "log_normal_cpu"
        raise NotImplementedError(f"\"{name}\" not implemented for '{_scalar_name(self.dtype)}'")
    if device == "meta":
        return self
    if device == "cuda":
        samples = ember.empty_like(self, dtype=_compute_dtype(self)).normal_(mean, std, generator=generator)
        with ember.no_grad():
            self.copy_(samples.exp_())
        return self
    samples = ember.empty(2 * n, dtype=ember.float64, device=self.device)[::2]
    samples.normal_(mean, std, generator=generator)
    with ember.no_grad():
        self.copy_(_in_memory_order(samples.exp_(), self))
    return self


def geometric_(self, p, *, generator=None):
    """Fills self with the number of Bernoulli(p) trials up to the first success, in place."""
    ember = _ember()
    device = self.device.type
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_number(p)}")
    n = self.numel()
    if n == 0:
        return self  # PyTorch's kernel (and its dtype dispatch) runs on elements only
    if self.dtype == ember.bool or self.is_complex():
        from ember._ops_math import _scalar_name

        kernel = f"geometric_{'cuda' if device == 'cuda' else 'cpu'}"
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{_scalar_name(self.dtype)}'")
    if device == "meta":
        return self
    if device == "cuda":
        compute = _compute_dtype(self)
        u = ember.empty_like(self, dtype=compute).uniform_(0, 1, generator=generator)
        u.masked_fill_(u == 0, 1.0)
        scale = ember.full((), -p, dtype=compute, device=self.device).log1p_()
        with ember.no_grad():
            self.copy_(ember.ceil(u.log_() / scale))
        return self
    u = ember.empty(n, dtype=ember.float64, device=self.device).uniform_(0, 1, generator=generator)
    with ember.no_grad():
        self.copy_(_in_memory_order(ember.ceil(ember.log(u) / math.log1p(-p)), self))
    return self
