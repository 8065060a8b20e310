#include "ember/python/PyGenerator.h"

#include "ember/python/Exceptions.h"
#include "ember/python/PyTypes.h"

namespace ember::python {

PyTypeObject* g_generator_type = nullptr;

namespace {

PyGeneratorObject* as_gen(PyObject* o) { return reinterpret_cast<PyGeneratorObject*>(o); }

PyObject* make(PyTypeObject* type, Generator g) {
  PyObject* obj = type->tp_alloc(type, 0);
  if (!obj) throw python_error();
  new (&as_gen(obj)->generator) Generator(std::move(g));
  return obj;
}

PyObject* gen_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  EMBER_PY_TRY
  static const char* kwlist[] = {"device", nullptr};
  PyObject* dev = nullptr;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:Generator", const_cast<char**>(kwlist), &dev)) return nullptr;
  Device d = dev && dev != Py_None ? parse_device(dev) : Device(DeviceType::CPU);
  EMBER_CHECK(d.is_cpu(), "Generator for device ", d.str(), " is not available: Ember was built without CUDA kernels");
  return make(type, Generator(make_intrusive<GeneratorImpl>(67280421310721ULL, d)));
  EMBER_PY_CATCH
}

void gen_dealloc(PyObject* self) {
  as_gen(self)->generator.~Generator();
  Py_TYPE(self)->tp_free(self);
}

PyObject* gen_manual_seed(PyObject* self, PyObject* seed) {
  EMBER_PY_TRY
  if (!PyLong_Check(seed)) throw TypeError(str_cat("manual_seed expected a long, but got ", Py_TYPE(seed)->tp_name));
  // Negative seeds wrap to 64 bits, as in PyTorch.
  uint64_t s;
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(seed, &overflow);
  if (overflow > 0) {
    s = PyLong_AsUnsignedLongLong(seed);
    if (PyErr_Occurred()) throw python_error();
  } else if (overflow < 0) {
    throw Error("Overflow when unpacking long");
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
  return device_object(as_gen(self)->generator->device);
  EMBER_PY_CATCH
}

PyMethodDef gen_methods[] = {{"manual_seed", gen_manual_seed, METH_O, nullptr},
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
}

}  // namespace ember::python
