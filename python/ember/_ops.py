"""ember.ops: the registry of operators defined through ember.library.

`ember.ops.<namespace>.<name>` is an OpOverloadPacket; `.default` (or the
overload's name) an OpOverload. Calling one binds the arguments to its
schema, picks the kernel for the device of its tensor arguments (the fake
kernel for meta tensors) and, when a tensor input requires grad, records the
registered backward (see ember.library)."""

from __future__ import annotations

import ctypes
import os
import re
import sys

from . import _C

__all__ = ["OpOverload", "OpOverloadPacket", "load_library", "ops"]

# ---- schemas ------------------------------------------------------------------

_ARG = re.compile(
    r"^(?P<type>[A-Za-z]+(?:\([a-z0-9]+!?\))?(?:\?)?(?:\[\d*\])?\??)\s+(?P<name>\w+)(?:=(?P<default>.+))?$"
)


# PyTorch's ScalarType numbers, which schemas print for a dtype default.
_DTYPE_NUMBERS = (
    "uint8 int8 int16 int32 int64 float16 float32 float64 complex32 complex64 complex128 bool qint8 quint8 "
    "qint32 bfloat16 quint4x2 quint2x4 bits1x8 bits2x4 bits4x2 bits8 bits16 float8_e5m2 float8_e4m3fn "
    "float8_e5m2fnuz float8_e4m3fnuz uint16 uint32 uint64 uint1 uint2 uint3 uint4 uint5 uint6 uint7 int1 int2 "
    "int3 int4 int5 int6 int7 float8_e8m0fnu float4_e2m1fn_x2"
).split()


def _dtype_named(text):
    import ember

    name = _DTYPE_NUMBERS[int(text)] if text.isdigit() else text
    dtype = getattr(ember, name, None)
    if not isinstance(dtype, ember.dtype):
        raise RuntimeError(f"Unknown ScalarType default '{text}'")
    return dtype


class Argument:
    def __init__(self, name, type_text, default=None, has_default=False, kwarg_only=False):
        self.name = name
        self.type_text = type_text
        self.default = default
        self.has_default = has_default
        self.kwarg_only = kwarg_only
        self.is_mutated = "!" in type_text

    @property
    def default_value(self):
        """The default as PyTorch's schema holds it (a dtype as its ScalarType number)."""
        if type(self.default).__name__ == "dtype":
            return _DTYPE_NUMBERS.index(str(self.default).split(".")[-1])
        return self.default

    def __str__(self):
        text = f"{self.type_text} {self.name}"
        if self.has_default:
            text += f"={_format_default(self.default)}"
        return text


def _format_default(value):
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, float):
        text = repr(value)
        return text[:-1] if text.endswith(".0") else text
    if isinstance(value, str):
        return f'"{value}"'
    if type(value).__name__ == "dtype":
        return str(_DTYPE_NUMBERS.index(str(value).split(".")[-1]))
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_format_default(v) for v in value) + "]"
    return str(value)


def _parse_default(text):
    text = text.strip()
    if text in ("None", "True", "False"):
        return {"None": None, "True": True, "False": False}[text]
    if text.startswith(("'", '"')):
        return text[1:-1]
    if text.startswith("["):
        inner = text[1:-1].strip()
        return [_parse_default(p) for p in inner.split(",")] if inner else []
    try:
        return int(text)
    except ValueError:
        return float(text)


def _split_top_level(text):
    parts, depth, current = [], 0, ""
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += ch
    if current.strip():
        parts.append(current.strip())
    return parts


class FunctionSchema:
    """A parsed schema string: "ns::name.overload(Tensor x, *, int n=1) -> Tensor"."""

    def __init__(self, qualified_name, overload_name, arguments, returns_text):
        self.name = qualified_name
        self.overload_name = overload_name
        self.arguments = arguments
        self.returns_text = returns_text

    @classmethod
    def parse(cls, text, namespace=None):
        match = re.match(r"^\s*([\w:]+)(?:\.(\w+))?\s*\((.*)\)\s*->\s*(.+?)\s*$", text)
        if not match:
            raise RuntimeError(f"Expected a schema like 'name(Tensor x) -> Tensor', got: {text}")
        name, overload, args_text, returns = match.groups()
        if "::" not in name and namespace:
            name = f"{namespace}::{name}"
        arguments, kwarg_only = [], False
        for part in _split_top_level(args_text):
            if part == "*":
                kwarg_only = True
                continue
            arg = _ARG.match(part)
            if not arg:
                raise RuntimeError(f"Unsupported argument '{part}' in schema: {text}")
            default = arg.group("default")
            if default is not None and default != "None" and arg.group("type").startswith("ScalarType"):
                default = _dtype_named(default.strip())
            elif default is not None:
                default = _parse_default(default)
            arguments.append(
                Argument(
                    arg.group("name"),
                    arg.group("type"),
                    default,
                    arg.group("default") is not None,
                    kwarg_only,
                )
            )
        return cls(name, overload or "", arguments, returns)

    def __str__(self):
        args, kwarg_started = [], False
        for a in self.arguments:
            if a.kwarg_only and not kwarg_started:
                args.append("*")
                kwarg_started = True
            args.append(str(a))
        overload = f".{self.overload_name}" if self.overload_name else ""
        return f"{self.name}{overload}({', '.join(args)}) -> {self.returns_text}"

    def bind(self, args, kwargs):
        """The arguments in schema order, defaults filled; PyTorch's errors."""
        positional = [a for a in self.arguments if not a.kwarg_only]
        if len(args) > len(positional):
            raise RuntimeError(
                f"{self.name}() expected at most {len(positional)} argument(s) but received {len(args)} "
                f"argument(s). Declaration: {self}"
            )
        values = list(args)
        for a in self.arguments[len(args) :]:
            if a.name in kwargs:
                values.append(kwargs.pop(a.name))
            elif a.has_default:
                values.append(a.default)
            else:
                raise RuntimeError(f"{self.name}() is missing value for argument '{a.name}'. Declaration: {self}")
        if kwargs:
            name = next(iter(kwargs))
            raise RuntimeError(f"Unknown keyword argument '{name}' for operator '{self.name}'. Schema: {self}")
        return values


# ---- operator objects -----------------------------------------------------------


def _tensors_in(values):
    for v in values:
        if isinstance(v, _C.TensorBase):
            yield v
        elif isinstance(v, (list, tuple)):
            yield from (t for t in v if isinstance(t, _C.TensorBase))


class OpOverload:
    def __init__(self, packet, schema):
        self._packet = packet
        self._schema = schema
        self._overloadname = schema.overload_name or "default"
        self.kernels = {}  # device type ("cpu", "meta", "cuda", "default") -> callable
        self.autograd_kernel = None  # a kernel registered for the Autograd key
        self.implicit_autograd = None  # CompositeImplicitAutograd: composed of differentiable ops
        self.custom_op = None  # the CustomOpDef that owns it, if any
        self.__name__ = f"{schema.name.split('::')[1]}.{self._overloadname}"
        self.__qualname__ = self.__name__
        self.__module__ = f"ember.ops.{schema.name.split('::')[0]}"

    @property
    def _name(self):
        return self._schema.name

    def name(self):
        return self._schema.name + ("." + self._schema.overload_name if self._schema.overload_name else "")

    def __str__(self):
        namespace, name = self._schema.name.split("::")
        return f"{namespace}.{name}.{self._overloadname}"

    def __repr__(self):
        namespace, name = self._schema.name.split("::")
        return f"<OpOverload(op='{namespace}.{name}', overload='{self._overloadname}')>"

    def __call__(self, *args, **kwargs):
        values = self._schema.bind(args, dict(kwargs))
        if self.custom_op is not None:
            return self.custom_op._dispatch(self, values)
        if self.implicit_autograd is not None:
            return self._call(self.implicit_autograd, values)
        if self.autograd_kernel is not None:
            return self._call(self.autograd_kernel, values)
        return self._run_kernel(values)

    def _call(self, fn, values):
        positional = [v for a, v in zip(self._schema.arguments, values) if not a.kwarg_only]
        keywords = {a.name: v for a, v in zip(self._schema.arguments, values) if a.kwarg_only}
        return fn(*positional, **keywords)

    def _run_kernel(self, values):
        """Runs the device kernel as PyTorch runs one below autograd: tensors
        arrive detached (sharing memory and version counter), nothing records."""
        kernel = self._kernel_for(values)
        with _NoGrad():
            return self._call(kernel, [_detached(v) for v in values])

    def _device_type(self, values):
        device = None
        for t in _tensors_in(values):
            if t.device.type == "meta":
                return "meta"
            device = device or t.device.type
        return device or "cpu"

    def _kernel_for(self, values):
        device = self._device_type(values)
        kernel = self.kernels.get(device) or self.kernels.get("default")
        if kernel is None:
            raise NotImplementedError(
                f"Could not run '{self.name()}' with arguments from the '{device.upper()}' backend. "
                f"'{self.name()}' is only available for these backends: "
                f"[{', '.join(k.upper() for k in self.kernels)}]."
            )
        return kernel


def _detached(value):
    if isinstance(value, _C.TensorBase):
        return value.detach()
    if isinstance(value, (list, tuple)) and any(isinstance(v, _C.TensorBase) for v in value):
        return type(value)(v.detach() if isinstance(v, _C.TensorBase) else v for v in value)
    return value


class _NoGrad:
    def __enter__(self):
        self.previous = _C.is_grad_enabled()
        _C._set_grad_enabled(False)

    def __exit__(self, *exc):
        _C._set_grad_enabled(self.previous)


class OpOverloadPacket:
    def __init__(self, qualified_name):
        self._qualified_op_name = qualified_name
        self._overloads = {}
        namespace, name = qualified_name.split("::")
        self.__name__ = name
        self.__module__ = f"ember.ops.{namespace}"

    def overloads(self):
        return list(self._overloads)

    def __getattr__(self, key):
        overloads = self.__dict__.get("_overloads", {})
        if key in overloads:
            return overloads[key]
        raise AttributeError(f"The underlying op of '{self}' has no overload name '{key}'")

    def __str__(self):
        return self._qualified_op_name.replace("::", ".")

    def __repr__(self):
        return f"<OpOverloadPacket(op='{self}')>"

    def __call__(self, *args, **kwargs):
        if "default" not in self._overloads:
            raise RuntimeError(f"{self}: no default overload; call one of {self.overloads()}")
        return self._overloads["default"](*args, **kwargs)


# ---- the built-in operators: ember.ops.aten ------------------------------------------


class _AtenOverload:
    """ember.ops.aten.add.Tensor: one overload of a built-in operator, the
    generated binding of its schema alone (ember._C._aten)."""

    def __init__(self, packet, overload, fn):
        self.overloadpacket = packet
        self._overloadname = overload
        self._fn = fn
        self.__name__ = f"{packet.__name__}.{overload}"
        self.__qualname__ = self.__name__
        self.__module__ = "ember.ops.aten"

    @property
    def _schema(self):
        return FunctionSchema.parse(self._fn.__doc__)

    def name(self):
        base = f"aten::{self.overloadpacket.__name__}"
        return base if self._overloadname == "default" else f"{base}.{self._overloadname}"

    def __call__(self, *args, **kwargs):
        return self._fn(*args, **kwargs)

    def __str__(self):
        return f"aten.{self.__name__}"

    def __repr__(self):
        return f"<OpOverload(op='aten.{self.overloadpacket.__name__}', overload='{self._overloadname}')>"


class _AtenPacket(OpOverloadPacket):
    """ember.ops.aten.add: calling it matches the arguments against every
    overload (one generated binding), as PyTorch's packet does."""

    def __init__(self, name, fn, overloads):
        super().__init__(f"aten::{name}")
        self._fn = fn
        self._overloads.update({k: _AtenOverload(self, k, f) for k, f in overloads.items()})

    def __call__(self, *args, **kwargs):
        return self._fn(*args, **kwargs)


def _aten_packet(name):
    """The packet of a built-in operator, or None."""
    fn = getattr(_C._aten, name, None)
    if fn is None:
        return None
    prefix = name + "."
    overloads = {k[len(prefix) :]: getattr(_C._aten, k) for k in _aten_names() if k.startswith(prefix)}
    return _AtenPacket(name, fn, overloads)


_ATEN_NAMES = []


def _aten_names():
    if not _ATEN_NAMES:
        _ATEN_NAMES.extend(k for k in dir(_C._aten) if not k.startswith("__"))
    return _ATEN_NAMES


class _OpNamespace:
    def __init__(self, name):
        self.name = name
        self._packets = {}

    def __getattr__(self, key):
        packets = self.__dict__.get("_packets", {})
        if key not in packets and self.__dict__.get("name") == "aten" and not key.startswith("__"):
            packet = _aten_packet(key)
            if packet is not None:
                packets[key] = packet
        if key not in packets and not key.startswith("__") and _scan_loaded_modules():
            packets = self.__dict__.get("_packets", {})
        if key in packets:
            return packets[key]
        raise AttributeError(f"'_OpNamespace' '{self.__dict__.get('name')}' object has no attribute '{key}'")

    def __repr__(self):
        return f"ember.ops.{self.name}"


class _Ops:
    """ember.ops: one namespace object per library namespace."""

    __name__ = "ember.ops"

    def __init__(self):
        self._namespaces = {}
        self.loaded_libraries = set()

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        namespaces = self.__dict__["_namespaces"]
        if name not in namespaces:
            namespaces[name] = _OpNamespace(name)
        return namespaces[name]

    def load_library(self, path):
        """Loads a shared library (an extension that registers operators)."""
        ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        self.loaded_libraries.add(path)
        _collect_registrations(path)

    def _register(self, schema):
        namespace, name = schema.name.split("::")
        space = getattr(self, namespace)
        packet = space._packets.get(name)
        if packet is None:
            packet = space._packets[name] = OpOverloadPacket(schema.name)
        key = schema.overload_name or "default"
        if key in packet._overloads:
            raise RuntimeError(
                f"Tried to register an operator ({schema}) with the same name and overload name multiple times."
            )
        overload = packet._overloads[key] = OpOverload(packet, schema)
        return overload

    def _unregister(self, overload):
        namespace, name = overload._schema.name.split("::")
        space = self._namespaces.get(namespace)
        packet = space._packets.get(name) if space else None
        if packet is not None:
            packet._overloads.pop(overload._overloadname, None)
            if not packet._overloads:
                del space._packets[name]

    def _lookup(self, qualified_name):
        """The OpOverload for "ns::name" or "ns::name.overload"."""
        name, _, overload = qualified_name.partition(".")
        namespace, _, op = name.partition("::")
        space = self._namespaces.get(namespace)
        packet = space._packets.get(op) if space else None
        if packet is None or (overload or "default") not in packet._overloads:
            raise ValueError(f"Operator {qualified_name} does not exist; define it first")
        return packet._overloads[overload or "default"]


ops = _Ops()
load_library = ops.load_library

# ---- operators registered from C++ (TORCH_LIBRARY) -----------------------------

_SCANNED = set()  # shared libraries whose registrations were read (real paths)
_SEEN_FILES = set()  # module files looked at by _scan_loaded_modules


def _collect_registrations(path):
    """Registers the TORCH_LIBRARY blocks of a loaded shared library (once per
    library). Returns whether it had any."""
    real = os.path.realpath(path)
    if real in _SCANNED:
        return False
    _SCANNED.add(real)
    try:
        # PyDLL: the call holds the GIL; RTLD_NOLOAD: only a library already loaded is found.
        read = ctypes.PyDLL(real, mode=os.RTLD_NOLOAD | os.RTLD_LAZY).ember_library_registrations_v1
    except (OSError, AttributeError):
        return False
    read.restype = ctypes.py_object
    entries = read()
    if not entries:
        return False
    from . import library

    library._register_from_cpp(entries)
    return True


def _scan_loaded_modules():
    """Reads the registrations of extension modules imported since the last
    scan (an `import` does not go through load_library)."""
    found = False
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if isinstance(path, str) and path.endswith(".so") and path not in _SEEN_FILES:
            _SEEN_FILES.add(path)
            found = _collect_registrations(path) or found
    return found
