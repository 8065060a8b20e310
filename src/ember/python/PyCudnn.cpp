#include "ember/python/PyCudnn.h"

#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include "ember/ops/CudnnSettings.h"

namespace nb = nanobind;

namespace ember::python {

void init_cudnn(nb::module_& m) {
  // (version or -1, why it is unavailable): the build's cuDNN support and the library found at run time.
  m.def("_cudnn_status", []() -> std::tuple<long, std::string> {
    const CudnnLibrary* lib = cudnn_library();
    if (lib == nullptr) return {-1, "this build has no cuDNN support"};
    const long v = lib->version();
    return {v, v < 0 ? lib->load_error() : std::string()};
  });
  m.def("_cudnn_add_search_dir", [](const std::string& dir) {
    if (const CudnnLibrary* lib = cudnn_library()) lib->add_search_dir(dir);
  });
  m.def("_cudnn_get_flags", [] {
    const CudnnSettings s = cudnn_settings();
    return std::make_tuple(s.enabled, s.benchmark, s.deterministic, s.allow_tf32, s.benchmark_limit);
  });
  m.def("_cudnn_set_flags", [](bool enabled, bool benchmark, bool deterministic, bool allow_tf32, int limit) {
    set_cudnn_settings(CudnnSettings{enabled, benchmark, deterministic, allow_tf32, limit});
  });
  m.def("_get_mkldnn_enabled", [] { return user_enabled_onednn(); });
  m.def("_set_mkldnn_enabled", [](bool on) { set_user_enabled_onednn(on); });
  m.def("_set_deterministic_algorithms_native", [](bool on) { set_deterministic_algorithms(on); });
}

}  // namespace ember::python
