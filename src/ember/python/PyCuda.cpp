// The CUDA runtime under PyTorch's torch._C names; ember.cuda builds its
// Stream, Event and memory functions on these. Each throws "ember was built
// without CUDA" in a build without the backend (ember.cuda checks first).
#include "ember/python/PyCuda.h"

#include <nanobind/stl/map.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>

#include "ember/ops/BuildInfo.h"
#include "ember/ops/CudaRuntime.h"
#include "ember/ops/Ops.h"
#include "ember/python/PyNanobind.h"

namespace nb = nanobind;

namespace ember::python {
namespace {

nb::tuple stream_tuple(uint64_t stream, int device) {
  return nb::make_tuple(stream, device, static_cast<int>(DeviceType::CUDA));
}

int current_or(int device) { return device < 0 ? cuda_hooks()->current_device() : device; }

nb::dict memory_stats(int device) {
  std::map<std::string, int64_t> counters;
  const auto nested = cuda_runtime().memory_stats(device, &counters);
  nb::dict out;
  for (const auto& [name, value] : counters) out[name.c_str()] = value;
  for (const auto& [name, groups] : nested) {
    nb::dict by_group;
    for (const auto& [group, values] : groups) {
      nb::dict stat;
      for (const auto& [key, v] : values) stat[key.c_str()] = v;
      if (group.empty()) {
        by_group = stat;  // oversize_*: a single stat, not per pool
      } else {
        by_group[group.c_str()] = stat;
      }
    }
    out[name.c_str()] = by_group;
  }
  return out;
}

nb::dict memory_snapshot() {
  nb::list segments;
  for (const CudaSegmentInfo& s : cuda_runtime().memory_snapshot()) {
    nb::dict seg;
    seg["device"] = s.device;
    seg["address"] = s.address;
    seg["total_size"] = s.total_size;
    seg["allocated_size"] = s.allocated_size;
    seg["active_size"] = s.active_size;
    seg["requested_size"] = s.requested_size;
    seg["stream"] = s.stream;
    seg["segment_type"] = s.segment_type;
    seg["segment_pool_id"] = nb::make_tuple(0, 0);
    seg["is_expandable"] = false;
    seg["frames"] = nb::list();
    nb::list blocks;
    uint64_t address = s.address;
    for (const CudaBlockInfo& b : s.blocks) {
      nb::dict block;
      block["address"] = address;
      block["size"] = b.size;
      block["requested_size"] = b.requested_size;
      block["state"] = b.state;
      block["frames"] = nb::list();
      blocks.append(block);
      address += static_cast<uint64_t>(b.size);
    }
    seg["blocks"] = blocks;
    segments.append(seg);
  }
  nb::dict out;
  out["segments"] = segments;
  out["device_traces"] = nb::list();
  return out;
}

}  // namespace

void init_cuda(nb::module_& m) {
  // torch.OutOfMemoryError (also torch.cuda.OutOfMemoryError).
  g_out_of_memory_error = PyErr_NewExceptionWithDoc(
      "torch.OutOfMemoryError", "Raised when a device runs out of memory.", PyExc_RuntimeError, nullptr);
  m.attr("OutOfMemoryError") = nb::handle(g_out_of_memory_error);

  m.def("_cuda_arch_flags", [] { return cuda_runtime().arch_flags(); });
  m.def("_cuda_cublas_version", [] { return cuda_runtime().cublas_version(); });

  // Streams travel as (stream_id, device_index, device_type); stream_id is the cudaStream_t.
  m.def("_cuda_getCurrentStream", [](int device) {
    device = current_or(device);
    return stream_tuple(cuda_runtime().current_stream(device), device);
  });
  m.def("_cuda_getDefaultStream", [](int device) { return stream_tuple(0, current_or(device)); });
  m.def(
      "_cuda_setStream",
      [](uint64_t stream_id, int device_index, int device_type) {
        (void)device_type;
        cuda_runtime().set_current_stream(current_or(device_index), stream_id);
      },
      nb::arg("stream_id"), nb::arg("device_index"), nb::arg("device_type"));
  m.def("_cuda_getStreamFromExternal", [](uint64_t ptr, int device) { return stream_tuple(ptr, current_or(device)); });
  m.def("_cuda_streamFromPool", [](int priority, int device) {
    device = current_or(device);
    return stream_tuple(cuda_runtime().stream_from_pool(device, priority), device);
  });
  m.def("_cuda_streamQuery", [](uint64_t stream, int device) { return cuda_runtime().stream_query(device, stream); });
  m.def("_cuda_streamSynchronize", [](uint64_t stream, int device) {
    nb::gil_scoped_release no_gil;
    cuda_runtime().stream_synchronize(device, stream);
  });
  m.def("_cuda_streamPriority",
        [](uint64_t stream, int device) { return cuda_runtime().stream_priority(device, stream); });
  m.def("_cuda_streamPriorityRange", [] { return cuda_runtime().stream_priority_range(); });

  // Events: integer handles owned by ember.cuda.Event.
  m.def("_cuda_eventCreate", [](int device, bool enable_timing, bool blocking, bool interprocess) {
    return cuda_runtime().event_create(device, enable_timing, blocking, interprocess);
  });
  m.def("_cuda_eventDestroy", [](int device, uint64_t event) { cuda_runtime().event_destroy(device, event); });
  m.def("_cuda_eventRecord",
        [](int device, uint64_t event, uint64_t stream) { cuda_runtime().event_record(device, event, stream); });
  m.def("_cuda_eventWait",
        [](int device, uint64_t event, uint64_t stream) { cuda_runtime().event_wait(device, event, stream); });
  m.def("_cuda_eventQuery", [](uint64_t event) { return cuda_runtime().event_query(event); });
  m.def("_cuda_eventSynchronize", [](uint64_t event) {
    nb::gil_scoped_release no_gil;
    cuda_runtime().event_synchronize(event);
  });
  m.def("_cuda_eventElapsedTime",
        [](uint64_t start, uint64_t end) { return cuda_runtime().event_elapsed_ms(start, end); });

  // The caching allocator.
  m.def("_cuda_memoryStats", [](int device) { return memory_stats(current_or(device)); });
  m.def("_cuda_resetPeakMemoryStats", [](int device) { cuda_runtime().reset_peak_memory_stats(current_or(device)); });
  m.def("_cuda_resetAccumulatedMemoryStats",
        [](int device) { cuda_runtime().reset_accumulated_memory_stats(current_or(device)); });
  m.def("_cuda_emptyCache", [] { cuda_runtime().empty_cache(); });
  m.def("_cuda_setMemoryFraction",
        [](double fraction, int device) { cuda_runtime().set_memory_fraction(fraction, current_or(device)); });
  m.def("_cuda_getMemoryFraction", [](int device) { return cuda_runtime().memory_fraction(current_or(device)); });
  m.def("_cuda_memGetInfo", [](int device) { return cuda_runtime().mem_get_info(current_or(device)); });
  m.def("_cuda_memorySnapshot", [](nb::handle) { return memory_snapshot(); });
  m.def("_cuda_getAllocatorBackend", [] { return std::string("native"); });
  m.def("_cuda_cudaCachingAllocator_raw_alloc",
        [](int64_t size, uint64_t stream) { return cuda_runtime().raw_alloc(size, stream); });
  m.def("_cuda_cudaCachingAllocator_raw_delete", [](uint64_t ptr) { cuda_runtime().raw_delete(ptr); });
  m.def("_cuda_recordStream", [](const Tensor& t, uint64_t stream) {
    const Storage& storage = t.unsafeGetTensorImpl()->storage();
    cuda_runtime().record_stream(storage->data(), t.device().index, stream);
  });

  // Pinned host memory.
  m.def("_cuda_pinMemory", [](const Tensor& t) {
    EMBER_CHECK(t.is_cpu(), "cannot pin '", t.type_name(), "' only dense CPU tensors can be pinned");
    Allocator* pinned = cuda_runtime().pinned_allocator();
    const size_t nbytes = storage_nbytes(t.sizes(), t.strides(), t.element_size());
    auto storage = make_intrusive<StorageImpl>(nbytes, pinned);
    Tensor out(make_intrusive<TensorImpl>(std::move(storage), t.dtype(), t.sizes(), t.strides(), 0));
    out.copy_(t);
    return out;
  });
  m.def("_cuda_isPinned",
        [](const Tensor& t) { return t.is_cpu() && cuda_runtime_or_null() && cuda_runtime().is_pinned(t.data_ptr()); });
}

}  // namespace ember::python
