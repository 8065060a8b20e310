"""ember.library: users' own operators (PyTorch's torch.library).

`custom_op` turns a Python function into an operator of `ember.ops` with a
schema inferred from its annotations; `register_fake` gives it a meta kernel
(shapes without data), `register_autograd` a backward, `register_kernel` a
kernel per device. `Library` / `define` / `impl` declare operators from
schema strings. A call binds its arguments to the schema, runs the kernel of
its tensors' device with autograd recording off, and records the registered
backward when a tensor input requires grad.
"""

from __future__ import annotations

import collections.abc
import inspect
import typing

import ember

from . import _C
from ._ops import FunctionSchema, _tensors_in, ops

__all__ = [
    "CustomOpDef",
    "Library",
    "custom_op",
    "define",
    "fallthrough_kernel",
    "get_ctx",
    "impl",
    "impl_abstract",
    "infer_schema",
    "opcheck",
    "register_autograd",
    "register_fake",
    "register_kernel",
]

# ---- schema inference ------------------------------------------------------------


def _annotation_table():
    T, Opt, S = ember.Tensor, typing.Optional, typing.Sequence
    table = {}

    def add(py, text, sequences=True, optional_sequence=True):
        table[py] = text
        table[Opt[py]] = text + "?"
        if sequences:
            for seq in (S[py], typing.List[py], collections.abc.Sequence[py], list[py]):  # noqa: UP006
                table[seq] = text + "[]"
                if optional_sequence:
                    table[Opt[seq]] = text + "[]?"

    add(T, "Tensor", optional_sequence=False)
    for seq in (S[Opt[T]], typing.List[Opt[T]], collections.abc.Sequence[Opt[T]], list[Opt[T]]):  # noqa: UP006
        table[seq] = "Tensor?[]"
    add(int, "SymInt")
    add(float, "float")
    add(bool, "bool")
    table[str] = "str"
    add(typing.Union[int, float, bool], "Scalar", optional_sequence=False)  # noqa: UP007
    table[int | float | bool] = "Scalar"
    add(ember.dtype, "ScalarType", sequences=False)
    add(ember.device, "Device", sequences=False)
    return table


_RETURNS = {type(None): "()", None: "()", int: "SymInt", float: "float", bool: "bool"}


def _return_text(annotation, error):
    if annotation in _RETURNS:
        return _RETURNS[annotation]
    if annotation is ember.Tensor:
        return "Tensor"
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (list, typing.List, collections.abc.Sequence) and args == (ember.Tensor,):  # noqa: UP006
        return "Tensor[]"
    if origin is tuple and args:
        return "(" + ", ".join(_return_text(a, error) for a in args) + ")"
    error(f"Return has unsupported type {annotation}.")


def infer_schema(prototype_function, /, *, mutates_args, op_name=None) -> str:
    """The schema of a function from its type annotations, as PyTorch writes it."""
    signature = inspect.signature(prototype_function)

    def error(what):
        raise ValueError(f"infer_schema(func): {what} Got func with signature {signature})")

    hints = typing.get_type_hints(prototype_function)
    table = _annotation_table()
    mutated = _mutated_names(mutates_args, signature)
    params, kwarg_started, alias = [], False, 0
    for name, p in signature.parameters.items():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            error("infer_schema does not support functions with *args or **kwargs.")
        if p.annotation is inspect.Parameter.empty:
            error(f"Parameter {name} must have a type annotation.")
        annotation = hints.get(name, p.annotation)
        if annotation not in table:
            error(f"Parameter {name} has unsupported type {annotation}. The valid types are: {table.keys()}.")
        text = table[annotation]
        if p.kind == p.KEYWORD_ONLY and not kwarg_started:
            params.append("*")
            kwarg_started = True
        if name in mutated:
            if not text.startswith("Tensor"):
                error(f"Parameter {name} is in mutable_args but only Tensors or collections of Tensors can be mutated")
            text = f"Tensor(a{alias}!)" + text[len("Tensor") :]
            alias += 1
        entry = f"{text} {name}"
        if p.default is not inspect.Parameter.empty:
            entry += "=" + _default_text(p.default, error, name)
        params.append(entry)
    unknown = set(mutated) - set(signature.parameters)
    if unknown:
        error(f"{sorted(unknown)} in mutates_args were not found in the custom op's signature.")
    returns = hints.get("return", signature.return_annotation)
    if returns is inspect.Signature.empty:
        error("No return type annotation was provided. Please add one.")
    text = f"({', '.join(params)}) -> {_return_text(returns, error)}"
    return f"{op_name}{text}" if op_name else text


def _default_text(value, error, name):
    if value is None or isinstance(value, (bool, int, float, str)):
        return f'"{value}"' if isinstance(value, str) else str(value)
    if isinstance(value, ember.dtype):
        return str(value).split(".")[-1]
    error(
        f"Parameter {name} has an unsupported default value type {type(value)}. "
        "Please file an issue on GitHub so we can prioritize this."
    )


def _mutated_names(mutates_args, signature):
    if mutates_args == "unknown":
        return [n for n, p in signature.parameters.items() if p.annotation is ember.Tensor]
    if isinstance(mutates_args, str):
        raise ValueError("mutates_args must be 'unknown' or an iterable of argument names")
    return list(mutates_args)


# ---- the context of fake kernels ------------------------------------------------------


class _FakeContext:
    """What get_ctx() returns inside a fake kernel: sizes are concrete here."""

    def new_dynamic_size(self, *, min=0, max=None):  # noqa: A002
        raise RuntimeError("new_dynamic_size needs symbolic shapes, which Ember's meta tensors do not have")

    create_unbacked_symint = new_dynamic_size


def get_ctx():
    return _FakeContext()


def fallthrough_kernel():
    raise NotImplementedError("fallthrough_kernel() should never be called.")


# ---- custom_op ---------------------------------------------------------------------------------


def _node_class(overload, backward, setup_context):
    """The autograd.Function one operator's calls record (grad_fn
    GeneratedBackwardFor_<ns>_<name>_<overload>Backward, as PyTorch names it)."""
    namespace, name = overload._schema.name.split("::")

    def forward(*values):
        return overload._run_kernel(values)

    def setup(ctx, inputs, output):
        if setup_context is not None:
            setup_context(ctx, inputs, output)

    def run_backward(ctx, *grads):
        if backward is None:
            raise RuntimeError(
                f"Trying to backward through {overload} but no autograd formula was registered. "
                "Please use register_autograd to add one."
            )
        result = backward(ctx, *grads)
        return result if isinstance(result, tuple) else (result,)

    attrs = {
        "forward": staticmethod(forward),
        "setup_context": staticmethod(setup),
        "backward": staticmethod(run_backward),
    }
    return type(f"GeneratedBackwardFor_{namespace}_{name}_{overload._overloadname}", (ember.autograd.Function,), attrs)


class CustomOpDef:
    """The operator `custom_op` makes; call it like the function it wraps."""

    def __init__(self, namespace, name, schema, fn, device_types=None):
        self._namespace = namespace
        self._name = name
        self._init_fn = fn
        self._schema = FunctionSchema.parse(f"{namespace}::{name}{schema}")
        self._opoverload = ops._register(self._schema)
        self._opoverload.custom_op = self
        self._kernels = self._opoverload.kernels
        self._fake_fn = None
        self._backward = None
        self._setup_context = None
        self._node = None
        self._mutated = [i for i, a in enumerate(self._schema.arguments) if a.is_mutated]
        if device_types is None:
            self._kernels["default"] = fn
        else:
            for device in [device_types] if isinstance(device_types, str) else device_types:
                self._kernels[str(device)] = fn
        self.__name__ = name
        self.__doc__ = fn.__doc__

    def __repr__(self):
        return f"<CustomOpDef({self._namespace}::{self._name})>"

    def __call__(self, *args, **kwargs):
        return self._opoverload(*args, **kwargs)

    def register_kernel(self, device_types, fn=None):
        def register(func):
            for device in [device_types] if isinstance(device_types, str) else device_types:
                self._kernels[str(device)] = func
            return func

        return register(fn) if fn is not None else register

    def register_fake(self, fn):
        self._fake_fn = fn
        self._kernels["meta"] = fn
        return fn

    def register_autograd(self, backward, /, *, setup_context=None):
        self._backward = backward
        self._setup_context = setup_context
        self._node = None

    def _dispatch(self, overload, values):
        device = overload._device_type(values)
        if device == "meta" and self._fake_fn is None:
            raise RuntimeError(
                f"There was no fake impl registered for {self}. This is necessary for torch.compile/export/fx "
                f"tracing to work. Please use `{self._init_fn.__name__}.register_fake` to add an fake impl."
            )
        inputs = list(_tensors_in(values))
        if ember.is_grad_enabled() and any(t.requires_grad for t in inputs):
            if self._node is None:
                self._node = _node_class(overload, self._backward, self._setup_context)
            out = self._node.apply(*values)
        else:
            out = overload._run_kernel(values)
        self._check_no_aliasing(inputs, out)
        return out

    def _check_no_aliasing(self, inputs, out):
        outputs = list(_tensors_in(out if isinstance(out, (tuple, list)) else [out]))
        seen = set()
        for t in outputs:
            has_data = t.numel() > 0 and t.device.type != "meta"
            key = (t.untyped_storage().data_ptr(), has_data)
            aliased = any(t is i for i in inputs) or (
                has_data and any(i.numel() > 0 and i.untyped_storage().data_ptr() == key[0] for i in inputs)
            )
            if aliased or (key[1] and key in seen):
                raise RuntimeError(
                    f"{self._name} (with implementation in {inspect.getmodule(self._init_fn)}): The output of this "
                    "custom operator (1) must not also be an input to this custom operator and (2) may not alias "
                    "any inputs to this custom operator or other returns. The most common way to trigger this "
                    "error is if we have y = custom_op(x) and y and x are the same Tensor. Please instead return "
                    "a clone of the offending output tensor(s) (e.g. return x.clone()) or refactor the custom "
                    "operator to not return y."
                )
            seen.add(key)


def custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None, tags=None):
    """Wraps a function into an operator of ember.ops (decorator or call)."""

    def inner(func):
        namespace, _, opname = name.partition("::")
        if not opname:
            raise ValueError(f"custom_op(name): expected a name of the form 'namespace::opname', got {name}")
        text = schema if schema is not None else infer_schema(func, mutates_args=mutates_args)
        return CustomOpDef(namespace, opname, text, func, device_types)

    return inner(fn) if fn is not None else inner


def _custom_op_of(op):
    if isinstance(op, CustomOpDef):
        return op
    overload = op if not isinstance(op, str) else ops._lookup(op)
    return getattr(overload, "custom_op", None), overload


def register_fake(op, func=None, /, *, lib=None, _stacklevel=1, allow_override=True):
    """Registers the meta ("fake") kernel of an operator."""

    def register(fn):
        if isinstance(op, CustomOpDef):
            return op.register_fake(fn)
        custom, overload = _custom_op_of(op)
        if custom is not None:
            return custom.register_fake(fn)
        overload.kernels["meta"] = fn
        return fn

    return register(func) if func is not None else register


impl_abstract = register_fake


def register_kernel(op, device_types, func=None, /, *, lib=None):
    def register(fn):
        if isinstance(op, CustomOpDef):
            return op.register_kernel(device_types, fn)
        custom, overload = _custom_op_of(op)
        if custom is not None:
            return custom.register_kernel(device_types, fn)
        for device in [device_types] if isinstance(device_types, str) else device_types:
            overload.kernels[str(device)] = fn
        return fn

    return register(func) if func is not None else register


def register_autograd(op, backward, /, *, setup_context=None, lib=None):
    if isinstance(op, CustomOpDef):
        return op.register_autograd(backward, setup_context=setup_context)
    custom, overload = _custom_op_of(op)
    if custom is None:
        custom = _adopt(overload)
    custom.register_autograd(backward, setup_context=setup_context)


def _adopt(overload):
    """Gives an operator defined from a schema string the custom_op machinery."""
    custom = CustomOpDef.__new__(CustomOpDef)
    namespace, name = overload._schema.name.split("::")
    custom._namespace, custom._name, custom._schema = namespace, name, overload._schema
    custom._opoverload, custom._kernels = overload, overload.kernels
    custom._init_fn = next(iter(overload.kernels.values()), lambda *a: None)
    custom._fake_fn = overload.kernels.get("meta")
    custom._backward = custom._setup_context = custom._node = None
    custom._mutated = [i for i, a in enumerate(overload._schema.arguments) if a.is_mutated]
    overload.custom_op = custom
    return custom


# ---- Library ------------------------------------------------------------------------------------

_DEVICE_OF_KEY = {"CPU": "cpu", "CUDA": "cuda", "Meta": "meta", "": "default", "CompositeExplicitAutograd": "default"}


class Library:
    """A set of operator definitions and kernels in one namespace
    (kind "DEF", "IMPL" or "FRAGMENT")."""

    def __init__(self, ns, kind, dispatch_key=""):
        if kind not in ("IMPL", "DEF", "FRAGMENT"):
            raise ValueError(f"Unsupported kind: {kind}")
        self.ns = ns
        self.kind = kind
        self.dispatch_key = dispatch_key
        self._defined = []

    def __repr__(self):
        return f"Library(kind={self.kind}, ns={self.ns}, dispatch_key={self.dispatch_key})>"

    def define(self, schema, alias_analysis="", *, tags=()):
        if self.kind == "IMPL":
            raise RuntimeError("Library.define is not allowed for a library of kind IMPL")
        parsed = FunctionSchema.parse(schema, self.ns)
        self._defined.append(ops._register(parsed))
        _apply_pending_impls()  # C++ kernels loaded before their definition
        return parsed.name.split("::")[1]

    def impl(self, op_name, fn, dispatch_key="", *, with_keyset=False, allow_override=False):
        name = op_name if isinstance(op_name, str) else op_name.name()
        if "::" not in name:
            name = f"{self.ns}::{name}"
        overload = ops._lookup(name)
        key = dispatch_key or self.dispatch_key
        if key == "CompositeImplicitAutograd":
            overload.implicit_autograd = fn
        elif key == "Autograd" or key.startswith("Autograd"):
            overload.autograd_kernel = fn
        elif key in _DEVICE_OF_KEY:
            overload.kernels[_DEVICE_OF_KEY[key]] = fn
        else:
            raise ValueError(f"impl: unsupported dispatch key {key}")

    def fallback(self, fn, dispatch_key="", *, with_keyset=False):
        raise NotImplementedError("Library.fallback is not supported by Ember")

    def _destroy(self):
        for overload in self._defined:
            ops._unregister(overload)
        self._defined = []


_LIBRARIES = {}


def _fragment(namespace):
    if namespace not in _LIBRARIES:
        _LIBRARIES[namespace] = Library(namespace, "FRAGMENT")
    return _LIBRARIES[namespace]


def define(qualname, schema, *, lib=None, tags=()):
    """Defines the operator qualname ("ns::name") with a schema "(Tensor x) -> Tensor"."""
    namespace, _, name = qualname.partition("::")
    (lib or _fragment(namespace)).define(name + schema, tags=tags)


def impl(qualname, types, func=None, *, lib=None):
    """Registers a kernel of qualname for device types ("cpu", ["cpu", "cuda"], "default")."""

    def register(fn):
        overload = ops._lookup(qualname)
        for device in [types] if isinstance(types, str) else types:
            overload.kernels[str(device)] = fn
        return fn

    return register(func) if func is not None else register


_PENDING_IMPLS = []  # C++ kernels whose operator is defined by a library not loaded yet


def _register_from_cpp(entries):
    """Registers what TORCH_LIBRARY blocks of one shared library recorded:
    (kind, namespace, dispatch key, schema or name, kernel, where) tuples,
    definitions first, as their static initializers may run in any order."""
    for kind, namespace, key, text, kernel, where in entries:
        if kind == "def":
            name = _fragment(namespace).define(text)
            if kernel is not None:
                _PENDING_IMPLS.append((namespace, key, name, kernel, where))
        else:
            _PENDING_IMPLS.append((namespace, key, text, kernel, where))
    _apply_pending_impls()


def _apply_pending_impls():
    """Registers the C++ kernels whose operators are defined by now."""
    if not _PENDING_IMPLS:
        return
    waiting = []
    for namespace, key, name, kernel, where in _PENDING_IMPLS:
        qualname = name if "::" in name else f"{namespace}::{name}"
        try:
            ops._lookup(qualname)
        except ValueError:
            waiting.append((namespace, key, name, kernel, where))
            continue
        # A kernel registered without a dispatch key serves every key.
        _fragment(namespace).impl(qualname, kernel, key or "CompositeImplicitAutograd")
    _PENDING_IMPLS[:] = waiting


def _as_list(value):
    return list(value) if isinstance(value, (tuple, list)) else [value]


def opcheck(op, args, kwargs=None, *, test_utils=None, raise_exception=True, atol=None, rtol=None):
    """Checks an operator: it runs, its meta kernel gives the real shapes and
    dtypes, and its registered backward runs. Returns {test: "SUCCESS"} or raises."""
    kwargs = kwargs or {}
    results = {}

    def record(test, check):
        try:
            check()
            results[test] = "SUCCESS"
        except Exception as error:  # noqa: BLE001
            if raise_exception:
                raise
            results[test] = error

    schema = op._schema if isinstance(op, CustomOpDef) else getattr(op, "_schema", None)
    mutated = {a.name for a in schema.arguments if a.is_mutated} if schema else set()
    names = [a.name for a in schema.arguments] if schema else []
    before = [a.detach().clone() if isinstance(a, _C.TensorBase) else None for a in args]
    out = op(*args, **kwargs)

    def schema_check():
        for i, (arg, old) in enumerate(zip(args, before)):
            name = names[i] if i < len(names) else str(i)
            if old is not None and name not in mutated and not ember.equal(arg.detach(), old):
                raise RuntimeError(f"opcheck: argument {name} was mutated but is not in the schema's mutated args")

    record("test_schema", schema_check)

    def autograd():
        outs = [o for o in (out if isinstance(out, (tuple, list)) else [out]) if isinstance(o, _C.TensorBase)]
        differentiable = [o for o in outs if o.requires_grad]
        if differentiable:
            ember.autograd.grad(
                differentiable,
                [t for t in _tensors_in(args) if t.requires_grad],
                [ember.ones_like(o) for o in differentiable],
                allow_unused=True,
            )

    record("test_autograd_registration", autograd)

    def fake():
        meta_args = [a.detach().to("meta") if isinstance(a, _C.TensorBase) else a for a in args]
        fake_out = op(*meta_args, **kwargs)
        pairs = zip(
            fake_out if isinstance(fake_out, (tuple, list)) else [fake_out],
            out if isinstance(out, (tuple, list)) else [out],
        )
        for f, r in pairs:
            if isinstance(r, _C.TensorBase) and (f.shape != r.shape or f.dtype != r.dtype):
                raise RuntimeError(
                    f"opcheck: the fake kernel gives {f.shape} {f.dtype}, the kernel {r.shape} {r.dtype}"
                )

    record("test_faketensor", fake)

    def rerun():
        again = op(*[a.detach() if isinstance(a, _C.TensorBase) else a for a in args], **kwargs)
        for a, b in zip(
            again if isinstance(again, (tuple, list)) else [again], out if isinstance(out, (tuple, list)) else [out]
        ):
            if isinstance(b, _C.TensorBase) and not mutated and not ember.equal(a.detach(), b.detach()):
                raise RuntimeError("opcheck: a second call gives different values")

    record("test_aot_dispatch_dynamic", rerun)
    return results
