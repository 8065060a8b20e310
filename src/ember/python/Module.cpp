// ember._C: the extension's contents. The module object is created by
// nanobind; the tiny _C stub (stub.c) only forwards to the init function here.
#if defined(__x86_64__) || defined(_M_X64)
#include <xmmintrin.h>
#endif

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <string>
#include <vector>

#include "ember/autograd/AutogradMeta.h"
#include "ember/autograd/Engine.h"
#include "ember/autograd/GradMode.h"
#include "ember/autograd/GraphHooks.h"
#include "ember/cpu/GroupedOps.h"
#include "ember/cpu/Sleef.h"
#include "ember/cpu/SparseCompressedOps.h"
#include "ember/ops/BuildInfo.h"
#include "ember/ops/CudaRuntime.h"
#include "ember/ops/DispatchStub.h"
#include "ember/ops/MatmulPrecision.h"
#include "ember/ops/Ops.h"
#include "ember/ops/Parallel.h"
#include "ember/ops/TensorIterator.h"
#include "ember/python/ArgParser.h"
#include "ember/python/PyAutocast.h"
#include "ember/python/PyAutograd.h"
#include "ember/python/PyCuda.h"
#include "ember/python/PyCudnn.h"
#include "ember/python/PyFactories.h"
#include "ember/python/PyForwardAD.h"
#include "ember/python/PyGenerator.h"
#include "ember/python/PyInterop.h"
#include "ember/python/PyNanobind.h"
#include "ember/python/PyProfiler.h"
#include "ember/python/PyTensor.h"
#include "ember/python/PyTorchFunction.h"
#include "ember/python/PyTypes.h"

namespace nb = nanobind;

namespace ember::python {

extern PyObject* g_size_class;
void register_generated_0(std::vector<PyMethodDef>& functions, std::vector<PyMethodDef>& methods);
void register_generated_1(std::vector<PyMethodDef>& functions, std::vector<PyMethodDef>& methods);
void register_aten_0(std::vector<PyMethodDef>& functions);
void register_aten_1(std::vector<PyMethodDef>& functions);

void add_generated_methods(std::vector<PyMethodDef>& methods) {
  std::vector<PyMethodDef> unused;
  register_generated_0(unused, methods);
  register_generated_1(unused, methods);
}

namespace {

// C++ code (an extension) that runs backward must release the GIL first.
void refuse_engine_with_gil() {
  if (Py_IsInitialized() && PyGILState_Check()) {
    throw Error(
        "The autograd engine was called while holding the GIL. If you are using the C++ API, the autograd engine is "
        "an expensive operation that does not require the GIL to be held so you should release it with "
        "'pybind11::gil_scoped_release no_gil;'. If you are not using the C++ API, please report a bug to the "
        "pytorch team.");
  }
}

// The Python stack as text, for nodes made in anomaly mode (up to the
// caller of the operator, see anomaly_mode._forward_trace).
std::string python_stack() {
  PyGILState_STATE gil = PyGILState_Ensure();
  std::string text;
  PyObject* mod = PyImport_ImportModule("ember.autograd.anomaly_mode");
  PyObject* trace = mod ? PyObject_CallMethod(mod, "_forward_trace", nullptr) : nullptr;
  if (trace && PyUnicode_Check(trace)) text = PyUnicode_AsUTF8(trace);
  Py_XDECREF(trace);
  Py_XDECREF(mod);
  if (PyErr_Occurred()) PyErr_Clear();
  PyGILState_Release(gil);
  return text;
}

std::string show_config() {
  std::string s = "Ember built with:\n";
  s += "  - " EMBER_COMPILER_ID " " EMBER_COMPILER_VERSION "\n";
  s += "  - C++ Version: " + std::to_string(__cplusplus) + "\n";
  s += "  - BLAS: " + std::string(blas_info()) + "\n";
  s += "  - " + sleef_info() + "\n";
  s += std::string("  - ") + (*onednn_info() ? onednn_info() : "oneDNN: not built") + "\n";
  s += "  - " + (openmp_info().empty() ? std::string("OpenMP: disabled") : openmp_info()) + "\n";
  s += std::string("  - CPU capability usage: ") + cpu_capability_name(cpu_capability()) + "\n";
  s += std::string("  - CPU capabilities compiled: ") + compiled_cpu_capabilities() + "\n";
  s += std::string("  - CUDA: ") + (cuda_version().empty() ? "not built" : "Runtime " + cuda_version()) + "\n";
  if (const CudaRuntime* cuda = cuda_runtime_or_null()) {
    s += "  - NVCC architecture flags: " + cuda->arch_flags() + "\n";
    s += "  - cuBLAS " + cuda->cublas_version() + "\n";
  }
  s += "  - Build settings: " EMBER_BUILD_SETTINGS "\n";
  return s;
}

void register_exception_translators() {
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (...) {
      translate_exception();
    }
  });
}

// ember::warn() as a Python UserWarning (an error when warnings are errors).
void user_warning(const std::string& msg) {
  PyGILState_STATE gil = PyGILState_Ensure();
  const int rc = PyErr_WarnEx(PyExc_UserWarning, msg.c_str(), 1);
  PyGILState_Release(gil);
  if (rc < 0) throw python_error();
}

}  // namespace

// Note [Flushing denormals]
// torch.set_flush_denormal: on x86 the MXCSR's flush-to-zero (results) and
// denormals-are-zero (inputs) bits, on AArch64 the FPCR's FZ bit; the setting
// belongs to the calling thread, as PyTorch's does. False where neither exists.
static bool set_flush_denormal(bool on) {
#if defined(__x86_64__) || defined(_M_X64)
  constexpr unsigned kFlushToZero = 0x8000, kDenormalsAreZero = 0x0040;
  unsigned csr = _mm_getcsr();
  csr = on ? (csr | kFlushToZero | kDenormalsAreZero) : (csr & ~(kFlushToZero | kDenormalsAreZero));
  _mm_setcsr(csr);
  return true;
#elif defined(__aarch64__)
  constexpr uint64_t kFlushToZero = uint64_t{1} << 24;
  uint64_t fpcr;
  __asm__ __volatile__("mrs %0, fpcr" : "=r"(fpcr));
  fpcr = on ? (fpcr | kFlushToZero) : (fpcr & ~kFlushToZero);
  __asm__ __volatile__("msr fpcr, %0" : : "r"(fpcr));
  return true;
#else
  (void)on;
  return false;
#endif
}

void init_module(nb::module_& m) {
  PyObject* mod = m.ptr();
  register_exception_translators();
  set_warning_handler(&user_warning);
  autograd::set_engine_entry_check(&refuse_engine_with_gil);
  init_dtype_and_device(mod);
  init_tensor_type(mod);
  init_autograd(mod);
  init_generator(mod);
  init_numpy(mod);
  init_dlpack(mod);
  init_storage(mod);
  init_extension_api(mod);
  init_factories(m);
  init_autocast(m);
  init_profiler(m);
  init_forward_ad(m);
  init_arg_checks(mod);
  init_cuda(m);
  init_cudnn(m);
  torch_function::init(m);
#ifdef EMBER_USE_DISTRIBUTED
  init_distributed(m);
#endif

  static std::vector<PyMethodDef> functions;
  std::vector<PyMethodDef> unused;
  register_generated_0(functions, unused);
  register_generated_1(functions, unused);
  functions.push_back({nullptr, nullptr, 0, nullptr});
  // torch.add & co. live in _C._VariableFunctions, as in PyTorch.
  static PyModuleDef vf_def = {PyModuleDef_HEAD_INIT, "ember._C._VariableFunctions", nullptr, -1, functions.data()};
  PyObject* vf = PyModule_Create(&vf_def);
  if (!vf) throw nb::python_error();
  PyModule_AddObject(mod, "_VariableFunctions", vf);

  // ember.ops.aten's operators: "name" (the packet) and "name.overload".
  static std::vector<PyMethodDef> aten_functions;
  register_aten_0(aten_functions);
  register_aten_1(aten_functions);
  aten_functions.push_back({nullptr, nullptr, 0, nullptr});
  static PyModuleDef aten_def = {PyModuleDef_HEAD_INIT, "ember._C._aten", nullptr, -1, aten_functions.data()};
  PyObject* aten = PyModule_Create(&aten_def);
  if (!aten) throw nb::python_error();
  PyModule_AddObject(mod, "_aten", aten);

  // PyTorch's aliases (torch.arctan, Tensor.absolute) are functions of their
  // own name: fx names nodes and finds qualified names by __name__.
  m.def(
      "_renamed_builtin",
      [](nb::handle fn, const std::string& name, nb::handle owner, const std::string& module_name) -> nb::object {
        PyObject* obj = fn.ptr();
        const PyMethodDef* def = nullptr;
        if (PyCFunction_Check(obj))
          def = reinterpret_cast<PyCFunctionObject*>(obj)->m_ml;
        else if (Py_IS_TYPE(obj, &PyMethodDescr_Type))
          def = reinterpret_cast<PyMethodDescrObject*>(obj)->d_method;
        if (def == nullptr) throw nb::type_error("_renamed_builtin expects a builtin function or method descriptor");
        // Lives as long as the process, as the generated tables do: held by a
        // table that is never destroyed, so it stays reachable.
        struct Renamed {
          PyMethodDef def;
          std::string name;
        };
        static auto* renamed_defs = new std::vector<std::unique_ptr<Renamed>>();
        renamed_defs->push_back(std::make_unique<Renamed>(Renamed{*def, name}));
        PyMethodDef* renamed = &renamed_defs->back()->def;
        renamed->ml_name = renamed_defs->back()->name.c_str();
        PyObject* out = nullptr;
        if (PyCFunction_Check(obj)) {
          // A module function's self becomes a module named after the alias, so
          // __torch_function__ receives the alias (ArgParser::parse); it pickles
          // as ember.<alias>.
          auto* f = reinterpret_cast<PyCFunctionObject*>(obj);
          nb::object self = nb::borrow(f->m_self), module = nb::borrow(f->m_module);
          if (PyModule_Check(f->m_self)) {
            self = nb::steal(PyModule_New(name.c_str()));
            module = nb::str(module_name.c_str());
            if (!self.is_valid()) throw nb::python_error();
          }
          out = PyCFunction_NewEx(renamed, self.ptr(), module.ptr());
        } else {
          // Owned by the class that holds the alias, so that it pickles.
          PyTypeObject* type = PyType_Check(owner.ptr()) ? reinterpret_cast<PyTypeObject*>(owner.ptr())
                                                         : reinterpret_cast<PyMethodDescrObject*>(obj)->d_common.d_type;
          out = PyDescr_NewMethod(type, renamed);
        }
        if (out == nullptr) throw nb::python_error();
        return nb::steal(out);
      },
      nb::arg("fn"), nb::arg("name"), nb::arg("owner"), nb::arg("module_name") = "ember");
  m.def("_set_tensor_class", [](nb::handle cls) {
    Py_INCREF(cls.ptr());
    g_tensor_class = cls.ptr();
  });
  m.def("_set_size_class", [](nb::handle cls) {
    Py_INCREF(cls.ptr());
    g_size_class = cls.ptr();
  });
  m.def("_show_config", &show_config);
  m.attr("_build_settings") = EMBER_BUILD_SETTINGS;  // without loading the BLAS and oneDNN, as _show_config does
  m.def("_get_float32_matmul_precision", [] { return std::string(float32_matmul_precision_name()); });
  m.def("_set_float32_matmul_precision",
        [](const std::string& name) { return ember::set_float32_matmul_precision(name); });
  m.def("_tensor_from_flat", [](nb::list values, std::vector<int64_t> shape, nb::handle dtype) {
    ScalarType t = parse_dtype(dtype.ptr());
    Tensor out = empty(shape, t);
    EMBER_DISPATCH_ALL_TYPES(t, "tensor", [&] {
      auto* p = static_cast<scalar_t*>(out.data_ptr());
      size_t n = nb::len(values);
      for (size_t i = 0; i < n; ++i) {
        PyObject* v = PyList_GET_ITEM(values.ptr(), i);
        if (PyFloat_Check(v)) {
          p[i] = convert<scalar_t>(PyFloat_AS_DOUBLE(v));
        } else if (PyBool_Check(v)) {
          p[i] = convert<scalar_t>(v == Py_True);
        } else {
          int overflow = 0;
          long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
          if (overflow) throw Error("Overflow when unpacking long");
          p[i] = convert<scalar_t>(static_cast<int64_t>(x));
        }
      }
    });
    return out;
  });
  m.def("_histogramdd_counts", [](const Tensor& points, std::vector<Tensor> edges, std::optional<Tensor> weight,
                                  bool linear) { return native::histogramdd_counts(points, edges, weight, linear); });
  m.def("_histogramdd_extremes", [](const Tensor& points) { return native::histogramdd_extremes(points); });
  m.def("_segment_ids", [](const Tensor& bounds, int64_t size) { return native::segment_ids(bounds, size); });
  m.def("_csr_dense_mm", [](const Tensor& crow, const Tensor& col, const Tensor& values, const Tensor& dense) {
    return native::csr_dense_mm(crow, col, values, dense);
  });
  m.def("_csr_sampled_dot", [](const Tensor& crow, const Tensor& col, const Tensor& a, const Tensor& b) {
    return native::csr_sampled_dot(crow, col, a, b);
  });
  m.def("_cpu_capability", [] { return std::string(cpu_capability_name(cpu_capability())); });
  m.def("_blas_info", [] { return std::string(blas_info()); });
  m.def("_cuda_version", [] { return cuda_version(); });
  m.def("_cuda_device_count", [] { return cuda_device_count(); });
  // The CUDA runtime, by the names of PyTorch's torch._C; ember.cuda calls them only in a CUDA build.
  const auto hooks = [] {
    const CudaHooks* h = cuda_hooks();
    if (!h) throw Error("ember was built without CUDA");
    return h;
  };
  m.def("_cuda_init", [hooks] {
    const std::string reason = hooks()->init_error();
    if (!reason.empty()) throw Error(reason);
  });
  m.def("_cuda_getDevice", [hooks] { return hooks()->current_device(); });
  m.def("_cuda_setDevice", [hooks](int index) { hooks()->set_device(index); });
  m.def("_cuda_synchronize", [hooks] { hooks()->synchronize(); });
  m.def("_cuda_getDeviceProperties", [hooks](int index) {
    const CudaDeviceProperties p = hooks()->device_properties(index);
    return nb::make_tuple(p.name, p.major, p.minor, p.total_memory, p.multi_processor_count);
  });
  m.def("_cpu_cached_bytes", &cpu_cached_bytes);
  m.def("_cpu_release_cached_blocks", &cpu_release_cached_blocks);
  m.def("get_num_threads", &get_num_threads);
  m.def("set_num_threads", [](int n) {
    if (n <= 0) throw ValueError("set_num_threads expects a positive integer");
    set_num_threads(n);
  });
  m.def("get_default_dtype", [] { return nb::borrow(dtype_object(get_default_dtype())); });
  m.def("set_default_dtype", [](nb::handle d) { set_default_dtype(parse_dtype(d.ptr())); });
  m.def("_get_default_device", [] { return nb::steal(device_object(get_default_device())); });
  m.def("_set_default_device", [](nb::handle d) { set_default_device(parse_device(d.ptr())); });
  // The dtype an elementwise op of two tensors or numbers computes in.
  m.def("_result_type", [](nb::handle a, nb::handle b) {
    const Tensor x = is_tensor(a.ptr()) ? unpack_tensor(a.ptr()) : scalar_to_tensor(a.ptr());
    const Tensor y = is_tensor(b.ptr()) ? unpack_tensor(b.ptr()) : scalar_to_tensor(b.ptr());
    return nb::borrow(dtype_object(result_type({&x, &y})));
  });
  m.def(
      "promote_types",
      [](nb::handle a, nb::handle b) {
        if (!is_dtype(a.ptr()) || !is_dtype(b.ptr())) {
          throw TypeError("promote_types(): argument 'type1' must be torch.dtype");
        }
        return nb::borrow(dtype_object(promote_types(dtype_of(a.ptr()), dtype_of(b.ptr()))));
      },
      nb::arg("type1"), nb::arg("type2"));

  // autograd
  m.def("is_grad_enabled", [] { return autograd::GradMode::is_enabled(); });
  m.def("_set_grad_enabled", [](bool v) { autograd::GradMode::set_enabled(v); });
  autograd::AnomalyMode::set_trace_capture(&python_stack);
  m.def("is_anomaly_enabled", [] { return autograd::AnomalyMode::is_enabled(); });
  m.def("is_anomaly_check_nan_enabled", [] { return autograd::AnomalyMode::should_check_nan(); });
  m.def(
      "_set_anomaly_enabled", [](bool on, bool check_nan) { autograd::AnomalyMode::set_enabled(on, check_nan); },
      nb::arg("enabled"), nb::arg("check_nan") = true);
  m.def("_take_anomaly_report", []() -> nb::object {
    auto r = autograd::take_anomaly_report();
    if (!r) return nb::none();
    return nb::make_tuple(r->node_name, r->forward_trace);
  });
  m.def("_set_flush_denormal", &set_flush_denormal);
  m.def("is_inference_mode_enabled", [] { return autograd::InferenceMode::is_enabled(); });
  m.def("_set_inference_mode", [](bool v) { autograd::InferenceMode::set_enabled(v); });
  m.def("_is_grad_layout_enforcement_enabled", [] { return autograd::GradLayoutPolicy::is_enforced(); });
  m.def("_set_grad_layout_enforcement_enabled", [](bool v) { autograd::GradLayoutPolicy::set_enforced(v); });
  // torch.autograd.graph: a tensor's gradient edge (node, input_nr), and
  // whether the running backward will execute a node.
  m.def("_gradient_edge", [](const Tensor& t) {
    autograd::Edge e = autograd::gradient_edge(t);
    return nb::make_tuple(nb::steal(wrap_node(e.function)), e.input_nr);
  });
  m.def("_current_graph_task_id", [] { return autograd::current_graph_task_id(); });
  m.def("_will_engine_execute_node", [](nb::handle node) {
    std::shared_ptr<autograd::Node> n = node_of(node.ptr());
    EMBER_CHECK(n, "_will_engine_execute_node expects a graph node");
    std::optional<bool> r = autograd::will_engine_execute_node(n.get());
    EMBER_CHECK(r.has_value(), "_will_engine_execute_node should only be called during the backward pass");
    return *r;
  });
  // torch.autograd.graph.increment_version: bumps the version counter shared by a tensor's views.
  m.def("_increment_version", [](const Tensor& t) { t.unsafeGetTensorImpl()->bump_version(); });
  m.def(
      "_run_backward",
      [](std::vector<Tensor> tensors, std::vector<std::optional<Tensor>> grads, std::optional<bool> retain_graph,
         bool create_graph, std::vector<Tensor> inputs) {
        std::vector<Tensor> g;
        for (auto& x : grads) g.push_back(x ? *x : Tensor());
        nb::gil_scoped_release no_gil;
        autograd::backward(tensors, g, retain_graph, create_graph, inputs);
      },
      nb::arg("tensors"), nb::arg("grad_tensors"), nb::arg("retain_graph").none(), nb::arg("create_graph"),
      nb::arg("inputs"));
  m.def(
      "_autograd_grad",
      [](std::vector<Tensor> outputs, std::vector<Tensor> inputs, std::vector<std::optional<Tensor>> grads,
         std::optional<bool> retain_graph, bool create_graph, bool allow_unused) {
        std::vector<Tensor> g;
        for (auto& x : grads) g.push_back(x ? *x : Tensor());
        std::vector<Tensor> r;
        {
          nb::gil_scoped_release no_gil;
          r = autograd::grad(outputs, inputs, g, retain_graph, create_graph, allow_unused);
        }
        nb::list out;
        for (auto& t : r) out.append(t.defined() ? nb::steal(wrap(t)) : nb::none());
        return nb::tuple(out);
      },
      nb::arg("outputs"), nb::arg("inputs"), nb::arg("grad_outputs"), nb::arg("retain_graph").none(),
      nb::arg("create_graph"), nb::arg("allow_unused"));
  m.attr("_GLIBCXX_USE_CXX11_ABI") = true;
}

}  // namespace ember::python

// The _C stub calls this; renaming keeps PyInit__C itself in the stub.
#define PyInit__C ember_python_PyInit__C
NB_MODULE(_C, m) { ember::python::init_module(m); }
