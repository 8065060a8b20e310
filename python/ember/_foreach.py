"""ember._foreach_*: PyTorch's operations on lists of tensors (EMA updates,
optimizer steps, gradient norms). On the CPU PyTorch runs them tensor by
tensor through the per-tensor operators; so do these, with its list checks
and overloads: a Number, a list of Numbers, a 0-dim Tensor or a list of
Tensors as the second operand. In-place forms return the list they update."""

from __future__ import annotations

import numbers

import ember

_UNARY = (
    "abs acos asin atan ceil cos cosh erf erfc exp expm1 floor frac lgamma log log10 log1p log2 neg reciprocal "
    "round rsqrt sigmoid sign sin sinh sqrt tan tanh trunc"
).split()

_S, _L, _T, _TL = "Scalar scalar", "Scalar[] scalars", "Tensor other", "Tensor[] other"
# name -> the second operand's forms, in PyTorch's order of overloads.
_BINARY = {
    "add": (_S, _L, _T + ", *, Scalar alpha=1", _TL + ", *, Scalar alpha=1"),
    "sub": (_S, _L, _TL + ", *, Scalar alpha=1"),
    "mul": (_L, _T, _TL, _S),
    "div": (_L, _T, _TL, _S),
    "clamp_min": (_S, _L, _TL),
    "clamp_max": (_S, _L, _TL),
    "maximum": (_S, _L, _TL),
    "minimum": (_S, _L, _TL),
}


def _check_lists(*lists):
    if len(lists[0]) == 0:
        raise RuntimeError("Tensor list must have at least one tensor.")
    for other in lists[1:]:
        if len(other) != len(lists[0]):
            raise RuntimeError(
                f"Tensor lists must have the same number of tensors, got {len(lists[0])} and {len(other)}"
            )


def _per_tensor(tensors, operand):
    """The second operand for each tensor: a number repeated, a list's items,
    or a 0-dim tensor repeated."""
    if isinstance(operand, ember.Tensor):
        if operand.dim() != 0:
            raise RuntimeError(
                f"scalar tensor expected to be 0 dim but it has {operand.dim()} dimensions and "
                f"{operand.numel()} elements."
            )
        return [operand] * len(tensors)
    if isinstance(operand, (list, tuple)):
        if operand and all(isinstance(o, ember.Tensor) for o in operand):
            _check_lists(tensors, operand)
        elif len(operand) != len(tensors):
            raise RuntimeError("Tensor list must have same number of elements as scalar list.")
        return list(operand)
    return [operand] * len(tensors)


def _packed_scalars(tensors, scalars):
    """addcmul/addcdiv's scalars: a list, or a 1-D tensor of one per tensor."""
    if isinstance(scalars, ember.Tensor):
        if scalars.dim() != 1:
            raise RuntimeError(f"Expected packed scalar Tensor to be of dimension 1. Got {scalars.dim()} instead.")
        if scalars.numel() != len(tensors):
            raise RuntimeError(
                f"Expected length of scalars to match input of length {len(tensors)} but got {scalars.numel()} instead."
            )
        return scalars.tolist()
    return _per_tensor(tensors, scalars)


def _make_unary(name):
    op = getattr(ember, name)

    def out_of_place(self):
        _check_lists(self)
        return tuple(op(t) for t in self)

    def in_place(self):
        _check_lists(self)
        for t in self:
            getattr(t, name + "_")()
        return self

    return out_of_place, in_place


def _make_binary(name):
    op = getattr(ember, name)

    def apply(t, o, alpha, inplace):
        kwargs = {} if alpha is None else {"alpha": alpha}
        if name in ("maximum", "minimum") and not isinstance(o, ember.Tensor):
            o = ember.scalar_tensor(o, dtype=ember.result_type(t, o))
        if inplace:
            if name in ("maximum", "minimum"):
                return t.copy_(op(t, o))
            return getattr(t, name + "_")(o, **kwargs)
        return op(t, o, **kwargs)

    def out_of_place(self, other, *, alpha=None):
        _check_lists(self)
        return tuple(apply(t, o, alpha, False) for t, o in zip(self, _per_tensor(self, other)))

    def in_place(self, other, *, alpha=None):
        _check_lists(self)
        for t, o in zip(self, _per_tensor(self, other)):
            apply(t, o, alpha, True)
        return self

    return out_of_place, in_place


def _foreach_pow(self, exponent):
    if isinstance(self, numbers.Number):
        _check_lists(exponent)
        return tuple(ember.pow(self, e) for e in exponent)
    _check_lists(self)
    return tuple(ember.pow(t, e) for t, e in zip(self, _per_tensor(self, exponent)))


def _foreach_pow_(self, exponent):
    _check_lists(self)
    for t, e in zip(self, _per_tensor(self, exponent)):
        t.pow_(e)
    return self


def _make_pointwise(name):
    """addcmul/addcdiv: self + value * (tensor1 op tensor2)."""
    op = getattr(ember, name)

    def out_of_place(self, tensor1, tensor2, scalars=1):
        _check_lists(self, tensor1, tensor2)
        values = _packed_scalars(self, scalars)
        return tuple(op(s, a, b, value=v) for s, a, b, v in zip(self, tensor1, tensor2, values))

    def in_place(self, tensor1, tensor2, scalars=1):
        _check_lists(self, tensor1, tensor2)
        for s, a, b, v in zip(self, tensor1, tensor2, _packed_scalars(self, scalars)):
            getattr(s, name + "_")(a, b, value=v)
        return self

    return out_of_place, in_place


def _foreach_lerp(self, tensors1, weight):
    _check_lists(self, tensors1)
    return tuple(ember.lerp(s, e, w) for s, e, w in zip(self, tensors1, _per_tensor(self, weight)))


def _foreach_lerp_(self, tensors1, weight):
    _check_lists(self, tensors1)
    for s, e, w in zip(self, tensors1, _per_tensor(self, weight)):
        s.lerp_(e, w)
    return self


def _foreach_norm(self, ord=2, dtype=None):
    _check_lists(self)
    return tuple(ember.linalg.vector_norm(t, ord, dtype=dtype) for t in self)


def _foreach_powsum(self, ord=2, dtype=None):
    """sum(|t| ** ord) of each tensor (the norm before its root); as PyTorch,
    each power is taken in double (float for the 16-bit types) and rounded
    to the result's dtype before the sum."""
    _check_lists(self)
    out = []
    for t in self:
        result = dtype or t.dtype
        wide = ember.float64 if result in (ember.float32, ember.float64) else ember.float32
        a = t.abs()
        powers = (a != 0).to(result) if ord == 0 else a.to(wide).pow(ord).to(result)
        out.append(powers.sum())
    return tuple(out)


def _foreach_max(self):
    _check_lists(self)
    for t in self:
        if t.numel() == 0:
            raise RuntimeError(
                "_foreach_max cannot compute the maximum of an empty tensor; max over zero elements is undefined."
            )
    return tuple(t.max() for t in self)


def _foreach_mm(self, mat2):
    _check_lists(self, mat2)
    return tuple(ember.mm(a, b) for a, b in zip(self, mat2))


def _foreach_clone(self):
    _check_lists(self)
    return tuple(t.clone() for t in self)


def _foreach_copy_(self, src, non_blocking=False):
    _check_lists(self, src)
    for t, s in zip(self, src):
        t.copy_(s, non_blocking)
    return self


def _foreach_zero_(self):
    _check_lists(self)
    for t in self:
        t.zero_()
    return self


def _signatures():
    """PyTorch's overloads of each function, for its argument checks."""
    sig = {}
    for name in _UNARY + ["clone", "max", "zero_"]:
        sig[f"_foreach_{name}"] = [f"_foreach_{name}(Tensor[] self)"]
        if name in _UNARY:
            sig[f"_foreach_{name}_"] = [f"_foreach_{name}_(Tensor[] self)"]
    for name, forms in _BINARY.items():
        for suffix in ("", "_"):
            sig[f"_foreach_{name}{suffix}"] = [f"_foreach_{name}{suffix}(Tensor[] self, {f})" for f in forms]
    exps = ("Scalar exponent", "Scalar[] exponent", "Tensor[] exponent")
    sig["_foreach_pow"] = ["_foreach_pow(Scalar self, Tensor[] exponent)"] + [
        f"_foreach_pow(Tensor[] self, {e})" for e in exps
    ]
    sig["_foreach_pow_"] = [f"_foreach_pow_(Tensor[] self, {e})" for e in exps]
    for name in ("addcmul", "addcdiv"):
        for suffix in ("", "_"):
            head = f"_foreach_{name}{suffix}(Tensor[] self, Tensor[] tensor1, Tensor[] tensor2, "
            sig[f"_foreach_{name}{suffix}"] = [
                head + "Scalar[] scalars)",
                head + "Tensor scalars)",
                head + "Scalar value=1)",
            ]
    for suffix in ("", "_"):
        head = f"_foreach_lerp{suffix}(Tensor[] self, Tensor[] tensors1, "
        sig[f"_foreach_lerp{suffix}"] = [head + "Scalar weight)", head + "Scalar[] weight)", head + "Tensor[] weights)"]
    for name in ("norm", "powsum"):
        sig[f"_foreach_{name}"] = [f"_foreach_{name}(Tensor[] self, Scalar ord=2, ScalarType? dtype=None)"]
    sig["_foreach_mm"] = ["_foreach_mm(Tensor[] self, Tensor[] mat2)"]
    sig["_foreach_copy_"] = ["_foreach_copy_(Tensor[] self, Tensor[] src, bool non_blocking=False)"]
    return sig


def _functions():
    fns = {}
    for name in _UNARY:
        fns[f"_foreach_{name}"], fns[f"_foreach_{name}_"] = _make_unary(name)
    for name in _BINARY:
        fns[f"_foreach_{name}"], fns[f"_foreach_{name}_"] = _make_binary(name)
    for name in ("addcmul", "addcdiv"):
        fns[f"_foreach_{name}"], fns[f"_foreach_{name}_"] = _make_pointwise(name)
    for fn in (_foreach_pow, _foreach_pow_, _foreach_lerp, _foreach_lerp_, _foreach_norm, _foreach_powsum,
               _foreach_max, _foreach_mm, _foreach_clone, _foreach_copy_, _foreach_zero_):  # fmt: skip
        fns[fn.__name__] = fn
    return fns


def install(namespace):
    """Binds every _foreach_* function to namespace (ember), each checked
    against PyTorch's overloads."""
    from ember import _argtypes

    signatures = _signatures()
    for name, fn in _functions().items():
        fn.__name__ = fn.__qualname__ = name
        setattr(namespace, name, _argtypes._guard(fn, name, False, signatures[name]))
