"""ember.backends, ember.accelerator and the device-free parts of ember.cuda
against PyTorch's CPU build: the switches scripts set, their defaults, and
the names they import."""

from __future__ import annotations

import pytest
from conftest import torch

import ember


def outcome(fn):
    try:
        return fn()
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return (type(e).__name__, str(e))


CASES = {
    "matmul.allow_tf32": lambda m: m.backends.cuda.matmul.allow_tf32,
    "matmul.fp16_reduction": lambda m: m.backends.cuda.matmul.allow_fp16_reduced_precision_reduction,
    "matmul.unknown": lambda m: m.backends.cuda.matmul.foo,
    "cudnn.allow_tf32": lambda m: m.backends.cudnn.allow_tf32,
    "cudnn.benchmark": lambda m: m.backends.cudnn.benchmark,
    "cudnn.deterministic": lambda m: m.backends.cudnn.deterministic,
    "cudnn.enabled": lambda m: m.backends.cudnn.enabled,
    "mps.is_available": lambda m: m.backends.mps.is_available(),
    "mps.is_built": lambda m: m.backends.mps.is_built(),
    "mkldnn.is_available": lambda m: m.backends.mkldnn.is_available(),
    "openmp.is_available": lambda m: m.backends.openmp.is_available(),
    "flash_sdp": lambda m: m.backends.cuda.flash_sdp_enabled(),
    "accelerator.is_available": lambda m: m.accelerator.is_available(),
    "accelerator.current": lambda m: m.accelerator.current_accelerator(),
    "accelerator.count": lambda m: m.accelerator.device_count(),
    "accelerator.current_index": lambda m: m.accelerator.current_device_index(),
    "accelerator.set_index": lambda m: m.accelerator.set_device_index(0),
    "accelerator.current_stream": lambda m: m.accelerator.current_stream(),
    "accelerator.set_stream_bad": lambda m: type(m.accelerator.set_stream(None)),
    "accelerator.synchronize": lambda m: m.accelerator.synchronize(),
    "accelerator.empty_cache": lambda m: m.accelerator.empty_cache(),
    "accelerator.empty_host_cache": lambda m: m.accelerator.empty_host_cache(),
    "accelerator.capability": lambda m: m.accelerator.get_device_capability(),
    "accelerator.memory_info": lambda m: m.accelerator.get_memory_info(),
    "accelerator.memory_stats": lambda m: m.accelerator.memory_stats(),
    "accelerator.memory_allocated": lambda m: m.accelerator.memory_allocated(),
    "accelerator.max_memory_allocated": lambda m: m.accelerator.max_memory_allocated(),
    "accelerator.memory_reserved": lambda m: m.accelerator.memory_reserved(),
    "accelerator.max_memory_reserved": lambda m: m.accelerator.max_memory_reserved(),
    "accelerator.reset_peak": lambda m: m.accelerator.reset_peak_memory_stats(),
    "accelerator.reset_accumulated": lambda m: m.accelerator.reset_accumulated_memory_stats(),
    "accelerator.graph": lambda m: m.accelerator.Graph(),
    "accelerator.device_index_none": lambda m: m.accelerator.device_index(None).__enter__(),
    "accelerator.device_index_0": lambda m: m.accelerator.device_index(0).__enter__(),
    "accelerator.all": lambda m: sorted(m.accelerator.__all__),
    "cuda.manual_seed": lambda m: m.cuda.manual_seed(3),
    "cuda.manual_seed_all": lambda m: m.cuda.manual_seed_all(3),
    "cuda.seed_all": lambda m: m.cuda.seed_all(),
    "cuda.empty_cache": lambda m: m.cuda.empty_cache(),
    "cuda.memory_allocated": lambda m: m.cuda.memory_allocated(),
    "cuda.max_memory_allocated": lambda m: m.cuda.max_memory_allocated(),
    "cuda.is_initialized": lambda m: m.cuda.is_initialized(),
    "cuda.is_bf16_supported": lambda m: m.cuda.is_bf16_supported(),
    "mha_import_path": lambda m: m.nn.modules.activation.MultiheadAttention.__name__,
    "ndq_linear_path": lambda m: m.nn.modules.linear.NonDynamicallyQuantizableLinear.__name__,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_as_pytorch(name):
    assert outcome(lambda: CASES[name](ember)) == outcome(lambda: CASES[name](torch))


def test_switches_are_kept():
    for lib in (ember, torch):
        lib.backends.cuda.matmul.allow_tf32 = True
        lib.backends.cudnn.benchmark = True
        assert lib.backends.cuda.matmul.allow_tf32 and lib.backends.cudnn.benchmark
        with lib.backends.cudnn.flags(enabled=False):
            assert lib.backends.cudnn.enabled is False
        assert lib.backends.cudnn.enabled is True
        lib.backends.cuda.matmul.allow_tf32 = False
        lib.backends.cudnn.benchmark = False


def test_cudnn_answers_what_it_finds():
    # As PyTorch's CUDA build (torch's CPU build has no cuDNN): available when the
    # build has cuDNN support and libcudnn loads, which needs no device.
    version = ember.backends.cudnn.version()
    built = "USE_CUDNN=ON" in ember.__config__.show()
    assert ember.backends.cudnn.is_available() == (built and version is not None)
    if version is not None:
        assert isinstance(version, int) and version >= 90000
    else:
        status = ember._C._cudnn_status()
        assert status[0] == -1 and status[1], status


def test_cudnn_switches_reach_the_kernel_state():
    cudnn = ember.backends.cudnn
    saved = ember._C._cudnn_get_flags()
    try:
        cudnn.deterministic = True
        cudnn.allow_tf32 = False
        cudnn.benchmark_limit = 3
        assert ember._C._cudnn_get_flags() == (True, False, True, False, 3)
        with cudnn.flags(enabled=True, benchmark=True, deterministic=False, allow_tf32=True):
            assert (cudnn.benchmark, cudnn.deterministic, cudnn.allow_tf32) == (True, False, True)
        assert (cudnn.benchmark, cudnn.deterministic, cudnn.allow_tf32) == (False, True, False)
        assert {"enabled", "benchmark", "deterministic", "allow_tf32"} <= set(dir(cudnn))
    finally:
        ember._C._cudnn_set_flags(*saved)


def test_device_queries_need_a_device():
    # Ember's build has the CUDA runtime but no device here; PyTorch's CPU build has neither:
    # both refuse, with their own reasons.
    for fn in (lambda m: m.cuda.synchronize(), lambda m: m.cuda.current_device()):
        for lib in (ember, torch):
            with pytest.raises((RuntimeError, AssertionError)):
                fn(lib)


_HIDE_WHEEL = (
    "import importlib.util, sys\n"
    "real = importlib.util.find_spec\n"
    "importlib.util.find_spec = lambda name, *a: None if name == 'nvidia' else real(name, *a)\n"
    "import ember\n"
    "print(repr(ember._C._cudnn_status()))\n"
)


@pytest.mark.skipif("USE_CUDNN=ON" not in ember.__config__.show(), reason="this build has no cuDNN support")
def test_cudnn_loader_search_order(tmp_path):
    import ast
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("EMBER_CUDNN_LIBRARY", "LD_LIBRARY_PATH")}

    def status(extra):
        out = subprocess.run([sys.executable, "-c", _HIDE_WHEEL], env={**env, **extra}, capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        return ast.literal_eval(out.stdout.strip().splitlines()[-1])

    found = ember._C._cudnn_status()[0]
    # Without the wheel's folders and with a bad explicit path: the later steps (beside
    # libember_cuda, the loader's path) still find it, or the error names what was tried.
    version, why = status({"EMBER_CUDNN_LIBRARY": str(tmp_path / "libcudnn.so.9")})
    if version >= 0:
        assert (version, why) == (found, "")
    else:
        assert "EMBER_CUDNN_LIBRARY" in why and str(tmp_path) in why and "nvidia-cudnn" in why
    if found < 0:
        pytest.skip("no loadable cuDNN on this machine")
    # The explicit path alone finds it.
    import importlib.util

    lib = os.path.join(importlib.util.find_spec("nvidia").submodule_search_locations[0], "cudnn", "lib")
    assert status({"EMBER_CUDNN_LIBRARY": os.path.join(lib, "libcudnn.so.9")}) == (found, "")
