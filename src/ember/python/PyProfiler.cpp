// Recording from Python: start/stop, and user scopes (record_function).
#include "ember/python/PyProfiler.h"

#include <nanobind/stl/string.h>

#include <memory>
#include <unordered_map>

#include "ember/autograd/Profiler.h"

namespace nb = nanobind;

namespace ember::python {
namespace {

// Open record_function scopes by handle.
std::unordered_map<int64_t, std::unique_ptr<profiler::RecordScope>>& open_scopes() {
  static std::unordered_map<int64_t, std::unique_ptr<profiler::RecordScope>> scopes;
  return scopes;
}
int64_t g_next_handle = 1;

}  // namespace

void init_profiler(nb::module_& m) {
  m.def("_profiler_start", &profiler::start, nb::arg("record_shapes"));
  m.def("_profiler_is_active", &profiler::is_active);
  // Events as (name, start_us, end_us, thread, input_shapes), in start order.
  m.def("_profiler_stop", [] {
    std::vector<profiler::Event> events;
    {
      nb::gil_scoped_release no_gil;
      events = profiler::stop();
    }
    nb::list out;
    for (const auto& e : events) {
      nb::list shapes;
      for (const auto& s : e.input_shapes) {
        nb::list one;
        for (int64_t d : s) one.append(d);
        shapes.append(one);
      }
      out.append(nb::make_tuple(e.name, e.start_ns / 1000.0, e.end_ns / 1000.0, e.thread, shapes));
    }
    return out;
  });
  m.def("_record_function_enter", [](const std::string& name) -> int64_t {
    if (!profiler::is_active()) return 0;
    const int64_t h = g_next_handle++;
    open_scopes().emplace(h, std::make_unique<profiler::RecordScope>(name));
    return h;
  });
  m.def("_record_function_exit", [](int64_t handle) { open_scopes().erase(handle); });
}

}  // namespace ember::python
