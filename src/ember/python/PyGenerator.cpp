#include "ember/python/PyGenerator.h"

#include <cctype>
#include <cstring>

#include "ember/ops/BuildInfo.h"
#include "ember/ops/Ops.h"
#include "ember/python/Exceptions.h"
#include "ember/python/PyTensor.h"
#include "ember/python/PyTypes.h"

namespace ember::python {

PyTypeObject* g_generator_type = nullptr;

namespace {

PyGeneratorObject* as_gen(PyObject* o) { return reinterpret_cast<PyGeneratorObject*>(o); }

PyObject* make(PyTypeObject* type, Generator g) {
  PyObject* obj = type->tp_alloc(type, 0);
  if (!obj) throw python_error();
  new (&as_gen(obj)->generator) Generator(std::move(g));
  as_gen(obj)->device_without_index = false;
  return obj;
}

// PyTorch's error for a generator of a device type without one in a CPU build.
std::string no_generator_message(DeviceType t) {
  switch (t) {
    case DeviceType::XPU: return "Cannot get XPU generator without ATen_xpu library.";
    case DeviceType::MPS: return "Cannot execute getNewGenerator() without MPS backend.";
    case DeviceType::MTIA: return "Cannot execute getNewGenerator() without MTIA backend.";
    case DeviceType::HIP:
    case DeviceType::HPU: return "Backend doesn`t support getNewGenerator()";
    case DeviceType::XLA:
      return "Cannot get XLA generator without torch_xla library. This error has occurred because you are trying to "
             "use some XLA functionality, but the XLA library has not been loaded by the dynamic linker. You must "
             "load xla libraries by `import torch_xla`";
    case DeviceType::PrivateUse1:
      return "Please register PrivateUse1HooksInterface by `RegisterPrivateUse1HooksInterface` first.";
    default: {
      std::string name = device_type_name(t);
      for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      return name + " device type not an accelerator.";
    }
  }
}

PyObject* gen_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  EMBER_PY_TRY
  static const char* kwlist[] = {"device", nullptr};
  PyObject* dev = nullptr;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:Generator", const_cast<char**>(kwlist), &dev)) return nullptr;
  Device d = dev && dev != Py_None ? parse_device(dev) : Device(DeviceType::CPU);
  if (d.is_cuda()) {
    const CudaHooks* hooks = cuda_hooks();
    EMBER_CHECK(hooks, "Generator for device ", d.str(), " is not available: Ember was built without CUDA kernels");
    const bool without_index = d.index < 0;
    if (without_index) d.index = static_cast<int8_t>(hooks->current_device());
    PyObject* gen = make(type, Generator(make_intrusive<GeneratorImpl>(67280421310721ULL, d)));
    as_gen(gen)->device_without_index = without_index;
    return gen;
  }
  if (!d.is_cpu()) throw Error(no_generator_message(d.type));
  return make(type, Generator(make_intrusive<GeneratorImpl>(67280421310721ULL, d)));
  EMBER_PY_CATCH
}

void gen_dealloc(PyObject* self) {
  as_gen(self)->generator.~Generator();
  Py_TYPE(self)->tp_free(self);
}

PyObject* gen_manual_seed(PyObject* self, PyObject* seed) {
  EMBER_PY_TRY
  if (!PyLong_Check(seed) || PyBool_Check(seed)) {
    throw Error(str_cat("manual_seed expected a long, but got ", Py_TYPE(seed)->tp_name));
  }
  // Seeds in [-2^63, 2^64) are accepted; negative ones wrap to 64 bits, as in PyTorch.
  uint64_t s;
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(seed, &overflow);
  if (overflow > 0) {
    s = PyLong_AsUnsignedLongLong(seed);
    if (PyErr_Occurred()) {
      PyErr_Clear();
      throw ValueError("Overflow when unpacking long long");
    }
  } else if (overflow < 0) {
    throw ValueError("Overflow when unpacking long long");
  } else {
    s = static_cast<uint64_t>(v);
  }
  GeneratorImpl* g = as_gen(self)->generator.get();
  std::lock_guard<std::mutex> lock(g->mutex);
  g->set_current_seed(s);
  Py_INCREF(self);
  return self;
  EMBER_PY_CATCH
}

// The state as a new uint8 tensor (PyTorch's byte layout).
PyObject* gen_get_state(PyObject* self, PyObject*) {
  EMBER_PY_TRY
  GeneratorImpl* g = as_gen(self)->generator.get();
  std::vector<uint8_t> bytes;
  {
    std::lock_guard<std::mutex> lock(g->mutex);
    bytes = g->get_state();
  }
  Tensor t = empty({static_cast<int64_t>(bytes.size())}, ScalarType::Byte);
  std::memcpy(t.data_ptr(), bytes.data(), bytes.size());
  return wrap(std::move(t));
  EMBER_PY_CATCH
}

PyObject* gen_set_state(PyObject* self, PyObject* state) {
  EMBER_PY_TRY
  if (!is_tensor(state)) throw TypeError(str_cat("expected a torch.ByteTensor, but got ", Py_TYPE(state)->tp_name));
  const Tensor& t = unpack_tensor(state);
  if (t.dtype() != ScalarType::Byte || !t.is_cpu()) throw TypeError("RNG state must be a torch.ByteTensor");
  EMBER_CHECK(t.is_contiguous(), "RNG state must be contiguous");
  GeneratorImpl* g = as_gen(self)->generator.get();
  {
    std::lock_guard<std::mutex> lock(g->mutex);
    g->set_state(static_cast<const uint8_t*>(t.data_ptr()), static_cast<size_t>(t.numel()));
  }
  Py_INCREF(self);
  return self;
  EMBER_PY_CATCH
}

PyObject* gen_seed(PyObject* self, PyObject*) {
  EMBER_PY_TRY
  GeneratorImpl* g = as_gen(self)->generator.get();
  std::lock_guard<std::mutex> lock(g->mutex);
  return PyLong_FromUnsignedLongLong(g->seed());
  EMBER_PY_CATCH
}

PyObject* gen_initial_seed(PyObject* self, PyObject*) {
  return PyLong_FromUnsignedLongLong(as_gen(self)->generator->current_seed());
}

PyObject* gen_device(PyObject* self, void*) {
  EMBER_PY_TRY
  const Device d = as_gen(self)->generator->device;
  return device_object(as_gen(self)->device_without_index ? Device(d.type, -1) : d);
  EMBER_PY_CATCH
}

// The default generators of the CUDA devices, one per device.
PyObject* cuda_default_generators(PyObject*, PyObject*) {
  EMBER_PY_TRY
  const CudaHooks* hooks = cuda_hooks();
  const int n = hooks ? hooks->device_count() : 0;
  PyObject* tuple = PyTuple_New(n);
  if (!tuple) throw python_error();
  for (int i = 0; i < n; ++i) {
    PyObject* g = make(g_generator_type, default_cuda_generator(i));
    if (!g) {
      Py_DECREF(tuple);
      throw python_error();
    }
    PyTuple_SET_ITEM(tuple, i, g);
  }
  return tuple;
  EMBER_PY_CATCH
}

PyMethodDef module_methods[] = {{"_cuda_default_generators", cuda_default_generators, METH_NOARGS, nullptr},
                                {nullptr, nullptr, 0, nullptr}};

PyMethodDef gen_methods[] = {{"manual_seed", gen_manual_seed, METH_O, nullptr},
                             {"get_state", gen_get_state, METH_NOARGS, nullptr},
                             {"set_state", gen_set_state, METH_O, nullptr},
                             {"seed", gen_seed, METH_NOARGS, nullptr},
                             {"initial_seed", gen_initial_seed, METH_NOARGS, nullptr},
                             {nullptr, nullptr, 0, nullptr}};
PyGetSetDef gen_getset[] = {{"device", gen_device, nullptr, nullptr, nullptr},
                            {nullptr, nullptr, nullptr, nullptr, nullptr}};

}  // namespace

void init_generator(PyObject* module) {
  static PyTypeObject type = {PyVarObject_HEAD_INIT(nullptr, 0)};
  type.tp_name = "ember._C.Generator";
  type.tp_basicsize = sizeof(PyGeneratorObject);
  type.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE;
  type.tp_new = gen_new;
  type.tp_dealloc = gen_dealloc;
  type.tp_methods = gen_methods;
  type.tp_getset = gen_getset;
  if (PyType_Ready(&type) < 0) throw python_error();
  g_generator_type = &type;
  PyModule_AddObjectRef(module, "Generator", reinterpret_cast<PyObject*>(&type));
  PyObject* def = make(&type, default_cpu_generator());
  PyModule_AddObject(module, "default_generator", def);
  if (PyModule_AddFunctions(module, module_methods) < 0) throw python_error();
}

}  // namespace ember::python
