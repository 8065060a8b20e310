"""PyTorch's TypeError for a non-Tensor argument given to a Python-level function.

PyTorch's functions are C++ with an argument parser: an int where a Tensor
belongs raises ``TypeError: f(): argument 'x' (position 2) must be Tensor,
not int`` before any work. Ember's functions written in Python duck-type
their arguments, so the same mistake surfaces later as an AttributeError
(``'int' object has no attribute 'dim'``). ``install`` wraps the public
Python functions of ``ember``, ``ember.Tensor`` and ``ember.linalg`` whose
PyTorch counterparts are C++ bindings, and the few such ones of
``ember.nn.functional``: an AttributeError raised for an attribute that Tensor has,
on an object that was itself one of the call's arguments (not a Tensor),
becomes that TypeError. Any other AttributeError passes unchanged.

Functions with PyTorch's signatures in ``ember._signatures`` are checked
before they run, by the C++ argument parser the bindings use: an int, bool,
tuple or dtype of the wrong kind raises PyTorch's TypeError, as the binding
would, instead of an error from deep inside the function or a silent result.
"""

from __future__ import annotations

import functools
import inspect
import sys
import types

from ember import _C, _dispatch_forms, _signatures


def _type_name(value):
    kind = type(value)
    if kind.__module__ == "builtins":
        return kind.__name__
    return "torch." + kind.__name__.split(".")[-1]


def _argument_of(fn, args, kwargs, obj):
    """(name, position) of the argument that is `obj`, or None."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        params = []
    for i, value in enumerate(args):
        if value is obj:
            name = params[i].name if i < len(params) and params[i].kind != params[i].VAR_POSITIONAL else f"arg{i}"
            return name, i + 1
    for name, value in kwargs.items():
        if value is obj:
            kinds = {p.name: (i + 1, p.kind) for i, p in enumerate(params)}
            position, kind = kinds.get(name, (None, None))
            # PyTorch names no position for a keyword-only argument.
            return name, (None if kind in (None, inspect.Parameter.KEYWORD_ONLY) else position)
    return None


def _test_flags(flags, args, kwargs):
    # PyTorch picks the function's form by these arguments' truth values first
    # (a tensor of several elements raises RuntimeError before any type check).
    for name, index in flags:
        if name in kwargs:
            bool(kwargs[name])
        elif index < len(args):
            bool(args[index])


# Losses PyTorch writes in Python: positions of (size_average, reduce,
# reduction). Its code reads them (truth values, a reduction name) before
# the binding checks the other arguments' types.
REDUCTION_ARGS = {
    "cross_entropy": (3, 5, 6),
    "nll_loss": (3, 5, 6),
    "cosine_embedding_loss": (4, 5, 6),
    "hinge_embedding_loss": (3, 4, 5),
    "poisson_nll_loss": (4, 6, 7),
    "triplet_margin_loss": (7, 8, 9),
    "soft_margin_loss": (2, 3, 4),
    "multilabel_margin_loss": (2, 3, 4),
    "kl_div": (2, 3, 4),
    "ctc_loss": (None, None, 5),
}
_REDUCTIONS = ("none", "mean", "sum", "elementwise_mean")


def _test_reduction(name, args, kwargs):
    def argument(key, index, default=None):
        if key in kwargs:
            return kwargs[key]
        return args[index] if index is not None and index < len(args) else default

    size_average_at, reduce_at, reduction_at = REDUCTION_ARGS[name]
    size_average, reduce = argument("size_average", size_average_at), argument("reduce", reduce_at)
    if size_average is not None or reduce is not None:
        # The legacy arguments' truth values pick the reduction.
        bool(True if size_average is None else size_average)
        bool(True if reduce is None else reduce)
        return
    reduction = argument("reduction", reduction_at, "mean")
    if name == "poisson_nll_loss":
        if reduction not in ("none", "mean", "sum"):
            raise ValueError(reduction + " is not a valid value for reduction")
        return
    valid = _REDUCTIONS + (("batchmean",) if name == "kl_div" else ())
    if not isinstance(reduction, str) or reduction not in valid:
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _test_triplet_margin(args, kwargs):
    _test_reduction("triplet_margin_loss", args, kwargs)
    margin = kwargs["margin"] if "margin" in kwargs else args[3] if len(args) > 3 else 1.0
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")


def _test_grid_sample_modes(args, kwargs):
    mode = kwargs["mode"] if "mode" in kwargs else args[2] if len(args) > 2 else "bilinear"
    if not isinstance(mode, str) or mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError(
            f"nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' or 'bicubic', but got: '{mode}'"
        )
    padding = kwargs["padding_mode"] if "padding_mode" in kwargs else args[3] if len(args) > 3 else "zeros"
    if not isinstance(padding, str) or padding not in ("zeros", "border", "reflection"):
        raise ValueError(
            "nn.functional.grid_sample(): expected padding_mode to be 'zeros', 'border', or 'reflection', "
            f"but got: '{padding}'"
        )


# What PyTorch's Python code checks before its binding checks the types.
def _python_checks_first(name):
    if name == "triplet_margin_loss":
        return _test_triplet_margin
    if name == "grid_sample":
        return _test_grid_sample_modes
    if name in REDUCTION_ARGS:
        return functools.partial(_test_reduction, name)
    return None


# NumPy's argument names PyTorch's parser takes for its own (axis=, keepdims=, x=, ...).
_NUMPY_NAMES = {"axis": "dim", "keepdims": "keepdim", "x": "input", "a": "input", "x1": "input", "x2": "other"}
_NUMPY_NAMES_SET = frozenset(_NUMPY_NAMES)


def _with_parameter_names(fn, kwargs):
    """kwargs with NumPy's names renamed to fn's parameters (the checks accepted them)."""
    params = _signature_of(fn).parameters
    renamed = {}
    for key, value in kwargs.items():
        target = _NUMPY_NAMES.get(key)
        renamed[target if target is not None and key not in params and target in params else key] = value
    return renamed


def _guard(fn, public_name, method, signatures=None, flags=None):
    python_first = None if method or not fn.__module__.startswith("ember.nn") else _python_checks_first(public_name)
    if signatures is not None:
        parsed = _C._arg_signatures(signatures, method)
        check_args = _C._check_args

        @functools.wraps(fn)
        def checked(*args, **kwargs):
            if flags:
                _test_flags(flags, args, kwargs)
            if python_first is not None and not _C._has_torch_function(args, kwargs):  # dispatch comes first
                python_first(args, kwargs)
            # One C call: True when the call dispatches to __torch_function__,
            # else the arguments are checked (TypeError when none fits).
            if check_args(parsed, *args, **kwargs):
                return _dispatch(checked, args, kwargs)
            if kwargs and not _NUMPY_NAMES_SET.isdisjoint(kwargs):
                kwargs = _with_parameter_names(fn, kwargs)
            return fn(*args, **kwargs)

        checked.__ember_argtypes__ = True
        return checked

    @functools.wraps(fn)
    def checked(*args, **kwargs):
        if flags:
            _test_flags(flags, args, kwargs)
        if _C._has_torch_function(args, kwargs):
            return _dispatch(checked, args, kwargs)
        try:
            return fn(*args, **kwargs)
        except AttributeError as e:
            obj, attr = getattr(e, "obj", None), getattr(e, "name", None)
            # An AttributeError of None itself (obj is None then too) names it in its message.
            missing = obj is None and not str(e).startswith("'NoneType' object has no attribute")
            if missing or isinstance(obj, _C.TensorBase) or attr not in dir(sys.modules["ember"].Tensor):
                raise
            found = _argument_of(fn, args, kwargs, obj)
            if found is None or (method and found[1] == 1):
                raise
            name, position = found
            where = ""
            if position is not None:
                # A method's self is not counted, as in PyTorch's messages.
                where = f" (position {position - 1 if method else position})"
            message = f"{public_name}(): argument '{name}'{where} must be Tensor, not {_type_name(obj)}"
            raise TypeError(message) from None

    checked.__ember_argtypes__ = True
    return checked


# Functions that PyTorch itself writes in Python (torch.functional, torch._tensor):
# they duck-type as Ember's do and raise the same AttributeError, so they
# stay unwrapped.
PYTHON_IN_PYTORCH = frozenset(
    {
        "atleast_1d",
        "atleast_2d",
        "atleast_3d",
        "block_diag",
        "broadcast_shapes",
        "broadcast_tensors",
        "cartesian_prod",
        "cdist",
        "chain_matmul",
        "compile",
        "einsum",
        "is_storage",
        "is_tensor",
        "load",
        "lu",
        "meshgrid",
        "norm",
        "save",
        "set_default_device",
        "set_default_tensor_type",
        "set_printoptions",
        "tensordot",
        "typename",
        "unique",
        "unique_consecutive",
        "unravel_index",
        "backward",
        "is_shared",
        "register_hook",
        "register_post_accumulate_grad_hook",
        "share_memory_",
        "storage",
        "storage_type",
        "vmap",
        "stft",
        "istft",
    }
)
# The same in one namespace only (linalg.solve, linalg.cond... are C++ bindings).
PYTHON_IN_PYTORCH_TOPLEVEL = frozenset(
    {
        "cond",
        "while_loop",
        "pca_lowrank",
        "svd_lowrank",
        "get_device_module",
        "get_default_device",
        "manual_seed",
        "seed",
        "initial_seed",
        "get_rng_state",
        "set_rng_state",
        "use_deterministic_algorithms",
        "set_float32_matmul_precision",
        "set_warn_always",
        "set_deterministic_debug_mode",
    }
)
PYTHON_IN_PYTORCH_METHODS = frozenset({"dim_order", "module_load", "resize", "resize_as", "unflatten"})
# nn.functional is Python in PyTorch too; these few are C++ bindings there, or
# hand their Tensor arguments to one first (the losses).
FUNCTIONAL_BUILTINS = frozenset(
    {
        "cross_entropy",
        "hinge_embedding_loss",
        "kl_div",
        "multi_margin_loss",
        "multilabel_margin_loss",
        "nll_loss",
        "poisson_nll_loss",
        "soft_margin_loss",
        "adaptive_avg_pool1d",
        "avg_pool1d",
        "avg_pool2d",
        "avg_pool3d",
        "bilinear",
        "celu_",
        "channel_shuffle",
        "conv1d",
        "conv2d",
        "conv3d",
        "conv_transpose1d",
        "conv_transpose2d",
        "conv_transpose3d",
        "conv_tbc",
        "cosine_similarity",
        "elu_",
        "gelu",
        "hardshrink",
        "hardtanh_",
        "leaky_relu_",
        "linear",
        "logsigmoid",
        "native_channel_shuffle",
        "one_hot",
        "pairwise_distance",
        "pdist",
        "pixel_shuffle",
        "pixel_unshuffle",
        "prelu",
        "relu_",
        "rrelu_",
        "scaled_dot_product_attention",
        "selu_",
        "softplus",
        "softshrink",
        "threshold_",
    }
)


# nn.functional functions that PyTorch builds with boolean_dispatch: the flag
# (name, position) whose truth value picks the form.
FUNCTIONAL_FLAGS = {
    **{f"max_pool{n}d": (("return_indices", 6),) for n in (1, 2, 3)},
    **{f"adaptive_max_pool{n}d": (("return_indices", 2),) for n in (1, 2, 3)},
    **{f"fractional_max_pool{n}d": (("return_indices", 4),) for n in (2, 3)},
}


def _dispatch(public_api, args, kwargs):
    from ember import overrides

    relevant = tuple(overrides._flat_args(args, kwargs))
    form = getattr(public_api, "__ember_dispatch_form__", None)
    if form is not None:
        args, kwargs = _canonical_arguments(form, args, kwargs)
    return overrides._handle(public_api, relevant, args, kwargs, from_c=False)


# Read on the first dispatch of each function, not at import.
_signature_of = functools.lru_cache(maxsize=None)(inspect.signature)


def _canonical_arguments(form, args, kwargs):
    """The arguments in the form PyTorch hands them to __torch_function__
    (_dispatch_forms); the call as given where it does not bind."""
    original, positional, keywords = form
    try:
        bound = _signature_of(original).bind(*args, **kwargs)
    except TypeError:
        return args, kwargs
    bound.apply_defaults()
    values = bound.arguments
    if any(name not in values for name in positional + keywords):
        return args, kwargs
    return tuple(values[name] for name in positional), {name: values[name] for name in keywords}


def _attach_dispatch_forms(namespace, forms):
    for name, (positional, keywords) in forms.items():
        fn = getattr(namespace, name, None)
        original = getattr(fn, "__wrapped__", None)
        if original is None or not getattr(fn, "__ember_argtypes__", False):
            continue
        fn.__ember_dispatch_form__ = (original, positional.split(), keywords.split())


def _with_torch_function(fn, flags=None):
    """fn, taking part in the __torch_function__ protocol (ember.overrides)."""

    @functools.wraps(fn)
    def call(*args, **kwargs):
        if flags:
            _test_flags(flags, args, kwargs)
        if _C._has_torch_function(args, kwargs):
            return _dispatch(call, args, kwargs)
        return fn(*args, **kwargs)

    call.__ember_argtypes__ = True
    return call


def _wrap_namespace(
    namespace, names, method=False, only=None, signatures=None, flags=None, python=frozenset(), prefix=""
):
    """Guards the Python functions of namespace; prefix names them as PyTorch's
    C++ bindings are named (linalg_solve, fft_fft)."""
    for name in names:
        if (
            name.startswith("_")
            or name in PYTHON_IN_PYTORCH
            or name in python
            or name in _FOREIGN_ARRAYS
            or (only is not None and name not in only)
        ):
            continue
        fn = namespace.__dict__.get(name) if method else getattr(namespace, name, None)
        if not isinstance(fn, types.FunctionType) or getattr(fn, "__ember_argtypes__", False):
            continue
        if not (fn.__module__ or "").startswith("ember"):
            continue
        guarded = _guard(fn, name, method, (signatures or {}).get(name), (flags or {}).get(name))
        if prefix:
            guarded.__name__ = prefix + name
        setattr(namespace, name, guarded)


def install(ember):
    _wrap_namespace(
        ember.Tensor,
        list(vars(ember.Tensor)),
        method=True,
        signatures=_signatures.METHODS,
        python=PYTHON_IN_PYTORCH_METHODS,
    )
    _wrap_namespace(ember, list(vars(ember)), signatures=_signatures.FUNCTIONS, python=PYTHON_IN_PYTORCH_TOPLEVEL)
    _wrap_namespace(ember.linalg, list(vars(ember.linalg)), signatures=_signatures.LINALG, prefix="linalg_")
    _wrap_namespace(
        ember.fft, list(vars(ember.fft)), only=set(_signatures.FFT), signatures=_signatures.FFT, prefix="fft_"
    )
    functional = ember.nn.functional
    _wrap_namespace(
        functional,
        list(vars(functional)),
        only=FUNCTIONAL_BUILTINS | set(_signatures.FUNCTIONAL),
        signatures=_signatures.FUNCTIONAL,
        flags=FUNCTIONAL_FLAGS,
    )
    # The other Python-level functions take part in __torch_function__ only.
    for module in (ember, functional, ember.linalg, ember.fft, ember.special):
        for name, fn in list(vars(module).items()):
            if (
                name.startswith("_")
                or not isinstance(fn, types.FunctionType)
                or getattr(fn, "__ember_argtypes__", False)
                or not (fn.__module__ or "").startswith("ember")
                or fn.__module__ == "ember.overrides"
                or name in _NOT_OVERRIDABLE
            ):
                continue
            wrapped = _with_torch_function(fn, FUNCTIONAL_FLAGS.get(name) if module is functional else None)
            if module is not ember and module is not functional:
                # torch.linalg.norm & co. are C++ bindings named linalg_norm, fft_fft, special_erf.
                wrapped.__name__ = f"{module.__name__.rsplit('.', 1)[-1]}_{name}"
            setattr(module, name, wrapped)
    _attach_dispatch_forms(functional, _dispatch_forms.FUNCTIONAL)
    _attach_dispatch_forms(ember, _dispatch_forms.TOPLEVEL)
    _rebind_defaults(functional, "ember.nn.modules.")


def _rebind_defaults(namespace, prefix):
    """Defaults of the classes' methods in modules under prefix that captured a
    function of namespace before it was wrapped (TransformerEncoderLayer's
    activation=F.relu) become the wrapper: `activation is F.relu` holds, and
    pickling a module that keeps it finds the same object by name."""
    wrapper_of = {}
    for fn in vars(namespace).values():
        inner = getattr(fn, "__wrapped__", None)
        while inner is not None:
            wrapper_of[id(inner)] = fn
            inner = getattr(inner, "__wrapped__", None)
    for name, module in list(sys.modules.items()):
        if not name.startswith(prefix) or module is None:
            continue
        for cls in vars(module).values():
            if not isinstance(cls, type) or cls.__module__ != name:
                continue
            for method in vars(cls).values():
                if not isinstance(method, types.FunctionType):
                    continue
                if method.__defaults__:
                    method.__defaults__ = tuple(wrapper_of.get(id(d), d) for d in method.__defaults__)
                if method.__kwdefaults__:
                    method.__kwdefaults__ = {k: wrapper_of.get(id(d), d) for k, d in method.__kwdefaults__.items()}


def checked(fn, name):
    """fn (a top-level function defined after install) with its signatures' checks."""
    return _guard(fn, name, False, _signatures.FUNCTIONS.get(name))


def checked_method(fn, name):
    """fn (a Tensor method defined after install) with its signatures' checks."""
    return _guard(fn, name, True, _signatures.METHODS.get(name))


# Functions whose argument is another library's array (a torch.Tensor among them, whose
# __torch_function__ must not take the call over).
_FOREIGN_ARRAYS = frozenset({"from_dlpack"})

# Python-level functions that take no tensors to dispatch on, or that PyTorch
# leaves outside the protocol.
_NOT_OVERRIDABLE = frozenset(
    {
        "compile",
        "is_tensor",
        "is_storage",
        "set_default_device",
        "set_default_tensor_type",
        "set_default_dtype",
        "set_printoptions",
        "typename",
        "load",
        "save",
        "vmap",
        "manual_seed",
        "seed",
        "initial_seed",
        "get_rng_state",
        "set_rng_state",
        "use_deterministic_algorithms",
        "set_float32_matmul_precision",
        "from_dlpack",
        "from_file",
        "set_flush_denormal",
    }
)
