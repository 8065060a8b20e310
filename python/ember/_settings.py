"""Process-wide settings PyTorch keeps at its top level: the default device,
float32 matmul precision, deterministic algorithms, warn-always, interop
threads; and small helpers (typename, unravel_index, is_storage)."""

from __future__ import annotations

import warnings

from ember import _C

__all__ = [
    "are_deterministic_algorithms_enabled",
    "get_default_device",
    "get_deterministic_debug_mode",
    "get_file_path",
    "get_float32_matmul_precision",
    "get_num_interop_threads",
    "is_deterministic_algorithms_warn_only_enabled",
    "is_storage",
    "is_warn_always_enabled",
    "prepare_multiprocessing_environment",
    "set_default_device",
    "set_deterministic_debug_mode",
    "set_flush_denormal",
    "set_float32_matmul_precision",
    "set_num_interop_threads",
    "set_warn_always",
    "typename",
    "unravel_index",
    "use_deterministic_algorithms",
]

_state = {"deterministic": False, "warn_only": False, "warn_always": False, "interop_threads": 1}


def get_default_device():
    return _C._get_default_device()


def set_default_device(device):
    """Factories without device= create their tensors there (None: the CPU)."""
    _C._set_default_device("cpu" if device is None else device)


def get_float32_matmul_precision() -> str:
    return _C._get_float32_matmul_precision()


def set_float32_matmul_precision(precision: str) -> None:
    """float32 products on CUDA use TF32 tensor cores unless 'highest'; on the CPU they stay full precision."""
    if precision not in ("highest", "high", "medium"):
        warnings.warn(
            f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
            "setFloat32MatmulPrecision call has no effect.",
            stacklevel=2,
        )
        return
    _C._set_float32_matmul_precision(precision)


def use_deterministic_algorithms(mode: bool, *, warn_only: bool = False) -> None:
    """Ember's CPU kernels are deterministic; on CUDA, cuDNN then picks deterministic algorithms."""
    _state["deterministic"] = bool(mode)
    _C._set_deterministic_algorithms_native(bool(mode))
    _state["warn_only"] = bool(warn_only)


def are_deterministic_algorithms_enabled() -> bool:
    return _state["deterministic"]


def is_deterministic_algorithms_warn_only_enabled() -> bool:
    return _state["warn_only"]


def set_deterministic_debug_mode(debug_mode) -> None:
    if isinstance(debug_mode, str):
        modes = {"default": 0, "warn": 1, "error": 2}
        if debug_mode not in modes:
            raise RuntimeError(
                f"invalid value of debug_mode, expected one of `default`, `warn`, `error`, but got {debug_mode}"
            )
        debug_mode = modes[debug_mode]
    elif not isinstance(debug_mode, int):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode == 0:
        use_deterministic_algorithms(False)
    elif debug_mode == 1:
        use_deterministic_algorithms(True, warn_only=True)
    elif debug_mode == 2:
        use_deterministic_algorithms(True)
    else:
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got {debug_mode}")


def get_deterministic_debug_mode() -> int:
    if not _state["deterministic"]:
        return 0
    return 1 if _state["warn_only"] else 2


def set_warn_always(b: bool) -> None:
    if not isinstance(b, bool):
        raise RuntimeError(f"setWarnOnlyOnce expects a bool, but got {_type_name(b)}")
    _state["warn_always"] = b


def _type_name(x):
    kind = type(x)
    if kind.__module__ == "builtins":
        return kind.__name__
    name = kind.__name__.split(".")[-1]
    return "torch." + name if name in ("dtype", "device", "layout", "Size") else name


def is_warn_always_enabled() -> bool:
    return _state["warn_always"]


def set_flush_denormal(mode: bool) -> bool:
    """Flushes denormal floats to zero on the CPU (the calling thread's floating-point control register;
    Note [Flushing denormals]); True where the CPU supports it."""
    if type(mode) is not bool:
        raise RuntimeError(f"flush_denormal expects a bool, but got {type(mode).__name__}")
    return _C._set_flush_denormal(mode)


def get_file_path(*path_components: str) -> str:
    """A path inside the installed package folder."""
    import os

    return os.path.join(os.path.dirname(os.path.dirname(__file__)), *path_components)


def prepare_multiprocessing_environment(path: str) -> None:
    """A hook a deployment may replace to set up worker processes; it does nothing here, as in PyTorch's own
    build."""


def get_num_interop_threads() -> int:
    return _state["interop_threads"]


def set_num_interop_threads(n: int) -> None:
    """Ember runs one operator at a time per Python thread; kept for code that sets it."""
    _state["interop_threads"] = int(n)


def typename(obj) -> str:
    import ember

    if isinstance(obj, ember.Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    qualname = getattr(obj, "__qualname__", None) or type(obj).__qualname__
    if module in ("", "builtins") and not isinstance(obj, type):
        return type(obj).__qualname__
    return f"{module}.{qualname}" if module not in ("", "builtins") else qualname


def is_storage(obj) -> bool:
    from ember.storage import TypedStorage, UntypedStorage

    return isinstance(obj, (TypedStorage, UntypedStorage))


def unravel_index(indices, shape):
    """The coordinates of flat indices in a tensor of this shape (a tuple of tensors)."""
    import ember

    if not isinstance(indices, ember.Tensor):
        indices = ember.tensor(indices)
    if indices.is_floating_point() or indices.is_complex() or indices.dtype == ember.bool:
        raise TypeError("expected 'indices' to be integer dtype, but got " + str(indices.dtype))
    if isinstance(shape, int):
        shape = (shape,)
    shape = tuple(int(s) for s in shape)
    for s in shape:
        if s < 0:
            raise ValueError("'shape' cannot have negative values, but got " + str(shape))
    # int64 coordinates whatever the indices' dtype. As PyTorch, no range
    # check: each coordinate is a floor remainder, so -1 is the last element
    # and indices past either end wrap around.
    flat = indices.to(ember.int64)
    coords = []
    for s in reversed(shape):
        coords.append(flat.remainder(s))
        flat = flat.div(s, rounding_mode="floor")
    return tuple(reversed(coords))
