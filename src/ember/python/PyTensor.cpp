// _C.TensorBase: the C type under ember.Tensor. One TensorImpl maps to at
// most one live Python object (TensorImpl::pyobj), so identity and Python
// attributes survive round trips through C++.
#include "ember/python/PyTensor.h"
#include "ember/core/Float8.h"
#include "ember/python/PyTorchFunction.h"

#include <structmember.h>

#include <memory>
#include <string_view>
#include <vector>

#include "ember/autograd/AutogradMeta.h"
#include "ember/autograd/Engine.h"
#include "ember/autograd/ViewAutograd.h"
#include "ember/ops/Ops.h"
#include "ember/ops/TensorIterator.h"
#include "ember/python/ArgParser.h"
#include "ember/python/PyAutograd.h"
#include "ember/python/PyIndexing.h"
#include "ember/python/PyTypes.h"

namespace ember::python {

PyTypeObject* g_tensor_base_type = nullptr;
PyObject* g_tensor_class = nullptr;
PyObject* g_size_class = nullptr;  // ember.Size, set from Python

PyObject* wrap_as(PyTypeObject* type, Tensor t) {
  PyObject* obj = type->tp_alloc(type, 0);
  if (!obj) throw python_error();
  auto* self = reinterpret_cast<PyTensorObject*>(obj);
  new (&self->tensor) Tensor(std::move(t));
  self->tensor.unsafeGetTensorImpl()->set_pyobj(obj);
  return obj;
}

PyObject* wrap(Tensor t) {
  if (!t.defined()) Py_RETURN_NONE;
  if (void* existing = t.unsafeGetTensorImpl()->pyobj()) {
    PyObject* obj = static_cast<PyObject*>(existing);
    Py_INCREF(obj);
    return obj;
  }
  return wrap_as(reinterpret_cast<PyTypeObject*>(g_tensor_class), std::move(t));
}

PyObject* wrap(const std::vector<Tensor>& ts) {
  PyObject* out = PyTuple_New(static_cast<Py_ssize_t>(ts.size()));
  for (size_t i = 0; i < ts.size(); ++i) PyTuple_SET_ITEM(out, i, wrap(ts[i]));
  return out;
}

namespace {
// Prints as PyTorch does: "torch.return_types.max(\nvalues=...,\nindices=...)".
PyObject* return_type_repr(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  std::string s = std::string(type->tp_name) + "(";
  Py_ssize_t n = PyTuple_GET_SIZE(self);
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject* r = PyObject_Repr(PyTuple_GET_ITEM(self, i));
    if (!r) return nullptr;
    s += std::string("\n") + type->tp_members[i].name + "=" + PyUnicode_AsUTF8(r) + (i + 1 < n ? "," : "");
    Py_DECREF(r);
  }
  return PyUnicode_FromString((s + ")").c_str());
}
}  // namespace

PyTypeObject* return_type(const char* name, std::initializer_list<const char*> fields) {
  // Each type lives as long as the process, and so does what it points into
  // (its name); the table is never destroyed, which keeps all of it reachable.
  struct Entry {
    std::string name, full_name;
    std::unique_ptr<PyStructSequence_Field[]> members;
    PyStructSequence_Desc desc;
    PyTypeObject* type;
  };
  static auto* cache = new std::vector<std::unique_ptr<Entry>>();
  for (auto& e : *cache) {
    if (e->name == name) return e->type;
  }
  auto e = std::make_unique<Entry>();
  e->name = name;
  e->full_name = std::string("torch.return_types.") + name;
  e->members.reset(new PyStructSequence_Field[fields.size() + 1]());
  size_t i = 0;
  for (const char* f : fields) e->members[i++] = {f, nullptr};
  e->desc = {e->full_name.c_str(), nullptr, e->members.get(), static_cast<int>(fields.size())};
  PyTypeObject* type = PyStructSequence_NewType(&e->desc);
  if (!type) throw python_error();
  type->tp_repr = return_type_repr;
  e->type = type;
  cache->push_back(std::move(e));
  return type;
}

NumpyScalar numpy_scalar_kind(PyObject* obj) {
  // np.bool_, np.integer, np.floating, np.complexfloating, read once NumPy is imported
  // (no NumPy scalar can exist before).
  static PyObject* types[4] = {nullptr, nullptr, nullptr, nullptr};
  static constexpr NumpyScalar kinds[4] = {NumpyScalar::Bool, NumpyScalar::Int, NumpyScalar::Float,
                                           NumpyScalar::Complex};
  if (types[0] == nullptr) {
    PyObject* np = PyDict_GetItemString(PyImport_GetModuleDict(), "numpy");  // borrowed
    if (np == nullptr) return NumpyScalar::None;
    PyObject* found[4];
    const char* names[4] = {"bool_", "integer", "floating", "complexfloating"};
    for (int i = 0; i < 4; ++i) {
      found[i] = PyObject_GetAttrString(np, names[i]);
      if (found[i] == nullptr || !PyType_Check(found[i])) {  // NumPy still importing
        PyErr_Clear();
        for (int k = 0; k <= i; ++k) Py_XDECREF(found[k]);
        return NumpyScalar::None;
      }
    }
    for (int i = 0; i < 4; ++i) types[i] = found[i];  // held for the life of the process
  }
  for (int i = 0; i < 4; ++i) {
    if (PyObject_TypeCheck(obj, reinterpret_cast<PyTypeObject*>(types[i]))) return kinds[i];
  }
  return NumpyScalar::None;
}

Scalar numpy_scalar_value(PyObject* obj, NumpyScalar kind) {
  if (kind == NumpyScalar::Int) {
    PyObject* index = PyNumber_Index(obj);
    if (index == nullptr) throw python_error();
    Scalar s;
    try {
      s = unpack_int_scalar(index);
    } catch (...) {
      Py_DECREF(index);
      throw;
    }
    Py_DECREF(index);
    return s;
  }
  return Scalar(unpack_double(obj));
}

bool is_number(PyObject* obj) {
  // bool is a PyLong subclass
  return PyFloat_Check(obj) || PyLong_Check(obj) || PyComplex_Check(obj) ||
         (!is_tensor(obj) && numpy_scalar_kind(obj) != NumpyScalar::None);
}

Scalar unpack_int_scalar(PyObject* obj) {
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
  if (v == -1 && PyErr_Occurred()) throw python_error();
  if (!overflow) return Scalar(static_cast<int64_t>(v));
  unsigned long long u = PyLong_AsUnsignedLongLong(obj);
  if (u == static_cast<unsigned long long>(-1) && PyErr_Occurred()) throw python_error();
  return Scalar::from_uint64(u);
}

int64_t unpack_long(PyObject* obj) {
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
  if (v == -1 && PyErr_Occurred()) throw python_error();
  if (overflow) throw ValueError("Overflow when unpacking long long");
  return v;
}

double unpack_double(PyObject* obj) {
  double d = PyFloat_AsDouble(obj);
  if (d == -1.0 && PyErr_Occurred()) throw python_error();
  return d;
}

std::complex<double> unpack_complex(PyObject* obj) {
  Py_complex c = PyComplex_AsCComplex(obj);
  if (c.real == -1.0 && PyErr_Occurred()) throw python_error();
  return {c.real, c.imag};
}

Tensor scalar_to_tensor(PyObject* obj) {
  Tensor t;
  const NumpyScalar kind =
      PyFloat_Check(obj) || PyLong_Check(obj) || PyComplex_Check(obj) ? NumpyScalar::None : numpy_scalar_kind(obj);
  if (kind != NumpyScalar::None) {
    const Scalar s = numpy_scalar_value(obj, kind);
    if (kind == NumpyScalar::Int) {
      t = empty({}, ScalarType::Long);
      *static_cast<int64_t*>(t.data_ptr()) = s.to_long();
      t.unsafeGetTensorImpl()->set_wrapped_uint64(s.is_big_unsigned());
    } else {
      t = empty({}, ScalarType::Double);
      *static_cast<double*>(t.data_ptr()) = s.to_double();
    }
    t.unsafeGetTensorImpl()->set_wrapped_number(true);
    return t;
  }
  if (PyBool_Check(obj)) {
    t = empty({}, ScalarType::Bool);
    *static_cast<bool*>(t.data_ptr()) = obj == Py_True;
  } else if (PyLong_Check(obj)) {
    const Scalar s = unpack_int_scalar(obj);
    t = empty({}, ScalarType::Long);
    *static_cast<int64_t*>(t.data_ptr()) = s.to_long();
    t.unsafeGetTensorImpl()->set_wrapped_uint64(s.is_big_unsigned());
  } else if (PyComplex_Check(obj)) {
    t = empty({}, ScalarType::ComplexDouble);
    *static_cast<std::complex<double>*>(t.data_ptr()) = unpack_complex(obj);
  } else {
    t = empty({}, ScalarType::Double);
    *static_cast<double*>(t.data_ptr()) = unpack_double(obj);
  }
  t.unsafeGetTensorImpl()->set_wrapped_number(true);
  return t;
}

namespace {

PyTensorObject* as_pt(PyObject* o) { return reinterpret_cast<PyTensorObject*>(o); }

// ---- lifetime ------------------------------------------------------------

int tensor_traverse(PyObject* self, visitproc visit, void* arg) {
  Py_VISIT(as_pt(self)->dict);
  return 0;
}

int tensor_clear(PyObject* self) {
  Py_CLEAR(as_pt(self)->dict);
  return 0;
}

void tensor_dealloc(PyObject* self) {
  PyObject_GC_UnTrack(self);
  auto* t = as_pt(self);
  if (t->weakreflist) PyObject_ClearWeakRefs(self);
  tensor_clear(self);
  if (t->tensor.defined() && t->tensor.unsafeGetTensorImpl()->pyobj() == self) {
    t->tensor.unsafeGetTensorImpl()->set_pyobj(nullptr);
  }
  t->tensor.~Tensor();
  // Instances are always of a heap subclass; its subtype_dealloc drops the
  // type reference, so this static base must not.
  Py_TYPE(self)->tp_free(self);
}

PyObject* tensor_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
  EMBER_PY_TRY(void) args;
  (void)kwargs;
  throw TypeError("cannot create TensorBase directly; use ember.tensor() or a factory function");
  EMBER_PY_CATCH
}

// ---- properties -----------------------------------------------------------

PyObject* make_size(IntArrayRef sizes) {
  PyObject* tup = PyTuple_New(static_cast<Py_ssize_t>(sizes.size()));
  for (size_t i = 0; i < sizes.size(); ++i) PyTuple_SET_ITEM(tup, i, PyLong_FromLongLong(sizes[i]));
  if (!g_size_class) return tup;
  PyObject* r = PyObject_CallOneArg(g_size_class, tup);
  Py_DECREF(tup);
  return r;
}

PyObject* get_shape(PyObject* self, void*) {
  EMBER_PY_TRY
  return make_size(unpack_tensor(self).sizes());
  EMBER_PY_CATCH
}
PyObject* get_dtype(PyObject* self, void*) {
  PyObject* d = dtype_object(unpack_tensor(self).dtype());
  Py_INCREF(d);
  return d;
}
PyObject* get_device(PyObject* self, void*) {
  EMBER_PY_TRY
  Device d = unpack_tensor(self).device();
  if (d.is_cpu()) d.index = -1;
  return device_object(d);
  EMBER_PY_CATCH
}
PyObject* get_ndim(PyObject* self, void*) { return PyLong_FromLongLong(unpack_tensor(self).dim()); }
PyObject* get_requires_grad(PyObject* self, void*) { return PyBool_FromLong(unpack_tensor(self).requires_grad()); }
int set_requires_grad(PyObject* self, PyObject* value, void*) {
  EMBER_PY_TRY
  if (!value || !PyBool_Check(value)) throw TypeError("requires_grad must be a bool");
  Tensor& t = const_cast<Tensor&>(unpack_tensor(self));
  // PyTorch's attribute setter: its own messages, and a non-leaf refuses True too.
  if (value == Py_True && !t.is_leaf()) throw Error("you can only change requires_grad flags of leaf variables.");
  EMBER_CHECK(value != Py_True || t.is_floating_point() || t.is_complex(),
              "only Tensors of floating point and complex dtype can require gradients");
  t.set_requires_grad(value == Py_True);
  return 0;
  EMBER_PY_CATCH_RET(-1)
}
PyObject* get_grad(PyObject* self, void*) {
  EMBER_PY_TRY
  const Tensor& t = unpack_tensor(self);
  Tensor grad = t.grad();
  // PyTorch warns on every read of an unset .grad of a non-leaf that does not retain its gradient.
  if (!grad.defined() && !t.is_leaf()) {
    auto* m = autograd::get_meta(t);
    if (!(m && m->retains_grad) &&
        PyErr_WarnEx(PyExc_UserWarning,
                     "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
                     "attribute won't be populated during autograd.backward(). If you indeed want the .grad field "
                     "to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. If you "
                     "access the non-leaf Tensor by mistake, make sure you access the leaf Tensor instead. See "
                     "github.com/pytorch/pytorch/pull/30531 for more information.",
                     1) != 0) {
      throw python_error();
    }
  }
  return wrap(grad);
  EMBER_PY_CATCH
}
int set_grad(PyObject* self, PyObject* value, void*) {
  EMBER_PY_TRY
  Tensor& t = const_cast<Tensor&>(unpack_tensor(self));
  if (!value || value == Py_None) {
    if (autograd::get_meta(t)) t.mutable_grad() = Tensor();
    return 0;
  }
  if (!is_tensor(value))
    throw TypeError(
        str_cat("assigned grad expected to be a Tensor or None but got grad of type ", Py_TYPE(value)->tp_name));
  const Tensor& g = unpack_tensor(value);
  EMBER_CHECK(!g.is_same(t), "can't assign Variable as its own grad");
  EMBER_CHECK(g.dtype() == t.dtype(), "attempting to assign a gradient with dtype '", scalar_type_name(g.dtype()),
              "' to a tensor with dtype '", scalar_type_name(t.dtype()),
              "'. Please ensure that the gradient and the tensor have the same dtype");
  EMBER_CHECK(g.sizes().equals(t.sizes()), "attempting to assign a gradient of size '", shape_string(g.sizes()),
              "' to a tensor of size '", shape_string(t.sizes()),
              "'. Please ensure that the gradient and the tensor are the same size");
  t.mutable_grad() = g;
  return 0;
  EMBER_PY_CATCH_RET(-1)
}
PyObject* get_grad_fn(PyObject* self, void*) {
  EMBER_PY_TRY
  return wrap_node(autograd::grad_fn(unpack_tensor(self)));
  EMBER_PY_CATCH
}
PyObject* get_is_leaf(PyObject* self, void*) { return PyBool_FromLong(unpack_tensor(self).is_leaf()); }
PyObject* get_data(PyObject* self, void*) {
  EMBER_PY_TRY
  return wrap(unpack_tensor(self).detach());
  EMBER_PY_CATCH
}
int set_data(PyObject* self, PyObject* value, void*) {
  EMBER_PY_TRY
  if (!value || !is_tensor(value)) throw TypeError("Variable data has to be a tensor, but got something else");
  TensorImpl* dst = unpack_tensor(self).unsafeGetTensorImpl();
  TensorImpl* src = unpack_tensor(value).unsafeGetTensorImpl();
  EMBER_CHECK(!unpack_tensor(self).requires_grad() || is_floating_type(src->dtype()) || is_complex_type(src->dtype()),
              "data set to a tensor that requires gradients must be floating point or complex dtype");
  dst->set_dtype(src->dtype());
  dst->set_storage(src->storage());
  dst->set_sizes_and_strides(src->sizes(), src->strides(), src->storage_offset());
  return 0;
  EMBER_PY_CATCH_RET(-1)
}
PyObject* get_version(PyObject* self, void*) {
  EMBER_PY_TRY
  return PyLong_FromUnsignedLong(unpack_tensor(self)._version());
  EMBER_PY_CATCH_RET(nullptr)
}
PyObject* get_is_cuda(PyObject* self, void*) { return PyBool_FromLong(unpack_tensor(self).device().is_cuda()); }
PyObject* get_is_meta(PyObject* self, void*) { return PyBool_FromLong(unpack_tensor(self).device().is_meta()); }
PyObject* get_retains_grad(PyObject* self, void*) { return PyBool_FromLong(unpack_tensor(self).retains_grad()); }

// The index of this tensor among the outputs of its grad_fn (0 for a leaf).
PyObject* get_output_nr(PyObject* self, void*) { return PyLong_FromLong(unpack_tensor(self).output_nr()); }

PyGetSetDef raw_tensor_getset[] = {{"shape", get_shape, nullptr, nullptr, nullptr},
                                   {"dtype", get_dtype, nullptr, nullptr, nullptr},
                                   {"device", get_device, nullptr, nullptr, nullptr},
                                   {"ndim", get_ndim, nullptr, nullptr, nullptr},
                                   {"requires_grad", get_requires_grad, set_requires_grad, nullptr, nullptr},
                                   {"grad", get_grad, set_grad, nullptr, nullptr},
                                   {"grad_fn", get_grad_fn, nullptr, nullptr, nullptr},
                                   {"is_leaf", get_is_leaf, nullptr, nullptr, nullptr},
                                   {"data", get_data, set_data, nullptr, nullptr},
                                   {"_version", get_version, nullptr, nullptr, nullptr},
                                   {"is_cuda", get_is_cuda, nullptr, nullptr, nullptr},
                                   {"is_meta", get_is_meta, nullptr, nullptr, nullptr},
                                   {"retains_grad", get_retains_grad, nullptr, nullptr, nullptr},
                                   {"output_nr", get_output_nr, nullptr, nullptr, nullptr},
                                   {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, nullptr, nullptr},
                                   {"_base", tensor_get_base, nullptr, nullptr, nullptr},
                                   {nullptr, nullptr, nullptr, nullptr, nullptr}};

// A property read or write on a Tensor subclass (or under a TorchFunctionMode)
// goes to __torch_function__ as Tensor.<name>.__get__ / __set__, as in PyTorch.
// The closure of each entry is its raw entry.
PyObject* dispatching_get(PyObject* self, void* closure) {
  const auto* raw = static_cast<const PyGetSetDef*>(closure);
  if (torch_function::wants_dispatch(self, nullptr)) {
    EMBER_PY_TRY
    return torch_function::dispatch_property(raw->name, self, nullptr);
    EMBER_PY_CATCH
  }
  return raw->get(self, nullptr);
}
int dispatching_set(PyObject* self, PyObject* value, void* closure) {
  const auto* raw = static_cast<const PyGetSetDef*>(closure);
  if (value && torch_function::wants_dispatch(self, nullptr)) {
    EMBER_PY_TRY
    PyObject* out = torch_function::dispatch_property(raw->name, self, value);
    Py_DECREF(out);
    return 0;
    EMBER_PY_CATCH_RET(-1)
  }
  return raw->set(self, value, nullptr);
}

std::vector<PyGetSetDef> make_tensor_getset() {
  std::vector<PyGetSetDef> out;
  for (PyGetSetDef* raw = raw_tensor_getset; raw->name; ++raw) {
    PyGetSetDef entry = *raw;
    if (std::string_view(raw->name) != "__dict__") {
      entry.get = dispatching_get;
      entry.set = raw->set ? dispatching_set : nullptr;
      entry.closure = raw;
    }
    out.push_back(entry);
  }
  out.push_back({nullptr, nullptr, nullptr, nullptr, nullptr});
  return out;
}

// ---- methods ----------------------------------------------------------------

PyObject* m_dim(PyObject* self, PyObject*) { return PyLong_FromLongLong(unpack_tensor(self).dim()); }
PyObject* m_numel(PyObject* self, PyObject*) { return PyLong_FromLongLong(unpack_tensor(self).numel()); }
PyObject* m_is_inference(PyObject* self, PyObject*) {
  return PyBool_FromLong(unpack_tensor(self).unsafeGetTensorImpl()->is_inference());
}
PyObject* m_is_conj(PyObject* self, PyObject*) { return PyBool_FromLong(unpack_tensor(self).is_conj()); }
PyObject* m_is_neg(PyObject* self, PyObject*) { return PyBool_FromLong(unpack_tensor(self).is_neg()); }
// x._set_conj(b) / x._set_neg(b): sets the bit on x itself (unpickling).
PyObject* m_set_conj(PyObject* self, PyObject* v) {
  unpack_tensor(self).unsafeGetTensorImpl()->set_conj(PyObject_IsTrue(v));
  Py_RETURN_NONE;
}
PyObject* m_set_neg(PyObject* self, PyObject* v) {
  unpack_tensor(self).unsafeGetTensorImpl()->set_neg(PyObject_IsTrue(v));
  Py_RETURN_NONE;
}
PyObject* m_storage_offset(PyObject* self, PyObject*) {
  return PyLong_FromLongLong(unpack_tensor(self).storage_offset());
}
PyObject* m_is_floating_point(PyObject* self, PyObject*) {
  return PyBool_FromLong(is_floating_type_any_tier(unpack_tensor(self).dtype()));
}
PyObject* m_is_complex(PyObject* self, PyObject*) {
  return PyBool_FromLong(is_complex_type_any_tier(unpack_tensor(self).dtype()));
}
// c10's isSignedType: false for bool and the unsigned integers (sub-byte ones
// and float8_e8m0fnu too); the bit containers have no sign and raise.
PyObject* m_is_signed(PyObject* self, PyObject*) {
  EMBER_PY_TRY
  switch (unpack_tensor(self).dtype()) {
    case ScalarType::Bits1x8:
    case ScalarType::Bits2x4:
    case ScalarType::Bits4x2:
    case ScalarType::Bits8:
    case ScalarType::Bits16: throw Error("Bits types are undefined");
    case ScalarType::Bool:
    case ScalarType::Byte:
    case ScalarType::UInt16:
    case ScalarType::UInt32:
    case ScalarType::UInt64:
    case ScalarType::UInt1:
    case ScalarType::UInt2:
    case ScalarType::UInt3:
    case ScalarType::UInt4:
    case ScalarType::UInt5:
    case ScalarType::UInt6:
    case ScalarType::UInt7:
    case ScalarType::Float8_e8m0fnu: Py_RETURN_FALSE;
    default: Py_RETURN_TRUE;
  }
  EMBER_PY_CATCH
}
// -1 on the CPU, else the device index.
PyObject* m_get_device(PyObject* self, PyObject*) {
  const Device d = unpack_tensor(self).device();
  return PyLong_FromLong(d.is_cpu() ? -1 : static_cast<long>(d.index));
}
// x.equal(y) or x.equal(other=y): the same sizes and equal values (after type promotion).
PyObject* m_equal(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  EMBER_PY_TRY
  const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  if (nargs > 1) throw TypeError(str_cat("equal() takes 1 positional argument but ", nargs, " were given"));
  PyObject* other = nargs == 1 ? args[0] : nullptr;
  const char* unexpected = nullptr;
  for (Py_ssize_t i = 0; i < nkw; ++i) {
    const char* key = PyUnicode_AsUTF8(PyTuple_GET_ITEM(kwnames, i));
    if (key == nullptr) return nullptr;
    if (std::string_view(key) != "other") {
      if (unexpected == nullptr) unexpected = key;
      continue;
    }
    if (other != nullptr) throw TypeError("equal() got multiple values for argument 'other'");
    other = args[nargs + i];
  }
  if (other == nullptr) throw TypeError("equal() missing 1 required positional arguments: \"other\"");
  if (unexpected != nullptr) throw TypeError(str_cat("equal() got an unexpected keyword argument '", unexpected, "'"));
  if (!is_tensor(other)) {
    throw TypeError(str_cat("equal(): argument 'other' (position 1) must be Tensor, not ", type_name(other)));
  }
  const Tensor& a = unpack_tensor(self);
  const Tensor& b = unpack_tensor(other);
  return PyBool_FromLong(a.equal(b));
  EMBER_PY_CATCH
}
PyObject* m_element_size(PyObject* self, PyObject*) { return PyLong_FromSize_t(unpack_tensor(self).element_size()); }
PyObject* m_data_ptr(PyObject* self, PyObject*) { return PyLong_FromVoidPtr(unpack_tensor(self).data_ptr()); }

// x._adopt_view_(v): x takes the sizes, strides and offset of v, a view of
// x's storage, and counts as modified; the in-place view methods (t_,
// unsqueeze_, ...) in python/ember/_inplace_views.py are built on it.
PyObject* m_adopt_view_(PyObject* self, PyObject* arg) {
  EMBER_PY_TRY
  if (!is_tensor(arg)) throw TypeError("_adopt_view_(): expected a tensor");
  TensorImpl* dst = unpack_tensor(self).unsafeGetTensorImpl();
  const Tensor& view = unpack_tensor(arg);
  dst->set_sizes_and_strides(view.sizes(), view.strides(), view.storage_offset());
  dst->bump_version();
  Py_INCREF(self);
  return self;
  EMBER_PY_CATCH
}

// x.size(), x.size(d), x.size(dim=d), x.size(None): PyTorch's
// "size(int64_t? dim=None)" overload rules (an int, not a bool or float; a
// one-element integer tensor or NumPy integer counts as an int).
PyObject* size_or_stride(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames, bool stride) {
  EMBER_PY_TRY
  const Tensor& t = unpack_tensor(self);
  std::optional<int64_t> d;
  if (nargs != 0 || (kwnames && PyTuple_GET_SIZE(kwnames) != 0)) {
    static ArgParser size_parser({"size(int? dim=None)"}, true);
    static ArgParser stride_parser({"stride(int? dim=None)"}, true);
    ParsedArgs<1> r;
    (stride ? stride_parser : size_parser).match(args, nargs, kwnames, r);
    d = r.int64_optional(0);
  }
  if (!d) {
    if (!stride) return make_size(t.sizes());
    IntArrayRef s = t.strides();
    PyObject* tup = PyTuple_New(static_cast<Py_ssize_t>(s.size()));
    for (size_t i = 0; i < s.size(); ++i) PyTuple_SET_ITEM(tup, i, PyLong_FromLongLong(s[i]));
    return tup;
  }
  return PyLong_FromLongLong(stride ? t.stride(*d) : t.size(*d));
  EMBER_PY_CATCH
}
PyObject* m_size(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return size_or_stride(self, args, nargs, kwnames, false);
}
PyObject* m_stride(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  return size_or_stride(self, args, nargs, kwnames, true);
}

PyObject* element_to_python(const char* p, ScalarType t) {
  switch (t) {
    case ScalarType::Bool: return PyBool_FromLong(*reinterpret_cast<const unsigned char*>(p) != 0);
    case ScalarType::Float: return PyFloat_FromDouble(*reinterpret_cast<const float*>(p));
    case ScalarType::Double: return PyFloat_FromDouble(*reinterpret_cast<const double*>(p));
    case ScalarType::Half: return PyFloat_FromDouble(static_cast<float>(*reinterpret_cast<const Half*>(p)));
    case ScalarType::BFloat16: return PyFloat_FromDouble(static_cast<float>(*reinterpret_cast<const BFloat16*>(p)));
    case ScalarType::ComplexFloat: {
      const auto& c = *reinterpret_cast<const std::complex<float>*>(p);
      return PyComplex_FromDoubles(c.real(), c.imag());
    }
    case ScalarType::ComplexDouble: {
      const auto& c = *reinterpret_cast<const std::complex<double>*>(p);
      return PyComplex_FromDoubles(c.real(), c.imag());
    }
    case ScalarType::UInt16: return PyLong_FromUnsignedLongLong(*reinterpret_cast<const uint16_t*>(p));
    case ScalarType::UInt32: return PyLong_FromUnsignedLongLong(*reinterpret_cast<const uint32_t*>(p));
    case ScalarType::UInt64: return PyLong_FromUnsignedLongLong(*reinterpret_cast<const uint64_t*>(p));
    case ScalarType::ComplexHalf: {
      const Half* parts = reinterpret_cast<const Half*>(p);
      return PyComplex_FromDoubles(static_cast<float>(parts[0]), static_cast<float>(parts[1]));
    }
    default:
      if (is_float8_type(t)) return PyFloat_FromDouble(float8::to_float(*reinterpret_cast<const uint8_t*>(p), t));
      if (is_limited_type(t)) {
        throw NotImplementedError(
            str_cat("\"_local_scalar_dense_cpu\" not implemented for '", dtype_message_name(t), "'"));
      }
      return EMBER_DISPATCH_ALL_TYPES(t, "item", [&]() -> PyObject* {
        return PyLong_FromLongLong(convert<int64_t>(*reinterpret_cast<const scalar_t*>(p)));
      });
  }
}

PyObject* m_item(PyObject* self, PyObject*) {
  EMBER_PY_TRY
  const Tensor& self_t = unpack_tensor(self);
  EMBER_CHECK(self_t.numel() == 1, "a Tensor with ", self_t.numel(), " elements cannot be converted to Scalar");
  EMBER_CHECK(!self_t.is_meta(), "Tensor.item() cannot be called on meta tensors");
  Tensor t = self_t.is_cuda() ? self_t.to(Device(DeviceType::CPU)) : self_t;  // read on the host
  if (t.has_math_bits()) t = ember::clone(t);  // the value the bits say
  return element_to_python(static_cast<const char*>(t.data_ptr()), t.dtype());
  EMBER_PY_CATCH
}

PyObject* tolist_rec(const char* p, IntArrayRef sizes, IntArrayRef strides, size_t dim, int64_t isz, ScalarType t) {
  if (dim == sizes.size()) return element_to_python(p, t);
  PyObject* list = PyList_New(sizes[dim]);
  if (!list) return nullptr;  // MemoryError for a dim too long to list
  for (int64_t i = 0; i < sizes[dim]; ++i) {
    PyObject* item = tolist_rec(p + i * strides[dim] * isz, sizes, strides, dim + 1, isz, t);
    if (!item) {
      Py_DECREF(list);
      return nullptr;
    }
    PyList_SET_ITEM(list, i, item);
  }
  return list;
}

PyObject* m_tolist(PyObject* self, PyObject*) {
  EMBER_PY_TRY
  const Tensor& self_t = unpack_tensor(self);
  if (self_t.is_meta()) throw NotImplementedError("Cannot copy out of meta tensor; no data!");
  EMBER_CHECK(!is_limited_type(self_t.dtype()) || is_convertible_limited_type(self_t.dtype()),
              "load_scalar: invalid type");
  Tensor t = self_t.is_cuda() ? self_t.to(Device(DeviceType::CPU)) : self_t;  // read on the host
  if (t.has_math_bits()) t = ember::clone(t);  // the values the bits say
  return tolist_rec(static_cast<const char*>(t.data_ptr()), t.sizes(), t.strides(), 0,
                    static_cast<int64_t>(t.element_size()), t.dtype());
  EMBER_PY_CATCH
}

PyObject* m_requires_grad_(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  EMBER_PY_TRY
  bool value = true;
  PyObject* arg = nargs > 0 ? args[0] : (kwnames && PyTuple_GET_SIZE(kwnames) == 1 ? args[0] : nullptr);
  if (arg) {
    if (!PyBool_Check(arg)) throw TypeError("requires_grad_(): argument 'requires_grad' must be bool");
    value = arg == Py_True;
  }
  const Tensor& t = unpack_tensor(self);
  // requires_grad_ keeps PyTorch's older message.
  EMBER_CHECK(!value || t.is_floating_point() || t.is_complex(),
              "only Tensors of floating point dtype can require gradients");
  t.set_requires_grad(value);
  Py_INCREF(self);
  return self;
  EMBER_PY_CATCH
}

PyObject* m_detach(PyObject* self, PyObject*) {
  EMBER_PY_TRY
  return wrap(unpack_tensor(self).detach());
  EMBER_PY_CATCH
}

PyObject* m_detach_(PyObject* self, PyObject*) {
  EMBER_PY_TRY
  const Tensor& t = unpack_tensor(self);
  if (autograd::is_view(t)) {
    throw Error(
        "Can't detach views in-place. Use detach() instead. If you are using DistributedDataParallel (DDP) for "
        "training, and gradient_as_bucket_view is set as True, gradients are views of DDP buckets, and hence "
        "detach_() cannot be called on these gradients. To fix this error, please refer to the "
        "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.");
  }
  if (auto* m = autograd::get_meta(t)) {
    m->grad_fn.reset();
    m->leaf_requires_grad = false;
    m->output_nr = 0;
  }
  Py_INCREF(self);
  return self;
  EMBER_PY_CATCH
}

PyObject* m_retain_grad(PyObject* self, PyObject*) {
  EMBER_PY_TRY
  unpack_tensor(self).retain_grad();
  Py_RETURN_NONE;
  EMBER_PY_CATCH
}

PyObject* m_make_subclass(PyObject*, PyObject* args, PyObject* kwargs) {
  EMBER_PY_TRY
  static const char* kwlist[] = {"cls", "data", "require_grad", nullptr};
  PyObject* cls = nullptr;
  PyObject* data = nullptr;
  int require_grad = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|p", const_cast<char**>(kwlist), &cls, &data, &require_grad)) {
    return nullptr;
  }
  if (!PyType_Check(cls) || !PyType_IsSubtype(reinterpret_cast<PyTypeObject*>(cls), g_tensor_base_type)) {
    throw TypeError("_make_subclass: cls must be a subclass of Tensor");
  }
  if (!is_tensor(data)) throw TypeError("_make_subclass: data must be a Tensor");
  Tensor t = unpack_tensor(data).detach();
  if (require_grad) t.set_requires_grad(true);
  return wrap_as(reinterpret_cast<PyTypeObject*>(cls), std::move(t));
  EMBER_PY_CATCH
}

PyObject* m_register_hook(PyObject* self, PyObject* hook) {
  EMBER_PY_TRY
  const Tensor& t = unpack_tensor(self);
  EMBER_CHECK(t.requires_grad(), "cannot register a hook on a tensor that doesn't require gradient");
  std::shared_ptr<PyObject> fn = hold_pyobject(hook);
  autograd::TensorHook cpp_hook = [fn](const Tensor& grad) -> Tensor {
    GilGuard gil;
    PyObject* g = wrap(grad);
    PyObject* r = PyObject_CallOneArg(fn.get(), g);
    Py_DECREF(g);
    if (!r) throw python_error();
    Tensor out;
    if (r != Py_None) {
      if (!is_tensor(r)) {
        Py_DECREF(r);
        throw TypeError("hook must return a Tensor or None");
      }
      out = unpack_tensor(r);
    }
    Py_DECREF(r);
    if (out.defined()) {  // PyTorch's check_single_result
      auto hook_name = [&] {
        PyObject* n = PyObject_GetAttrString(fn.get(), "__name__");
        std::string name = n && PyUnicode_Check(n) ? PyUnicode_AsUTF8(n) : "";
        Py_XDECREF(n);
        PyErr_Clear();
        return name;
      };
      if (out.dtype() != grad.dtype() || out.device() != grad.device()) {
        throw Error(str_cat("hook '", hook_name(), "' has changed the type of value (was ", grad.type_name(), " got ",
                            out.type_name(), ")"));
      }
      EMBER_CHECK(out.sizes().equals(grad.sizes()), "hook '", hook_name(), "' has changed the size of value");
    }
    return out;
  };
  auto* m = autograd::materialize_meta(t);
  if (autograd::grad_fn(t)) {
    m->grad_fn->add_tensor_pre_hook(m->output_nr, cpp_hook);
  } else {
    m->leaf_hooks.push_back(cpp_hook);
    if (auto acc = m->grad_accumulator.lock()) acc->add_tensor_pre_hook(0, cpp_hook);
  }
  Py_RETURN_NONE;
  EMBER_PY_CATCH
}

PyObject* m_register_post_accumulate_grad_hook(PyObject* self, PyObject* hook) {
  EMBER_PY_TRY
  const Tensor& t = unpack_tensor(self);
  std::shared_ptr<PyObject> fn = hold_pyobject(hook);
  autograd::materialize_meta(t)->post_accumulate_hooks.push_back([fn](const Tensor& leaf) {
    GilGuard gil;
    PyObject* arg = wrap(leaf);
    PyObject* r = PyObject_CallOneArg(fn.get(), arg);
    Py_DECREF(arg);
    if (!r) throw python_error();
    Py_DECREF(r);
  });
  Py_RETURN_NONE;
  EMBER_PY_CATCH
}

Py_ssize_t tensor_len(PyObject* self) {
  const Tensor& t = unpack_tensor(self);
  if (t.dim() == 0) {
    PyErr_SetString(PyExc_TypeError, "len() of a 0-d tensor");
    return -1;
  }
  return static_cast<Py_ssize_t>(t.sizes()[0]);
}

// A hand-written method called on a Tensor subclass (or under a mode) goes
// to __torch_function__ as Tensor.<Name>, as PyTorch's do.
template <PyCFunction F, const char* Name>
PyObject* noargs_dispatching(PyObject* self, PyObject* unused) {
  if (torch_function::wants_dispatch(self, nullptr, 0, nullptr)) {
    EMBER_PY_TRY
    return torch_function::dispatch(Name, true, self, nullptr, 0, nullptr);
    EMBER_PY_CATCH
  }
  return F(self, unused);
}
using FastMethod = PyObject* (*)(PyObject*, PyObject* const*, Py_ssize_t);
template <FastMethod F, const char* Name>
PyObject* fast_dispatching(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  if (torch_function::wants_dispatch(self, args, nargs, nullptr)) {
    EMBER_PY_TRY
    return torch_function::dispatch(Name, true, self, args, nargs, nullptr);
    EMBER_PY_CATCH
  }
  return F(self, args, nargs);
}
using FastKwMethod = PyObject* (*)(PyObject*, PyObject* const*, Py_ssize_t, PyObject*);
template <FastKwMethod F, const char* Name>
PyObject* fastkw_dispatching(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  if (torch_function::wants_dispatch(self, args, nargs, kwnames)) {
    EMBER_PY_TRY
    return torch_function::dispatch(Name, true, self, args, nargs, kwnames);
    EMBER_PY_CATCH
  }
  return F(self, args, nargs, kwnames);
}

constexpr char k_dim[] = "dim", k_numel[] = "numel", k_storage_offset[] = "storage_offset",
               k_is_inference[] = "is_inference", k_is_floating_point[] = "is_floating_point",
               k_element_size[] = "element_size", k_data_ptr[] = "data_ptr", k_size[] = "size", k_stride[] = "stride",
               k_item[] = "item", k_tolist[] = "tolist", k_requires_grad_[] = "requires_grad_", k_detach[] = "detach",
               k_detach_[] = "detach_", k_retain_grad[] = "retain_grad", k_is_conj[] = "is_conj", k_is_neg[] = "is_neg",
               k_is_complex[] = "is_complex", k_is_signed[] = "is_signed", k_get_device[] = "get_device",
               k_equal[] = "equal";

template <PyCFunction F, const char* Name>
PyCFunction noargs() {
  return noargs_dispatching<F, Name>;
}
template <FastMethod F, const char* Name>
PyCFunction fast() {
  return reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(fast_dispatching<F, Name>));
}
template <FastKwMethod F, const char* Name>
PyCFunction fastkw() {
  return reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(fastkw_dispatching<F, Name>));
}

PyMethodDef tensor_methods[] = {
    {"dim", noargs<m_dim, k_dim>(), METH_NOARGS, nullptr},
    {"ndimension", noargs<m_dim, k_dim>(), METH_NOARGS, nullptr},
    {"numel", noargs<m_numel, k_numel>(), METH_NOARGS, nullptr},
    {"nelement", noargs<m_numel, k_numel>(), METH_NOARGS, nullptr},
    {"storage_offset", noargs<m_storage_offset, k_storage_offset>(), METH_NOARGS, nullptr},
    {"is_inference", noargs<m_is_inference, k_is_inference>(), METH_NOARGS, nullptr},
    {"is_floating_point", noargs<m_is_floating_point, k_is_floating_point>(), METH_NOARGS, nullptr},
    {"is_complex", noargs<m_is_complex, k_is_complex>(), METH_NOARGS, nullptr},
    {"is_signed", noargs<m_is_signed, k_is_signed>(), METH_NOARGS, nullptr},
    {"get_device", noargs<m_get_device, k_get_device>(), METH_NOARGS, nullptr},
    {"equal", fastkw<m_equal, k_equal>(), METH_FASTCALL | METH_KEYWORDS, nullptr},
    {"is_conj", noargs<m_is_conj, k_is_conj>(), METH_NOARGS, nullptr},
    {"is_neg", noargs<m_is_neg, k_is_neg>(), METH_NOARGS, nullptr},
    {"_set_conj", m_set_conj, METH_O, nullptr},
    {"_set_neg", m_set_neg, METH_O, nullptr},
    {"element_size", noargs<m_element_size, k_element_size>(), METH_NOARGS, nullptr},
    {"_adopt_view_", m_adopt_view_, METH_O, nullptr},
    {"data_ptr", noargs<m_data_ptr, k_data_ptr>(), METH_NOARGS, nullptr},
    {"size", fastkw<m_size, k_size>(), METH_FASTCALL | METH_KEYWORDS, nullptr},
    {"stride", fastkw<m_stride, k_stride>(), METH_FASTCALL | METH_KEYWORDS, nullptr},
    {"item", noargs<m_item, k_item>(), METH_NOARGS, nullptr},
    {"tolist", noargs<m_tolist, k_tolist>(), METH_NOARGS, nullptr},
    {"requires_grad_",
     reinterpret_cast<PyCFunction>(
         reinterpret_cast<void (*)()>(fastkw_dispatching<m_requires_grad_, k_requires_grad_>)),
     METH_FASTCALL | METH_KEYWORDS, nullptr},
    {"detach", noargs<m_detach, k_detach>(), METH_NOARGS, nullptr},
    {"detach_", noargs<m_detach_, k_detach_>(), METH_NOARGS, nullptr},
    {"retain_grad", noargs<m_retain_grad, k_retain_grad>(), METH_NOARGS, nullptr},
    {"register_hook", m_register_hook, METH_O, nullptr},
    {"_register_post_accumulate_grad_hook", m_register_post_accumulate_grad_hook, METH_O, nullptr},
    {"_make_subclass", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(m_make_subclass)),
     METH_VARARGS | METH_KEYWORDS | METH_STATIC, nullptr},
    {nullptr, nullptr, 0, nullptr}};

// ---- Python operators -------------------------------------------------------

// Converts either operand of a binary operator; returns false for
// unsupported types (the operator then returns NotImplemented).
bool operand(PyObject* o, Tensor& out) {
  if (is_tensor(o)) {
    out = unpack_tensor(o);
    return true;
  }
  if (is_number(o)) {
    out = scalar_to_tensor(o);
    return true;
  }
  return false;
}

// The number a wrapped 0-dim tensor holds (bool, int, float or complex).
Scalar number_of(const Tensor& t) {
  switch (t.dtype()) {
    case ScalarType::Bool: return Scalar(*static_cast<const bool*>(t.data_ptr()));
    case ScalarType::Long: return Scalar(*static_cast<const int64_t*>(t.data_ptr()));
    case ScalarType::ComplexDouble: return Scalar(*static_cast<const std::complex<double>*>(t.data_ptr()));
    default: return Scalar(*static_cast<const double*>(t.data_ptr()));
  }
}

#define EMBER_BINARY_SLOT(slot, expr)                               \
  PyObject* slot(PyObject* a, PyObject* b) {                        \
    EMBER_PY_TRY                                                    \
    Tensor x, y;                                                    \
    if (!operand(a, x) || !operand(b, y)) Py_RETURN_NOTIMPLEMENTED; \
    return wrap(expr);                                              \
    EMBER_PY_CATCH                                                  \
  }
// A number on the left adds as tensor + number, as PyTorch's __radd__ (self.add(other)): complex
// infinities keep a zero imaginary part when the number is not scaled by alpha.
EMBER_BINARY_SLOT(nb_add, is_tensor(a) ? ember::add(x, y) : ember::add(y, x))
// number - tensor is PyTorch's __rsub__: rsub.Scalar, recorded as RsubBackward1.
EMBER_BINARY_SLOT(nb_sub, is_tensor(a) || x.unsafeGetTensorImpl()->is_wrapped_uint64() ? ember::sub(x, y)
                                                                                       : ember::rsub(y, number_of(x)))
// A number on the left multiplies as tensor * number, as PyTorch's __rmul__
// (Note [Scalar operand of 16-bit products]).
EMBER_BINARY_SLOT(nb_mul, is_tensor(a) ? ember::mul(x, y) : ember::mul(y, x))
EMBER_BINARY_SLOT(nb_matmul, ember::matmul(x, y))
#undef EMBER_BINARY_SLOT

#define EMBER_INPLACE_SLOT(slot, method)                           \
  PyObject* slot(PyObject* a, PyObject* b) {                       \
    EMBER_PY_TRY                                                   \
    Tensor y;                                                      \
    if (!is_tensor(a) || !operand(b, y)) Py_RETURN_NOTIMPLEMENTED; \
    unpack_tensor(a).method(y);                                    \
    Py_INCREF(a);                                                  \
    return a;                                                      \
    EMBER_PY_CATCH                                                 \
  }
EMBER_INPLACE_SLOT(nb_iadd, add_)
EMBER_INPLACE_SLOT(nb_isub, sub_)
EMBER_INPLACE_SLOT(nb_imul, mul_)
#undef EMBER_INPLACE_SLOT

// ---- math operators: / // % ** & | ^ << >> ~ abs() and comparisons ----------------
// Each mirrors the Tensor method PyTorch's operator calls, so results, dtypes
// and grad_fn names match: a Python number on the right selects the Scalar
// overload where PyTorch has one; on the left it is the reflected form.

Scalar to_scalar(PyObject* o) {
  if (PyBool_Check(o)) return Scalar(o == Py_True);
  if (PyLong_Check(o)) return unpack_int_scalar(o);
  if (PyComplex_Check(o)) return Scalar(unpack_complex(o));
  return Scalar(unpack_double(o));
}

// Calls tt(x, y) for two tensors, ts(x, s) for tensor op number and
// st(s, y) for number op tensor; NotImplemented for anything else.
template <typename TT, typename TS, typename ST>
PyObject* math_binary(PyObject* a, PyObject* b, TT tt, TS ts, ST st) {
  EMBER_PY_TRY
  const bool ta = is_tensor(a), tb = is_tensor(b);
  if (ta && tb) return wrap(tt(unpack_tensor(a), unpack_tensor(b)));
  if (ta && is_number(b)) return wrap(ts(unpack_tensor(a), to_scalar(b)));
  if (tb && is_number(a)) return wrap(st(to_scalar(a), unpack_tensor(b)));
  Py_RETURN_NOTIMPLEMENTED;
  EMBER_PY_CATCH
}

template <typename TT, typename TS>
PyObject* math_inplace(PyObject* a, PyObject* b, TT tt, TS ts) {
  EMBER_PY_TRY
  if (!is_tensor(a)) Py_RETURN_NOTIMPLEMENTED;
  if (is_tensor(b)) {
    tt(unpack_tensor(a), unpack_tensor(b));
  } else if (is_number(b)) {
    ts(unpack_tensor(a), to_scalar(b));
  } else {
    Py_RETURN_NOTIMPLEMENTED;
  }
  Py_INCREF(a);
  return a;
  EMBER_PY_CATCH
}

PyObject* nb_truediv(PyObject* a, PyObject* b) {
  return math_binary(
      a, b, [](const Tensor& x, const Tensor& y) { return ember::div(x, y); },
      [](const Tensor& x, const Scalar& s) { return ember::div(x, wrapped_scalar(s)); },
      // PyTorch's __rtruediv__ is reciprocal(self) * other.
      [](const Scalar& s, const Tensor& y) { return ember::mul(ember::reciprocal(y), wrapped_scalar(s)); });
}
PyObject* nb_floordiv(PyObject* a, PyObject* b) {
  return math_binary(
      a, b, [](const Tensor& x, const Tensor& y) { return ember::floor_divide(x, y); },
      [](const Tensor& x, const Scalar& s) { return ember::floor_divide(x, wrapped_scalar(s)); },
      [](const Scalar& s, const Tensor& y) { return ember::floor_divide(wrapped_scalar(s), y); });
}
PyObject* nb_mod(PyObject* a, PyObject* b) {
  return math_binary(
      a, b, [](const Tensor& x, const Tensor& y) { return ember::remainder(x, y); },
      [](const Tensor& x, const Scalar& s) { return ember::remainder(x, s); },
      [](const Scalar& s, const Tensor& y) { return ember::remainder(s, y); });
}
PyObject* nb_pow(PyObject* a, PyObject* b, PyObject* mod) {
  if (mod != Py_None) Py_RETURN_NOTIMPLEMENTED;
  return math_binary(
      a, b, [](const Tensor& x, const Tensor& y) { return ember::pow(x, y); },
      [](const Tensor& x, const Scalar& s) { return ember::pow(x, s); },
      [](const Scalar& s, const Tensor& y) { return ember::pow(s, y); });
}
PyObject* nb_and(PyObject* a, PyObject* b) {
  return math_binary(
      a, b, [](const Tensor& x, const Tensor& y) { return ember::bitwise_and(x, y); },
      [](const Tensor& x, const Scalar& s) { return ember::bitwise_and(x, s); },
      [](const Scalar& s, const Tensor& y) { return ember::bitwise_and(y, s); });
}
PyObject* nb_or(PyObject* a, PyObject* b) {
  return math_binary(
      a, b, [](const Tensor& x, const Tensor& y) { return ember::bitwise_or(x, y); },
      [](const Tensor& x, const Scalar& s) { return ember::bitwise_or(x, s); },
      [](const Scalar& s, const Tensor& y) { return ember::bitwise_or(y, s); });
}
PyObject* nb_xor(PyObject* a, PyObject* b) {
  return math_binary(
      a, b, [](const Tensor& x, const Tensor& y) { return ember::bitwise_xor(x, y); },
      [](const Tensor& x, const Scalar& s) { return ember::bitwise_xor(x, s); },
      [](const Scalar& s, const Tensor& y) { return ember::bitwise_xor(y, s); });
}
PyObject* nb_lshift(PyObject* a, PyObject* b) {
  return math_binary(
      a, b, [](const Tensor& x, const Tensor& y) { return ember::bitwise_left_shift(x, y); },
      [](const Tensor& x, const Scalar& s) { return ember::bitwise_left_shift(x, s); },
      [](const Scalar& s, const Tensor& y) { return ember::bitwise_left_shift(s, y); });
}
PyObject* nb_rshift(PyObject* a, PyObject* b) {
  return math_binary(
      a, b, [](const Tensor& x, const Tensor& y) { return ember::bitwise_right_shift(x, y); },
      [](const Tensor& x, const Scalar& s) { return ember::bitwise_right_shift(x, s); },
      [](const Scalar& s, const Tensor& y) { return ember::bitwise_right_shift(s, y); });
}

PyObject* nb_itruediv(PyObject* a, PyObject* b) {
  return math_inplace(
      a, b, [](const Tensor& x, const Tensor& y) { x.div_(y); },
      [](const Tensor& x, const Scalar& s) { x.div_(wrapped_scalar(s)); });
}
PyObject* nb_ifloordiv(PyObject* a, PyObject* b) {
  return math_inplace(
      a, b, [](const Tensor& x, const Tensor& y) { x.floor_divide_(y); },
      [](const Tensor& x, const Scalar& s) { x.floor_divide_(wrapped_scalar(s)); });
}
PyObject* nb_imod(PyObject* a, PyObject* b) {
  return math_inplace(
      a, b, [](const Tensor& x, const Tensor& y) { x.remainder_(y); },
      [](const Tensor& x, const Scalar& s) { x.remainder_(s); });
}
PyObject* nb_ipow(PyObject* a, PyObject* b, PyObject* mod) {
  if (mod != Py_None) Py_RETURN_NOTIMPLEMENTED;
  return math_inplace(
      a, b, [](const Tensor& x, const Tensor& y) { x.pow_(y); }, [](const Tensor& x, const Scalar& s) { x.pow_(s); });
}
PyObject* nb_iand(PyObject* a, PyObject* b) {
  return math_inplace(
      a, b, [](const Tensor& x, const Tensor& y) { x.bitwise_and_(y); },
      [](const Tensor& x, const Scalar& s) { x.bitwise_and_(s); });
}
PyObject* nb_ior(PyObject* a, PyObject* b) {
  return math_inplace(
      a, b, [](const Tensor& x, const Tensor& y) { x.bitwise_or_(y); },
      [](const Tensor& x, const Scalar& s) { x.bitwise_or_(s); });
}
PyObject* nb_ixor(PyObject* a, PyObject* b) {
  return math_inplace(
      a, b, [](const Tensor& x, const Tensor& y) { x.bitwise_xor_(y); },
      [](const Tensor& x, const Scalar& s) { x.bitwise_xor_(s); });
}
PyObject* nb_ilshift(PyObject* a, PyObject* b) {
  return math_inplace(
      a, b, [](const Tensor& x, const Tensor& y) { x.bitwise_left_shift_(y); },
      [](const Tensor& x, const Scalar& s) { x.bitwise_left_shift_(s); });
}
PyObject* nb_irshift(PyObject* a, PyObject* b) {
  return math_inplace(
      a, b, [](const Tensor& x, const Tensor& y) { x.bitwise_right_shift_(y); },
      [](const Tensor& x, const Scalar& s) { x.bitwise_right_shift_(s); });
}

PyObject* nb_invert(PyObject* a) {
  EMBER_PY_TRY
  const Tensor& t = unpack_tensor(a);
  EMBER_CHECK_TYPE(TypeError, is_integral_type(t.dtype(), true),
                   "~ (operator.invert) is only implemented on integer and Boolean-type tensors");
  return wrap(ember::bitwise_not(t));
  EMBER_PY_CATCH
}

PyObject* nb_abs(PyObject* a) {
  EMBER_PY_TRY
  return wrap(ember::abs(unpack_tensor(a)));
  EMBER_PY_CATCH
}

// Comparisons return tensors; anything that is neither a tensor nor a number
// gives NotImplemented, so == and != fall back to identity as in PyTorch.
PyObject* tensor_richcompare(PyObject* a, PyObject* b, int op) {
  auto pick = [op](const Tensor& x, const auto& y) {
    switch (op) {
      case Py_EQ: return ember::eq(x, y);
      case Py_NE: return ember::ne(x, y);
      case Py_LT: return ember::lt(x, y);
      case Py_LE: return ember::le(x, y);
      case Py_GT: return ember::gt(x, y);
      default: return ember::ge(x, y);
    }
  };
  EMBER_PY_TRY
  if (!is_tensor(a)) Py_RETURN_NOTIMPLEMENTED;
  if (is_tensor(b)) return wrap(pick(unpack_tensor(a), unpack_tensor(b)));
  if (is_number(b)) return wrap(pick(unpack_tensor(a), to_scalar(b)));
  Py_RETURN_NOTIMPLEMENTED;
  EMBER_PY_CATCH
}

PyObject* nb_neg(PyObject* a) {
  EMBER_PY_TRY
  return wrap(ember::neg(unpack_tensor(a)));
  EMBER_PY_CATCH
}
PyObject* nb_pos(PyObject* a) {
  EMBER_PY_TRY
  EMBER_CHECK(unpack_tensor(a).dtype() != ScalarType::Bool, "The `+` operator, on a bool tensor is not supported.");
  Py_INCREF(a);
  return a;
  EMBER_PY_CATCH
}
// float() and int() of a complex tensor need its imaginary part to be 0.
void check_real_value(const Tensor& t, const char* cpp_type) {
  if (t.is_complex()) {
    EMBER_CHECK(t.item<std::complex<double>>().imag() == 0, "value cannot be converted to type ", cpp_type,
                " without overflow");
  }
}

int nb_bool(PyObject* a) {
  EMBER_PY_TRY
  const Tensor& t = unpack_tensor(a);
  EMBER_CHECK(t.numel() != 0, "Boolean value of Tensor with no values is ambiguous");
  EMBER_CHECK(t.numel() == 1, "Boolean value of Tensor with more than one value is ambiguous");
  return t.item<bool>();
  EMBER_PY_CATCH_RET(-1)
}
PyObject* nb_float(PyObject* a) {
  EMBER_PY_TRY
  const Tensor& t = unpack_tensor(a);
  EMBER_CHECK_TYPE(ValueError, t.numel() == 1, "only one element tensors can be converted to Python scalars");
  check_real_value(t, "double");
  return PyFloat_FromDouble(t.item<double>());
  EMBER_PY_CATCH
}
PyObject* nb_int(PyObject* a) {
  EMBER_PY_TRY
  const Tensor& t = unpack_tensor(a);
  EMBER_CHECK_TYPE(ValueError, t.numel() == 1, "only one element tensors can be converted to Python scalars");
  check_real_value(t, "int64_t");
  return PyLong_FromLongLong(t.item<int64_t>());
  EMBER_PY_CATCH
}

// ---- __torch_function__ for operators ----------------------------------------
// An operand that takes part in the protocol sends the operator to
// Tensor.__op__ (or __rop__ when the tensor is on the right), as PyTorch's
// operators do; otherwise the slot runs.

PyObject* operator_dispatch(PyObject* a, PyObject* b, const char* op, const char* rop) {
  PyObject* other[1];
  if (is_tensor(a)) {
    other[0] = b;
    return torch_function::dispatch(op, true, a, other, 1, nullptr);
  }
  other[0] = a;
  return torch_function::dispatch(rop, true, b, other, 1, nullptr);
}

// A binary operator whose overrides all refuse gives NotImplemented, so that
// Python raises its "unsupported operand type(s)" (PyTorch's behaviour).
PyObject* binary_operator_dispatch(PyObject* a, PyObject* b, const char* op, const char* rop) {
  EMBER_PY_TRY
  return operator_dispatch(a, b, op, rop);
  EMBER_PY_CATCH_RET(PyErr_ExceptionMatches(PyExc_TypeError) ? (PyErr_Clear(), Py_NewRef(Py_NotImplemented)) : nullptr)
}

template <binaryfunc Slot, const char* Op, const char* ROp>
PyObject* with_torch_function(PyObject* a, PyObject* b) {
  if (torch_function::wants_dispatch(a, b)) return binary_operator_dispatch(a, b, Op, ROp);
  return Slot(a, b);
}

template <ternaryfunc Slot, const char* Op, const char* ROp>
PyObject* with_torch_function3(PyObject* a, PyObject* b, PyObject* c) {
  if (c == Py_None && torch_function::wants_dispatch(a, b)) return binary_operator_dispatch(a, b, Op, ROp);
  return Slot(a, b, c);
}

template <unaryfunc Slot, const char* Op>
PyObject* with_torch_function1(PyObject* a) {
  if (torch_function::wants_dispatch(a, nullptr)) {
    EMBER_PY_TRY
    return torch_function::dispatch(Op, true, a, nullptr, 0, nullptr);
    EMBER_PY_CATCH
  }
  return Slot(a);
}

PyObject* richcompare_with_torch_function(PyObject* a, PyObject* b, int op) {
  static const char* names[] = {"lt", "le", "__eq__", "__ne__", "gt", "ge"};
  static const char* reflected[] = {"gt", "ge", "__eq__", "__ne__", "lt", "le"};
  if (torch_function::wants_dispatch(a, b)) {
    EMBER_PY_TRY
    return operator_dispatch(a, b, names[op], reflected[op]);
    EMBER_PY_CATCH
  }
  return tensor_richcompare(a, b, op);
}

// The Tensor methods PyTorch's operators pass to __torch_function__.
constexpr char k_add[] = "add", k_sub[] = "sub", k_rsub[] = "__rsub__", k_mul[] = "mul", k_matmul[] = "matmul",
               k_rmatmul[] = "__rmatmul__", k_div[] = "div", k_rdiv[] = "__rdiv__", k_floordiv[] = "__floordiv__",
               k_rfloordiv[] = "__rfloordiv__", k_remainder[] = "remainder", k_rmod[] = "__rmod__", k_pow[] = "pow",
               k_rpow[] = "__rpow__", k_and[] = "__and__", k_rand[] = "__rand__", k_or[] = "__or__",
               k_ror[] = "__ror__", k_xor[] = "__xor__", k_rxor[] = "__rxor__", k_lshift[] = "__lshift__",
               k_rlshift[] = "__rlshift__", k_rshift[] = "__rshift__", k_rrshift[] = "__rrshift__";
constexpr char k_iadd[] = "add_", k_isub[] = "sub_", k_imul[] = "mul_", k_idiv[] = "div_",
               k_ifloordiv[] = "__ifloordiv__", k_imod[] = "remainder_", k_ipow[] = "pow_", k_iand[] = "__iand__",
               k_ior[] = "__ior__", k_ixor[] = "__ixor__", k_ilshift[] = "__ilshift__", k_irshift[] = "__irshift__";
constexpr char k_invert[] = "__invert__", k_abs[] = "abs", k_neg[] = "neg", k_pos[] = "__pos__";

PyObject* getitem_with_torch_function(PyObject* self, PyObject* index) {
  if (torch_function::wants_dispatch(self, &index, 1, nullptr)) {
    EMBER_PY_TRY
    return torch_function::dispatch("__getitem__", true, self, &index, 1, nullptr);
    EMBER_PY_CATCH
  }
  return tensor_getitem(self, index);
}

int setitem_with_torch_function(PyObject* self, PyObject* index, PyObject* value) {
  PyObject* args[2] = {index, value};
  if (value && torch_function::wants_dispatch(self, args, 2, nullptr)) {
    EMBER_PY_TRY
    PyObject* out = torch_function::dispatch("__setitem__", true, self, args, 2, nullptr);
    Py_DECREF(out);
    return 0;
    EMBER_PY_CATCH_RET(-1)
  }
  return tensor_setitem(self, index, value);
}

PyNumberMethods tensor_as_number = {};
PySequenceMethods tensor_as_sequence = {};
PyMappingMethods tensor_as_mapping = {};

}  // namespace

void add_generated_methods(std::vector<PyMethodDef>& methods);
void add_conversion_methods(std::vector<PyMethodDef>& methods);

void init_tensor_type(PyObject* module) {
  static std::vector<PyMethodDef> methods;
  for (PyMethodDef* m = tensor_methods; m->ml_name; ++m) methods.push_back(*m);
  add_generated_methods(methods);
  add_conversion_methods(methods);
  add_view_methods(methods);
  methods.push_back({nullptr, nullptr, 0, nullptr});

  tensor_as_number.nb_add = with_torch_function<nb_add, k_add, k_add>;
  tensor_as_number.nb_subtract = with_torch_function<nb_sub, k_sub, k_rsub>;
  tensor_as_number.nb_multiply = with_torch_function<nb_mul, k_mul, k_mul>;
  tensor_as_number.nb_matrix_multiply = with_torch_function<nb_matmul, k_matmul, k_rmatmul>;
  tensor_as_number.nb_inplace_add = with_torch_function<nb_iadd, k_iadd, k_iadd>;
  tensor_as_number.nb_inplace_subtract = with_torch_function<nb_isub, k_isub, k_isub>;
  tensor_as_number.nb_inplace_multiply = with_torch_function<nb_imul, k_imul, k_imul>;
  tensor_as_number.nb_true_divide = with_torch_function<nb_truediv, k_div, k_rdiv>;
  tensor_as_number.nb_floor_divide = with_torch_function<nb_floordiv, k_floordiv, k_rfloordiv>;
  tensor_as_number.nb_remainder = with_torch_function<nb_mod, k_remainder, k_rmod>;
  tensor_as_number.nb_power = with_torch_function3<nb_pow, k_pow, k_rpow>;
  tensor_as_number.nb_and = with_torch_function<nb_and, k_and, k_rand>;
  tensor_as_number.nb_or = with_torch_function<nb_or, k_or, k_ror>;
  tensor_as_number.nb_xor = with_torch_function<nb_xor, k_xor, k_rxor>;
  tensor_as_number.nb_lshift = with_torch_function<nb_lshift, k_lshift, k_rlshift>;
  tensor_as_number.nb_rshift = with_torch_function<nb_rshift, k_rshift, k_rrshift>;
  tensor_as_number.nb_inplace_true_divide = with_torch_function<nb_itruediv, k_idiv, k_idiv>;
  tensor_as_number.nb_inplace_floor_divide = with_torch_function<nb_ifloordiv, k_ifloordiv, k_ifloordiv>;
  tensor_as_number.nb_inplace_remainder = with_torch_function<nb_imod, k_imod, k_imod>;
  tensor_as_number.nb_inplace_power = with_torch_function3<nb_ipow, k_ipow, k_ipow>;
  tensor_as_number.nb_inplace_and = with_torch_function<nb_iand, k_iand, k_iand>;
  tensor_as_number.nb_inplace_or = with_torch_function<nb_ior, k_ior, k_ior>;
  tensor_as_number.nb_inplace_xor = with_torch_function<nb_ixor, k_ixor, k_ixor>;
  tensor_as_number.nb_inplace_lshift = with_torch_function<nb_ilshift, k_ilshift, k_ilshift>;
  tensor_as_number.nb_inplace_rshift = with_torch_function<nb_irshift, k_irshift, k_irshift>;
  tensor_as_number.nb_invert = with_torch_function1<nb_invert, k_invert>;
  tensor_as_number.nb_absolute = with_torch_function1<nb_abs, k_abs>;
  tensor_as_number.nb_negative = with_torch_function1<nb_neg, k_neg>;
  tensor_as_number.nb_positive = with_torch_function1<nb_pos, k_pos>;
  tensor_as_number.nb_bool = nb_bool;
  tensor_as_number.nb_float = nb_float;
  tensor_as_number.nb_int = nb_int;
  tensor_as_sequence.sq_length = tensor_len;
  tensor_as_mapping.mp_subscript = getitem_with_torch_function;
  tensor_as_mapping.mp_ass_subscript = setitem_with_torch_function;

  static PyTypeObject type = {PyVarObject_HEAD_INIT(nullptr, 0)};
  type.tp_name = "ember._C.TensorBase";
  type.tp_basicsize = sizeof(PyTensorObject);
  type.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC;
  type.tp_new = tensor_new;
  type.tp_dealloc = tensor_dealloc;
  type.tp_traverse = tensor_traverse;
  type.tp_clear = tensor_clear;
  type.tp_dictoffset = offsetof(PyTensorObject, dict);
  type.tp_weaklistoffset = offsetof(PyTensorObject, weakreflist);
  static std::vector<PyGetSetDef> getset = make_tensor_getset();
  type.tp_getset = getset.data();
  type.tp_methods = methods.data();
  type.tp_as_number = &tensor_as_number;
  type.tp_as_sequence = &tensor_as_sequence;
  type.tp_richcompare = richcompare_with_torch_function;
  type.tp_hash = PyBaseObject_Type.tp_hash;  // identity, as defining comparisons would unset it
  type.tp_as_mapping = &tensor_as_mapping;
  if (PyType_Ready(&type) < 0) throw python_error();
  g_tensor_base_type = &type;
  g_tensor_class = reinterpret_cast<PyObject*>(&type);
  PyModule_AddObjectRef(module, "TensorBase", reinterpret_cast<PyObject*>(&type));
}

}  // namespace ember::python
