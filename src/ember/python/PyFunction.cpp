// autograd.Function: the backward node of a function written in Python.
// Python runs forward (ember/autograd/function.py); _function_wrap then
// records the graph as PyTorch's THPFunction_apply does: one node whose
// Python object is the ctx, edges to the tensor arguments, the outputs'
// history (in-place outputs rebased, inputs returned as-is aliased), and the
// saved tensors with their versions.
#include <memory>
#include <string>
#include <unordered_set>

#include "ember/autograd/Autograd.h"
#include "ember/ops/generated/Functions.h"
#include "ember/python/Exceptions.h"
#include "ember/python/PyAutograd.h"
#include "ember/python/PyTensor.h"

namespace ember::python {

namespace {

class PyFunctionNode final : public autograd::Node {
 public:
  PyFunctionNode(PyObject* ctx, std::string name) : ctx_(ctx), name_(std::move(name)) {
    Py_INCREF(ctx_);
    pyobj = ctx_;
  }
  ~PyFunctionNode() override {
    GilGuard gil;
    pyobj = nullptr;
    Py_DECREF(ctx_);
  }
  std::string name() const override { return name_; }
  autograd::variable_list apply(autograd::variable_list&& grads) override;
  void release_variables() override {
    if (saved_) {
      for (auto& s : *saved_) s.reset_data();
    }
  }

  // Owned by the ctx (a capsule in ctx._saved_variables), which outlives the node when the user keeps it.
  std::vector<autograd::SavedVariable>* saved_ = nullptr;
  std::vector<bool> is_tensor_arg_;  // per forward argument
  std::vector<int> output_slot_;  // per forward output: its grad's index, or -1 (not a tensor)
  bool materialize_grads_ = true;

 private:
  PyObject* ctx_;
  std::string name_;
};

// The ctx attribute names, interned once: Function.apply is a per-call hot
// path, and a name built from a C string is allocated and hashed each time.
struct CtxNames {
  PyObject* to_save = PyUnicode_InternFromString("to_save");
  PyObject* dirty_tensors = PyUnicode_InternFromString("dirty_tensors");
  PyObject* non_differentiable = PyUnicode_InternFromString("non_differentiable");
  PyObject* materialize_grads = PyUnicode_InternFromString("materialize_grads");
  PyObject* saved_variables = PyUnicode_InternFromString("_saved_variables");
  PyObject* forward_cls = PyUnicode_InternFromString("_forward_cls");
  PyObject* backward = PyUnicode_InternFromString("backward");
};

const CtxNames& ctx_names() {
  static const CtxNames* names = new CtxNames();  // never freed: interned strings live as long as Python
  return *names;
}

autograd::variable_list PyFunctionNode::apply(autograd::variable_list&& grads) {
  GilGuard gil;
  const Py_ssize_t nout = static_cast<Py_ssize_t>(output_slot_.size());
  PyObject* args = PyTuple_New(nout + 1);
  Py_INCREF(ctx_);
  PyTuple_SET_ITEM(args, 0, ctx_);
  for (Py_ssize_t i = 0; i < nout; ++i) {
    const int slot = output_slot_[i];
    Tensor g = slot >= 0 ? grads[slot] : Tensor();
    if (slot >= 0 && !g.defined() && materialize_grads_) {
      const autograd::InputMetadata& m = input_metadata(slot);
      g = ember::zeros(m.shape, m.dtype, m.device);
    }
    PyTuple_SET_ITEM(args, i + 1, wrap(g));
  }
  PyObject* cls = PyObject_GetAttr(ctx_, ctx_names().forward_cls);
  PyObject* backward = cls ? PyObject_GetAttr(cls, ctx_names().backward) : nullptr;
  Py_XDECREF(cls);
  PyObject* r = backward ? PyObject_Call(backward, args, nullptr) : nullptr;
  Py_XDECREF(backward);
  Py_DECREF(args);
  if (!r) throw python_error();
  if (!PyTuple_Check(r)) {
    PyObject* t = PyTuple_Pack(1, r);
    Py_DECREF(r);
    r = t;
  }
  const Py_ssize_t nargs = static_cast<Py_ssize_t>(is_tensor_arg_.size());
  Py_ssize_t got = PyTuple_GET_SIZE(r);
  // Trailing Nones beyond the inputs are allowed, as in PyTorch.
  while (got > nargs && PyTuple_GET_ITEM(r, got - 1) == Py_None) --got;
  if (got != nargs) {
    Py_DECREF(r);
    throw Error(str_cat("function ", name_, " returned an incorrect number of gradients (expected ", nargs, ", got ",
                        PyTuple_GET_SIZE(r) > nargs ? PyTuple_GET_SIZE(r) : got, ")"));
  }
  autograd::variable_list out;
  out.reserve(next_edges_.size());
  for (Py_ssize_t i = 0; i < nargs; ++i) {
    PyObject* g = PyTuple_GET_ITEM(r, i);
    if (!is_tensor_arg_[i]) {
      if (g != Py_None) {
        Py_DECREF(r);
        throw Error(str_cat("function ", name_, " returned a gradient different than None at position ", i + 1,
                            ", but the corresponding forward input was not a Variable"));
      }
      continue;
    }
    if (g == Py_None) {
      out.emplace_back();
    } else if (is_tensor(g)) {
      out.push_back(unpack_tensor(g));
    } else {
      std::string type = Py_TYPE(g)->tp_name;
      Py_DECREF(r);
      throw TypeError(str_cat("expected Variable or None (got ", type, ")"));
    }
  }
  Py_DECREF(r);
  return out;
}

// The tensors in a ctx attribute holding a tuple of tensors (or None).
std::vector<Tensor> tensors_of(PyObject* ctx, PyObject* name) {
  std::vector<Tensor> out;
  PyObject* v = PyObject_GetAttr(ctx, name);
  if (!v) {
    PyErr_Clear();
    return out;
  }
  if (v != Py_None) {
    PyObject* seq = PySequence_Fast(v, "expected a tuple");
    if (!seq) {
      Py_DECREF(v);
      throw python_error();
    }
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq); ++i) {
      PyObject* t = PySequence_Fast_GET_ITEM(seq, i);
      if (is_tensor(t)) out.push_back(unpack_tensor(t));
    }
    Py_DECREF(seq);
  }
  Py_DECREF(v);
  return out;
}

bool contains(const std::vector<Tensor>& ts, const Tensor& t) {
  for (const Tensor& x : ts) {
    if (x.is_same(t)) return true;
  }
  return false;
}

// _function_wrap(ctx, args, outputs, is_executable) -> outputs with history.
PyObject* function_wrap(PyObject*, PyObject* const* a, Py_ssize_t n) {
  EMBER_PY_TRY
  EMBER_CHECK(n == 4, "_function_wrap takes 4 arguments");
  PyObject* ctx = a[0];
  PyObject* args = a[1];
  PyObject* outputs = a[2];
  const bool executable = PyObject_IsTrue(a[3]);
  const bool is_tuple = PyTuple_Check(outputs);
  PyObject* outs = is_tuple ? PySequence_Tuple(outputs) : PyTuple_Pack(1, outputs);
  if (!outs) throw python_error();
  const Py_ssize_t nout = PyTuple_GET_SIZE(outs);

  std::vector<Tensor> inputs;
  std::vector<bool> is_tensor_arg;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(args); ++i) {
    PyObject* x = PyTuple_GET_ITEM(args, i);
    is_tensor_arg.push_back(is_tensor(x));
    if (is_tensor(x)) inputs.push_back(unpack_tensor(x));
  }
  const CtxNames& names = ctx_names();
  const std::vector<Tensor> dirty = tensors_of(ctx, names.dirty_tensors);
  const std::vector<Tensor> non_diff = tensors_of(ctx, names.non_differentiable);
  for (const Tensor& d : dirty) {
    bool returned = false;
    for (Py_ssize_t i = 0; i < nout; ++i) {
      PyObject* o = PyTuple_GET_ITEM(outs, i);
      returned = returned || (is_tensor(o) && unpack_tensor(o).is_same(d));
    }
    if (!returned) {
      Py_DECREF(outs);
      throw Error(
          "Some elements marked as dirty during the forward method were not returned as output. The inputs "
          "that are modified inplace must all be outputs of the Function.");
    }
    d.unsafeGetTensorImpl()->bump_version();
  }

  std::shared_ptr<PyFunctionNode> node;
  if (executable) {
    node = std::make_shared<PyFunctionNode>(ctx, Py_TYPE(ctx)->tp_name);  // "<Name>Backward" (a heap type's name)
    autograd::edge_list edges;
    for (const Tensor& t : inputs) edges.push_back(autograd::gradient_edge(t));
    node->set_next_edges(std::move(edges));
    node->is_tensor_arg_ = is_tensor_arg;
    PyObject* mg = PyObject_GetAttr(ctx, names.materialize_grads);
    if (mg) {
      node->materialize_grads_ = PyObject_IsTrue(mg);
      Py_DECREF(mg);
    } else {
      PyErr_Clear();
    }
    set_function_node(ctx, node);
  }

  PyObject* result = PyTuple_New(nout);
  std::vector<Tensor> wrapped_outputs;
  for (Py_ssize_t i = 0; i < nout; ++i) {
    PyObject* o = PyTuple_GET_ITEM(outs, i);
    if (!is_tensor(o)) {
      if (node) node->output_slot_.push_back(-1);
      Py_INCREF(o);
      PyTuple_SET_ITEM(result, i, o);
      continue;
    }
    Tensor t = unpack_tensor(o);
    if (node) {
      const bool is_dirty = contains(dirty, t);
      const bool is_input = contains(inputs, t);
      const bool differentiable = !contains(non_diff, t) && (is_floating_type(t.dtype()) || is_complex_type(t.dtype()));
      if (is_dirty) {
        EMBER_CHECK(!(t.is_leaf() && t.requires_grad()),
                    "a leaf Variable that requires grad has been used in an in-place operation.");
        autograd::check_inplace(t, true);
        if (differentiable) {
          autograd::rebase_history(t, node);
        } else {
          (void)node->add_input_metadata(t);
        }
      } else {
        if (is_input) {  // an input returned as-is becomes a view of it
          autograd::GradModeGuard no_grad(false);
          t = t.view_as(t);
        }
        if (differentiable) {
          autograd::set_history(t, node);
        } else {
          (void)node->add_input_metadata(t);
        }
      }
      node->output_slot_.push_back(static_cast<int>(node->num_inputs()) - 1);
    }
    wrapped_outputs.push_back(t);
    PyTuple_SET_ITEM(result, i, t.is_same(unpack_tensor(o)) ? (Py_INCREF(o), o) : wrap(t));
  }
  Py_DECREF(outs);

  // Saved tensors: kept with the ctx (outputs without a reference back to the node).
  if (node) {
    PyObject* to_save = PyObject_GetAttr(ctx, names.to_save);
    if (!to_save) PyErr_Clear();
    auto saved = std::make_unique<std::vector<autograd::SavedVariable>>();
    if (to_save && to_save != Py_None) {
      for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(to_save); ++i) {
        PyObject* s = PyTuple_GET_ITEM(to_save, i);
        if (s == Py_None) {
          saved->emplace_back();
          continue;
        }
        if (!is_tensor(s)) {
          std::string type = Py_TYPE(s)->tp_name;
          Py_DECREF(to_save);
          throw TypeError(str_cat("save_for_backward can only save variables, but argument ", i, " is of type ", type));
        }
        const Tensor& t = unpack_tensor(s);
        saved->emplace_back(t, contains(wrapped_outputs, t) && autograd::grad_fn(t) == node);
      }
    }
    Py_XDECREF(to_save);
    node->saved_ = saved.get();
    if (saved->empty()) {
      node->saved_ = nullptr;
    } else {
      PyObject* capsule = PyCapsule_New(saved.release(), "ember.saved_variables", [](PyObject* c) {
        delete static_cast<std::vector<autograd::SavedVariable>*>(PyCapsule_GetPointer(c, "ember.saved_variables"));
      });
      if (!capsule || PyObject_SetAttr(ctx, names.saved_variables, capsule) < 0) {
        Py_XDECREF(capsule);
        throw python_error();
      }
      Py_DECREF(capsule);
    }
    // The node holds them now; the ctx must not (a ctx -> output -> node -> ctx cycle would never be freed).
    PyObject* dict = PyObject_GenericGetDict(ctx, nullptr);
    if (!dict) throw python_error();
    for (PyObject* name : {names.to_save, names.dirty_tensors, names.non_differentiable}) {
      if (PyDict_GetItemWithError(dict, name) ? PyDict_DelItem(dict, name) < 0 : PyErr_Occurred() != nullptr) {
        Py_DECREF(dict);
        throw python_error();
      }
    }
    Py_DECREF(dict);
  }
  if (is_tuple) return result;
  PyObject* single = PyTuple_GET_ITEM(result, 0);
  Py_INCREF(single);
  Py_DECREF(result);
  return single;
  EMBER_PY_CATCH
}

// _function_saved_tensors(ctx) -> tuple: the node's saved tensors (checked
// against in-place changes), or what save_for_backward got when no graph
// was recorded.
PyObject* function_saved_tensors(PyObject*, PyObject* ctx) {
  EMBER_PY_TRY
  PyObject* capsule = PyObject_GetAttr(ctx, ctx_names().saved_variables);
  if (!capsule) {
    PyErr_Clear();
    PyObject* to_save = PyObject_GetAttr(ctx, ctx_names().to_save);
    if (!to_save || to_save == Py_None) {
      PyErr_Clear();
      Py_XDECREF(to_save);
      return PyTuple_New(0);
    }
    return to_save;
  }
  auto* saved =
      static_cast<std::vector<autograd::SavedVariable>*>(PyCapsule_GetPointer(capsule, "ember.saved_variables"));
  Py_DECREF(capsule);
  if (!saved) throw python_error();
  std::shared_ptr<autograd::Node> node = node_of(ctx);
  PyObject* out = PyTuple_New(static_cast<Py_ssize_t>(saved->size()));
  for (size_t i = 0; i < saved->size(); ++i) PyTuple_SET_ITEM(out, i, wrap((*saved)[i].unpack(node)));
  return out;
  EMBER_PY_CATCH
}

// ---- saved tensor hooks (autograd.graph.saved_tensors_hooks) ----------------------

struct PyPackedTensor final : autograd::PackedTensor {
  std::shared_ptr<PyObject> packed, unpack_hook;
  Tensor unpack() const override {
    GilGuard gil;
    PyObject* r = PyObject_CallFunctionObjArgs(unpack_hook.get(), packed.get(), nullptr);
    if (!r) throw python_error();
    if (!is_tensor(r)) {
      std::string type = Py_TYPE(r)->tp_name;
      Py_DECREF(r);
      throw TypeError(
          str_cat("Output of saved tensor unpack_hook expected to be a Tensor but got result of type ", type));
    }
    Tensor t = unpack_tensor(r);
    Py_DECREF(r);
    return t;
  }
};

PyObject* push_saved_tensors_hooks(PyObject*, PyObject* const* a, Py_ssize_t n) {
  EMBER_PY_TRY
  EMBER_CHECK(n == 2, "_push_saved_tensors_hooks takes (pack_hook, unpack_hook)");
  autograd::push_saved_tensor_hooks(python_pack_hook(a[0], a[1]));
  Py_RETURN_NONE;
  EMBER_PY_CATCH
}

PyObject* pop_saved_tensors_hooks(PyObject*, PyObject*) {
  EMBER_PY_TRY
  autograd::pop_saved_tensor_hooks();
  Py_RETURN_NONE;
  EMBER_PY_CATCH
}

PyMethodDef function_methods[] = {
    {"_push_saved_tensors_hooks", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(push_saved_tensors_hooks)),
     METH_FASTCALL, nullptr},
    {"_pop_saved_tensors_hooks", pop_saved_tensors_hooks, METH_NOARGS, nullptr},
    {"_function_wrap", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(function_wrap)), METH_FASTCALL,
     nullptr},
    {"_function_saved_tensors", function_saved_tensors, METH_O, nullptr},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

autograd::PackHook python_pack_hook(PyObject* pack_hook, PyObject* unpack_hook) {
  std::shared_ptr<PyObject> pack = hold_pyobject(pack_hook), unpack = hold_pyobject(unpack_hook);
  return [pack, unpack](const Tensor& t) -> std::shared_ptr<autograd::PackedTensor> {
    GilGuard gil;
    PyObject* arg = wrap(t);
    PyObject* r = PyObject_CallFunctionObjArgs(pack.get(), arg, nullptr);
    Py_DECREF(arg);
    if (!r) throw python_error();
    auto packed = std::make_shared<PyPackedTensor>();
    packed->packed = hold_pyobject(r);
    Py_DECREF(r);
    packed->unpack_hook = unpack;
    return packed;
  };
}

void init_function(PyObject* module) {
  if (PyModule_AddFunctions(module, function_methods) < 0) throw python_error();
}

}  // namespace ember::python
