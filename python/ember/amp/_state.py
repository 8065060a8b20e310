"""The autocast switches of ember.* (is_autocast_enabled & co.). CPU and CUDA
state lives in the C++ core, where operators read it; the other device types
PyTorch names have no tensors in Ember, so their switches live here."""

import warnings

import ember
from ember import _C

# Default low-precision dtype per device type, as PyTorch's.
_OTHER_DEFAULT_DTYPES = {
    "xpu": "float16",
    "ipu": "float16",
    "hpu": "bfloat16",
    "xla": "bfloat16",
    "mps": "float16",
    "mtia": "float16",
    "maia": "float16",
    "privateuseone": "float16",
}
_DEVICE_TYPES = (
    "cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, lazy, vulkan, mps, meta, hpu, "
    "mtia, privateuseone"
)
_other_enabled: dict[str, bool] = {}
_other_dtype: dict = {}


def _device_type(device_type, fn="is_autocast_enabled"):
    if not isinstance(device_type, str):
        raise TypeError(f"{fn}(): argument 'device_type' (position 1) must be str, not {type(device_type).__name__}")
    name = device_type.split(":")[0]
    if name in ("cpu", "cuda") or name in _OTHER_DEFAULT_DTYPES:
        return name
    if name in _DEVICE_TYPES.split(", "):
        if fn == "get_autocast_dtype":
            raise RuntimeError("unsupported scalarType")
        raise RuntimeError("unknown device type for autocast in get_autocast_dispatch_key_from_device_type")
    raise RuntimeError(f"Expected one of {_DEVICE_TYPES} device type at start of device string: {device_type}")


def _deprecated(old, new):
    warnings.warn(f"torch.{old}() is deprecated. Please use torch.{new} instead.", DeprecationWarning, stacklevel=3)


def is_autocast_available(device_type):
    name = device_type.split(":")[0] if isinstance(device_type, str) else device_type
    if name in ("cpu", "cuda") or name in _OTHER_DEFAULT_DTYPES:
        return True
    if name in _DEVICE_TYPES.split(", "):
        return False
    _device_type(device_type, "_is_autocast_available")  # raises for a name that is no device type
    return False


def is_autocast_enabled(device_type=None):
    if device_type is None:
        return _C._autocast_is_enabled("cuda")
    d = _device_type(device_type)
    if d in ("cpu", "cuda"):
        return _C._autocast_is_enabled(d)
    return _other_enabled.get(d, False)


def set_autocast_enabled(*args):
    if len(args) == 1:
        device_type, enabled = "cuda", args[0]
    elif len(args) == 2:
        device_type, enabled = args
        if not isinstance(device_type, str):
            raise TypeError(
                "set_autocast_enabled(): argument 'device_type' (position 1) must be str, "
                f"not {type(device_type).__name__}"
            )
    else:
        raise TypeError("set_autocast_enabled() takes (enabled) or (device_type, enabled)")
    if not isinstance(enabled, bool):
        raise TypeError(
            f"set_autocast_enabled(): argument 'enabled' (position {len(args)}) must be bool, "
            f"not {type(enabled).__name__}"
        )
    d = _device_type(device_type, "set_autocast_enabled")
    if d in ("cpu", "cuda"):
        _C._autocast_set_enabled(d, bool(enabled))
    else:
        _other_enabled[d] = bool(enabled)


def get_autocast_dtype(device_type):
    d = _device_type(device_type, "get_autocast_dtype")
    if d in ("cpu", "cuda"):
        return _C._autocast_get_dtype(d)
    return _other_dtype.get(d, getattr(ember, _OTHER_DEFAULT_DTYPES[d]))


def set_autocast_dtype(device_type, dtype):
    d = _device_type(device_type, "set_autocast_dtype")
    if not isinstance(dtype, ember.dtype):
        raise TypeError(
            f"set_autocast_dtype(): argument 'dtype' (position 2) must be torch.dtype, not {type(dtype).__name__}"
        )
    if d in ("cpu", "cuda"):
        _C._autocast_set_dtype(d, dtype)
    else:
        _other_dtype[d] = dtype


def _legacy(device, kind):
    """The per-device functions PyTorch keeps for compatibility."""

    def is_enabled():
        _deprecated(f"is_autocast_{kind}_enabled", f"is_autocast_enabled('{device}')")
        return is_autocast_enabled(device)

    def set_enabled(enabled):
        if not isinstance(enabled, bool):
            raise TypeError(f"enabled must be a bool (got {type(enabled).__name__})")
        _deprecated(f"set_autocast_{kind}_enabled", f"set_autocast_enabled('{device}', enabled)")
        set_autocast_enabled(device, enabled)

    def get_dtype():
        _deprecated(f"get_autocast_{kind}_dtype", f"get_autocast_dtype('{device}')")
        return get_autocast_dtype(device)

    def set_dtype(dtype):
        _deprecated(f"set_autocast_{kind}_dtype", f"set_autocast_dtype('{device}', dtype)")
        set_autocast_dtype(device, dtype)

    for f, name in (
        (is_enabled, f"is_autocast_{kind}_enabled"),
        (set_enabled, f"set_autocast_{kind}_enabled"),
        (get_dtype, f"get_autocast_{kind}_dtype"),
        (set_dtype, f"set_autocast_{kind}_dtype"),
    ):
        f.__name__ = f.__qualname__ = name
    return is_enabled, set_enabled, get_dtype, set_dtype


is_autocast_cpu_enabled, set_autocast_cpu_enabled, get_autocast_cpu_dtype, set_autocast_cpu_dtype = _legacy(
    "cpu", "cpu"
)
_, _, get_autocast_gpu_dtype, set_autocast_gpu_dtype = _legacy("cuda", "gpu")
is_autocast_ipu_enabled, set_autocast_ipu_enabled, get_autocast_ipu_dtype, set_autocast_ipu_dtype = _legacy(
    "ipu", "ipu"
)
is_autocast_xla_enabled, set_autocast_xla_enabled, get_autocast_xla_dtype, set_autocast_xla_dtype = _legacy(
    "xla", "xla"
)

is_autocast_cache_enabled = _C.is_autocast_cache_enabled
set_autocast_cache_enabled = _C.set_autocast_cache_enabled
autocast_increment_nesting = _C.autocast_increment_nesting
autocast_decrement_nesting = _C.autocast_decrement_nesting
clear_autocast_cache = _C.clear_autocast_cache

__all__ = [
    "autocast_decrement_nesting",
    "autocast_increment_nesting",
    "clear_autocast_cache",
    "get_autocast_cpu_dtype",
    "get_autocast_dtype",
    "get_autocast_gpu_dtype",
    "get_autocast_ipu_dtype",
    "get_autocast_xla_dtype",
    "is_autocast_cache_enabled",
    "is_autocast_cpu_enabled",
    "is_autocast_enabled",
    "is_autocast_ipu_enabled",
    "is_autocast_xla_enabled",
    "set_autocast_cache_enabled",
    "set_autocast_cpu_dtype",
    "set_autocast_cpu_enabled",
    "set_autocast_dtype",
    "set_autocast_enabled",
    "set_autocast_gpu_dtype",
    "set_autocast_ipu_dtype",
    "set_autocast_ipu_enabled",
    "set_autocast_xla_dtype",
    "set_autocast_xla_enabled",
]
