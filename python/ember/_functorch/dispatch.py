"""Which rule each operator takes, and the dispatchers vmap installs while it runs."""

from __future__ import annotations

import operator

import ember
from ember._functorch import rules as R
from ember._functorch.batched import LEVELS, BatchedTensor
from ember._functorch.rules_nn import NN_RULES

# ---- the families (each name maps to one family's rule) ----
_UNARY = """abs absolute acos arccos acosh arccosh angle asin arcsin asinh arcsinh atan arctan atanh arctanh
bitwise_not ceil clamp clip conj conj_physical cos cosh deg2rad digamma erf erfc erfinv exp exp2 expm1 fix
floor frac isfinite isinf isnan isneginf isposinf isreal lgamma log log10 log1p log2 logical_not logit
nan_to_num neg negative positive rad2deg reciprocal relu relu6 round rsqrt sgn sigmoid sign signbit sin sinc
sinh sqrt square tan tanh trunc gelu silu mish elu selu celu leaky_relu hardtanh hardsigmoid hardswish
softplus softsign softshrink hardshrink tanhshrink logsigmoid threshold mvlgamma polygamma i0 clamp_min
clamp_max float double half bfloat16 int long short bool byte char to type type_as contiguous clone detach
cpu cuda tril triu requires_grad_ resolve_conj resolve_neg"""
_BINARY = """add sub subtract mul multiply div divide true_divide floor_divide remainder fmod pow float_power
atan2 arctan2 hypot maximum minimum fmax fmin eq ne lt le gt ge greater less greater_equal less_equal
not_equal logical_and logical_or logical_xor bitwise_and bitwise_or bitwise_xor bitwise_left_shift
bitwise_right_shift copysign nextafter xlogy ldexp lerp addcmul addcdiv where masked_fill heaviside
isclose rsub logaddexp logaddexp2 igamma igammac copy_ fill_ zero_ masked_fill_ dropout_ gcd lcm"""
_REDUCE_ALL = "sum mean nansum nanmean amax amin std var std_mean var_mean count_nonzero aminmax".split()
_REDUCE_FLAT = "prod argmax argmin max min median nanmedian all any mode".split()
_DIM_REQUIRED = {
    "softmax": (1, -1), "log_softmax": (1, -1), "softmin": (1, -1), "cumsum": (1, None),
    "cumprod": (1, None), "logcumsumexp": (1, None), "cummax": (1, None), "cummin": (1, None),
    "logsumexp": (1, None), "argsort": (1, -1), "sort": (1, -1), "topk": (2, -1), "kthvalue": (2, -1),
    "select": (1, None), "narrow": (1, None), "unsqueeze": (1, None), "index_select": (1, None),
    "glu": (1, -1), "normalize": (2, 1), "cross": (2, -1), "diff": (2, -1),
}
_MULTI_DIM = {
    "transpose": [(1, "dim0", 0, 0), (2, "dim1", 1, 0)],
    "swapaxes": [(1, "axis0", 0, 0), (2, "axis1", 1, 0)],
    "swapdims": [(1, "dim0", 0, 0), (2, "dim1", 1, 0)],
    "movedim": [(1, "source", 0, 0), (2, "destination", 0, 0)],
    "moveaxis": [(1, "source", 0, 0), (2, "destination", 0, 0)],
    "flatten": [(1, "start_dim", 0, 0), (2, "end_dim", -1, 0)],
    "diagonal": [(2, "dim1", 0, 0), (3, "dim2", 1, 0)],
    "flip": [(1, "dims", None, 0)],
    "unflatten": [(1, "dim", None, 0)],
    "roll": [(2, "dims", None, 0)],
}


def _table():
    table = {}
    for name in _UNARY.split() + _BINARY.split():
        table[name] = R.pointwise
        table[name + "_"] = R.pointwise
    for name in _REDUCE_ALL:
        table[name] = R.dim_rule(none="all")
    for name in _REDUCE_FLAT:
        table[name] = R.dim_rule(none="flat")
    for name, (pos, default) in _DIM_REQUIRED.items():
        table[name] = R.dim_rule(pos=pos, none=default if default is not None else "all",
                                 needs_dim=default is None,
                                 extra=1 if name == "unsqueeze" else 0)
    for name, dims in _MULTI_DIM.items():
        table[name] = R.multi_dim_rule(*dims)
    table["transpose_"] = table["transpose"]
    for name in ("view", "reshape", "expand", "broadcast_to", "repeat"):
        table[name] = R.shape_rule
    for name in ("view_as", "reshape_as", "expand_as"):
        table[name] = R.as_rule
    table["permute"] = R.permute_rule
    table["t"] = R.t_rule
    table["squeeze"] = R.squeeze_rule
    for name in ("split", "chunk", "tensor_split", "unbind"):
        table[name] = R.split_rule
    for name in ("cat", "concat", "concatenate", "stack"):
        table[name] = R.list_dim_rule
    for name in ("matmul", "mm", "bmm", "mv", "dot", "vdot", "__rmatmul__"):
        table[name] = R.matmul_rule
    for name in ("addmm", "addmv"):
        table[name] = R.addmm_rule
    for name in ("gather", "take_along_dim", "scatter", "scatter_add", "scatter_reduce"):
        table[name] = R.index_dim_rule
    table["__getitem__"] = R.getitem_rule
    table["__setitem__"] = R.setitem_rule
    for name in ("zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like"):
        table[name] = _like_rule
    return table


def _like_rule(op, level, args, kwargs):
    if op.__name__ in RANDOM and R.randomness_of(level) == "same":
        return op(args[0].value[0], *args[1:], **kwargs)
    return BatchedTensor(op(args[0].value, *args[1:], **kwargs), level)


FUNCTIONAL_RULES = {
    "linear": R.linear_rule, "cross_entropy": R.cross_entropy_rule, "nll_loss": R.nll_loss_rule,
    "mse_loss": R.loss_rule, "l1_loss": R.loss_rule, "layer_norm": R.layer_norm_rule,
    "conv1d": R.conv_rule, "conv2d": R.conv_rule, "conv3d": R.conv_rule,
    **NN_RULES,
}
RULES = _table()

# Operators that draw random numbers (Note [vmap randomness]).
RANDOM = {
    "rand", "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like", "normal", "bernoulli",
    "multinomial", "poisson", "dropout", "alpha_dropout", "feature_alpha_dropout", "dropout1d", "dropout2d",
    "dropout3d", "rrelu", "normal_", "uniform_", "bernoulli_", "random_", "exponential_", "geometric_",
    "cauchy_", "log_normal_", "gumbel_softmax",
}


def _named(fn, name, inplace=False):
    fn.__name__ = name
    fn.inplace = inplace
    return fn


def _method_op(name):
    def op(self, *args, **kwargs):
        if not isinstance(self, BatchedTensor) and (
                any(isinstance(a, BatchedTensor) for a in args) or any(
                    isinstance(v, BatchedTensor) for v in kwargs.values())):
            # a plain tensor's method would not take a batched argument: the function form does
            function = getattr(ember, name, None)
            if function is not None and not name.endswith("_"):
                return function(self, *args, **kwargs)
        return getattr(self, name)(*args, **kwargs)

    return _named(op, name, name.endswith("_") and not name.endswith("__"))


def _dispatch(name, op, args, kwargs, rules=RULES):
    level = R.top_level(args, kwargs)
    if name in RANDOM:
        return _random(name, op, level, args, kwargs)
    rule = rules.get(name) or RULES.get(name)
    if rule is None:
        return R.fallback(op, level, args, kwargs)
    return rule(op, level, args, kwargs)


def bound_method(self, name):
    op = _METHOD_OPS.get(name)
    if op is None:
        op = _METHOD_OPS[name] = _method_op(name)

    def method(*args, **kwargs):
        return _dispatch(name, op, (self, *args), kwargs)

    return method


_METHOD_OPS = {}


def _binary_forms():
    forms = {}
    for name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor", "lshift",
                 "rshift", "matmul"):
        fn = getattr(operator, name + "_" if name in ("and", "or") else name)
        forms[f"__{name}__"] = (fn, False)
        forms[f"__r{name}__"] = ((lambda f: lambda a, b: f(b, a))(fn), False)
        forms[f"__i{name}__"] = (getattr(operator, "i" + name), True)
    for name in ("eq", "ne", "lt", "le", "gt", "ge"):
        forms[f"__{name}__"] = (getattr(operator, name), False)
    for name in ("neg", "pos", "abs", "invert"):
        forms[f"__{name}__"] = (getattr(operator, name), False)
    forms["__getitem__"] = (operator.getitem, False)
    forms["__setitem__"] = (operator.setitem, False)
    return forms


_FORMS = _binary_forms()


def operator_method(form):
    fn, inplace = _FORMS[form]
    op = _named(lambda *args: fn(*args), form, inplace)
    if "matmul" in form:
        rule_name = "__rmatmul__" if form == "__rmatmul__" else "matmul"
    elif form in ("__getitem__", "__setitem__"):
        rule_name = form
    else:
        rule_name = "add"  # every other operator form is pointwise

    def method(self, *args):
        if rule_name == "matmul" and form == "__imatmul__":
            return NotImplemented
        return _dispatch(rule_name, op, (self, *args), {})

    return method


# ---- randomness ----
def _random(name, op, level, args, kwargs):
    if name in _DROPOUTS and not R._get(args, kwargs, 2, "training", True):
        return args[0] if args else kwargs["input"]  # dropout off: no random draw at all
    innermost = LEVELS[-1]
    randomness = R.randomness_of(level) if level >= 0 else innermost[2]
    if randomness == "error":
        raise RuntimeError(
            "vmap: called random operation while in randomness error mode. Please either use the 'same' or "
            "'different' randomness flags on vmap or perform the randomness operation out of vmap"
        )
    if level < 0:
        # a factory or an unbatched input: 'different' draws one per sample of the innermost vmap
        lvl, size, _ = innermost
        if randomness == "same":
            return op(*args, **kwargs)
        if name in ("rand", "randn"):
            shape = R._shape_arg((None, *args), kwargs)
            return BatchedTensor(op(size, *shape, **{k: v for k, v in kwargs.items() if k != "size"}), lvl)
        if args and isinstance(args[0], ember.Tensor) and name not in ("randint",):
            first = args[0].unsqueeze(0).expand(size, *args[0].shape)
            if name.endswith("_") and not name.endswith("__"):
                raise RuntimeError(
                    "vmap: Cannot ask for different inplace randomness on an unbatched tensor. This will appear "
                    "like same randomness. If this is necessary for your usage, please file an issue with "
                    "functorch."
                )
            return BatchedTensor(op(first.contiguous(), *args[1:], **kwargs), lvl)
        return R.fallback(op, lvl, args, kwargs)
    if randomness == "different":
        original = getattr(op, "__wrapped__", None)
        if original is not None:
            # the values are drawn per element already: no second batching one level down
            def drawn(*a, **k):
                batched = any(isinstance(x, BatchedTensor) for x in (*a, *k.values()))
                return (op if batched else original)(*a, **k)

            op = _named(drawn, name, getattr(op, "inplace", False))
        return R.fallback(op, level, args, kwargs) if name not in _LIKE_RANDOM else R.pointwise(
            op, level, args, kwargs)
    # 'same': one draw shared by all samples
    self = args[0]
    if name in ("dropout", "alpha_dropout", "feature_alpha_dropout", "dropout1d", "dropout2d", "dropout3d"):
        p = R._get(args, kwargs, 1, "p", 0.5)
        training = R._get(args, kwargs, 2, "training", True)
        if not training or p == 0:
            return self
        mask = op(ember.ones(tuple(self.shape), dtype=self.dtype), p, True)
        return self * mask
    if name in ("rand_like", "randn_like", "randint_like"):
        return _like_rule(op, level, args, kwargs)
    if name.endswith("_"):
        sample = op(ember.empty(tuple(self.shape), dtype=self.dtype), *args[1:], **kwargs)
        self.copy_(sample)
        return self
    if name == "bernoulli":
        return (ember.rand(tuple(self.shape), dtype=self.dtype) < self).to(self.dtype)
    return R.fallback(op, level, args, kwargs)


_DROPOUTS = {"dropout", "alpha_dropout", "feature_alpha_dropout", "dropout1d", "dropout2d", "dropout3d"}
_LIKE_RANDOM = {"normal", "bernoulli", "rand_like", "randn_like", "dropout", "alpha_dropout",
                "feature_alpha_dropout", "normal_", "uniform_", "bernoulli_", "random_", "exponential_",
                "rrelu", "poisson"}


# ---- swapping dispatchers into the namespaces while vmap runs ----
_SWAPS = []  # [(namespace dict, {name: dispatcher}, {name: original})]


def _make_dispatcher(name, original, rules):
    def dispatcher(*args, **kwargs):
        for a in args:
            if isinstance(a, BatchedTensor) or (
                    isinstance(a, (list, tuple)) and any(isinstance(x, BatchedTensor) for x in a)):
                break
        else:
            if not any(isinstance(v, BatchedTensor) for v in kwargs.values()):
                if name in RANDOM and LEVELS:
                    return _random(name, original, -1, args, kwargs)
                return original(*args, **kwargs)
        return _dispatch(name, dispatcher, args, kwargs, rules)

    dispatcher.__name__ = name
    dispatcher.inplace = name.endswith("_") and not name.endswith("__")
    dispatcher.__wrapped__ = original
    return dispatcher


_OWN_METHODS = set()
_GUARDED_ORIGINALS = {}


def _build_guards():
    for name in _GUARDED:
        original = getattr(ember.Tensor, name, None)
        if original is None:
            continue
        if name not in vars(ember.Tensor):
            _OWN_METHODS.add(name)  # inherited from the C++ base: removing the guard restores it
        _GUARDED_ORIGINALS[name] = original
        _GUARDS[name] = _guard(name, original)


def _build_swaps():
    _build_guards()
    import ember.nn.functional as F

    skip = {"is_tensor", "is_storage", "is_grad_enabled", "no_grad", "enable_grad", "set_grad_enabled",
            "get_default_dtype", "Size", "Tensor", "tensor", "as_tensor", "from_numpy", "manual_seed", "typename",
            "is_floating_point", "is_complex", "numel", "vmap", "compile", "load", "save", "device", "dtype"}
    for module, rules in ((ember, RULES), (F, {**RULES, **FUNCTIONAL_RULES})):
        names = {}
        for name, value in list(vars(module).items()):
            if name.startswith("_") or name in skip or isinstance(value, type) or not callable(value):
                continue
            if type(value).__name__ == "module":
                continue
            names[name] = _make_dispatcher(name, value, rules)
        _SWAPS.append((vars(module), names, {n: vars(module)[n] for n in names}))
        for name, dispatcher in names.items():
            _BY_ORIGINAL.setdefault(id(dispatcher.__wrapped__), dispatcher)


_DEPTH = [0]
# In-place methods of plain tensors that would take a batched argument.
_GUARDED = ("add_", "sub_", "mul_", "div_", "copy_", "clamp_", "masked_fill_", "pow_", "addcmul_", "addcdiv_",
            "lerp_", "__iadd__", "__isub__", "__imul__", "__itruediv__", "__setitem__", "index_put_",
            # out-of-place methods a plain tensor may be given a batched argument to
            "add", "sub", "mul", "div", "true_divide", "matmul", "mm", "mv", "dot", "pow", "maximum",
            "minimum", "eq", "ne", "lt", "le", "gt", "ge", "atan2", "expand_as")
_GUARDS = {}


def _guard(name, original):
    inplace = name.endswith("_") or name.startswith("__i") or name == "__setitem__"

    def guarded(self, *args, **kwargs):
        if not inplace:
            if any(isinstance(a, BatchedTensor) for a in (*args, *kwargs.values())):
                return _dispatch(name, _method_op(name), (self, *args), kwargs)
            return original(self, *args, **kwargs)
        if any(isinstance(a, BatchedTensor) for a in (*args, *kwargs.values())) or (
                name == "__setitem__" and isinstance(args[0], tuple) and any(
                    isinstance(i, BatchedTensor) for i in args[0])):
            R.pointwise(_named(lambda *a, **k: original(*a, **k), name, True), max(
                a.level for a in (*args, *kwargs.values()) if isinstance(a, BatchedTensor)), (self, *args), {})
        return original(self, *args, **kwargs)

    guarded.__name__ = name
    return guarded
_BY_ORIGINAL = {}


def resolve(func):
    """The dispatcher of an operator passed to vmap itself (vmap(ember.sin))."""
    if not _SWAPS:
        _build_swaps()
    return _BY_ORIGINAL.get(id(func), func)


def call(func, *args, **kwargs):
    """func(*args, **kwargs), through its batching dispatcher while vmap is
    active: a transform given an operator itself (jacrev(ember.sin)) holds
    the original, which the namespace swap does not reach."""
    if _DEPTH[0]:
        func = resolve(func)
    return func(*args, **kwargs)


def enter():
    if not _SWAPS:
        _build_swaps()
    if _DEPTH[0] == 0:
        for namespace, dispatchers, _originals in _SWAPS:
            namespace.update(dispatchers)
        for name, guard in _GUARDS.items():
            setattr(ember.Tensor, name, guard)
    _DEPTH[0] += 1


def exit_():
    _DEPTH[0] -= 1
    if _DEPTH[0] == 0:
        for namespace, _dispatchers, originals in _SWAPS:
            namespace.update(originals)
        for name in _GUARDS:
            if name in _OWN_METHODS:
                delattr(ember.Tensor, name)
            else:
                setattr(ember.Tensor, name, _GUARDED_ORIGINALS[name])
