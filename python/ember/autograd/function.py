"""Custom differentiable functions (ember.autograd.Function), as PyTorch's.

A subclass defines static ``forward`` (optionally with ``setup_context``) and
``backward``; ``apply`` runs forward without recording a graph, then the C++
side (_C._function_wrap) records one node for the call: its Python object is
the ``ctx`` (an instance of ``<Name>Backward``), which keeps the saved
tensors (checked against later in-place changes) and calls ``backward``."""

from __future__ import annotations

import functools
import inspect
import warnings

import ember
from ember import _C
from ember._functorch import autograd_function as _vmapped
from ember._functorch.batched import _GRAD_DEPTH
from ember._functorch.batched import LEVELS as _VMAP_LEVELS
from ember._functorch.batched import BatchedTensor as _BatchedTensor
from ember._tensor import Tensor as _Tensor
from ember.autograd import forward_ad as _forward_ad

__all__ = [
    "BackwardCFunction",
    "Function",
    "FunctionCtx",
    "InplaceFunction",
    "NestedIOFunction",
    "once_differentiable",
]


class FunctionCtx:
    """What forward/setup_context may record on ``ctx`` for backward."""

    # Read by _C._function_wrap; class defaults keep the lookups cheap.
    to_save = None
    dirty_tensors = None
    non_differentiable = None
    materialize_grads = True

    def save_for_backward(self, *tensors):
        self.to_save = tensors

    def save_for_forward(self, *tensors):
        self.saved_for_forward = tensors

    def mark_dirty(self, *args):
        self.dirty_tensors = args

    def mark_non_differentiable(self, *args):
        self.non_differentiable = args

    def set_materialize_grads(self, value: bool):
        self.materialize_grads = value

    def mark_shared_storage(self, *pairs):
        raise RuntimeError("mark_shared_storage is deprecated. Tensors with shared storages are automatically tracked.")

    @property
    def saved_tensors(self):
        if self._in_jvp:  # jvp reads what save_for_forward kept
            return getattr(self, "saved_for_forward", ())
        return _C._function_saved_tensors(self)

    _in_jvp = False

    @property
    def saved_variables(self):
        warnings.warn("'saved_variables' is deprecated; use 'saved_tensors'", DeprecationWarning, stacklevel=2)
        return self.saved_tensors


class BackwardCFunction(_C._FunctionBase, FunctionCtx):
    """The ctx and backward node of one call; ``<Name>Backward`` derives from it."""

    __repr__ = object.__repr__  # a Python class's: <module.NameBackward object at 0x...>, as PyTorch

    def apply(self, *args):
        backward_fn = self._forward_cls.backward
        vjp_fn = self._forward_cls.vjp
        if backward_fn is not Function.backward and vjp_fn is not Function.vjp:
            raise RuntimeError(
                "Implementing both 'backward' and 'vjp' for a custom Function is not allowed. "
                "You should only implement one of them."
            )
        user_fn = vjp_fn if vjp_fn is not Function.vjp else backward_fn
        return user_fn(self, *args)


class FunctionMeta(type):
    """Gives each Function subclass its node class, ``<Name>Backward``."""

    def __init__(cls, name, bases, attrs):
        backward_fn = type(name + "Backward", (BackwardCFunction,), {"_forward_cls": cls})
        backward_fn.__module__ = "ember.autograd.function"
        backward_fn.__qualname__ = name + "Backward"
        cls._backward_cls = backward_fn
        # The transforms' rules (autograd_function.apply_vmapped) apply to users' Functions; Ember's
        # own stand for PyTorch's operators and stay as they are.
        if "_seen_by_transforms" not in attrs:
            cls._seen_by_transforms = not cls.__module__.startswith("ember.")
        # (_SingleLevelFunction itself is being made when it has none.)
        cls._has_setup_context = "_SingleLevelFunction" in globals() and _is_setup_context_defined(cls.setup_context)
        super().__init__(name, bases, attrs)


class _SingleLevelFunction(metaclass=FunctionMeta):
    @staticmethod
    def forward(*args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom autograd.Function to use it "
            "with backward mode AD."
        )

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with forward mode AD."
        )


def _is_setup_context_defined(fn):
    return fn is not _SingleLevelFunction.setup_context


class Function(_SingleLevelFunction):
    """Base class of custom differentiable functions; call ``MyFn.apply(...)``."""

    def __init__(self, *args, **kwargs):
        warnings.warn(
            f"{self.__class__} should not be instantiated. Methods on autograd functions are all static, so you "
            "should invoke them on the class itself. Instantiating an autograd function will raise an error in a "
            "future version of PyTorch.",
            DeprecationWarning,
            stacklevel=2,
        )

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use new-style autograd "
            "function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)"
        )

    generate_vmap_rule = False

    @staticmethod
    def vmap(info, in_dims, *args):
        raise NotImplementedError(
            "To use autograd.Function with vmap, you must either override the vmap staticmethod or set "
            "generate_vmap_rule=True."
        )

    @classmethod
    def apply(cls, *args, **kwargs):
        setup_context = cls._has_setup_context
        if (_VMAP_LEVELS or _GRAD_DEPTH[0]) and cls._seen_by_transforms:  # inside an ember.func transform
            if not setup_context:
                raise _vmapped.setup_context_required()
            if _VMAP_LEVELS and any(isinstance(a, _BatchedTensor) for a in args):
                return _vmapped.apply_vmapped(cls, Function.vmap, args, kwargs)
        if setup_context:
            args = _bind_default_args(cls.forward, *args, **kwargs)
            kwargs = {}
        ctx = cls._backward_cls()
        grad_on = _C.is_grad_enabled()
        if grad_on:
            needs = tuple([isinstance(a, _Tensor) and a.requires_grad for a in args])
        else:
            needs = (False,) * len(args)
        ctx.needs_input_grad = needs
        tangents = _forward_ad._input_tangents(args) if _forward_ad._current_level >= 0 else None
        # forward records no graph (a plain flag flip: this is the per-call hot path)
        _C._set_grad_enabled(False)
        fw_was_enabled = _C._set_fwd_grad_enabled(False) if tangents else None
        try:
            if setup_context:
                outputs = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, outputs)
            else:
                outputs = cls.forward(ctx, *args, **kwargs)
        finally:
            _C._set_grad_enabled(grad_on)
            if tangents:
                _C._set_fwd_grad_enabled(fw_was_enabled)
        wrapped = _C._function_wrap(ctx, args, outputs, True in needs)
        if tangents:
            _forward_ad._run_custom_jvp(cls, ctx, tangents, wrapped, args, kwargs)
        return wrapped

    @staticmethod
    def _compiled_autograd_key(ctx):
        return (ctx._autograd_function_id,)


def _bind_default_args(func, *args, **kwargs):
    """args with keyword and default arguments filled in, as setup_context sees them."""
    bound = inspect.signature(func).bind(*args, **kwargs)
    bound.apply_defaults()
    return bound.args


class InplaceFunction(Function):
    """A Function that may work in place when constructed with inplace=True."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


class NestedIOFunction(Function):
    """The legacy nested-input Function base; kept for its name only in PyTorch's API."""

    def __init__(self, *args, **kwargs):
        raise RuntimeError("NestedIOFunction is a legacy API; use autograd.Function with static methods instead")


def once_differentiable(fn):
    """Runs backward without recording a graph: its result cannot be
    differentiated again."""

    @functools.wraps(fn)
    def wrapper(ctx, *args):
        with ember.no_grad():
            outputs = fn(ctx, *args)
        if not ember.is_grad_enabled():
            return outputs
        # Double backward through it is an error (raised when reached), as PyTorch's.
        requires_grad = any(isinstance(a, ember.Tensor) and a.requires_grad for a in args)
        if not requires_grad:
            return outputs
        was_tuple = isinstance(outputs, tuple)
        outs = outputs if was_tuple else (outputs,)
        differentiable = [isinstance(o, ember.Tensor) and (o.is_floating_point() or o.is_complex()) for o in outs]
        fake = [o.detach().requires_grad_() if d else o for o, d in zip(outs, differentiable)]
        err = _DelayedError.apply(
            "trying to differentiate twice a function that was marked with @once_differentiable", len(fake), *fake
        )
        return err if was_tuple else err[0]

    return wrapper


class _DelayedError(Function):
    """Passes tensors through; differentiating them raises the message."""

    @staticmethod
    def forward(ctx, msg, n, *tensors):
        ctx.msg = msg
        return tensors

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(ctx.msg)


# ---- Ember's composites recorded as one node with the name of PyTorch's operator ----


class _LinearNode(Function):
    """fn(x), a linear map of x (x * 2.0, a squeeze), recorded as one node: backward applies
    adjoint (fn's adjoint, written with differentiable operators) to the gradient."""

    _jvp_from_backward = True  # forward-mode AD differentiates backward (forward_ad._jvp_from_backward)

    @staticmethod
    def forward(ctx, x, fn, adjoint, saved):
        ctx.adjoint = adjoint
        for key, value in saved.items():
            setattr(ctx, key, value)
        out = fn(x)
        # a view would be one made in no-grad mode, which refuses later in-place changes
        return out.clone() if out._is_view() else out

    @staticmethod
    def backward(ctx, grad):
        return ctx.adjoint(grad), None, None, None


class _CompositeNode(Function):
    """fn(*inputs) recorded as one node: forward runs fn without a graph; backward runs it again
    with one and differentiates that (the gradients are fn's own, and differentiable again).
    fn may return a tuple; mask tells which of its outputs are differentiable (by default
    the floating and complex ones)."""

    _jvp_from_backward = True

    @staticmethod
    def forward(ctx, fn, mask, saved, *inputs):
        ctx.fn = fn
        exact = saved.pop("_exact", None)
        for key, value in saved.items():
            setattr(ctx, key, value)
        ctx.save_for_backward(*inputs)
        out = (exact or fn)(*inputs)
        # a view would be one made in no-grad mode, which refuses later in-place changes
        outs = tuple(o.clone() if o._is_view() else o for o in (out if isinstance(out, tuple) else (out,)))
        ctx.differentiable = [
            (o.dtype.is_floating_point or o.dtype.is_complex) and (mask is None or m)
            for o, m in zip(outs, mask or outs)
        ]
        ctx.mark_non_differentiable(*[o for o, d in zip(outs, ctx.differentiable) if not d])
        return outs if isinstance(out, tuple) else outs[0]

    @staticmethod
    def backward(ctx, *grads):
        inputs = ctx.saved_tensors
        needs = ctx.needs_input_grad[3:]
        if not ember.is_grad_enabled():
            # First order: differentiate the re-run alone. Through the inputs' own history the
            # inner grad would also run (and free) nodes between related inputs (x and 3 * x).
            inputs = tuple(x.detach().requires_grad_() if need else x for x, need in zip(inputs, needs))
        wanted = [x for x, need in zip(inputs, needs) if need]
        with ember.enable_grad():
            out = ctx.fn(*inputs)
        outs = out if isinstance(out, tuple) else (out,)
        pairs = [(o, g) for o, g, d in zip(outs, grads, ctx.differentiable) if d and g is not None and o.requires_grad]
        found = iter(
            ember.autograd.grad(
                [o for o, _ in pairs],
                wanted,
                [g for _, g in pairs],
                create_graph=ember.is_grad_enabled(),
                allow_unused=True,
            )
            if pairs and wanted
            else [None] * len(wanted)
        )
        return (None, None, None, *[next(found) if need else None for need in needs])


class _NoDerivativeNode(Function):
    """values computed from x by an operator without a derivative, recorded as its node:
    backward raises PyTorch's NotImplementedError naming the operator."""

    @staticmethod
    def forward(ctx, x, values, op):
        ctx.op = op
        return values.clone()

    @staticmethod
    def backward(ctx, grad):
        raise NotImplementedError(f"the derivative for '{ctx.op}' is not implemented.")


_NODE_CLASSES: dict = {}


def _node_class(base, name):
    cls = _NODE_CLASSES.get((base, name))
    if cls is None:
        cls = type(name.removesuffix("Backward0"), (base,), {})
        node = cls._backward_cls
        node.__name__ = node.__qualname__ = name
        node.__module__ = "builtins"  # printed as PyTorch's C++ nodes: <MulBackward1 object at ...>
        _NODE_CLASSES[(base, name)] = cls
    return cls


def _grad_recorded(tensors):
    """Whether a node is recorded for these inputs (inside an ember.func transform the plain
    operators are composed instead)."""
    return (
        _C.is_grad_enabled()
        and any(t is not None and t.requires_grad for t in tensors)
        and not (_VMAP_LEVELS or _GRAD_DEPTH[0])
    )


def _linear_node(name, x, fn, adjoint, **saved):
    """fn(x) for a linear fn, recorded as the node `name` (a PyTorch operator's that Ember computes
    as others: MulBackward1 for a tensor times a number) when x needs a gradient."""
    if not _grad_recorded((x,)):
        return fn(x)
    return _node_class(_LinearNode, name).apply(x, fn, adjoint, saved)


def _composite_node(name, fn, *inputs, mask=None, exact=None, **saved):
    """fn(*inputs) (None inputs allowed), recorded as the node `name` (a PyTorch operator's that
    Ember composes) when an input needs a gradient; inside the ember.func transforms fn is
    composed as it is. `exact`, when given, computes the forward values (a kernel's, where fn
    composes the same function differently) and fn only the gradients."""
    if not _grad_recorded(inputs):
        return fn(*inputs)
    return _node_class(_CompositeNode, name).apply(fn, mask, dict(saved, _exact=exact), *inputs)


def _mul_scalar(x, other):
    """x * other for a Python number, recorded as PyTorch's MulBackward1 (mul.Scalar)."""
    if isinstance(other, complex):
        return x * other
    return _linear_node("MulBackward1", x, lambda t: t * other, lambda g: g * other, _saved_other=other)


def _div_scalar(x, other):
    """x / other for a Python number, recorded as PyTorch's DivBackward1 (div.Scalar)."""
    if isinstance(other, complex):
        return x / other
    return _linear_node("DivBackward1", x, lambda t: t / other, lambda g: g / other, _saved_other=other)


def _add_scalar(x, other):
    """x + other for a Python number, recorded as PyTorch's AddBackward1 (add.Scalar)."""
    if isinstance(other, complex):
        return x + other
    return _linear_node("AddBackward1", x, lambda t: t + other, lambda g: g)
