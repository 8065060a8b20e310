#include "ember/python/PyAutograd.h"

#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>

#include "ember/autograd/AutogradMeta.h"
#include "ember/autograd/GraphHooks.h"
#include "ember/python/Exceptions.h"
#include "ember/python/PyTensor.h"
#include "ember/python/PyTypes.h"

namespace ember::python {

namespace {

struct PyNodeObject {
  PyObject_HEAD std::shared_ptr<autograd::Node> node;
  std::weak_ptr<autograd::Node> weak_node;  // a custom Function's ctx: its node owns it
  PyObject* dict;
};

PyTypeObject* g_node_base = nullptr;
std::unordered_map<std::string, PyObject*> g_node_types;  // node name -> Python type

PyNodeObject* as_node(PyObject* o) { return reinterpret_cast<PyNodeObject*>(o); }

void node_dealloc(PyObject* self) {
  PyObject_GC_UnTrack(self);
  auto* n = as_node(self);
  Py_CLEAR(n->dict);
  if (n->node && n->node->pyobj == self) n->node->pyobj = nullptr;
  n->node.~shared_ptr();
  n->weak_node.~weak_ptr();
  Py_TYPE(self)->tp_free(self);  // the heap subclass's dealloc drops the type reference
}
int node_traverse(PyObject* self, visitproc visit, void* arg) {
  Py_VISIT(as_node(self)->dict);
  return 0;
}
int node_clear(PyObject* self) {
  Py_CLEAR(as_node(self)->dict);
  return 0;
}

PyObject* node_new(PyTypeObject* type, PyObject*, PyObject*) {
  PyObject* obj = type->tp_alloc(type, 0);
  if (!obj) return nullptr;
  new (&as_node(obj)->node) std::shared_ptr<autograd::Node>();
  new (&as_node(obj)->weak_node) std::weak_ptr<autograd::Node>();
  return obj;
}

// The node, or a RuntimeError when a ctx has none (outside a recorded graph).
std::shared_ptr<autograd::Node> live_node(PyObject* self) {
  std::shared_ptr<autograd::Node> n = node_of(self);
  EMBER_CHECK(n, "this autograd Function's node is not part of a graph");
  return n;
}

PyObject* node_name(PyObject* self, PyObject*) {
  EMBER_PY_TRY
  return PyUnicode_FromString(live_node(self)->name().c_str());
  EMBER_PY_CATCH
}

PyObject* node_next_functions(PyObject* self, void*) {
  EMBER_PY_TRY
  std::shared_ptr<autograd::Node> node = node_of(self);
  if (!node) return PyTuple_New(0);
  const auto& edges = node->next_edges();
  PyObject* tup = PyTuple_New(static_cast<Py_ssize_t>(edges.size()));
  for (size_t i = 0; i < edges.size(); ++i) {
    PyObject* fn = wrap_node(edges[i].function);
    PyTuple_SET_ITEM(tup, i, Py_BuildValue("(NI)", fn, edges[i].input_nr));
  }
  return tup;
  EMBER_PY_CATCH
}

PyObject* node_variable(PyObject* self, void*) {
  EMBER_PY_TRY
  auto* acc = dynamic_cast<autograd::AccumulateGrad*>(as_node(self)->node.get());
  if (!acc) {
    PyErr_SetString(PyExc_AttributeError, "'Node' has no attribute 'variable'");
    return nullptr;
  }
  return wrap(acc->variable());
  EMBER_PY_CATCH
}

// Python hooks on nodes: ember.autograd.graph._wrap_node_hook(hook) gives
// (handle, call); call returns a tuple of replacement gradients or None.
std::shared_ptr<PyObject> wrap_node_hook(PyObject* hook, PyObject** handle) {
  PyObject* mod = PyImport_ImportModule("ember.autograd.graph");
  if (!mod) throw python_error();
  PyObject* pair = PyObject_CallMethod(mod, "_wrap_node_hook", "O", hook);
  Py_DECREF(mod);
  if (!pair) throw python_error();
  PyObject* call = PyTuple_GetItem(pair, 1);
  *handle = PyTuple_GetItem(pair, 0);
  Py_INCREF(*handle);
  std::shared_ptr<PyObject> held = hold_pyobject(call);
  Py_DECREF(pair);
  return held;
}

PyObject* to_tuple(const autograd::variable_list& v) {
  PyObject* t = PyTuple_New(static_cast<Py_ssize_t>(v.size()));
  for (size_t i = 0; i < v.size(); ++i) PyTuple_SET_ITEM(t, i, wrap(v[i]));
  return t;
}

// None: no replacement (empty list); a tuple: one gradient (or None) per position.
autograd::variable_list from_hook_result(PyObject* r) {
  autograd::variable_list out;
  if (r == Py_None) return out;
  PyObject* seq = PySequence_Fast(r, "hook must return a tuple of gradients or None");
  if (!seq) throw python_error();
  for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); ++i) {
    PyObject* item = PySequence_Fast_GET_ITEM(seq, i);
    if (item != Py_None && !is_tensor(item)) {
      Py_DECREF(seq);
      throw TypeError(str_cat("hook returned a ", Py_TYPE(item)->tp_name, " where a Tensor or None was expected"));
    }
    out.push_back(item == Py_None ? Tensor() : unpack_tensor(item));
  }
  Py_DECREF(seq);
  return out;
}

PyObject* node_register_hook(PyObject* self, PyObject* hook) {
  EMBER_PY_TRY
  std::shared_ptr<autograd::Node> node = live_node(self);
  PyObject* handle = nullptr;
  std::shared_ptr<PyObject> fn = wrap_node_hook(hook, &handle);
  autograd::add_node_post_hook(
      *node, [fn](const autograd::variable_list& grad_inputs, const autograd::variable_list& grad_outputs) {
        GilGuard gil;
        PyObject* gi = to_tuple(grad_inputs);
        PyObject* go = to_tuple(grad_outputs);
        PyObject* r = PyObject_CallFunctionObjArgs(fn.get(), gi, go, nullptr);
        Py_DECREF(gi);
        Py_DECREF(go);
        if (!r) throw python_error();
        autograd::variable_list out = from_hook_result(r);
        Py_DECREF(r);
        return out;
      });
  return handle;
  EMBER_PY_CATCH
}

PyObject* node_register_prehook(PyObject* self, PyObject* hook) {
  EMBER_PY_TRY
  std::shared_ptr<autograd::Node> node = live_node(self);
  PyObject* handle = nullptr;
  std::shared_ptr<PyObject> fn = wrap_node_hook(hook, &handle);
  autograd::add_node_pre_hook(*node, [fn](const autograd::variable_list& grad_outputs) {
    GilGuard gil;
    PyObject* go = to_tuple(grad_outputs);
    PyObject* r = PyObject_CallFunctionObjArgs(fn.get(), go, nullptr);
    Py_DECREF(go);
    if (!r) throw python_error();
    autograd::variable_list out = from_hook_result(r);
    Py_DECREF(r);
    return out;
  });
  return handle;
  EMBER_PY_CATCH
}

PyObject* node_sequence_nr(PyObject* self, PyObject*) {
  EMBER_PY_TRY
  return PyLong_FromUnsignedLongLong(live_node(self)->sequence_nr());
  EMBER_PY_CATCH
}

// grad_fn._raw_saved_<name>: a handle on one saved tensor of a node (which
// it keeps alive), on which pack/unpack hooks can be registered.
struct PySavedTensor {
  PyObject_HEAD std::shared_ptr<autograd::Node> node;
  autograd::SavedVariable* variable;
};

PyTypeObject* g_saved_tensor_type = nullptr;

void saved_tensor_dealloc(PyObject* self) {
  reinterpret_cast<PySavedTensor*>(self)->node.~shared_ptr();
  Py_TYPE(self)->tp_free(self);
}

PyObject* saved_tensor_new(PyTypeObject*, PyObject*, PyObject*) {
  PyErr_SetString(PyExc_RuntimeError, "Trying to create a SavedTensor object from Python is forbidden.");
  return nullptr;
}

PyObject* saved_tensor_register_hooks(PyObject* self, PyObject* const* args, Py_ssize_t n) {
  EMBER_PY_TRY
  if (n != 2 || !PyCallable_Check(args[0]) || !PyCallable_Check(args[1])) {
    PyErr_SetString(PyExc_TypeError,
                    "register_hooks(): incompatible function arguments. The following argument types are "
                    "supported:\n    1. (self: torch._C._autograd.SavedTensor, arg0: collections.abc.Callable, "
                    "arg1: collections.abc.Callable) -> None");
    return nullptr;
  }
  reinterpret_cast<PySavedTensor*>(self)->variable->register_hooks(python_pack_hook(args[0], args[1]));
  Py_RETURN_NONE;
  EMBER_PY_CATCH
}

PyMethodDef saved_tensor_methods[] = {
    {"register_hooks", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(saved_tensor_register_hooks)),
     METH_FASTCALL, nullptr},
    {nullptr, nullptr, 0, nullptr}};

PyObject* wrap_saved_tensor(const std::shared_ptr<autograd::Node>& node, autograd::SavedVariable* variable) {
  PyObject* obj = g_saved_tensor_type->tp_alloc(g_saved_tensor_type, 0);
  if (!obj) return nullptr;
  auto* st = reinterpret_cast<PySavedTensor*>(obj);
  new (&st->node) std::shared_ptr<autograd::Node>(node);
  st->variable = variable;
  return obj;
}

// A saved value as PyTorch shows it: ints, floats and bools as Python
// numbers, sizes as tuples, dtypes as dtypes, an absent optional as None.
PyObject* saved_value_object(const autograd::Node::SavedValue& value) {
  auto tuple_of = [](const auto& items, auto make) -> PyObject* {
    PyObject* t = PyTuple_New(static_cast<Py_ssize_t>(items.size()));
    for (size_t i = 0; t && i < items.size(); ++i) PyTuple_SET_ITEM(t, static_cast<Py_ssize_t>(i), make(items[i]));
    return t;
  };
  return std::visit(
      [&](const auto& v) -> PyObject* {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, std::monostate>) {
          Py_RETURN_NONE;
        } else if constexpr (std::is_same_v<V, bool>) {
          return PyBool_FromLong(v);
        } else if constexpr (std::is_same_v<V, int64_t>) {
          return PyLong_FromLongLong(v);
        } else if constexpr (std::is_same_v<V, double>) {
          return PyFloat_FromDouble(v);
        } else if constexpr (std::is_same_v<V, Scalar>) {
          if (v.is_bool()) return PyBool_FromLong(v.to_bool());
          if (v.is_integral()) return PyLong_FromLongLong(v.to_long());
          if (v.is_complex()) return PyComplex_FromDoubles(v.to_complex().real(), v.to_complex().imag());
          return PyFloat_FromDouble(v.to_double());
        } else if constexpr (std::is_same_v<V, std::string>) {
          return PyUnicode_FromString(v.c_str());
        } else if constexpr (std::is_same_v<V, std::vector<int64_t>>) {
          return tuple_of(v, [](int64_t x) { return PyLong_FromLongLong(x); });
        } else if constexpr (std::is_same_v<V, ScalarType>) {
          PyObject* d = dtype_object(v);
          Py_XINCREF(d);
          return d;
        } else {
          return tuple_of(v, [](double x) { return PyFloat_FromDouble(x); });
        }
      },
      value);
}

// After the usual lookup fails: _saved_<name> (the saved tensor) and
// _raw_saved_<name> (its SavedTensor handle) of a generated node.
PyObject* node_getattro(PyObject* self, PyObject* attr) {
  PyObject* found = PyObject_GenericGetAttr(self, attr);
  if (found || !PyErr_ExceptionMatches(PyExc_AttributeError)) return found;
  const char* name = PyUnicode_AsUTF8(attr);
  if (!name) return nullptr;
  static constexpr std::string_view raw_prefix = "_raw_saved_", prefix = "_saved_";
  const std::string_view s(name);
  const bool raw = s.substr(0, raw_prefix.size()) == raw_prefix;
  if (!raw && s.substr(0, prefix.size()) != prefix) return nullptr;
  const std::string_view wanted = s.substr(raw ? raw_prefix.size() : prefix.size());
  std::shared_ptr<autograd::Node> node = node_of(self);
  if (!node) return nullptr;
  for (const auto& [saved_name, variable] : node->saved_tensors()) {
    if (wanted != saved_name) continue;
    PyErr_Clear();
    if (raw) return wrap_saved_tensor(node, variable);
    EMBER_PY_TRY
    return wrap(variable->unpack(node));
    EMBER_PY_CATCH
  }
  if (raw) return nullptr;
  for (const auto& [saved_name, value] : node->saved_values()) {
    if (wanted != saved_name) continue;
    PyErr_Clear();
    return saved_value_object(value);
  }
  return nullptr;
}

// dir(grad_fn) lists the saved tensors and values as PyTorch's nodes do.
PyObject* node_dir(PyObject* self, PyObject*) {
  PyObject* names = PyObject_CallMethod(reinterpret_cast<PyObject*>(&PyBaseObject_Type), "__dir__", "O", self);
  if (!names) return nullptr;
  std::shared_ptr<autograd::Node> node = node_of(self);
  if (node) {
    auto add = [&](const std::string& name) {
      PyObject* s = PyUnicode_FromString(name.c_str());
      if (s) PyList_Append(names, s);
      Py_XDECREF(s);
    };
    for (const auto& [name, variable] : node->saved_tensors()) {
      add(std::string("_saved_") + name);
      add(std::string("_raw_saved_") + name);
    }
    for (const auto& [name, value] : node->saved_values()) add(std::string("_saved_") + name);
  }
  return names;
}

PyObject* node_repr(PyObject* self) { return PyUnicode_FromFormat("<%s object at %p>", Py_TYPE(self)->tp_name, self); }

PyMethodDef node_methods[] = {{"name", node_name, METH_NOARGS, nullptr},
                              {"__dir__", node_dir, METH_NOARGS, nullptr},
                              {"register_hook", node_register_hook, METH_O, nullptr},
                              {"register_prehook", node_register_prehook, METH_O, nullptr},
                              {"_sequence_nr", node_sequence_nr, METH_NOARGS, nullptr},
                              {nullptr, nullptr, 0, nullptr}};
// Node.metadata: a dict kept by the node itself (a new wrapper of the same node sees it).
PyObject* node_metadata(PyObject* self, void*) {
  EMBER_PY_TRY
  std::shared_ptr<autograd::Node> node = node_of(self);
  EMBER_CHECK(node != nullptr, "the node of this object has been freed");
  if (!node->metadata) {
    PyObject* dict = PyDict_New();
    if (!dict) throw python_error();
    node->metadata = std::shared_ptr<void>(dict, [](void* d) { release_pyobject(static_cast<PyObject*>(d)); });
  }
  PyObject* dict = static_cast<PyObject*>(node->metadata.get());
  Py_INCREF(dict);
  return dict;
  EMBER_PY_CATCH
}

PyGetSetDef node_getset[] = {{"next_functions", node_next_functions, nullptr, nullptr, nullptr},
                             {"variable", node_variable, nullptr, nullptr, nullptr},
                             {"metadata", node_metadata, nullptr, nullptr, nullptr},
                             {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyObject* node_type_for(const std::string& name) {
  auto it = g_node_types.find(name);
  if (it != g_node_types.end()) return it->second;
  // type(name, (Node,), {"__module__": "builtins"}): printed as PyTorch prints its C++ nodes (<class 'ExpBackward0'>).
  // C++ custom functions (torch::autograd::CppNode<T>) are all of PyTorch's type CppFunction.
  std::string short_name = name.rfind("torch::autograd::CppNode<", 0) == 0
                               ? "CppFunction"
                               : name.substr(name.rfind(':') == std::string::npos ? 0 : name.rfind(':') + 1);
  PyObject* dict = Py_BuildValue("{s:s}", "__module__", "builtins");
  PyObject* type = PyObject_CallFunction(reinterpret_cast<PyObject*>(&PyType_Type), "s(O)N", short_name.c_str(),
                                         reinterpret_cast<PyObject*>(g_node_base), dict);
  if (!type) throw python_error();
  g_node_types.emplace(name, type);
  return type;
}

void release_node_pyobj(void*) {}

}  // namespace

std::shared_ptr<autograd::Node> node_of(PyObject* obj) {
  auto* n = as_node(obj);
  return n->node ? n->node : n->weak_node.lock();
}

void set_function_node(PyObject* ctx, const std::shared_ptr<autograd::Node>& node) {
  EMBER_CHECK(PyObject_TypeCheck(ctx, g_node_base), "expected an autograd Function context");
  as_node(ctx)->weak_node = node;
}

PyObject* wrap_node(const std::shared_ptr<autograd::Node>& node) {
  if (!node) Py_RETURN_NONE;
  if (node->pyobj) {
    PyObject* o = static_cast<PyObject*>(node->pyobj);
    Py_INCREF(o);
    return o;
  }
  auto* type = reinterpret_cast<PyTypeObject*>(node_type_for(node->name()));
  PyObject* obj = type->tp_alloc(type, 0);
  if (!obj) throw python_error();
  new (&as_node(obj)->node) std::shared_ptr<autograd::Node>(node);
  new (&as_node(obj)->weak_node) std::weak_ptr<autograd::Node>();
  node->pyobj = obj;
  return obj;
}

void init_autograd(PyObject* module) {
  static PyTypeObject type = {PyVarObject_HEAD_INIT(nullptr, 0)};
  type.tp_name = "ember._C._FunctionBase";
  type.tp_basicsize = sizeof(PyNodeObject);
  type.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC;
  type.tp_dealloc = node_dealloc;
  type.tp_traverse = node_traverse;
  type.tp_clear = node_clear;
  type.tp_dictoffset = offsetof(PyNodeObject, dict);
  type.tp_methods = node_methods;
  type.tp_getset = node_getset;
  type.tp_repr = node_repr;
  type.tp_new = node_new;
  type.tp_getattro = node_getattro;
  if (PyType_Ready(&type) < 0) throw python_error();
  g_node_base = &type;
  static PyTypeObject saved = {PyVarObject_HEAD_INIT(nullptr, 0)};
  saved.tp_name = "ember._C._autograd.SavedTensor";
  saved.tp_basicsize = sizeof(PySavedTensor);
  saved.tp_flags = Py_TPFLAGS_DEFAULT;
  saved.tp_dealloc = saved_tensor_dealloc;
  saved.tp_methods = saved_tensor_methods;
  saved.tp_new = saved_tensor_new;
  if (PyType_Ready(&saved) < 0) throw python_error();
  g_saved_tensor_type = &saved;
  PyModule_AddObjectRef(module, "SavedTensor", reinterpret_cast<PyObject*>(&saved));
  autograd::g_node_pyobj_release = release_node_pyobj;
  PyModule_AddObjectRef(module, "_FunctionBase", reinterpret_cast<PyObject*>(&type));
  init_function(module);
}

}  // namespace ember::python
