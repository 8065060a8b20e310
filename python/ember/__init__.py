"""Ember: a deep-learning framework with a C++ core and PyTorch's Python API.

``import ember as torch`` runs PyTorch scripts on Ember.
"""

import builtins as _builtins
import gc as _gc
import sys as _sys

# The import makes many objects and no cycles worth collecting: the
# collector, run every 700 allocations, took a sixth of its time.
_gc_was_enabled = _gc.isenabled()
_gc.disable()


def _preload_blas():
    # libember_cpu finds BLAS through its RUNPATH in a normal install; loading
    # it here first also covers --target installs and editable rebuild mode.
    import ctypes
    import os

    # Note [BLAS thread wait]: OpenBLAS's workers spin for about 2^28 cycles
    # after a call before they sleep; on a machine with as many cores as
    # threads they then steal the cores Ember's OpenMP loops need (and the
    # other way round), which made a small training step ten times slower.
    # 2^4 makes them sleep at once; waking them costs microseconds. Read by
    # OpenBLAS when it loads, so it must be set before.
    os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")
    # Note [MKL for matrix products] (src/ember/cpu/Blas.cpp): the `mkl`
    # package puts its libraries in the environment's lib folder.
    mkl = os.path.join(_sys.prefix, "lib", "libmkl_rt.so.2")
    if "EMBER_MKL_LIBRARY" not in os.environ and os.path.exists(mkl):
        os.environ["EMBER_MKL_LIBRARY"] = mkl
    # The package's folder, found without importing it (its __init__ reads
    # package metadata, a third of Ember's import time).
    from importlib.util import find_spec

    spec = find_spec("scipy_openblas32")
    if spec is None or not spec.submodule_search_locations:
        return
    path = os.path.join(list(spec.submodule_search_locations)[0], "lib", "libscipy_openblas.so")
    if os.path.exists(path):
        ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)


_preload_blas()

from ember import _C  # noqa: E402
from ember._C import (  # noqa: F401  dtypes and core types
    Generator,
    bfloat16,
    bool,
    complex64,
    complex128,
    device,
    dtype,
    float16,
    float32,
    float64,
    get_default_dtype,
    get_num_threads,
    int8,
    int16,
    int32,
    int64,
    is_grad_enabled,
    is_inference_mode_enabled,
    promote_types,
    set_default_dtype,
    set_num_threads,
    uint8,
)
from ember._C import (  # noqa: F401  dtypes of limited support (decision 0029)
    bits1x8,
    bits2x4,
    bits4x2,
    bits8,
    bits16,
    complex32,
    float4_e2m1fn_x2,
    float8_e4m3fn,
    float8_e4m3fnuz,
    float8_e5m2,
    float8_e5m2fnuz,
    float8_e8m0fnu,
    int1,
    int2,
    int3,
    int4,
    int5,
    int6,
    int7,
    uint1,
    uint2,
    uint3,
    uint4,
    uint5,
    uint6,
    uint7,
    uint16,
    uint32,
    uint64,
)
from ember._C import default_generator  # noqa: F401
from ember._C import OutOfMemoryError  # noqa: F401
from ember._size import Size
from ember._tensor import Tensor, as_tensor, tensor  # noqa: F401
from ember._C import from_numpy  # noqa: F401
from ember._tensor_str import get_printoptions, set_printoptions  # noqa: F401
from ember.version import __version__  # noqa: F401  (a TorchVersion below)

# PyTorch's dtype aliases.
float = float32  # noqa: A001
double = float64
half = float16
long = int64
int = int32  # noqa: A001
short = int16
cfloat = complex64
cdouble = complex128
chalf = complex32

_C._set_tensor_class(Tensor)
_C._set_size_class(Size)

# Every generated operator, as torch.add & co. Its module is importable by
# name, so that the functions pickle by reference.
_sys.modules.setdefault("ember._C._VariableFunctions", _C._VariableFunctions)
for _name in dir(_C._VariableFunctions):
    if not _name.startswith("__"):
        globals()[_name] = getattr(_C._VariableFunctions, _name)
del _name
from ember import _comparison, _unique_nonzero  # noqa: E402

_unique_nonzero._install(globals(), Tensor)
_comparison._install(globals(), Tensor)

from ember._conversions import (  # noqa: E402,F401
    channels_last,
    channels_last_3d,
    contiguous_format,
    memory_format,
    preserve_format,
)
from ember import _conversions  # noqa: E402
from ember._conversions import install_aliases as _install_aliases  # noqa: E402

legacy_contiguous_format = contiguous_format

_install_aliases(globals(), Tensor)
clip = _conversions.clip_with_out(globals()["clip"], globals()["clamp"])

from ember import _legacy_types  # noqa: E402
from ember._layout import layout, sparse_bsc, sparse_bsr, sparse_coo, sparse_csc, sparse_csr, strided  # noqa: E402,F401
from ember.storage import TypedStorage, UntypedStorage  # noqa: E402,F401

_legacy_types.install(globals(), Tensor)

from ember import _functions, _lowrank, _sym  # noqa: E402

for _name in _sym.__all__ + _lowrank.__all__:
    globals()[_name] = getattr(_sym, _name, None) or getattr(_lowrank, _name)

for _name in _functions.__all__:
    if _name not in globals() or _name in ("is_floating_point", "binary_cross_entropy_with_logits"):
        globals()[_name] = getattr(_functions, _name)
del _name

from ember import _batch_norm_parts, _ops_grouped, _ops_indexed, _ops_math, _ops_scaled, _ops_shape, _ops_views  # noqa: E402
from ember import _removed, _tensor_extras, _tensor_storage  # noqa: E402

for _module in (
    _ops_math,
    _ops_shape,
    _ops_views,
    _ops_indexed,
    _ops_grouped,
    _ops_scaled,
    _batch_norm_parts,
    _removed,
    _tensor_extras,
    _tensor_storage,
):
    for _name in _module.__all__:
        if _name not in globals():
            globals()[_name] = getattr(_module, _name)
    for _name in _module.METHODS:
        if not hasattr(Tensor, _name):
            setattr(Tensor, _name, getattr(_module, _name))
del _name, _module

# Functions whose out= form is written in Python take the operator's name.
from ember import _out_forms  # noqa: E402

for _name in _out_forms.__all__:
    globals()[_name] = getattr(_out_forms, _name)
# Overloads the bindings lack, written around them.
from ember import _overload_forms  # noqa: E402

for _name in _overload_forms.__all__:
    globals()[_name] = getattr(_overload_forms, _name)
for _name in ("max", "min"):
    setattr(Tensor, _name, _overload_forms.method(_name))
del _name

from ember import accelerator, autograd, backends, cuda, linalg, nn, optim, special, testing, utils  # noqa: E402,F401
from ember import jit, multiprocessing  # noqa: E402,F401
from ember import fft  # noqa: E402,F401
from ember import _spectral  # noqa: E402

for _name in _spectral.__all__:
    globals()[_name] = getattr(_spectral, _name)
for _name in _spectral.METHODS:
    setattr(Tensor, _name, getattr(_spectral, _name))
del _name
from ember.linalg import _torch_norm as norm  # noqa: E402

for _name, _fn in linalg.TOP_LEVEL.items():
    globals()[_name] = _fn
del _name, _fn
linalg._install_methods(Tensor)
from ember import _nn_toplevel  # noqa: E402

for _name in _nn_toplevel.__all__:
    if _name not in globals():
        globals()[_name] = getattr(_nn_toplevel, _name)
for _name in ("prelu", "hardshrink"):
    if not hasattr(Tensor, _name):
        setattr(Tensor, _name, getattr(_nn_toplevel, _name))
del _name
_weight_norm = _nn_toplevel._weight_norm
from ember.serialization import load, save  # noqa: E402
from ember import random  # noqa: E402
from ember.random import get_rng_state, initial_seed, manual_seed, seed, set_rng_state  # noqa: E402,F401
from ember.random import thread_safe_generator  # noqa: E402,F401
from ember._settings import *  # noqa: E402,F401,F403
from ember import __config__  # noqa: E402
from ember import version  # noqa: E402
from ember.autograd import enable_grad, inference_mode, no_grad, set_grad_enabled  # noqa: E402,F401
from ember._einsum import einsum  # noqa: E402,F401
from ember import amp, cpu  # noqa: E402
from ember.amp._state import *  # noqa: E402,F401,F403
from ember.amp.autocast_mode import autocast  # noqa: E402,F401
from ember.amp.grad_scaler import _amp_foreach_non_finite_check_and_unscale_, _amp_update_scale_  # noqa: E402,F401
from ember.amp import _policies as _amp_policies  # noqa: E402

_amp_policies.install()
from ember import _dynamo, compiler, fx, onnx, profiler  # noqa: E402
from ember._C import is_anomaly_check_nan_enabled, is_anomaly_enabled  # noqa: E402,F401


set_anomaly_enabled = _C._set_anomaly_enabled


from ember.compiler import compile  # noqa: E402,F401
from ember import library  # noqa: E402,F401
from ember._ops import ops  # noqa: E402,F401
from ember import func  # noqa: E402,F401
from ember.func import vmap  # noqa: E402,F401
from ember import overrides  # noqa: E402,F401
from ember import functional  # noqa: E402,F401
from ember.amp import GradScaler  # noqa: E402,F401
from ember.cuda import AcceleratorError  # noqa: E402,F401
from ember.futures import Future  # noqa: E402,F401
from ember.futures import _fork as fork, _wait as wait  # noqa: E402,F401
from ember._lobpcg import lobpcg  # noqa: E402,F401
from ember import masked, return_types, signal, torch_version  # noqa: E402,F401
from ember.signal import windows  # noqa: E402,F401
from ember._streams import Event, Stream  # noqa: E402,F401
from ember import mps, mtia, xpu  # noqa: E402,F401
from ember.utils import dlpack as _dlpack  # noqa: E402

from_dlpack, to_dlpack = _dlpack.from_dlpack, _dlpack.to_dlpack
Tensor.__dlpack__, Tensor.__dlpack_device__ = _dlpack._tensor_dlpack, _dlpack._tensor_dlpack_device
__version__ = torch_version.__version__  # noqa: F811


class FatalError(Exception):
    """An unrecoverable error of the runtime."""


from ember.overrides import DisableTorchFunction, DisableTorchFunctionSubclass  # noqa: E402,F401
from ember.overrides import _install_method_dispatch as _overrides_install_method_dispatch  # noqa: E402
from ember.overrides import _install_property_dispatch as _overrides_install_property_dispatch  # noqa: E402

_C.DisableTorchFunction, _C.DisableTorchFunctionSubclass = DisableTorchFunction, DisableTorchFunctionSubclass

from ember import _argtypes  # noqa: E402

# PyTorch's TypeError for a non-Tensor argument to a Python-level function.
_argtypes.install(__import__("sys").modules[__name__])
from ember import _foreach  # noqa: E402

_foreach.install(__import__("sys").modules[__name__])
from ember import _sparse_coo  # noqa: E402
from ember._sparse_coo import sparse_coo_tensor  # noqa: E402

sparse_coo_tensor = _argtypes.checked(sparse_coo_tensor, "sparse_coo_tensor")

_sparse_coo.install_tensor_methods(Tensor)
from ember import _sparse_compressed  # noqa: E402
from ember._sparse_compressed import (  # noqa: E402
    sparse_bsc_tensor,
    sparse_bsr_tensor,
    sparse_compressed_tensor,
    sparse_csc_tensor,
    sparse_csr_tensor,
)
from ember._sparse_legacy import (  # noqa: E402
    ccol_indices_copy,
    col_indices_copy,
    crow_indices_copy,
    dsmm,
    hsmm,
    hspmm,
    indices_copy,
    resize_as_sparse_,
    row_indices_copy,
    saddmm,
    smm,
    sspaddmm,
    values_copy,
)

# PyTorch's argument checks (the factories' and sspaddmm's signatures; saddmm,
# hsmm and dsmm answer with the names of the functions they call).
sparse_csr_tensor = _argtypes.checked(sparse_csr_tensor, "sparse_csr_tensor")
sparse_csc_tensor = _argtypes.checked(sparse_csc_tensor, "sparse_csc_tensor")
sparse_bsr_tensor = _argtypes.checked(sparse_bsr_tensor, "sparse_bsr_tensor")
sparse_bsc_tensor = _argtypes.checked(sparse_bsc_tensor, "sparse_bsc_tensor")
sparse_compressed_tensor = _argtypes.checked(sparse_compressed_tensor, "sparse_compressed_tensor")
sspaddmm = _argtypes.checked(sspaddmm, "sspaddmm")
saddmm = _argtypes.checked(saddmm, "sspaddmm")
crow_indices_copy = _argtypes.checked(crow_indices_copy, "crow_indices_copy")
col_indices_copy = _argtypes.checked(col_indices_copy, "col_indices_copy")
ccol_indices_copy = _argtypes.checked(ccol_indices_copy, "ccol_indices_copy")
row_indices_copy = _argtypes.checked(row_indices_copy, "row_indices_copy")
values_copy = _argtypes.checked(values_copy, "values_copy")
indices_copy = _argtypes.checked(indices_copy, "indices_copy")
smm = _argtypes.checked(smm, "smm")
dsmm = _argtypes.checked(dsmm, "dsmm")
hspmm = _argtypes.checked(hspmm, "hspmm")
hsmm = _argtypes.checked(hsmm, "hspmm")
resize_as_sparse_ = _argtypes.checked(resize_as_sparse_, "resize_as_sparse_")

_sparse_compressed.install_tensor_methods(Tensor)
# Reads and writes of Tensor's Python-level properties take part in __torch_function__.
_overrides_install_property_dispatch(Tensor)
_overrides_install_method_dispatch(Tensor)
from ember import sparse  # noqa: E402,F401


def spmm(input, mat2):  # noqa: A002
    """PyTorch's spmm is its mm binding: a sparse (COO) or dense matrix times a matrix."""
    from ember import _argcheck

    _argcheck.tensor("mm", "input", 1, input)
    _argcheck.tensor("mm", "mat2", 2, mat2)
    return mm(input, mat2)  # noqa: F405 - a generated binding


def _assert(condition, message):
    """An assert that stays a function call (PyTorch's traceable assert)."""
    if type(condition) is not Tensor and overrides.has_torch_function((condition,)):
        return overrides.handle_torch_function(_assert, (condition,), condition, message)
    if not condition:
        raise AssertionError(message)


def _log_api_usage_once(event):
    """Where PyTorch logs which APIs a process used (off unless configured)."""
    if not isinstance(event, str):
        raise TypeError("bad argument type for built-in operation")


_C._log_api_usage_once = _log_api_usage_once
_C._get_tracing_state = lambda: None  # no tracer runs: PyTorch answers None outside torch.jit.trace
_sparse_coo.install_handlers()
_sparse_compressed.install_handlers()
from ember._public_api import public_names as _public_names  # noqa: E402

# Submodules without side effects, imported on first use (as PyTorch imports
# its _dynamo and onnx) to keep `import ember` short: 30 ms of its 180 ms.
_LAZY_SUBMODULES = frozenset({"distributed", "distributions", "hub", "quasirandom"})


def __getattr__(name):
    if name in _LAZY_SUBMODULES:
        import importlib

        return importlib.import_module("ember." + name)  # binds ember.<name> too
    raise AttributeError(f"module 'ember' has no attribute '{name}'")


def __dir__():
    return sorted(set(globals()) | _LAZY_SUBMODULES)


# Computed last, once every mechanism above has filled the namespace.
__all__ = list(_public_names(globals()))
if _gc_was_enabled:
    _gc.enable()
_builtins  # noqa: B018  keep the name for modules that shadow builtins above
