"""The CUDA runtime on a GPU: the caching allocator's statistics, copies
between host and device, pinned memory, streams and events, out-of-memory.
Where the installed torch has CUDA, the allocator's numbers are compared
with its numbers for the same sequence of allocations."""

import gc

import numpy as np
import pytest

import ember

try:
    import torch

    TORCH_CUDA = torch.cuda.is_available()
except ImportError:  # pragma: no cover - torch is the test oracle
    torch = None
    TORCH_CUDA = False

pytestmark = pytest.mark.skipif(not ember.cuda.is_available(), reason="needs a GPU that Ember's CUDA backend can use")

MiB = 1 << 20


def fresh(lib):
    gc.collect()
    lib.cuda.synchronize()
    lib.cuda.empty_cache()
    lib.cuda.reset_peak_memory_stats()
    lib.cuda.reset_accumulated_memory_stats()


def allocation_sequence(lib):
    """Statistics after a fixed sequence of allocations and frees."""
    fresh(lib)
    seen = []
    a = lib.empty(1000, dtype=lib.float32, device="cuda")  # 4000 -> 4096 bytes, a 2 MiB small segment
    seen.append((lib.cuda.memory_allocated(), lib.cuda.memory_reserved()))
    b = lib.empty(3 * MiB, dtype=lib.uint8, device="cuda")  # a 20 MiB large segment
    seen.append((lib.cuda.memory_allocated(), lib.cuda.memory_reserved()))
    c = lib.empty(50 * MiB + 1, dtype=lib.uint8, device="cuda")  # its own 52 MiB segment
    seen.append((lib.cuda.memory_allocated(), lib.cuda.memory_reserved()))
    del b
    seen.append((lib.cuda.memory_allocated(), lib.cuda.memory_reserved()))
    d = lib.empty(2 * MiB, dtype=lib.uint8, device="cuda")  # reuses b's segment
    seen.append((lib.cuda.memory_allocated(), lib.cuda.memory_reserved()))
    del a, c, d
    seen.append((lib.cuda.memory_allocated(), lib.cuda.max_memory_allocated(), lib.cuda.memory_reserved()))
    stats = lib.cuda.memory_stats()
    keys = [
        "allocation.all.allocated",
        "allocation.small_pool.allocated",
        "allocation.large_pool.allocated",
        "segment.all.current",
        "segment.all.peak",
        "allocated_bytes.all.peak",
        "reserved_bytes.large_pool.current",
        "inactive_split.all.current",
        "inactive_split_bytes.all.current",
        "requested_bytes.all.peak",
        "num_alloc_retries",
        "num_ooms",
    ]
    seen.append({k: stats[k] for k in keys})
    lib.cuda.empty_cache()
    seen.append((lib.cuda.memory_reserved(), lib.cuda.memory_stats()["segment.all.current"]))
    return seen


def test_allocation_statistics():
    got = allocation_sequence(ember)
    assert got[0] == (4096, 2 * MiB)
    assert got[1] == (4096 + 3 * MiB, 22 * MiB)
    assert got[2] == (4096 + 3 * MiB + 50 * MiB + 512, 74 * MiB)
    assert got[3] == (4096 + 50 * MiB + 512, 74 * MiB)
    assert got[4] == (4096 + 50 * MiB + 512 + 2 * MiB, 74 * MiB)
    assert got[5] == (0, 4096 + 3 * MiB + 50 * MiB + 512, 74 * MiB)
    assert got[-1] == (0, 0)
    if TORCH_CUDA:
        # Only from torch's empty allocator: earlier tests of this process may
        # hold its blocks (cuBLAS's 32 MiB workspace among them).
        fresh(torch)
        if torch.cuda.memory_allocated() == 0:
            assert got == allocation_sequence(torch)


def test_memory_stats_keys_match_torch():
    fresh(ember)
    x = ember.empty(10, device="cuda")
    keys = set(ember.cuda.memory_stats())
    del x
    assert {"num_alloc_retries", "num_ooms", "max_split_size", "oversize_allocations.current"} <= keys
    if TORCH_CUDA:
        fresh(torch)
        y = torch.empty(10, device="cuda")
        theirs = set(torch.cuda.memory_stats())
        del y
        missing = {k for k in theirs - keys if not k.startswith("num_sync_all_streams")}
        assert not missing, sorted(missing)


def test_out_of_memory():
    fresh(ember)
    free, total = ember.cuda.mem_get_info()
    assert 0 < free <= total == ember.cuda.get_device_properties(0).total_memory
    with pytest.raises(ember.OutOfMemoryError) as info:
        ember.empty(total * 2, dtype=ember.uint8, device="cuda")
    message = str(info.value)
    assert message.startswith("CUDA out of memory. Tried to allocate "), message
    assert " GPU 0 has a total capacity of " in message and "is reserved by PyTorch but unallocated." in message
    assert isinstance(info.value, RuntimeError) and isinstance(info.value, ember.cuda.OutOfMemoryError)
    stats = ember.cuda.memory_stats()
    assert stats["num_ooms"] == 1 and stats["num_alloc_retries"] == 1
    x = ember.empty(1024, device="cuda")  # the allocator still works
    del x


def test_memory_fraction():
    fresh(ember)
    total = ember.cuda.mem_get_info()[1]
    ember.cuda.set_per_process_memory_fraction(0.01)
    try:
        assert ember.cuda.get_per_process_memory_fraction() == 0.01
        with pytest.raises(ember.OutOfMemoryError, match=" allowed; "):
            ember.empty(int(total * 0.02), dtype=ember.uint8, device="cuda")
    finally:
        ember.cuda.set_per_process_memory_fraction(1.0)


def test_snapshot_and_summary():
    fresh(ember)
    x = ember.empty(1000, device="cuda")
    segments = ember.cuda.memory_snapshot()
    assert len(segments) == 1 and segments[0]["total_size"] == 2 * MiB
    assert segments[0]["blocks"][0]["state"] == "active_allocated"
    assert "Allocated memory" in ember.cuda.memory_summary()
    del x


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "uint8", "bool", "float16", "bfloat16"])
def test_host_device_round_trip(dtype):
    x = ember.arange(24).reshape(4, 6).to(getattr(ember, dtype))
    y = x.to("cuda")
    assert y.device == ember.device("cuda", 0) and y.dtype == x.dtype and y.shape == x.shape
    z = y.cpu()
    assert z.device.type == "cpu" and ember.equal(z, x)
    assert ember.equal(x.cuda().cpu(), x)


def test_copies_with_cast_and_strides():
    x = ember.arange(24, dtype=ember.float32).reshape(4, 6)
    y = ember.empty(6, 4, dtype=ember.float64, device="cuda")
    y.copy_(x.t())  # cast and transpose on the host side, one transfer
    assert ember.equal(y.cpu(), x.t().double())
    out = ember.empty(6, 4, dtype=ember.float32).t()  # strided host destination
    out.copy_(y.t())
    assert ember.equal(out, x)
    d = ember.empty(4, 6, device="cuda")
    d.copy_(y.t())  # device to device with a cast: the copy kernel
    assert ember.equal(d.cpu(), x)
    e = ember.empty(4, 6, device="cuda")
    e.copy_(d)  # same dtype, contiguous: one memcpy
    assert ember.equal(e.cpu(), x)
    b = ember.empty(3, 4, device="cuda")
    b.copy_(ember.tensor([1.0, 2.0, 3.0, 4.0]))  # broadcast from the host
    assert ember.equal(b.cpu(), ember.tensor([1.0, 2.0, 3.0, 4.0]).expand(3, 4))


def test_to_cuda_autograd():
    x = ember.ones(3, requires_grad=True)
    y = x.cuda()
    assert y.grad_fn.name() == "ToCopyBackward0"
    y.retain_grad()
    y.cpu().sum().backward()
    assert x.grad.device.type == "cpu" and ember.equal(x.grad, ember.ones(3))
    assert y.grad.device.type == "cuda"


def test_pinned_memory_and_non_blocking():
    x = ember.arange(1 << 16, dtype=ember.float32)
    assert not x.is_pinned()
    p = x.pin_memory()
    assert p.is_pinned() and ember.equal(p, x) and p.pin_memory() is p
    y = p.to("cuda", non_blocking=True)
    back = ember.empty_like(p).pin_memory()
    back.copy_(y, non_blocking=True)
    ember.cuda.synchronize()
    assert ember.equal(back, x)


def test_dataloader_pins_batches():
    data = ember.utils.data.TensorDataset(ember.arange(8.0))
    loader = ember.utils.data.DataLoader(data, batch_size=4, pin_memory=True)
    for (batch,) in loader:
        assert batch.is_pinned()


def test_cross_device_operands():
    a = ember.empty(2, device="cuda")
    b = ember.ones(2)
    with pytest.raises(RuntimeError) as info:
        a + b
    assert str(info.value) == (
        "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"
    )


def test_streams():
    default = ember.cuda.default_stream()
    assert ember.cuda.current_stream() == default and default.cuda_stream == 0
    s = ember.cuda.Stream()
    assert s != default and s.device == ember.device("cuda", 0)
    with ember.cuda.stream(s):
        assert ember.cuda.current_stream() == s
        x = ember.arange(1000.0).cuda()
    assert ember.cuda.current_stream() == default
    s.synchronize()
    assert s.query()
    least, greatest = ember.cuda.Stream.priority_range()
    assert ember.cuda.Stream(priority=-1).priority == greatest
    assert ember.cuda.Stream(priority=0).priority == least
    default.wait_stream(s)
    assert ember.equal(x.cpu(), ember.arange(1000.0))
    ember.cuda.set_stream(s)
    assert ember.cuda.current_stream() == s
    ember.cuda.set_stream(default)


def test_events():
    start = ember.cuda.Event(enable_timing=True)
    end = ember.cuda.Event(enable_timing=True)
    start.record()
    x = ember.empty(1 << 20, device="cuda")
    x.copy_(ember.ones(1 << 20))
    end.record()
    end.synchronize()
    assert end.query() and start.elapsed_time(end) >= 0.0
    assert repr(end).startswith("<torch.cuda.Event 0x")
    s = ember.cuda.Stream()
    event = s.record_event()
    ember.cuda.current_stream().wait_event(event)


def test_record_stream_defers_reuse():
    fresh(ember)
    s = ember.cuda.Stream()
    x = ember.empty(1000, device="cuda")
    x.record_stream(s)
    del x
    assert ember.cuda.memory_allocated() == 0
    ember.cuda.synchronize()
    y = ember.empty(1000, device="cuda")
    assert ember.cuda.memory_stats()["active.all.current"] == 1
    del y


def test_accelerator_and_device_queries():
    assert ember.accelerator.is_available() and ember.accelerator.current_accelerator() == ember.device("cuda")
    assert ember.accelerator.device_count() == ember.cuda.device_count() >= 1
    assert ember.accelerator.current_device_index() == 0
    ember.accelerator.synchronize()
    with ember.cuda.device(0):
        assert ember.cuda.current_device() == 0
    arch = ember.cuda.get_arch_list()
    assert arch == ember._C._cuda_arch_flags().split()
    major, minor = ember.cuda.get_device_capability()
    assert f"sm_{major}{minor}" in arch  # the default build (9.0+PTX) on an H100/H200
    if TORCH_CUDA:
        assert ember.cuda.get_device_name() == torch.cuda.get_device_name()


def test_numpy_round_trip_through_device():
    a = np.random.default_rng(0).standard_normal((5, 7)).astype(np.float32)
    assert np.array_equal(ember.from_numpy(a).cuda().cpu().numpy(), a)


def test_factories_allocate_on_the_requested_device():
    count = ember.cuda.device_count()
    for index in range(count):
        x = ember.empty(4, device=f"cuda:{index}")
        assert x.device == ember.device("cuda", index)
        assert ember.cuda.current_device() == 0  # the device is restored
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        ember.empty(4, device=f"cuda:{count}")
