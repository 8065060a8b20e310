// Python indexing with PyTorch's rules (Note [Python indexing]).
//
// Note [Python indexing]
// An index is a single object or a tuple of them. Integers select (the
// dimension goes away), slices narrow, None inserts a dimension, Ellipsis
// stands for the dimensions no other entry names, and True/False insert a
// dimension of size 1/0. These give views of the tensor, recorded by
// autograd as SelectBackward0, SliceBackward0, UnsqueezeBackward0. Tensors,
// Python lists and other sequences are "advanced" indices: they are
// collected per dimension (a bool mask covers as many dimensions as it has)
// and handed, with None for the dimensions in between, to index() (a copy,
// IndexBackward0) or index_put_(). Inside a tuple a slice that covers the
// whole dimension is skipped, so x[:, 1] is just a select; a lone x[:] still
// records a slice, and x[...] gives an alias, as in PyTorch.
// Assignment first turns the value into a tensor (a Python number becomes a
// 0-dim tensor of the target's dtype), then copies or fills it into the
// selected view, which autograd records through CopySlices, or calls
// index_put_ when advanced indices are present.
#include "ember/python/PyIndexing.h"

#include <cmath>
#include <complex>
#include <limits>

#include "ember/autograd/Autograd.h"
#include "ember/cpu/IndexStubs.h"
#include "ember/ops/Ops.h"
#include "ember/python/PyTensor.h"

namespace ember::python {

namespace {

using OptTensors = std::vector<std::optional<Tensor>>;

// Owns one reference.
struct PyRef {
  PyObject* p = nullptr;
  explicit PyRef(PyObject* o) : p(o) {}
  PyRef(const PyRef&) = delete;
  PyRef& operator=(const PyRef&) = delete;
  ~PyRef() { Py_XDECREF(p); }
};

bool is_int_index(PyObject* o) { return PyLong_Check(o) && !PyBool_Check(o); }

struct SliceArgs {
  int64_t start, stop, step;
};

SliceArgs unpack_slice(PyObject* s) {
  Py_ssize_t start = 0, stop = 0, step = 0;
  if (PySlice_Unpack(s, &start, &stop, &step) < 0) throw python_error();
  return {start, stop, step};
}

Tensor apply_select(const Tensor& self, int64_t dim, int64_t index, int64_t real_dim) {
  if (self.dim() == 0) {
    EMBER_CHECK_TYPE(IndexError, index != 0,
                     "invalid index of a 0-dim tensor. Use `tensor.item()` in Python or `tensor.item<T>()` in C++ to "
                     "convert a 0-dim tensor to a number");
    throw IndexError(str_cat("index ", index, " is out of bounds for dimension ", real_dim, " with size 0"));
  }
  const int64_t size = self.sizes()[dim];
  EMBER_CHECK_TYPE(IndexError, size > -1 - index && size > index, "index ", index, " is out of bounds for dimension ",
                   real_dim, " with size ", size);
  return ember::select(self, dim, index);
}

Tensor apply_slice(const Tensor& self, int64_t dim, const SliceArgs& s, bool keep_full) {
  EMBER_CHECK_TYPE(ValueError, s.step > 0, "step must be greater than zero");
  EMBER_CHECK_TYPE(IndexError, self.dim() > 0, "slice() cannot be applied to a 0-dim tensor.");
  if (!keep_full && s.start == 0 && s.step == 1 && s.stop >= self.sizes()[dim]) return self;
  return ember::slice(self, dim, s.start, s.stop, s.step);
}

// True/False as an index tensor: one position (0) or none.
Tensor bool_index(bool value) {
  Tensor t = empty({value ? 1 : 0}, ScalarType::Long);
  if (value) *t.data_ptr<int64_t>() = 0;
  return t;
}

bool is_mask_dtype(ScalarType t) { return t == ScalarType::Bool || t == ScalarType::Byte; }

// A Python sequence used as an index: bool lists stay masks, anything else
// becomes int64 (floats truncate), as PyTorch's indexing conversion does.
Tensor sequence_to_index(PyObject* seq) {
  if (PyUnicode_Check(seq) || PyBytes_Check(seq)) {
    throw TypeError(str_cat("new(): invalid data type '", Py_TYPE(seq)->tp_name, "'"));
  }
  static PyObject* tensor_fn = nullptr;
  if (!tensor_fn) {
    PyRef mod(PyImport_ImportModule("ember._tensor"));
    if (!mod.p) throw python_error();
    tensor_fn = PyObject_GetAttrString(mod.p, "tensor");
    if (!tensor_fn) throw python_error();
  }
  PyRef r(PyObject_CallOneArg(tensor_fn, seq));
  if (!r.p) {
    // Report the element type the way PyTorch does.
    if (PyErr_ExceptionMatches(PyExc_TypeError)) {
      PyObject *type, *value, *tb;
      PyErr_Fetch(&type, &value, &tb);
      PyRef msg(value ? PyObject_Str(value) : nullptr);
      std::string text = msg.p ? PyUnicode_AsUTF8(msg.p) : "";
      Py_XDECREF(type);
      Py_XDECREF(value);
      Py_XDECREF(tb);
      const std::string prefix = "Could not infer dtype of ";
      if (text.rfind(prefix, 0) == 0) text = "new(): invalid data type '" + text.substr(prefix.size()) + "'";
      throw TypeError(text);
    }
    throw python_error();
  }
  Tensor t = unpack_tensor(r.p);
  if (!is_mask_dtype(t.dtype())) t = t.to(ScalarType::Long);
  return t;
}

// PyTorch treats a short non-tuple sequence containing a sequence, slice,
// tensor, None or Ellipsis as a tuple of indices (a NumPy legacy).
bool treat_sequence_as_tuple(PyObject* index) {
  if (PyTuple_Check(index)) return true;
  if (is_tensor(index) || !PySequence_Check(index)) return false;
  Py_ssize_t n = PySequence_Size(index);
  if (n < 0) {
    PyErr_Clear();
    return false;
  }
  if (n >= 32) return false;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyRef obj(PySequence_GetItem(index, i));
    if (!obj.p) {
      PyErr_Clear();
      return false;
    }
    if (is_tensor(obj.p) || PySequence_Check(obj.p) || PySlice_Check(obj.p) || obj.p == Py_Ellipsis ||
        obj.p == Py_None) {
      if (PyErr_WarnEx(PyExc_UserWarning,
                       "Using a non-tuple sequence for multidimensional indexing is deprecated and will be changed "
                       "in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will be interpreted "
                       "as tensor index, x[torch.tensor(seq)], which will result either in an error or a different "
                       "result",
                       1) < 0) {
        throw python_error();
      }
      return true;
    }
  }
  return false;
}

// New reference to the index as a tuple.
PyObject* wrap_tuple(PyObject* index) {
  if (PyTuple_Check(index)) {
    Py_INCREF(index);
    return index;
  }
  if (treat_sequence_as_tuple(index)) return PySequence_Tuple(index);
  return PyTuple_Pack(1, index);
}

// Dimensions the index names (not None, Ellipsis or bools; a mask names its dims).
int64_t count_specified_dims(PyObject* tup) {
  int64_t count = 0;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(tup); ++i) {
    PyObject* obj = PyTuple_GET_ITEM(tup, i);
    if (is_tensor(obj)) {
      const Tensor& t = unpack_tensor(obj);
      count += is_mask_dtype(t.dtype()) ? t.dim() : 1;
    } else if (obj != Py_None && obj != Py_Ellipsis && obj != Py_True && obj != Py_False) {
      ++count;
    }
  }
  return count;
}

// Walks a tuple index: applies basic indexing to self and collects the
// advanced indices (Note [Python indexing]).
class Slicer {
 public:
  Slicer(const Tensor& self, bool keep_full_slices) : self_(self), keep_full_(keep_full_slices) {}

  Tensor apply(PyObject* tup) {
    const int64_t specified = count_specified_dims(tup);
    EMBER_CHECK_TYPE(IndexError, specified <= self_.dim(), "too many indices for tensor of dimension ", self_.dim());
    result_ = self_;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(tup); ++i) {
      PyObject* obj = PyTuple_GET_ITEM(tup, i);
      if (is_int_index(obj)) {
        result_ = apply_select(result_, dim_, unpack_long(obj), i);
      } else if (PySlice_Check(obj)) {
        result_ = apply_slice(result_, dim_, unpack_slice(obj), keep_full_);
        ++dim_;
      } else if (obj == Py_Ellipsis) {
        dim_ += self_.dim() - specified;
      } else if (obj == Py_None) {
        result_ = result_.unsqueeze(dim_);
        ++dim_;
      } else if (PyBool_Check(obj)) {
        result_ = result_.unsqueeze(dim_);
        record(bool_index(obj == Py_True));
      } else if (is_tensor(obj)) {
        add_tensor(unpack_tensor(obj), i);
      } else if (PySequence_Check(obj)) {
        add_tensor(sequence_to_index(obj), i);
      } else {
        PyRef idx(PyNumber_Index(obj));
        if (!idx.p) {
          PyErr_Clear();
          throw IndexError(
              str_cat("only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables "
                      "are valid indices (got ",
                      Py_TYPE(obj)->tp_name, ")"));
        }
        result_ = apply_select(result_, dim_, unpack_long(idx.p), i);
      }
    }
    return result_;
  }

  OptTensors& indices() { return indices_; }

 private:
  void add_tensor(const Tensor& t, int64_t real_dim) {
    if (t.dim() == 0 && is_integral_type(t.dtype(), /*include_bool=*/true)) {
      if (!is_mask_dtype(t.dtype())) {
        result_ = apply_select(result_, dim_, t.item<int64_t>(), real_dim);
      } else {
        result_ = result_.unsqueeze(dim_);
        record(bool_index(t.item<int64_t>() != 0));
      }
      return;
    }
    record(t);
  }

  // Puts t at the current dimension (None for the skipped ones).
  void record(const Tensor& t) {
    while (covered_ < dim_) {
      indices_.emplace_back(std::nullopt);
      ++covered_;
    }
    indices_.emplace_back(t);
    const int64_t n = is_mask_dtype(t.dtype()) ? t.dim() : 1;
    covered_ += n;
    dim_ += n;
  }

  const Tensor& self_;
  bool keep_full_;
  Tensor result_;
  int64_t dim_ = 0;
  int64_t covered_ = 0;  // dimensions accounted for by indices_
  OptTensors indices_;
};

// ---- assignment --------------------------------------------------------------

// A Python float as a 0-dim tensor of the target's dtype. 16-bit floats take
// it rounded from double (1e300 becomes inf), as PyTorch's assignment does.
Tensor complex_value_to_tensor(const Tensor& self, Py_complex c);

Tensor float_value_to_tensor(const Tensor& self, double v) {
  const ScalarType t = self.dtype();
  if (is_complex_type(t)) return complex_value_to_tensor(self, Py_complex{v, 0.0});
  if (t == ScalarType::Half || t == ScalarType::BFloat16) {
    return full({}, Scalar(v), ScalarType::Double, self.device()).to(t);
  }
  cpu::check_value_fits(t, Scalar(v), /*check_16bit_floats=*/false);
  return full({}, Scalar(v), t, self.device());
}

// A Python complex as a 0-dim tensor of the target's dtype, checked as
// PyTorch converts it: complex64 parts must fit a float; a real dtype takes a
// number without imaginary part (bool takes any).
Tensor complex_value_to_tensor(const Tensor& self, Py_complex c) {
  const ScalarType t = self.dtype();
  if (is_complex_type(t)) {
    const auto too_big = [](double v) { return std::isfinite(v) && std::fabs(v) > std::numeric_limits<float>::max(); };
    EMBER_CHECK(t != ScalarType::ComplexFloat || !(too_big(c.real) || too_big(c.imag)),
                "value cannot be converted to type c10::complex<float> without overflow");
    return full({}, Scalar(std::complex<double>(c.real, c.imag)), t, self.device());
  }
  if (t == ScalarType::Bool) return full({}, Scalar(c.real != 0 || c.imag != 0), t, self.device());
  if (c.imag != 0) {
    if (is_integral_type(t, /*include_bool=*/false)) cpu::check_value_fits(t, Scalar(std::nan("")), false);
    throw Error(str_cat("value cannot be converted to type ", t == ScalarType::Float ? "float" : "double",
                        " without overflow"));
  }
  return float_value_to_tensor(self, c.real);
}

// The value of an assignment as a tensor: tensors as they are, Python
// numbers as 0-dim tensors of the target's dtype.
Tensor value_to_tensor(const Tensor& self, PyObject* value) {
  if (is_tensor(value)) return unpack_tensor(value);
  if (PyLong_Check(value)) {
    int64_t v = PyBool_Check(value) ? (value == Py_True) : unpack_long(value);
    cpu::check_value_fits(self.dtype(), Scalar(v), /*check_16bit_floats=*/false);
    return full({}, Scalar(v), self.dtype(), self.device());
  }
  if (PyFloat_Check(value)) return float_value_to_tensor(self, PyFloat_AsDouble(value));
  if (PyComplex_Check(value)) return complex_value_to_tensor(self, PyComplex_AsCComplex(value));
  throw TypeError(str_cat("can't assign a ", Py_TYPE(value)->tp_name, " to a ", self.type_name()));
}

// Sizes without leading ones: a (1, 1, 3) value fits a (3,) target.
IntArrayRef strip_leading_ones(IntArrayRef sizes) {
  size_t i = 0;
  while (i < sizes.size() && sizes[i] == 1) ++i;
  return IntArrayRef(sizes.data() + i, sizes.size() - i);
}

void copy_to(const Tensor& dst, const Tensor& src) {
  if (dst.sizes().equals(src.sizes())) {
    dst.copy_(src);
    return;
  }
  if (src.dim() == 0 && src.is_cpu()) {
    ember::fill_(dst, src);
    return;
  }
  // As PyTorch records it: a view without leading ones, then an expand to
  // the target's shape unless it already fits.
  Tensor v = src.view(strip_leading_ones(src.sizes()));
  if (!v.sizes().equals(dst.sizes())) v = v.expand(dst.sizes());
  dst.copy_(v);
}

}  // namespace

PyObject* tensor_getitem(PyObject* self, PyObject* index) {
  EMBER_PY_TRY
  const Tensor& t = unpack_tensor(self);
  if (index == Py_None) return wrap(t.unsqueeze(0));
  if (index == Py_Ellipsis) return wrap(ember::alias(t));
  if (is_int_index(index)) return wrap(apply_select(t, 0, unpack_long(index), 0));
  if (PySlice_Check(index)) return wrap(apply_slice(t, 0, unpack_slice(index), /*keep_full=*/true));
  if (index == Py_True || index == Py_False) {
    return wrap(ember::index(t.unsqueeze(0), OptTensors{bool_index(index == Py_True)}));
  }
  PyRef tup(wrap_tuple(index));
  if (!tup.p) throw python_error();
  Slicer slicer(t, /*keep_full_slices=*/false);
  Tensor sliced = slicer.apply(tup.p);
  if (slicer.indices().empty()) {
    if (sliced.is_same(t)) sliced = ember::alias(t);
    return wrap(std::move(sliced));
  }
  return wrap(ember::index(sliced, slicer.indices()));
  EMBER_PY_CATCH
}

int tensor_setitem(PyObject* self, PyObject* index, PyObject* value) {
  EMBER_PY_TRY
  if (!value) throw TypeError("Tensor does not support deleting items");
  const Tensor& t = unpack_tensor(self);
  Tensor v = value_to_tensor(t, value);
  if (index == Py_False) return 0;  // selects nothing
  if (index == Py_Ellipsis) {
    copy_to(t, v);
  } else if (index == Py_None || index == Py_True) {
    copy_to(t.unsqueeze(0), v);
  } else if (is_int_index(index)) {
    copy_to(apply_select(t, 0, unpack_long(index), 0), v);
  } else if (PySlice_Check(index)) {
    copy_to(apply_slice(t, 0, unpack_slice(index), /*keep_full=*/false), v);
  } else {
    PyRef tup(wrap_tuple(index));
    if (!tup.p) throw python_error();
    Slicer slicer(t, /*keep_full_slices=*/false);
    Tensor sliced = slicer.apply(tup.p);
    if (slicer.indices().empty()) {
      copy_to(sliced, v);
    } else {
      IntArrayRef stripped = strip_leading_ones(v.sizes());
      Tensor values = stripped.size() == v.sizes().size() ? v : v.view(stripped);
      sliced.index_put_(slicer.indices(), values, false);
    }
  }
  return 0;
  EMBER_PY_CATCH_RET(-1)
}

PyObject* tensor_get_base(PyObject* self, void*) {
  EMBER_PY_TRY
  return wrap(autograd::view_base(unpack_tensor(self)));
  EMBER_PY_CATCH
}

namespace {
PyObject* m_is_view(PyObject* self, PyObject*) { return PyBool_FromLong(autograd::is_view(unpack_tensor(self))); }
}  // namespace

void add_view_methods(std::vector<PyMethodDef>& methods) {
  methods.push_back({"_is_view", m_is_view, METH_NOARGS, nullptr});
}

}  // namespace ember::python
