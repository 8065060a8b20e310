"""ember.backends: what this build has (cuda, cudnn, mkldnn, openmp, mkl, mps)
and the switches PyTorch scripts set on them (allow_tf32, benchmark,
deterministic). The switches are kept and read back as PyTorch's; on the CPU
they change nothing that Ember computes."""

from __future__ import annotations

import contextlib
import sys
import types

from ember import _C

__all__ = ["cpu", "cuda", "cudnn", "mkl", "mkldnn", "mps", "openmp"]


def _build_setting(name):
    for line in _C._show_config().splitlines():
        for item in line.replace("Build settings:", "").split(","):
            key, _, value = item.strip().partition("=")
            if key == name:
                return value
    return None


def _module(name, doc, **attrs):
    mod = types.ModuleType(f"{__name__}.{name}", doc)
    mod.__dict__.update(attrs)
    sys.modules[mod.__name__] = mod
    return mod


class _CuBLASModule:
    """torch.backends.cuda.matmul: attributes checked by name, as PyTorch's."""

    _defaults = {
        "allow_tf32": False,
        "allow_fp16_reduced_precision_reduction": True,
        "allow_bf16_reduced_precision_reduction": True,
        "allow_fp16_accumulation": False,
        "fp32_precision": "none",
    }

    def __init__(self):
        object.__setattr__(self, "_values", dict(self._defaults))

    def __getattr__(self, name):
        if name == "allow_tf32":
            # One state with torch.set_float32_matmul_precision, as in PyTorch.
            return _C._get_float32_matmul_precision() != "highest"
        values = object.__getattribute__(self, "_values")
        if name in values:
            return values[name]
        raise AttributeError(f"Unknown attribute {name}")

    def __setattr__(self, name, value):
        if name not in self._defaults:
            raise AttributeError(f"Unknown attribute {name}")
        if name == "allow_tf32":
            _C._set_float32_matmul_precision("high" if value else "highest")
            return
        self._values[name] = value


# Scaled-dot-product attention kernels: which are enabled, and the order
# they are tried in (SDPBackend values: math 0, flash 1, efficient 2, cudnn 3,
# overrideable 4). scaled_dot_product_attention reads both.
_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True, "overrideable": True}
_SDP_DEFAULT_ORDER = (1, 2, 0, 3, 4)
_sdp_order = list(_SDP_DEFAULT_ORDER)
_sdp_math_reduced_precision = [False]


def _sdp_switches():
    out = {}
    for kind in ("flash", "mem_efficient", "math", "cudnn"):
        out[f"{kind}_sdp_enabled"] = lambda kind=kind: _sdp[kind]
        out[f"enable_{kind}_sdp"] = lambda enabled, kind=kind: _sdp.__setitem__(kind, bool(enabled))
    return out


class SDPAParams:
    """The arguments of one scaled_dot_product_attention call, as the
    can_use_* checks take them."""

    def __init__(self, query, key, value, attn_mask, dropout, is_causal, enable_gqa):
        self.query, self.key, self.value, self.attn_mask = query, key, value, attn_mask
        self.dropout, self.is_causal, self.enable_gqa = float(dropout), bool(is_causal), bool(enable_gqa)


def _no_cuda_kernel(params, debug=False):
    # The fused CUDA attention kernels; none serves CPU tensors.
    return False


@contextlib.contextmanager
def _sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True, enable_cudnn=True):
    import warnings

    warnings.warn(
        "`torch.backends.cuda.sdp_kernel()` is deprecated. In the future, this context manager will be removed. "
        "Please see `torch.nn.attention.sdpa_kernel()` for the new context manager, with updated signature.",
        FutureWarning,
        stacklevel=3,
    )
    saved = dict(_sdp)
    _sdp.update(flash=enable_flash, math=enable_math, mem_efficient=enable_mem_efficient, cudnn=enable_cudnn)
    try:
        yield
    finally:
        _sdp.update(saved)


cuda = _module(
    "cuda",
    "CUDA switches (cuBLAS matmul precision, scaled-dot-product attention kernels).",
    is_built=lambda: _build_setting("USE_CUDA") == "ON",
    matmul=_CuBLASModule(),
    **_sdp_switches(),
    SDPAParams=SDPAParams,
    sdp_kernel=_sdp_kernel,
    can_use_flash_attention=_no_cuda_kernel,
    can_use_efficient_attention=_no_cuda_kernel,
    can_use_cudnn_attention=_no_cuda_kernel,
    is_flash_attention_available=lambda: False,
    is_ck_sdpa_available=lambda: False,
    allow_fp16_bf16_reduction_math_sdp=lambda enabled: _sdp_math_reduced_precision.__setitem__(0, bool(enabled)),
    fp16_bf16_reduction_math_sdp_allowed=lambda: _sdp_math_reduced_precision[0],
)

_CUDNN_FLAGS = ("enabled", "benchmark", "deterministic", "allow_tf32", "benchmark_limit")


def _register_cudnn_dirs():
    """The nvidia-cudnn wheel's lib folders, searched first when the CUDA convolution opens libcudnn."""
    import importlib.util
    import os

    spec = importlib.util.find_spec("nvidia")
    for root in (spec.submodule_search_locations or []) if spec else []:
        lib = os.path.join(root, "cudnn", "lib")
        if os.path.isdir(lib):
            _C._cudnn_add_search_dir(lib)


_register_cudnn_dirs()


def _cudnn_status():
    """(cuDNN's version or -1, why it cannot be loaded)."""
    return _C._cudnn_status()


class _CudnnModule(types.ModuleType):
    """torch.backends.cudnn: the switches live in the C++ state the CUDA convolution reads."""

    def __getattr__(self, name):
        if name in _CUDNN_FLAGS:
            return _C._cudnn_get_flags()[_CUDNN_FLAGS.index(name)]
        raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")

    def __setattr__(self, name, value):
        if name in _CUDNN_FLAGS:
            flags = list(_C._cudnn_get_flags())
            flags[_CUDNN_FLAGS.index(name)] = int(value) if name == "benchmark_limit" else bool(value)
            _C._cudnn_set_flags(*flags)
            return
        super().__setattr__(name, value)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(_CUDNN_FLAGS))


def _cudnn_version():
    """cuDNN's version as an int (e.g. 92801 for 9.28.1); None without a loadable cuDNN."""
    v, _ = _cudnn_status()
    return v if v >= 0 else None


def _cudnn_is_available():
    return _build_setting("USE_CUDNN") == "ON" and _cudnn_version() is not None


@contextlib.contextmanager
def _cudnn_flags_ctx(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False, allow_tf32=True):
    old = _C._cudnn_get_flags()
    _C._cudnn_set_flags(bool(enabled), bool(benchmark), bool(deterministic), bool(allow_tf32), int(benchmark_limit))
    try:
        yield
    finally:
        _C._cudnn_set_flags(*old)


def _cudnn_set_flags(
    _enabled=None, _benchmark=None, _benchmark_limit=None, _deterministic=None, _allow_tf32=None, **_ignored
):
    """Sets the switches given (None keeps one); returns the previous (enabled, benchmark, benchmark_limit,
    deterministic, allow_tf32)."""
    enabled, benchmark, deterministic, allow_tf32, limit = _C._cudnn_get_flags()
    previous = (enabled, benchmark, limit, deterministic, allow_tf32)
    _C._cudnn_set_flags(
        enabled if _enabled is None else bool(_enabled),
        benchmark if _benchmark is None else bool(_benchmark),
        deterministic if _deterministic is None else bool(_deterministic),
        allow_tf32 if _allow_tf32 is None else bool(_allow_tf32),
        limit if _benchmark_limit is None else int(_benchmark_limit),
    )
    return previous


cudnn = _CudnnModule(f"{__name__}.cudnn", "cuDNN: CUDA convolutions; the library is opened at run time.")
cudnn.__dict__.update(
    is_available=_cudnn_is_available,
    version=_cudnn_version,
    flags=_cudnn_flags_ctx,
    set_flags=_cudnn_set_flags,
    is_acceptable=lambda tensor: bool(tensor.is_cuda) and _cudnn_is_available(),
)
sys.modules[cudnn.__name__] = cudnn


class _MkldnnModule(types.ModuleType):
    """torch.backends.mkldnn: `enabled` lives in the C++ state the CPU kernels read; the other switches are
    kept and read back as PyTorch's CPU build does (allow_tf32 reads None)."""

    def __getattr__(self, name):
        if name == "enabled":
            return _C._get_mkldnn_enabled()
        if name == "allow_tf32":
            return None
        raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")

    def __setattr__(self, name, value):
        if name == "enabled":
            _C._set_mkldnn_enabled(bool(value))
        elif name != "allow_tf32":
            super().__setattr__(name, value)

    def __dir__(self):
        return sorted(set(super().__dir__()) | {"enabled", "allow_tf32"})


class _MkldnnVerbose:
    """torch.backends.mkldnn.verbose(level): a scope for oneDNN's verbose messages (not printed by this build)."""

    def __init__(self, level):
        self.level = level

    def __enter__(self):
        return None if self.level == 0 else self

    def __exit__(self, exc_type, exc_val, exc_tb):
        return False


def _mkldnn_set_flags(_enabled=None, _deterministic=None, _allow_tf32=None, _fp32_precision="none"):
    """Sets the switches given (None keeps one); returns the previous (enabled, deterministic, allow_tf32,
    fp32_precision)."""
    previous = (mkldnn.enabled, mkldnn.deterministic, mkldnn.allow_tf32, mkldnn.fp32_precision)
    if _enabled is not None:
        mkldnn.enabled = bool(_enabled)
    if _deterministic is not None:
        mkldnn.deterministic = bool(_deterministic)
    if _fp32_precision is not None:
        mkldnn.fp32_precision = _fp32_precision
    return previous


@contextlib.contextmanager
def _mkldnn_flags(enabled=False, deterministic=False, allow_tf32=True, fp32_precision="none"):
    previous = _mkldnn_set_flags(enabled, deterministic, allow_tf32, fp32_precision)
    try:
        yield
    finally:
        _mkldnn_set_flags(*previous)


mkldnn = _MkldnnModule(f"{__name__}.mkldnn", "oneDNN (formerly MKL-DNN), used by the CPU kernels when built in.")
mkldnn.__dict__.update(
    is_available=lambda: _build_setting("USE_ONEDNN") == "ON",
    is_acl_available=lambda: False,
    deterministic=False,
    fp32_precision="none",
    flags=_mkldnn_flags,
    set_flags=_mkldnn_set_flags,
    verbose=_MkldnnVerbose,
    VERBOSE_OFF=0,
    VERBOSE_ON=1,
    VERBOSE_ON_CREATION=2,
)
sys.modules[mkldnn.__name__] = mkldnn
openmp = _module("openmp", "OpenMP threads.", is_available=lambda: _build_setting("USE_OPENMP") == "ON")
mkl = _module("mkl", "Intel MKL: not used by this build (BLAS is OpenBLAS).", is_available=lambda: False)
mps = _module("mps", "Apple's Metal backend: not in this build.", is_available=lambda: False, is_built=lambda: False)


def _cpu_capability():
    return _C._show_config().split("CPU capability usage: ")[1].split()[0]


cpu = _module("cpu", "The CPU.", get_cpu_capability=_cpu_capability)
