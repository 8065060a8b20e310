"""Overloads PyTorch binds that Ember's generated bindings lack, as Python
forms around them: max/min with a Tensor second argument (maximum/minimum)
and into out= (max.unary_out), linspace/logspace with Tensor bounds,
where(condition) (the indices of its nonzero elements)."""

from __future__ import annotations

from ember import _C
from ember._ops_math import _scalar_name

_functions = _C._VariableFunctions

__all__ = ["linspace", "logspace", "max", "min", "where"]


# max/min: PyTorch binds max.other (a Tensor second argument is maximum's) and
# max.unary_out, whose kernel gives an empty input the reduction's identity.
_EXTREMES = {"max": "maximum", "min": "minimum"}
_PAIRWISE = {"max": _functions.maximum, "min": _functions.minimum}


def _all_extreme(name, bound, input, out):  # noqa: A002
    """max(input) / min(input), out= as max.unary_out: PyTorch's kernel gives
    an empty input the identity and names itself max_all for a complex one."""
    from ember import can_cast, iinfo

    if out is not None and not can_cast(input.dtype, out.dtype):
        raise RuntimeError(
            "Expected canCast( typeMetaToScalarType(self.dtype()), typeMetaToScalarType(out.dtype())) to be true, "
            "but got false.  (Could this error message be improved?  If so, please report an enhancement request "
            "to PyTorch.)"
        )
    if input.is_complex() and (out is not None or input.numel()):
        raise NotImplementedError(f"\"{name}_all\" not implemented for '{_scalar_name(input.dtype)}'")
    if out is None or input.numel():
        return bound(input) if out is None else bound(input, out=out)
    if input.dtype == _C.bool:
        value = name == "min"
    elif input.is_floating_point():
        value = float("inf") if name == "min" else float("-inf")
    else:
        value = iinfo(input.dtype).max if name == "min" else iinfo(input.dtype).min
    if out.dim():
        out.resize_(())
    from ember import no_grad

    with no_grad():
        out.fill_(value)
    return out


def _min_max(name, bound, args, kwargs):
    if not kwargs:  # the common max(x) and max(x, y): straight to the bindings
        if len(args) == 1:
            x = args[0]
            if isinstance(x, _C.TensorBase) and not x.is_complex():
                return bound(x)
        elif len(args) == 2 and isinstance(args[1], _C.TensorBase) and isinstance(args[0], _C.TensorBase):
            return _PAIRWISE[name](args[0], args[1])
    other = args[1] if len(args) == 2 else kwargs.get("other") if len(args) == 1 else None
    extra = set(kwargs) - {"out", "other"} if len(args) == 1 else set(kwargs) - {"out"}
    if isinstance(other, _C.TensorBase) and not extra and isinstance(args[0], _C.TensorBase):
        import ember

        fn = getattr(ember, _EXTREMES[name])
        return fn(args[0], other, out=kwargs["out"]) if "out" in kwargs else fn(args[0], other)
    if len(args) == 1 and set(kwargs) <= {"out"} and isinstance(args[0], _C.TensorBase):
        out = kwargs.get("out")
        if out is None or isinstance(out, _C.TensorBase):
            return _all_extreme(name, bound, args[0], out)
    return bound(*args, **kwargs)


def max(*args, **kwargs):  # noqa: A001
    return _min_max("max", _functions.max, args, kwargs)


def min(*args, **kwargs):  # noqa: A001
    return _min_max("min", _functions.min, args, kwargs)


def method(name):
    bound = getattr(_C.TensorBase, name)

    def method(self, *args, **kwargs):
        return _min_max(name, bound, (self,) + args, kwargs)

    method.__name__ = method.__qualname__ = name
    return method


_SPACE_BINDINGS = {}


def _space_binding(name):
    # PyTorch's four overloads (tensor or number bounds): a mismatch lists them.
    if name not in _SPACE_BINDINGS:
        from ember import _argcheck

        base = "float base=10.0, " if name == "logspace" else ""
        _SPACE_BINDINGS[name] = _argcheck.Binding(
            *(
                f"{name}({start} start, {end} end, int steps, {base}*, Tensor? out=None, ScalarType? dtype=None, "
                "Layout? layout=None, Device? device=None, bool pin_memory=False, bool requires_grad=False)"
                for start in ("Tensor", "Scalar")
                for end in ("Tensor", "Scalar")
            )
        )
    return _SPACE_BINDINGS[name]


def _space(name, bound, args, kwargs):
    # linspace.Tensor_Tensor & co.: 0-dim bounds, read as numbers.
    args = list(args)
    bounds = [args[i] if len(args) > i else kwargs.get(key) for i, key in enumerate(("start", "end"))]
    tensors = [isinstance(b, _C.TensorBase) for b in bounds]
    if any(tensors):
        # The binding's argument checks first (a TypeError for any other argument).
        _space_binding(name)(*args, **kwargs)
        if all(tensors) and (bounds[0].dim() or bounds[1].dim()):
            got = f"start with {bounds[0].dim()} dimension(s) and end with {bounds[1].dim()} dimension(s)"
        elif tensors[0] and not tensors[1] and bounds[0].dim():
            got = f"start with {bounds[0].dim()} dimension(s)"
        elif tensors[1] and not tensors[0] and bounds[1].dim():
            got = f"end with {bounds[1].dim()} dimension(s)"
        else:
            got = None
        if got is not None:
            raise RuntimeError(f"{name} only supports 0-dimensional start and end tensors, but got {got}.")
        for i, key in enumerate(("start", "end")):
            if tensors[i]:
                if len(args) > i:
                    args[i] = bounds[i].item()
                else:
                    kwargs[key] = bounds[i].item()
    return bound(*args, **kwargs)


def linspace(*args, **kwargs):
    return _space("linspace", _functions.linspace, args, kwargs)


def logspace(*args, **kwargs):
    return _space("logspace", _functions.logspace, args, kwargs)


def where(*args, **kwargs):
    # where(condition) is nonzero(condition, as_tuple=True).
    if len(args) + len(kwargs) == 1 and (args or "condition" in kwargs):
        condition = args[0] if args else kwargs["condition"]
        if not isinstance(condition, _C.TensorBase):
            from ember._argcheck import _type_name

            where = " (position 1)" if args else ""
            raise TypeError(f"where(): argument 'condition'{where} must be Tensor, not {_type_name(condition)}")
        import ember

        return ember.nonzero(condition, as_tuple=True)
    return _functions.where(*args, **kwargs)
