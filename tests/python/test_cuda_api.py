"""ember.cuda against torch.cuda on a machine without a usable GPU: every
public name, and each call with typical arguments compared with PyTorch's
CPU build (result, exception type and message, warnings).

Ember is compared twice. As a build without CUDA (`_C._cuda_version`
patched to report none) it must answer exactly as PyTorch's CPU build. As
built here (the CUDA backend present, no device visible), the calls that
initialise CUDA raise PyTorch's CUDA-build reason instead (RuntimeError
"No CUDA GPUs are available" or "Found no NVIDIA driver ..."); everything
else answers as the CPU build does."""

from __future__ import annotations

import collections
import types
import warnings

import pytest
from conftest import torch

import ember
from ember import _C

NOT_COMPILED = ("AssertionError", "Torch not compiled with CUDA enabled")
NO_DEVICE_REASONS = {
    "No CUDA GPUs are available",
    "Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from "
    "http://www.nvidia.com/Download/index.aspx",
}

# Names torch.cuda shows that Ember leaves out, and why.
LEFT_OUT = {
    "DEVICE_REQUIREMENT": "PyTorch's own release table (compute capabilities its wheels require)",
    "PYTORCH_RELEASES_CODE_CC": "PyTorch's own release table (architectures of its wheels)",
    "classproperty": "a helper PyTorch imports from torch._utils",
    "torch": "the package itself, under its own name",
    "platform": "a standard module PyTorch's file imports for its own use",
}


def public_names(module):
    return {name for name in dir(module) if not name.startswith("_")}


def plain(value):
    """A value to compare across libraries: containers and scalars as they
    are, other objects by their type's name."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, collections.OrderedDict):
        return ("OrderedDict", [(k, plain(v)) for k, v in value.items()])
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value).__name__, [plain(v) for v in value]
    if isinstance(value, type):
        return ("class", value.__name__)
    return ("object", type(value).__name__)


def outcome(fn):
    """(result or (exception type, message), warnings) of fn()."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = ("ok", plain(fn()))
        except Exception as e:  # noqa: BLE001 - the type is what is compared
            message = str(e) if not isinstance(e, KeyError) else repr(e.args[0])
            result = (type(e).__name__, message.replace("'ember._C'", "'torch._C'"))
    return result, [(w.category.__name__, str(w.message)) for w in caught]


def reset_storage_warnings():
    torch.storage._reset_warn_typed_storage_removal()
    ember.cuda._legacy._reset_warn_typed_storage_removal()


def _x(m):
    return m.zeros(2)


def _enter_exit(context):
    return context.__enter__(), context.__exit__(None, None, None)


def _state(m):
    return m.zeros(16, dtype=m.uint8)


# name -> call(lib). Each runs on torch and on ember.
CASES = {
    # availability and build
    "is_available": lambda m: m.cuda.is_available(),
    "device_count": lambda m: m.cuda.device_count(),
    "is_initialized": lambda m: m.cuda.is_initialized(),
    "is_bf16_supported": lambda m: m.cuda.is_bf16_supported(),
    "is_bf16_supported_no_emulation": lambda m: m.cuda.is_bf16_supported(False),
    "is_tf32_supported": lambda m: m.cuda.is_tf32_supported(),
    "get_arch_list": lambda m: m.cuda.get_arch_list(),
    "get_gencode_flags": lambda m: m.cuda.get_gencode_flags(),
    "has_half": lambda m: m.cuda.has_half,
    "has_magma": lambda m: m.cuda.has_magma,
    "default_generators": lambda m: m.cuda.default_generators,
    "cudaStatus": lambda m: (m.cuda.cudaStatus.SUCCESS, m.cuda.cudaStatus.ERROR_NOT_READY),
    "DeferredCudaCallError": lambda m: issubclass(m.cuda.DeferredCudaCallError, Exception),
    "CudaError_is_runtime_error": lambda m: issubclass(m.cuda.CudaError, RuntimeError),
    "CudaError_str": lambda m: str(m.cuda.CudaError(2)),
    "check_error_0": lambda m: m.cuda.check_error(0),
    "OutOfMemoryError": lambda m: issubclass(m.cuda.OutOfMemoryError, RuntimeError),
    "AcceleratorError": lambda m: issubclass(m.cuda.AcceleratorError, RuntimeError),
    # initialisation and devices
    "init": lambda m: m.cuda.init(),
    "cudart": lambda m: m.cuda.cudart(),
    "current_device": lambda m: m.cuda.current_device(),
    "synchronize": lambda m: m.cuda.synchronize(),
    "synchronize_0": lambda m: m.cuda.synchronize(0),
    "ipc_collect": lambda m: m.cuda.ipc_collect(),
    "current_blas_handle": lambda m: m.cuda.current_blas_handle(),
    "current_solver_handle": lambda m: m.cuda.current_solver_handle(),
    "get_device_name": lambda m: m.cuda.get_device_name(),
    "get_device_name_0": lambda m: m.cuda.get_device_name(0),
    "get_device_capability": lambda m: m.cuda.get_device_capability(0),
    "get_device_properties": lambda m: m.cuda.get_device_properties(0),
    "can_device_access_peer": lambda m: m.cuda.can_device_access_peer(0, 1),
    "set_device_0": lambda m: m.cuda.set_device(0),
    "set_device_str": lambda m: m.cuda.set_device("cuda:0"),
    "set_device_cpu": lambda m: m.cuda.set_device("cpu"),
    "set_device_negative": lambda m: m.cuda.set_device(-1),
    "set_device_no_index": lambda m: m.cuda.set_device(m.device("cuda")),
    "get_sync_debug_mode": lambda m: m.cuda.get_sync_debug_mode(),
    "set_sync_debug_mode": lambda m: m.cuda.set_sync_debug_mode("warn"),
    "set_sync_debug_mode_int": lambda m: m.cuda.set_sync_debug_mode(1),
    "device_ctx": lambda m: m.cuda.device(0),
    "device_ctx_enter": lambda m: m.cuda.device(0).__enter__(),
    "device_ctx_none_enter": lambda m: m.cuda.device(None).__enter__(),
    "device_ctx_negative": lambda m: m.cuda.device(-1).__enter__(),
    "device_ctx_cpu": lambda m: m.cuda.device("cpu"),
    "device_ctx_idx": lambda m: (m.cuda.device("cuda:1").idx, m.cuda.device("cuda:1").prev_idx),
    "device_ctx_of_device_ctx": lambda m: m.cuda.device(m.cuda.device(3)).idx,
    "device_of_cpu_tensor": lambda m: (m.cuda.device_of(_x(m)).idx, m.cuda.device_of(_x(m)).__enter__()),
    "device_of_is_device": lambda m: issubclass(m.cuda.device_of, m.cuda.device),
    # NVML
    "device_memory_used": lambda m: m.cuda.device_memory_used(),
    "memory_usage": lambda m: m.cuda.memory_usage(0),
    "utilization": lambda m: m.cuda.utilization(),
    "temperature": lambda m: m.cuda.temperature(),
    "power_draw": lambda m: m.cuda.power_draw(),
    "clock_rate": lambda m: m.cuda.clock_rate(),
    "list_gpu_processes": lambda m: m.cuda.list_gpu_processes(),
    # streams, events, graphs
    "Stream": lambda m: m.cuda.Stream(),
    "Stream_0": lambda m: m.cuda.Stream(0),
    "ExternalStream": lambda m: m.cuda.ExternalStream(0),
    "Event": lambda m: m.cuda.Event(),
    "Event_timing": lambda m: m.cuda.Event(enable_timing=True),
    "Event_repr": lambda m: repr(m.cuda.Event()),
    "Event_query": lambda m: m.cuda.Event().query(),
    "Event_record": lambda m: m.cuda.Event().record(),
    "current_stream": lambda m: m.cuda.current_stream(),
    "default_stream": lambda m: m.cuda.default_stream(),
    "get_stream_from_external": lambda m: m.cuda.get_stream_from_external(0),
    "stream_none": lambda m: m.cuda.stream(None),
    "stream_none_enter": lambda m: m.cuda.stream(None).__enter__(),
    "StreamContext_none": lambda m: vars(m.cuda.StreamContext(None)),
    "set_stream_none": lambda m: m.cuda.set_stream(None),
    "CUDAGraph": lambda m: m.cuda.CUDAGraph(),
    "graph_none": lambda m: m.cuda.graph(None),
    "graph_pool_handle": lambda m: m.cuda.graph_pool_handle(),
    "is_current_stream_capturing": lambda m: m.cuda.is_current_stream_capturing(),
    "make_graphed_callables": lambda m: m.cuda.make_graphed_callables(m.nn.Linear(2, 2), (m.zeros(2, 2),)),
    "make_graphed_callables_non_tensor": lambda m: m.cuda.make_graphed_callables(m.nn.Linear(2, 2), (3,)),
    # memory
    "empty_cache": lambda m: m.cuda.empty_cache(),
    "memory_allocated": lambda m: m.cuda.memory_allocated(),
    "memory_allocated_0": lambda m: m.cuda.memory_allocated(0),
    "memory_allocated_cpu": lambda m: m.cuda.memory_allocated("cpu"),
    "max_memory_allocated": lambda m: m.cuda.max_memory_allocated(),
    "memory_reserved": lambda m: m.cuda.memory_reserved(),
    "max_memory_reserved": lambda m: m.cuda.max_memory_reserved(),
    "memory_cached": lambda m: m.cuda.memory_cached(),
    "max_memory_cached": lambda m: m.cuda.max_memory_cached(),
    "memory_stats": lambda m: m.cuda.memory_stats(),
    "memory_stats_0": lambda m: m.cuda.memory_stats(0),
    "memory_stats_as_nested_dict": lambda m: m.cuda.memory_stats_as_nested_dict(),
    "host_memory_stats": lambda m: m.cuda.host_memory_stats(),
    "host_memory_stats_as_nested_dict": lambda m: m.cuda.host_memory_stats_as_nested_dict(),
    "memory_summary": lambda m: m.cuda.memory_summary(),
    "memory_summary_abbreviated": lambda m: m.cuda.memory_summary(abbreviated=True),
    "memory_snapshot": lambda m: m.cuda.memory_snapshot(),
    "mem_get_info": lambda m: m.cuda.mem_get_info(),
    "reset_peak_memory_stats": lambda m: m.cuda.reset_peak_memory_stats(),
    "reset_accumulated_memory_stats": lambda m: m.cuda.reset_accumulated_memory_stats(),
    "reset_max_memory_allocated": lambda m: m.cuda.reset_max_memory_allocated(),
    "reset_max_memory_cached": lambda m: m.cuda.reset_max_memory_cached(),
    "reset_peak_host_memory_stats": lambda m: m.cuda.reset_peak_host_memory_stats(),
    "reset_accumulated_host_memory_stats": lambda m: m.cuda.reset_accumulated_host_memory_stats(),
    "set_per_process_memory_fraction": lambda m: m.cuda.set_per_process_memory_fraction(0.5),
    "get_per_process_memory_fraction": lambda m: m.cuda.get_per_process_memory_fraction(),
    "caching_allocator_alloc": lambda m: m.cuda.caching_allocator_alloc(16),
    "caching_allocator_delete": lambda m: m.cuda.caching_allocator_delete(0),
    "caching_allocator_enable": lambda m: m.cuda.caching_allocator_enable(False),
    "caching_allocator_disabled": lambda m: m.cuda.caching_allocator_disabled().__enter__(),
    "get_allocator_backend": lambda m: m.cuda.get_allocator_backend(),
    "change_current_allocator": lambda m: m.cuda.change_current_allocator(m.cuda.memory._CUDAAllocator(None)),
    "CUDAPluggableAllocator_missing_file": lambda m: m.cuda.CUDAPluggableAllocator("/nonexistent.so", "a", "b"),
    "MemPool": lambda m: m.cuda.MemPool(),
    "use_mem_pool": lambda m: m.cuda.use_mem_pool(None).__enter__(),
    # random
    "manual_seed": lambda m: m.cuda.manual_seed(3),
    "manual_seed_str": lambda m: m.cuda.manual_seed("3"),
    "manual_seed_bad": lambda m: m.cuda.manual_seed("x"),
    "manual_seed_all": lambda m: m.cuda.manual_seed_all(3),
    "seed": lambda m: m.cuda.seed(),
    "seed_all": lambda m: m.cuda.seed_all(),
    "initial_seed": lambda m: m.cuda.initial_seed(),
    "get_rng_state": lambda m: m.cuda.get_rng_state(),
    "get_rng_state_0": lambda m: m.cuda.get_rng_state(0),
    "get_rng_state_all": lambda m: m.cuda.get_rng_state_all(),
    "set_rng_state": lambda m: m.cuda.set_rng_state(_state(m)),
    "set_rng_state_all": lambda m: m.cuda.set_rng_state_all([_state(m)]),
    "random_module_manual_seed": lambda m: m.cuda.random.manual_seed(5),
    # legacy types
    "FloatTensor": lambda m: m.cuda.FloatTensor(),
    "LongTensor_data": lambda m: m.cuda.LongTensor([1, 2]),
    "FloatTensor_attributes": lambda m: (str(m.cuda.FloatTensor.dtype), m.cuda.FloatTensor.is_cuda),
    "HalfTensor_dtype": lambda m: str(m.cuda.HalfTensor.dtype),
    "FloatTensor_isinstance": lambda m: isinstance(_x(m), m.cuda.FloatTensor),
    "FloatTensor_not_tensor_subclass": lambda m: issubclass(m.cuda.FloatTensor, m.Tensor),
    "sparse_FloatTensor": lambda m: m.cuda.sparse.FloatTensor(),
    "sparse_FloatTensor_is_sparse": lambda m: m.cuda.sparse.FloatTensor.is_sparse,
    "FloatStorage": lambda m: m.cuda.FloatStorage(3),
    "ByteStorage_from_buffer": lambda m: m.cuda.ByteStorage.from_buffer(b"12"),
    "FloatStorage_dtype": lambda m: str(m.cuda.FloatStorage.dtype),
    "FloatStorage_isinstance": lambda m: isinstance(object(), m.cuda.FloatStorage),
    # submodules
    "nvtx_range_push": lambda m: m.cuda.nvtx.range_push("a"),
    "nvtx_range_pop": lambda m: m.cuda.nvtx.range_pop(),
    "nvtx_mark": lambda m: m.cuda.nvtx.mark("a"),
    "nvtx_range": lambda m: m.cuda.nvtx.range("a{}", 1).__enter__(),
    "nvtx_range_start": lambda m: m.cuda.nvtx.range_start("a"),
    "nvtx_range_end": lambda m: m.cuda.nvtx.range_end(0),
    "profiler_start": lambda m: m.cuda.profiler.start(),
    "profiler_stop": lambda m: m.cuda.profiler.stop(),
    "profiler_profile": lambda m: m.cuda.profiler.profile().__enter__(),
    "profiler_flags": lambda m: m.cuda.profiler.DEFAULT_FLAGS,
    "nccl_is_available": lambda m: m.cuda.nccl.is_available([_x(m)]),
    "nccl_version": lambda m: m.cuda.nccl.version(),
    "nccl_unique_id": lambda m: m.cuda.nccl.unique_id(),
    "nccl_all_reduce": lambda m: m.cuda.nccl.all_reduce([_x(m)]),
    "nccl_all_reduce_tensor": lambda m: m.cuda.nccl.all_reduce(_x(m)),
    "nccl_reduce_both": lambda m: m.cuda.nccl.reduce([_x(m)], output=_x(m), outputs=[_x(m)]),
    "nccl_reduce_outputs": lambda m: m.cuda.nccl.reduce([_x(m)], outputs=[_x(m)]),
    "nccl_broadcast": lambda m: m.cuda.nccl.broadcast([_x(m)]),
    "nccl_SUM": lambda m: m.cuda.nccl.SUM,
    "jiterator_create": lambda m: m.cuda.jiterator._create_jit_fn("template <typename T> T f(T x) { return x; }"),
    "jiterator_call": lambda m: m.cuda.jiterator._create_jit_fn("template <typename T> T f(T x) { return x; }")(_x(m)),
    "jiterator_bad_code": lambda m: m.cuda.jiterator._create_jit_fn("int f() { return 0; }"),
    "jiterator_multi_by_value": lambda m: m.cuda.jiterator._JittedFunction(
        "template <typename T> T f(T x) { return x; }", return_by_ref=False, num_outputs=2
    ),
    "tunable_is_enabled": lambda m: m.cuda.tunable.is_enabled(),
    "tunable_enable": lambda m: m.cuda.tunable.enable(False),
    "tunable_get_filename": lambda m: m.cuda.tunable.get_filename(),
    "tunable_get_results": lambda m: m.cuda.tunable.get_results(),
    "tunable_set_max_tuning_iterations": lambda m: m.cuda.tunable.set_max_tuning_iterations(10),
    "tunable_read_file": lambda m: m.cuda.tunable.read_file(),
    "gds_register_buffer": lambda m: m.cuda.gds.gds_register_buffer(None),
    "gds_deregister_buffer": lambda m: m.cuda.gds.gds_deregister_buffer(None),
    "green_context_create": lambda m: m.cuda.green_contexts.GreenContext.create(num_sms=1),
    "green_context_supported": lambda m: m.cuda.green_contexts.SUPPORTED,
    "green_context_max_concurrency": lambda m: m.cuda.green_contexts.GreenContext.max_workqueue_concurrency(),
    # more arguments
    "set_sync_debug_mode_bad": lambda m: m.cuda.set_sync_debug_mode("bad"),
    "set_per_process_memory_fraction_int": lambda m: m.cuda.set_per_process_memory_fraction(2),
    "can_device_access_peer_cpu": lambda m: m.cuda.can_device_access_peer("cpu", 0),
    "get_device_properties_negative": lambda m: m.cuda.get_device_properties(-1),
    "memory_allocated_device": lambda m: m.cuda.memory_allocated(m.device("cuda", 1)),
    "memory_reserved_str": lambda m: m.cuda.memory_reserved("cuda:0"),
    "device_ctx_exit": lambda m: _enter_exit(m.cuda.device(-1)),
    "stream_ctx_exit": lambda m: _enter_exit(m.cuda.stream(None)),
    "device_of_exit": lambda m: _enter_exit(m.cuda.device_of(_x(m))),
    "list_gpu_processes_0": lambda m: m.cuda.list_gpu_processes(0),
    "nccl_all_gather": lambda m: m.cuda.nccl.all_gather([_x(m)], [_x(m)]),
    "nccl_reduce_scatter": lambda m: m.cuda.nccl.reduce_scatter([_x(m)], [_x(m)]),
    "nccl_reduce_output_list": lambda m: m.cuda.nccl.reduce([_x(m)], output=[_x(m)]),
    "nccl_init_rank": lambda m: m.cuda.nccl.init_rank(1, b"", 0),
    "gds_file_missing": lambda m: m.cuda.gds.GdsFile("/nonexistent/file", 0),
    "tunable_tune_gemm_in_file": lambda m: m.cuda.tunable.tune_gemm_in_file("results.csv"),
    "tunable_mgpu_tune": lambda m: m.cuda.tunable.mgpu_tune_gemm_in_file("/nonexistent/*.csv", 1),
    "jiterator_unknown_kwarg": lambda m: m.cuda.jiterator._create_jit_fn(
        "template <typename T> T f(T x, T a) { return x * a; }", a=1
    )(_x(m), b=2),
    # amp spellings
    "amp_GradScaler_warns": lambda m: m.cuda.amp.GradScaler().is_enabled(),
}

# Where the CUDA build without a device answers otherwise than "the CPU
# build's answer, with the not-compiled AssertionError replaced by the
# reason no device is usable".
CUDA_BUILD_ANSWERS = {
    "Stream": "lazy_init",
    "Stream_0": "lazy_init",
    "Event": ("ok", ("object", "Event")),
    "Event_timing": ("ok", ("object", "Event")),
    "Event_repr": ("ok", "<torch.cuda.Event uninitialized>"),
    "Event_query": ("ok", True),
    "Event_record": "lazy_init",
    "CUDAGraph": "lazy_init",
    "graph_none": "lazy_init",
    "graph_pool_handle": "lazy_init",
    "MemPool": "lazy_init",
    "is_current_stream_capturing": ("ok", False),
    "make_graphed_callables": "lazy_init",
    "FloatTensor": "lazy_init",
    "LongTensor_data": "lazy_init",
    "sparse_FloatTensor": "lazy_init",
    "set_device_0": "lazy_init",
    "device_ctx_enter": "lazy_init",
    "set_device_str": "lazy_init",
    "memory_snapshot": "lazy_init",
    "caching_allocator_delete": "lazy_init",
    "caching_allocator_disabled": "lazy_init",
    "change_current_allocator": "lazy_init",
    "get_allocator_backend": "lazy_init",
    "reset_peak_host_memory_stats": "lazy_init",
    "reset_accumulated_host_memory_stats": "lazy_init",
    "reset_peak_memory_stats": ("RuntimeError", "invalid argument to reset_peak_memory_stats"),
    "reset_max_memory_allocated": ("RuntimeError", "invalid argument to reset_peak_memory_stats"),
    "reset_max_memory_cached": ("RuntimeError", "invalid argument to reset_peak_memory_stats"),
    "reset_accumulated_memory_stats": ("RuntimeError", "invalid argument to reset_accumulated_memory_stats"),
    "tunable_is_enabled": ("ok", False),
    "tunable_enable": ("ok", None),
    "tunable_get_filename": ("ok", ""),
    "tunable_get_results": ("ok", ("tuple", [])),
    "tunable_set_max_tuning_iterations": ("ok", None),
    "tunable_read_file": ("ok", False),
    "FloatStorage": "lazy_init",
    "tunable_tune_gemm_in_file": ("AssertionError", "TunableOp is not enabled"),
}


@pytest.fixture
def without_cuda_build(monkeypatch):
    """Ember as a build without CUDA sees itself."""
    monkeypatch.setattr(_C, "_cuda_version", lambda: "")


def assert_cpu_build_answer(name):
    reset_storage_warnings()
    expected = outcome(lambda: CASES[name](torch))
    reset_storage_warnings()
    got = outcome(lambda: CASES[name](ember))
    assert got == expected


# PyTorch's GdsFile.__del__ fails on a file that did not open.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize("name", sorted(CASES))
def test_as_pytorch_cpu_build(name, without_cuda_build):
    assert not ember.cuda.is_available()
    assert_cpu_build_answer(name)


def cuda_build_without_device():
    return bool(_C._cuda_version()) and _C._cuda_device_count() == 0


# PyTorch's GdsFile.__del__ fails on a file that did not open.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
@pytest.mark.parametrize("name", sorted(CASES))
def test_as_pytorch_cuda_build_without_device(name):
    if not cuda_build_without_device():
        pytest.skip("needs Ember's CUDA backend and no visible device")
    reset_storage_warnings()
    (expected, expected_warnings) = outcome(lambda: CASES[name](torch))
    reset_storage_warnings()
    (got, got_warnings) = outcome(lambda: CASES[name](ember))
    override = CUDA_BUILD_ANSWERS.get(name)
    if override == "lazy_init" or (override is None and expected == NOT_COMPILED):
        assert got[0] == "RuntimeError" and got[1] in NO_DEVICE_REASONS, got
    elif override is not None:
        assert got == override
    else:
        assert got == expected
    assert got_warnings == expected_warnings


def test_the_reason_is_the_runtime_one():
    if not cuda_build_without_device():
        pytest.skip("needs Ember's CUDA backend and no visible device")
    with pytest.raises(RuntimeError) as first:
        ember.cuda.init()
    with pytest.raises(RuntimeError) as second:
        ember.cuda.current_device()
    assert str(first.value) == str(second.value)
    assert str(first.value) in NO_DEVICE_REASONS


def test_storage_warning_is_given_once(without_cuda_build):
    for lib in (torch, ember):
        reset_storage_warnings()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for _ in range(2):
                with pytest.raises(AssertionError):
                    lib.cuda.FloatStorage()
        assert [w.category for w in caught] == [UserWarning]


def test_seeds_queue_without_effect():
    ember.manual_seed(0)
    first = ember.rand(3).tolist()
    ember.manual_seed(0)
    ember.cuda.manual_seed_all(123)
    ember.cuda.seed()
    assert ember.rand(3).tolist() == first
    assert ember.cuda.is_initialized() is False


def test_all_is_torchs():
    assert sorted(ember.cuda.__all__) == sorted(torch.cuda.__all__)
    assert [name for name in ember.cuda.__all__ if not hasattr(ember.cuda, name)] == []


def test_coverage_of_public_names():
    theirs = public_names(torch.cuda)
    ours = public_names(ember.cuda)
    missing = sorted(theirs - ours)
    assert missing == sorted(LEFT_OUT), f"missing from ember.cuda: {missing}"
    assert len(theirs & ours) / len(theirs) >= 0.95
    assert sorted(n for n in LEFT_OUT if n not in theirs) == []


SUBMODULES = ["amp", "gds", "graphs", "green_contexts", "jiterator", "memory", "nccl", "nvtx", "profiler",
              "random", "sparse", "streams", "tunable"]  # fmt: skip
# Names PyTorch's submodules import for their own use (typing helpers,
# standard modules, the torch package) and Ember's need not.
INCIDENTAL = {
    "Any", "Callable", "Iterable", "Literal", "ParamSpec", "Self", "Sequence", "Storage", "TYPE_CHECKING",
    "Tensor", "TypeAlias", "TypeVar", "Union", "annotations", "collections", "concurrent", "contextlib",
    "contextmanager", "ctypes", "deprecated", "gc", "glob", "mp", "os", "overload", "pickle", "re", "shutil",
    "signature", "sys", "torch", "typing", "warnings",
}  # fmt: skip


@pytest.mark.parametrize("name", SUBMODULES)
def test_submodule_names(name):
    theirs = getattr(torch.cuda, name)
    ours = getattr(ember.cuda, name)
    assert isinstance(ours, types.ModuleType)
    assert sorted(public_names(theirs) - public_names(ours) - INCIDENTAL) == []
    assert sorted(getattr(ours, "__all__", [])) == sorted(getattr(theirs, "__all__", []))


def test_every_public_callable_has_a_case():
    called = set()
    for name, fn in CASES.items():
        called.update(part for part in fn.__code__.co_names)
        called.add(name)
    constants = {"DeferredCudaCallError", "CudaError", "OutOfMemoryError", "AcceleratorError", "Device"}
    callables = {
        n
        for n in public_names(ember.cuda) - set(LEFT_OUT) - constants
        if callable(getattr(ember.cuda, n)) and not isinstance(getattr(ember.cuda, n), types.ModuleType)
    }
    incidental = {"Any", "Callable", "NewType", "Optional", "cast", "lru_cache"}
    storages_and_tensors = {n for n in callables if n.endswith(("Storage", "Tensor"))}
    uncovered = sorted(callables - incidental - storages_and_tensors - called)
    assert uncovered == []


@pytest.fixture
def fake_device(monkeypatch):
    """A CUDA build that sees two devices, with the runtime's entry points
    replaced by a record of what they were asked."""
    state = {"device": 0, "synchronized": [], "set": []}

    def set_device(index):
        state["set"].append(index)
        state["device"] = index

    monkeypatch.setattr(_C, "_cuda_version", lambda: "13.0")
    monkeypatch.setattr(_C, "_cuda_device_count", lambda: 2)
    monkeypatch.setattr(_C, "_cuda_init", lambda: None)
    monkeypatch.setattr(_C, "_cuda_getDevice", lambda: state["device"])
    monkeypatch.setattr(_C, "_cuda_setDevice", set_device)
    monkeypatch.setattr(_C, "_cuda_synchronize", lambda: state["synchronized"].append(state["device"]))
    monkeypatch.setattr(_C, "_cuda_getDeviceProperties", lambda i: (f"GPU {i}", 8 + i, 0, 80 << 30, 132))
    monkeypatch.setattr(ember.cuda, "_initialized", False)
    monkeypatch.setattr(ember.cuda, "_queued_calls", [])
    monkeypatch.setattr(ember.cuda, "_queued_seeds", {})
    return state


def test_with_a_device(fake_device):
    cuda = ember.cuda
    assert cuda.is_available() and cuda.device_count() == 2
    cuda.manual_seed_all(1)
    cuda.manual_seed(2)
    assert not cuda.is_initialized()
    assert cuda.current_device() == 0
    assert cuda.is_initialized()
    assert cuda.get_device_name(1) == "GPU 1"
    assert cuda.get_device_capability() == (8, 0)
    assert repr(cuda.get_device_properties(0)) == (
        "_CudaDeviceProperties(name='GPU 0', major=8, minor=0, total_memory=81920MB, multi_processor_count=132)"
    )
    with pytest.raises(AssertionError, match="Invalid device id"):
        cuda.get_device_properties(2)
    assert cuda.is_bf16_supported() and cuda.is_tf32_supported()
    with cuda.device(1):
        assert cuda.current_device() == 1
        cuda.synchronize()
    assert cuda.current_device() == 0
    cuda.synchronize("cuda:1")
    assert fake_device["synchronized"] == [1, 1]
    assert fake_device["set"] == [1, 0, 1, 0]
    cuda.set_device(-1)
    cuda.set_device("cuda:1")
    assert cuda.current_device() == 1
    with pytest.raises(ValueError, match="Expected a cuda device, but got: cpu"):
        cuda.set_device("cpu")
    stats = {"num_ooms": 1, "allocated_bytes": {"all": {"current": 1536, "peak": 2048}}}
    fake_device["stats_asked"] = []
    monkeypatch_stats = pytest.MonkeyPatch()
    monkeypatch_stats.setattr(_C, "_cuda_memoryStats", lambda d: fake_device["stats_asked"].append(d) or stats)
    try:
        assert cuda.memory_allocated() == 1536 and cuda.max_memory_allocated(1) == 2048
        assert cuda.memory_stats() == collections.OrderedDict(
            [("allocated_bytes.all.current", 1536), ("allocated_bytes.all.peak", 2048), ("num_ooms", 1)]
        )
        assert fake_device["stats_asked"] == [1, 1, 1]
    finally:
        monkeypatch_stats.undo()
    cuda.empty_cache()
    with pytest.raises(RuntimeError, match="no random number generators"):
        cuda.initial_seed()
