"""ember.xpu, ember.mps, ember.mtia and the device types without a backend
here, against PyTorch's CPU build: each public name, and each call answering
with PyTorch's result or exception type and message."""

from __future__ import annotations

import pytest
from conftest import torch
from test_cuda_api import plain

import ember

MODULES = ("xpu", "mps", "mtia")
# Names PyTorch's module files import for their own use.
IMPORTED_HELPERS = {
    "Any", "NewType", "TYPE_CHECKING", "annotations", "byref", "c_double", "c_uint32", "c_void_p", "cast",
    "dataclasses", "lru_cache", "os", "threading", "torch", "traceback", "warnings", "pointer", "Callable",
}  # fmt: skip


def outcome(fn):
    try:
        return "ok", plain(fn())
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        message = str(e).replace("'ember._C'", "'torch._C'").replace("'ember.", "'torch.")
        return type(e).__name__, message


@pytest.mark.parametrize("name", MODULES)
def test_public_names(name):
    expected = {n for n in dir(getattr(torch, name)) if not n.startswith("_")} - IMPORTED_HELPERS
    have = {n for n in dir(getattr(ember, name)) if not n.startswith("_")}
    assert expected - have == set()
    assert getattr(ember, name).__all__ == getattr(torch, name).__all__


def _enter(context):
    with context:
        return "entered"


CASES = {
    "xpu.is_available": lambda m: m.xpu.is_available(),
    "xpu.device_count": lambda m: m.xpu.device_count(),
    "xpu.is_initialized": lambda m: m.xpu.is_initialized(),
    "xpu.init": lambda m: m.xpu.init(),
    "xpu.current_device": lambda m: m.xpu.current_device(),
    "xpu.synchronize": lambda m: m.xpu.synchronize(),
    "xpu.set_device": lambda m: m.xpu.set_device(0),
    "xpu.get_device_name": lambda m: m.xpu.get_device_name(0),
    "xpu.get_device_properties": lambda m: m.xpu.get_device_properties(),
    "xpu.is_bf16_supported": lambda m: (m.xpu.is_bf16_supported(), m.xpu.is_bf16_supported(False)),
    "xpu.is_tf32_supported": lambda m: m.xpu.is_tf32_supported(),
    "xpu.arch": lambda m: (m.xpu.get_arch_list(), m.xpu.get_gencode_flags()),
    "xpu.seeds": lambda m: (m.xpu.manual_seed(3), m.xpu.manual_seed_all(3), m.xpu.seed(), m.xpu.seed_all()),
    "xpu.manual_seed_str": lambda m: m.xpu.manual_seed("a"),
    "xpu.initial_seed": lambda m: m.xpu.initial_seed(),
    "xpu.get_rng_state": lambda m: m.xpu.get_rng_state(),
    "xpu.rng_state_all": lambda m: (m.xpu.get_rng_state_all(), m.xpu.set_rng_state_all([])),
    "xpu.set_rng_state": lambda m: m.xpu.set_rng_state(m.zeros(4, dtype=m.uint8)),
    "xpu.default_generators": lambda m: m.xpu.default_generators,
    "xpu.memory": lambda m: (
        m.xpu.memory_allocated(),
        m.xpu.max_memory_allocated(),
        m.xpu.memory_reserved(),
        m.xpu.max_memory_reserved(),
        m.xpu.memory_stats(),
        m.xpu.memory_stats_as_nested_dict(),
        m.xpu.memory_snapshot(),
        m.xpu.empty_cache(),
    ),  # fmt: skip
    "xpu.mem_get_info": lambda m: m.xpu.mem_get_info(),
    "xpu.reset_peak_memory_stats": lambda m: m.xpu.reset_peak_memory_stats(),
    "xpu.set_per_process_memory_fraction": lambda m: m.xpu.set_per_process_memory_fraction(0.5),
    "xpu.Stream": lambda m: m.xpu.Stream(),
    "xpu.Event": lambda m: m.xpu.Event(),
    "xpu.MemPool": lambda m: m.xpu.MemPool(),
    "xpu.XPUGraph": lambda m: m.xpu.XPUGraph(),
    "xpu.graph_pool_handle": lambda m: m.xpu.graph_pool_handle(),
    "xpu.is_current_stream_capturing": lambda m: m.xpu.is_current_stream_capturing(),
    "xpu.utilization": lambda m: m.xpu.utilization(),
    "xpu.device_idx": lambda m: (m.xpu.device(0).idx, m.xpu.device("xpu:1").idx, m.xpu.device(None).idx),
    "xpu.device_cuda": lambda m: m.xpu.device("cuda:0"),
    "xpu.device_enter": lambda m: _enter(m.xpu.device(0)),
    "xpu.device_of": lambda m: (m.xpu.device_of(m.zeros(1)).idx, _enter(m.xpu.device_of(m.zeros(1)))),
    "xpu.stream_none": lambda m: _enter(m.xpu.stream(None)),
    "xpu.set_stream_none": lambda m: m.xpu.set_stream(None),
    "mps.is_available": lambda m: (m.mps.is_available(), m.mps.device_count()),
    "mps.manual_seed": lambda m: m.mps.manual_seed(0),
    "mps.seed": lambda m: m.mps.seed(),
    "mps.synchronize": lambda m: m.mps.synchronize(),
    "mps.empty_cache": lambda m: m.mps.empty_cache(),
    "mps.get_rng_state": lambda m: m.mps.get_rng_state(),
    "mps.fraction": lambda m: m.mps.set_per_process_memory_fraction(0.5),
    "mps.fraction_type": lambda m: m.mps.set_per_process_memory_fraction("a"),
    "mps.current_allocated_memory": lambda m: m.mps.current_allocated_memory(),
    "mps.recommended_max_memory": lambda m: m.mps.recommended_max_memory(),
    "mps.compile_shader": lambda m: m.mps.compile_shader("kernel void f() {}"),
    "mps.profiler.start": lambda m: m.mps.profiler.start(),
    "mps.profiler.profile": lambda m: _enter(m.mps.profiler.profile()),
    "mtia.is_available": lambda m: (m.mtia.is_available(), m.mtia.device_count(), m.mtia.is_initialized()),
    "mtia.init": lambda m: m.mtia.init(),
    "mtia.current_device": lambda m: m.mtia.current_device(),
    "mtia.current_stream": lambda m: m.mtia.current_stream(),
    "mtia.current_stream_0": lambda m: m.mtia.current_stream(0),
    "mtia.synchronize": lambda m: m.mtia.synchronize(),
    "mtia.synchronize_0": lambda m: m.mtia.synchronize(0),
    "mtia.set_device": lambda m: (m.mtia.set_device(-1), m.mtia.set_device(0)),
    "mtia.device_cpu": lambda m: m.mtia.device("cpu"),
    "mtia.device_cuda": lambda m: m.mtia.device("cuda"),
    "mtia.device_enter": lambda m: (_enter(m.mtia.device(-1)), _enter(m.mtia.device(0))),
    "mtia.capability": lambda m: m.mtia.get_device_capability(0),
    "mtia.properties": lambda m: m.mtia.get_device_properties(0),
    "mtia.memory": lambda m: (
        m.mtia.memory_stats(),
        m.mtia.memory_allocated(),
        m.mtia.max_memory_allocated(),
        m.mtia.reset_peak_memory_stats(),
        m.mtia.record_memory_history(),
    ),  # fmt: skip
    "mtia.empty_cache": lambda m: m.mtia.empty_cache(),
    "mtia.snapshot": lambda m: m.mtia.snapshot(),
    "mtia.seeds": lambda m: (m.mtia.manual_seed(1), m.mtia.manual_seed_all(1), m.mtia.seed(), m.mtia.seed_all()),
    "mtia.rng": lambda m: (m.mtia.get_rng_state_all(), m.mtia.set_rng_state(m.zeros(1), 0)),
    "mtia.get_rng_state": lambda m: m.mtia.get_rng_state(),
    "mtia.set_rng_state": lambda m: m.mtia.set_rng_state(m.zeros(1)),
    "mtia.bf16": lambda m: (m.mtia.is_bf16_supported(), m.mtia.is_fbcode(), m.mtia.is_prod()),
    "mtia.Stream": lambda m: repr(m.mtia.Stream()),
    "mtia.stream": lambda m: m.mtia.stream(None),
    "mtia.MTIAGraph": lambda m: m.mtia.MTIAGraph(),
    "mtia.graph_pool_handle": lambda m: m.mtia.graph_pool_handle(),
    "mtia.DeferredMtiaCallError": lambda m: issubclass(m.mtia.DeferredMtiaCallError, Exception),
}

DEVICE_TYPES = ("ipu", "xpu", "mkldnn", "hip", "ve", "fpga", "maia", "xla", "lazy", "vulkan", "mps", "hpu", "mtia",
                "privateuseone")  # fmt: skip
for _d in DEVICE_TYPES:
    CASES[f"device.{_d}"] = lambda m, d=_d: (repr(m.device(f"{d}:1")), str(m.device(d)), m.device(d, 2).type)
    CASES[f"empty.{_d}"] = lambda m, d=_d: m.empty(2, device=d)
    CASES[f"zeros.{_d}"] = lambda m, d=_d: m.zeros(2, 3, device=m.device(d))
    CASES[f"to.{_d}"] = lambda m, d=_d: m.ones(2).to(d)
    CASES[f"Generator.{_d}"] = lambda m, d=_d: m.Generator(d)
CASES["device.unknown"] = lambda m: m.device("foo")
CASES["device.same"] = lambda m: (m.device("xpu:0") == m.device("xpu", 0), m.device("mps") == m.device("cpu"))
CASES["tensor.is_xpu"] = lambda m: (m.zeros(1).is_xpu, m.zeros(1).is_mps, m.zeros(1).is_mtia)


@pytest.mark.filterwarnings("ignore:'mkldnn' is no longer used")
@pytest.mark.parametrize("case", sorted(CASES))
def test_case(case):
    expected, got = outcome(lambda: CASES[case](torch)), outcome(lambda: CASES[case](ember))
    if expected[0] == "NotImplementedError":  # PyTorch appends its dispatcher's registry
        expected = (expected[0], expected[1].split(" If you are a Facebook employee")[0])
    if expected[0] == "RuntimeError" and expected[1].startswith("0 INTERNAL ASSERT FAILED"):  # and its source path
        expected = (expected[0], expected[1].split("please report a bug to PyTorch. ")[1])
    assert got == expected
