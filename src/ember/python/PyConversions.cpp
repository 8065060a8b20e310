// Tensor.to, the dtype conversions (x.float(), ...), x.cpu() and
// x.is_contiguous(), bound by hand as PyTorch binds them: `to` has three
// Python signatures that map onto the to.* operators.
#include "ember/ops/generated/Functions.h"
#include "ember/python/ArgParser.h"
#include "ember/python/Exceptions.h"
#include "ember/python/PyTensor.h"

namespace ember::python {

namespace {

constexpr const char* conversion_name(ScalarType t) {
  switch (t) {
    case ScalarType::Float: return "float";
    case ScalarType::Double: return "double";
    case ScalarType::Half: return "half";
    case ScalarType::BFloat16: return "bfloat16";
    case ScalarType::Long: return "long";
    case ScalarType::Int: return "int";
    case ScalarType::Short: return "short";
    case ScalarType::Char: return "char";
    case ScalarType::Byte: return "byte";
    default: return "bool";
  }
}

PyObject* m_to(PyObject* self_, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  EMBER_PY_TRY
  static ArgParser parser(
      {"to(Device? device=None, ScalarType? dtype=None, bool non_blocking=False, bool copy=False, *, "
       "MemoryFormat? memory_format=None)",
       "to(ScalarType dtype, bool non_blocking=False, bool copy=False, *, MemoryFormat? memory_format=None)",
       "to(Tensor tensor, bool non_blocking=False, bool copy=False, *, MemoryFormat? memory_format=None)"},
      true);
  ParsedArgs<5> r;
  const int idx = parser.parse(self_, args, nargs, kwnames, r);
  if (idx < 0) return r.torch_function_result();
  const Tensor& self = unpack_tensor(self_);
  switch (idx) {
    case 0:
      return wrap(self.to(r.scalartype_optional(1), r.device_optional(0), r.boolean(2), r.boolean(3),
                          r.memoryformat_optional(4)));
    case 1: return wrap(self.to(r.scalartype(0), r.boolean(1), r.boolean(2), r.memoryformat_optional(3)));
    default: return wrap(self.to(r.tensor(0), r.boolean(1), r.boolean(2), r.memoryformat_optional(3)));
  }
  EMBER_PY_CATCH
}

template <ScalarType T>
PyObject* m_convert(PyObject* self_, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  EMBER_PY_TRY
  static const std::string text = std::string(conversion_name(T)) + "(*, MemoryFormat? memory_format=None)";
  static ArgParser parser({text.c_str()}, true);
  ParsedArgs<1> r;
  if (parser.parse(self_, args, nargs, kwnames, r) < 0) return r.torch_function_result();
  return wrap(unpack_tensor(self_).to(T, false, false, r.memoryformat_optional(0)));
  EMBER_PY_CATCH
}

PyObject* m_cpu(PyObject* self_, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  EMBER_PY_TRY
  static ArgParser parser({"cpu(*, MemoryFormat? memory_format=None)"}, true);
  ParsedArgs<1> r;
  if (parser.parse(self_, args, nargs, kwnames, r) < 0) return r.torch_function_result();
  const Tensor& self = unpack_tensor(self_);
  return wrap(self.to(Device(DeviceType::CPU), std::nullopt, false, false, r.memoryformat_optional(0)));
  EMBER_PY_CATCH
}

PyObject* m_is_contiguous(PyObject* self_, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  EMBER_PY_TRY
  static ArgParser parser({"is_contiguous(*, MemoryFormat memory_format=contiguous_format)"}, true);
  ParsedArgs<1> r;
  if (parser.parse(self_, args, nargs, kwnames, r) < 0) return r.torch_function_result();
  return PyBool_FromLong(unpack_tensor(self_).is_contiguous(r.memoryformat(0)));
  EMBER_PY_CATCH
}

template <typename F>
PyMethodDef fastcall(const char* name, F fn) {
  return {name, reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(fn)), METH_FASTCALL | METH_KEYWORDS,
          nullptr};
}

}  // namespace

void add_conversion_methods(std::vector<PyMethodDef>& methods) {
  methods.push_back(fastcall("to", m_to));
  methods.push_back(fastcall("cpu", m_cpu));
  methods.push_back(fastcall("is_contiguous", m_is_contiguous));
  methods.push_back(fastcall("float", m_convert<ScalarType::Float>));
  methods.push_back(fastcall("double", m_convert<ScalarType::Double>));
  methods.push_back(fastcall("half", m_convert<ScalarType::Half>));
  methods.push_back(fastcall("bfloat16", m_convert<ScalarType::BFloat16>));
  methods.push_back(fastcall("long", m_convert<ScalarType::Long>));
  methods.push_back(fastcall("int", m_convert<ScalarType::Int>));
  methods.push_back(fastcall("short", m_convert<ScalarType::Short>));
  methods.push_back(fastcall("char", m_convert<ScalarType::Char>));
  methods.push_back(fastcall("byte", m_convert<ScalarType::Byte>));
  methods.push_back(fastcall("bool", m_convert<ScalarType::Bool>));
}

}  // namespace ember::python
