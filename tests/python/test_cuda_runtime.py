"""The CUDA runtime's Python surface on a machine without a usable device:
Ember built with CUDA must answer as PyTorch's CUDA build does there (the
reason no device is usable, from the runtime), and what needs no device
must work. With a device these move to tests/cuda/test_runtime.py."""

import pytest

import ember
from ember import _C

NO_DEVICE_REASONS = {
    "No CUDA GPUs are available",
    "Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from "
    "http://www.nvidia.com/Download/index.aspx",
}

pytestmark = pytest.mark.skipif(
    not (_C._cuda_version() and _C._cuda_device_count() == 0),
    reason="needs Ember's CUDA backend and no visible device",
)


def reason():
    with pytest.raises(RuntimeError) as info:
        _C._cuda_init()
    assert str(info.value) in NO_DEVICE_REASONS
    return str(info.value)


@pytest.mark.parametrize(
    "call",
    [
        lambda: ember.ones(2).cuda(),
        lambda: ember.ones(2).cuda(0),
        lambda: ember.ones(2).to("cuda"),
        lambda: ember.empty(3, device="cuda"),
        lambda: ember.zeros(2, 3, device="cuda:0"),
        lambda: ember.ones(2).pin_memory(),
        lambda: ember.cuda.Stream(),
        lambda: ember.cuda.current_stream(),
        lambda: ember.cuda.default_stream(),
        lambda: ember.cuda.mem_get_info(),
        lambda: ember.cuda.Event().record(),
        lambda: ember.cuda.set_stream(ember.cuda.Stream()),
    ],
    ids=[
        "cuda",
        "cuda_0",
        "to_cuda",
        "empty",
        "zeros",
        "pin_memory",
        "Stream",
        "current_stream",
        "default_stream",
        "mem_get_info",
        "Event_record",
        "set_stream",
    ],
)
def test_needs_a_device(call):
    with pytest.raises(RuntimeError) as info:
        call()
    assert str(info.value) == reason()


def test_answers_without_a_device():
    x = ember.ones(3)
    assert x.is_pinned() is False
    assert ember.cuda.memory_allocated() == 0
    assert ember.cuda.max_memory_reserved() == 0
    assert ember.cuda.memory_stats() == {}
    ember.cuda.empty_cache()
    assert ember.cuda.get_arch_list() == []
    event = ember.cuda.Event(enable_timing=True)
    assert event.query() is True
    event.synchronize()
    assert event.cuda_event == 0 and repr(event) == "<torch.cuda.Event uninitialized>"
    with pytest.raises(RuntimeError, match="Both events must be recorded before calculating elapsed time."):
        event.elapsed_time(ember.cuda.Event(enable_timing=True))
    assert ember.accelerator.is_available() is False
    assert ember.accelerator.current_accelerator() is None


def test_record_stream_needs_a_cuda_tensor():
    with pytest.raises(RuntimeError, match="record_stream expects a CUDA tensor"):
        ember.ones(2).record_stream(None)


def test_pin_memory_of_a_non_cpu_tensor():
    x = ember.ones(2, device="meta")
    with pytest.raises(RuntimeError) as info:
        x.pin_memory()
    assert str(info.value) == f"cannot pin '{x.type()}' only dense CPU tensors can be pinned"


def test_out_of_memory_error_is_one_class():
    assert ember.OutOfMemoryError is ember.cuda.OutOfMemoryError is _C.OutOfMemoryError
    assert issubclass(ember.OutOfMemoryError, RuntimeError)
    assert ember.OutOfMemoryError.__name__ == "OutOfMemoryError"


def test_config_reports_architectures_and_cublas():
    flags = _C._cuda_arch_flags()
    assert flags and all(f.startswith(("sm_", "compute_")) for f in flags.split())
    assert _C._cuda_cublas_version().count(".") == 2
    text = ember.__config__.show()
    assert f"NVCC architecture flags: {flags}" in text
    assert f"cuBLAS {_C._cuda_cublas_version()}" in text


def test_pin_memory_walks_batches():
    from ember.utils.data._utils.pin_memory import pin_memory

    class Pinnable:
        def pin_memory(self):
            return "pinned"

    batch = {"x": [Pinnable(), (Pinnable(), "name")], "n": 3}
    assert pin_memory(batch) == {"x": ["pinned", ("pinned", "name")], "n": 3}
    with pytest.raises(RuntimeError) as info:
        pin_memory([ember.ones(2)])  # a tensor: pinned memory needs the device
    assert str(info.value) == reason()
