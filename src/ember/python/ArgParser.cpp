#include "ember/python/ArgParser.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <sstream>
#include <unordered_map>

#include "ember/python/PyTorchFunction.h"

#include "ember/python/Exceptions.h"
#include "ember/python/PyGenerator.h"
#include "ember/python/PyTensor.h"
#include "ember/python/PyTypes.h"

namespace ember::python {

std::string type_name(PyObject* o) {
  std::string name = Py_TYPE(o)->tp_name;
  if (name.rfind("ember.", 0) == 0) {
    const size_t dot = name.rfind('.');
    name = "torch." + name.substr(dot + 1);
  }
  return name;
}

namespace {

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(' '), e = s.find_last_not_of(' ');
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

const char* type_label(ParamType t) {
  switch (t) {
    case ParamType::Tensor: return "Tensor";
    case ParamType::TensorList: return "tuple of Tensors";
    case ParamType::OptTensorList: return "tuple of Tensors";
    case ParamType::FloatList: return "tuple of floats";
    case ParamType::Generator: return "torch.Generator";
    case ParamType::Scalar: return "Number";
    case ParamType::ScalarList: return "tuple of Scalars";
    case ParamType::Int: return "int";
    case ParamType::IntList: return "tuple of ints";
    case ParamType::Float: return "float";
    case ParamType::Bool: return "bool";
    case ParamType::String: return "str";
    case ParamType::ScalarType: return "torch.dtype";
    case ParamType::Device: return "torch.device";
    case ParamType::MemoryFormat: return "torch.memory_format";
    case ParamType::Layout: return "torch.layout";
    case ParamType::Object: return "object";
  }
  return "?";
}

// An int: Python's (not a bool) or NumPy's integer scalars, as PyTorch's parser.
bool is_int(PyObject* o) {
  if (PyLong_Check(o)) return !PyBool_Check(o);
  return !PyFloat_Check(o) && !is_tensor(o) && numpy_scalar_kind(o) == NumpyScalar::Int;
}

// A float argument: Python's float or int (bools too), or a real NumPy scalar.
bool is_real_number(PyObject* o) {
  if (PyFloat_Check(o) || PyLong_Check(o)) return true;
  if (is_tensor(o)) return false;
  const NumpyScalar k = numpy_scalar_kind(o);
  return k == NumpyScalar::Bool || k == NumpyScalar::Int || k == NumpyScalar::Float;
}

// "(Tensor input, *, Number alpha = 1)": a signature as PyTorch's messages show it.
std::string display(const Signature& s) {
  std::string out = "(";
  bool star = false;
  for (size_t i = 0; i < s.params.size(); ++i) {
    const Param& p = s.params[i];
    if (i) out += ", ";
    if (p.kwarg_only && !star) {
      out += "*, ";
      star = true;
    }
    out += std::string(type_label(p.type)) + " " + p.name;
    size_t eq = p.text.find('=');
    if (eq != std::string::npos) out += " = " + trim(p.text.substr(eq + 1));
  }
  return out + ")";
}

// As in PyTorch, only these functions take Python numbers where a Tensor is
// expected; elsewhere a number selects a Scalar overload or is a TypeError.
bool allows_numbers_as_tensors(const std::string& name) {
  static const char* const kNames[] = {
      "add",         "add_",         "sub",          "sub_",          "mul",    "mul_",    "div",      "div_",
      "true_divide", "true_divide_", "floor_divide", "floor_divide_", "divide", "divide_", "multiply", "multiply_",
      "subtract",    "subtract_",    "to",           "_to_copy",      "copy_"};
  for (const char* n : kNames) {
    if (name == n) return true;
  }
  return false;
}

// As in PyTorch, an integer (or bool) tensor of one element is an int: it
// has __index__.
bool is_index_tensor(PyObject* o) {
  if (!is_tensor(o)) return false;
  const Tensor& t = unpack_tensor(o);
  return t.numel() == 1 && is_integral_type(t.dtype(), /*include_bool=*/true) && !t.requires_grad();
}

// An int in an int list: an int, or a one-element non-floating tensor.
bool is_int_element(PyObject* o) {
  return is_int(o) || (is_tensor(o) && unpack_tensor(o).numel() == 1 && !unpack_tensor(o).is_floating_point());
}

// As PyTorch's parser: only the first element of a sequence is checked (the
// others are refused when unpacked, after the overload is chosen).
bool is_int_sequence(PyObject* o) {
  if (!PyTuple_Check(o) && !PyList_Check(o)) return false;
  return PySequence_Fast_GET_SIZE(o) == 0 || is_int_element(PySequence_Fast_ITEMS(o)[0]);
}

bool check(const Param& p, PyObject* o) {
  // As PyTorch: None also stands for an int list's default (avg_pool1d(x, 3, None)),
  // and an object parameter takes None as any other object (tensor(None)).
  if (o == Py_None) {
    return p.type == ParamType::Object || p.optional ||
           (p.has_default && (p.default_none || p.type == ParamType::IntList));
  }
  switch (p.type) {
    case ParamType::Tensor: return is_tensor(o) || (p.allow_number && is_number(o));
    case ParamType::TensorList:
    case ParamType::OptTensorList: {
      if (!PyTuple_Check(o) && !PyList_Check(o)) return false;
      Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
      PyObject** items = PySequence_Fast_ITEMS(o);
      for (Py_ssize_t i = 0; i < n; ++i) {
        // PyTorch's bindings take no None in index lists either (C++ callers may pass them).
        bool ok = is_tensor(items[i]);
        if (!ok) return false;
      }
      return true;
    }
    case ParamType::FloatList: {
      if (!PyTuple_Check(o) && !PyList_Check(o)) return PyFloat_Check(o) || is_int(o);
      Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
      PyObject** items = PySequence_Fast_ITEMS(o);
      for (Py_ssize_t i = 0; i < n; ++i) {
        if (!is_real_number(items[i]) || PyBool_Check(items[i])) return false;
      }
      return true;
    }
    case ParamType::Generator: return is_generator(o);
    case ParamType::ScalarList: {
      if (!PyTuple_Check(o) && !PyList_Check(o)) return false;
      Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
      PyObject** items = PySequence_Fast_ITEMS(o);
      for (Py_ssize_t i = 0; i < n; ++i) {
        if (!is_number(items[i])) return false;
      }
      return true;
    }
    case ParamType::Scalar:
      // As in PyTorch, a 0-dim tensor is a Scalar unless it requires grad.
      return is_number(o) || (is_tensor(o) && unpack_tensor(o).dim() == 0 && !unpack_tensor(o).requires_grad());
    case ParamType::Int: {
      if (is_int(o)) return true;
      if (p.symint) return is_index_tensor(o);
      // As in PyTorch: a 0-dim integer tensor that does not require grad.
      return is_tensor(o) && unpack_tensor(o).dim() == 0 &&
             is_integral_type(unpack_tensor(o).dtype(), /*include_bool=*/false) && !unpack_tensor(o).requires_grad();
    }
    case ParamType::IntList:
      return is_int_sequence(o) || ((p.list_size > 0 || p.varargs_position) && (is_int(o) || is_index_tensor(o)));
    case ParamType::Float:
      // As in PyTorch: bools are ints, and a 0-dim tensor that does not require grad is a float.
      return is_real_number(o) || (is_tensor(o) && unpack_tensor(o).dim() == 0 && !unpack_tensor(o).requires_grad());
    case ParamType::Bool: return PyBool_Check(o);
    case ParamType::String: return PyUnicode_Check(o);
    case ParamType::ScalarType: return is_dtype_like(o);
    case ParamType::Device: return is_device_like(o);
    case ParamType::MemoryFormat: return is_memory_format(o);
    case ParamType::Layout:
      return std::strcmp(Py_TYPE(o)->tp_name, "layout") == 0 ||
             std::strcmp(Py_TYPE(o)->tp_name, "ember._layout.layout") == 0;
    case ParamType::Object: return true;
  }
  return false;
}

// A list of tensors with another object in it: PyTorch names the element.
void throw_element_error(const std::string& fn, const Param& p, PyObject* o, Py_ssize_t position, bool keyword) {
  // An int list given positionally names its (first) element, as PyTorch.
  if (p.type == ParamType::IntList && !keyword && (PyTuple_Check(o) || PyList_Check(o)) &&
      PySequence_Fast_GET_SIZE(o) > 0) {
    throw TypeError(str_cat(fn, "(): argument '", p.name, "' (position ", position + 1, ") must be ",
                            type_label(p.type), ", but found element of type ", type_name(PySequence_Fast_ITEMS(o)[0]),
                            " at pos 0"));
  }
  if ((p.type != ParamType::TensorList && p.type != ParamType::OptTensorList) ||
      (!PyTuple_Check(o) && !PyList_Check(o))) {
    return;
  }
  Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
  PyObject** items = PySequence_Fast_ITEMS(o);
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (!is_tensor(items[i])) {
      throw TypeError(
          str_cat("expected Tensor as element ", i, " in argument ", position, ", but got ", type_name(items[i])));
    }
  }
}

}  // namespace

namespace {
// A parameter name as an interned string, held for the life of the process.
// Signatures live in static parsers whose destructors run after the
// interpreter has finalized, when the reference can no longer be released;
// a never-destroyed table keeps each string reachable (no leak report).
PyObject* interned_name(const std::string& name) {
  static auto* names = new std::unordered_map<std::string, PyObject*>();
  auto it = names->find(name);
  if (it != names->end()) return it->second;
  PyObject* str = PyUnicode_InternFromString(name.c_str());
  if (str != nullptr) names->emplace(name, str);
  return str;
}
}  // namespace

Signature::Signature(const std::string& fmt) : text(fmt) {
  size_t open = fmt.find('(');
  name = fmt.substr(0, open);
  std::string body = fmt.substr(open + 1, fmt.rfind(')') - open - 1);
  bool kwonly = false;
  std::stringstream ss(body);
  std::string part;
  // Split on commas outside brackets.
  std::vector<std::string> parts;
  int depth = 0;
  std::string cur;
  for (char c : body) {
    if (c == '[' || c == '(') ++depth;
    if (c == ']' || c == ')') --depth;
    if (c == ',' && depth == 0) {
      parts.push_back(trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!trim(cur).empty()) parts.push_back(trim(cur));
  for (const std::string& raw : parts) {
    if (raw == "*") {
      kwonly = true;
      continue;
    }
    Param p;
    std::string decl = raw, def;
    size_t eq = raw.find('=');
    if (eq != std::string::npos) {
      decl = trim(raw.substr(0, eq));
      def = trim(raw.substr(eq + 1));
      p.has_default = true;
    }
    size_t sp = decl.rfind(' ');
    std::string type = decl.substr(0, sp);
    p.name = decl.substr(sp + 1);
    p.text = raw;
    p.kwarg_only = kwonly;
    if (!type.empty() && type.back() == '?') {
      p.optional = true;
      type.pop_back();
    }
    if (type == "Tensor[]") {
      p.type = ParamType::TensorList;
    } else if (type == "Tensor?[]") {
      p.type = ParamType::OptTensorList;
    } else if (type.rfind("float[", 0) == 0) {
      p.type = ParamType::FloatList;
    } else if (type == "Generator") {
      p.type = ParamType::Generator;
    } else if (type.rfind("int[", 0) == 0) {
      p.type = ParamType::IntList;
      std::string n = type.substr(4, type.size() - 5);
      p.list_size = n.empty() ? 0 : std::stoi(n);
    } else if (type == "Tensor") {
      p.type = ParamType::Tensor;
      p.allow_number = allows_numbers_as_tensors(name);
    } else if (type == "Scalar") {
      p.type = ParamType::Scalar;
    } else if (type == "Scalar[]") {
      p.type = ParamType::ScalarList;
    } else if (type == "int" || type == "SymInt") {
      p.type = ParamType::Int;
      p.symint = type == "SymInt";
    } else if (type == "float") {
      p.type = ParamType::Float;
    } else if (type == "bool") {
      p.type = ParamType::Bool;
    } else if (type == "str") {
      p.type = ParamType::String;
    } else if (type == "ScalarType") {
      p.type = ParamType::ScalarType;
    } else if (type == "Device") {
      p.type = ParamType::Device;
    } else if (type == "MemoryFormat") {
      p.type = ParamType::MemoryFormat;
    } else if (type == "Layout") {
      p.type = ParamType::Layout;
    } else if (type == "object") {
      p.type = ParamType::Object;
    } else {
      throw Error(str_cat("ArgParser: unknown type '", type, "' in signature ", fmt));
    }
    if (p.has_default) {
      if (def == "None") {
        p.default_none = true;
      } else if (def == "True" || def == "False") {
        p.default_bool = def == "True";
      } else if (def == "[]") {
        p.default_empty_list = true;
      } else if (def.front() == '[' && def.back() == ']') {
        for (size_t b = 1; b < def.size() - 1;) {
          const size_t e = std::min(def.find(',', b), def.size() - 1);
          p.default_ints.push_back(std::stoll(def.substr(b, e - b)));
          b = e + 1;
        }
      } else if (p.type == ParamType::String || p.type == ParamType::MemoryFormat ||
                 (!def.empty() && (def[0] == '\'' || def[0] == '"'))) {
        p.default_string = def.size() >= 2 && (def[0] == '"' || def[0] == '\'') ? def.substr(1, def.size() - 2) : def;
      } else if (def.find_first_of(".e") != std::string::npos) {
        p.default_double = std::stod(def);
        p.default_is_float = true;
      } else {
        p.default_int = std::stoll(def);
        p.default_double = static_cast<double>(p.default_int);
      }
    }
    p.varargs_position = params.empty() && !kwonly;
    p.interned = interned_name(p.name);
    if (!p.kwarg_only) ++max_positional;
    // As PyTorch: `T? x` without a default may be None but must be given.
    if (!p.has_default) ++required;
    params.push_back(std::move(p));
  }
  // As PyTorch: a single int stands for the int list only where the list is
  // the one positional parameter (zeros(3), x.view(6), not empty_strided(3, 1)).
  if (max_positional != 1 && !params.empty()) params[0].varargs_position = false;
}

bool Signature::match(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames, PyObject** out, bool raise) const {
  size_t np = params.size();
  for (size_t i = 0; i < np; ++i) out[i] = nullptr;
  // Varargs int list: view(2, 3) means view((2, 3)). As in PyTorch only the
  // first is checked here; the others are when the list is unpacked.
  bool varargs = nargs > 1 && !params.empty() && params[0].type == ParamType::IntList && !params[0].kwarg_only &&
                 (is_int(args[0]) || is_index_tensor(args[0])) &&
                 (max_positional == 1 || static_cast<size_t>(nargs) > max_positional);
  static thread_local PyObject* varargs_tuple = nullptr;
  if (varargs) {
    Py_XDECREF(varargs_tuple);
    varargs_tuple = PyTuple_New(nargs);
    for (Py_ssize_t i = 0; i < nargs; ++i) {
      Py_INCREF(args[i]);
      PyTuple_SET_ITEM(varargs_tuple, i, args[i]);
    }
    out[0] = varargs_tuple;
  } else {
    if (static_cast<size_t>(nargs) > max_positional) {
      if (raise) {
        if (required != max_positional) {
          throw TypeError(str_cat(name, "() takes from ", required, " to ", max_positional,
                                  " positional arguments but ", nargs, nargs == 1 ? " was" : " were", " given"));
        }
        throw TypeError(str_cat(name, "() takes ", max_positional, " positional argument",
                                max_positional == 1 ? "" : "s", " but ", nargs, nargs == 1 ? " was" : " were",
                                " given"));
      }
      return false;
    }
    for (Py_ssize_t i = 0; i < nargs; ++i) {
      if (!check(params[i], args[i])) {
        if (raise) {
          throw_element_error(name, params[i], args[i], i, false);
          throw TypeError(str_cat(name, "(): argument '", params[i].name, "' (position ", i + 1, ") must be ",
                                  type_label(params[i].type), ", not ", type_name(args[i])));
        }
        return false;
      }
      out[i] = args[i];
    }
  }
  // NumPy's names PyTorch also accepts: axis for dim, keepdims for keepdim,
  // x, a, x1 for input, x2 for other (when the signature has that parameter).
  auto numpy_alias_of = [&](PyObject* key) -> size_t {
    const char* k = PyUnicode_AsUTF8(key);
    const char* target = std::strcmp(k, "axis") == 0       ? "dim"
                         : std::strcmp(k, "keepdims") == 0 ? "keepdim"
                         : (std::strcmp(k, "x") == 0 || std::strcmp(k, "a") == 0 || std::strcmp(k, "x1") == 0) ? "input"
                         : std::strcmp(k, "x2") == 0 ? "other"
                                                     : nullptr;
    if (target == nullptr) return np;
    // PyTorch reads the parameter's own name first: with both, the alias is the extra keyword.
    for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(kwnames); ++k) {
      if (std::strcmp(PyUnicode_AsUTF8(PyTuple_GET_ITEM(kwnames, k)), target) == 0) return np;
    }
    for (size_t i = 0; i < np; ++i) {
      if (params[i].name == target) return i;
    }
    return np;
  };
  std::string unknown;
  if (kwnames) {
    Py_ssize_t nkw = PyTuple_GET_SIZE(kwnames);
    for (Py_ssize_t k = 0; k < nkw; ++k) {
      PyObject* key = PyTuple_GET_ITEM(kwnames, k);
      PyObject* value = args[nargs + k];
      size_t idx = np;
      for (size_t i = 0; i < np; ++i) {
        if (params[i].interned == key) {
          idx = i;
          break;
        }
      }
      if (idx == np) {
        for (size_t i = 0; i < np; ++i) {
          if (PyUnicode_Compare(params[i].interned, key) == 0) {
            idx = i;
            break;
          }
        }
      }
      if (idx == np) idx = numpy_alias_of(key);
      if (idx == np) {
        // PyTorch reports a missing required argument before an unknown keyword.
        if (raise && unknown.empty()) unknown = PyUnicode_AsUTF8(key);
        if (raise) continue;
        return false;
      }
      if (out[idx]) {
        if (raise) throw TypeError(str_cat(name, "() got multiple values for argument '", params[idx].name, "'"));
        return false;
      }
      if (!check(params[idx], value)) {
        if (raise) {
          throw_element_error(name, params[idx], value, static_cast<Py_ssize_t>(idx), true);
          throw TypeError(str_cat(name, "(): argument '", params[idx].name, "' must be ", type_label(params[idx].type),
                                  ", not ", type_name(value)));
        }
        return false;
      }
      out[idx] = value;
    }
  }
  for (size_t i = 0; i < np; ++i) {
    if (!out[i] && !params[i].has_default) {
      if (raise && names_missing) {
        // PyTorch's message names the required parameters from the first
        // missing one on (its plural is "arguments" for exactly one).
        std::string names;
        size_t missing = 0;
        for (size_t k = i; k < np; ++k) {
          if (params[k].has_default) continue;
          names += str_cat(missing++ ? ", " : "", "\"", params[k].name, "\"");
        }
        throw TypeError(str_cat(name, "() missing ", missing, " required positional argument", missing == 1 ? "s" : "",
                                ": ", names));
      }
      return false;
    }
  }
  if (!unknown.empty()) throw TypeError(str_cat(name, "() got an unexpected keyword argument '", unknown, "'"));
  return true;
}

ArgParser::ArgParser(std::initializer_list<const char*> formats, bool is_method) : is_method_(is_method) {
  for (const char* f : formats) sigs_.emplace_back(f);
}

ArgParser::ArgParser(const std::vector<std::string>& formats, bool is_method) : is_method_(is_method) {
  for (const std::string& f : formats) sigs_.emplace_back(f);
}

size_t ArgParser::max_params() const {
  size_t n = 0;
  for (const Signature& s : sigs_) n = std::max(n, s.params.size());
  return n;
}

int ArgParser::parse(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames,
                     ParsedArgsBase& out) const {
  if (torch_function::wants_dispatch(is_method_ ? self : nullptr, args, nargs, kwnames)) {
    // An alias of a module function has a module of its own name as self (_renamed_builtin).
    const char* name = sigs_[0].name.c_str();
    if (!is_method_ && self != nullptr && PyModule_Check(self)) {
      const char* module_name = PyModule_GetName(self);
      if (module_name != nullptr && std::strchr(module_name, '.') == nullptr) name = module_name;
      PyErr_Clear();
    }
    out.torch_function_result_ = torch_function::dispatch(name, is_method_, self, args, nargs, kwnames);
    return -1;
  }
  return match(args, nargs, kwnames, out);
}

int ArgParser::match(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames, ParsedArgsBase& out) const {
  for (size_t i = 0; i < sigs_.size(); ++i) {
    if (sigs_[i].match(args, nargs, kwnames, out.args_, sigs_.size() == 1)) {
      out.sig_ = &sigs_[i];
      return static_cast<int>(i);
    }
  }
  // As PyTorch: when one signature alone takes this many arguments, its own
  // error names the argument.
  const Signature* plausible = nullptr;
  int n_plausible = 0;
  const size_t n_given = static_cast<size_t>(nargs + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0));
  for (const Signature& s : sigs_) {
    if (n_given >= s.required && n_given <= s.params.size()) {
      plausible = &s;
      ++n_plausible;
    }
  }
  if (n_plausible == 1) plausible->match(args, nargs, kwnames, out.args_, true);
  std::string got = "(";
  for (Py_ssize_t i = 0; i < nargs; ++i) got += std::string(i ? ", " : "") + type_name(args[i]);
  if (kwnames) {
    // As PyTorch prints them: last keyword first, and a trailing ", " when
    // there are no positional arguments.
    const Py_ssize_t nkw = PyTuple_GET_SIZE(kwnames);
    for (Py_ssize_t k = nkw; k-- > 0;) {
      got += std::string(nargs || k + 1 < nkw ? ", " : "") + PyUnicode_AsUTF8(PyTuple_GET_ITEM(kwnames, k)) + "=" +
             type_name(args[nargs + k]);
    }
    if (nargs == 0 && nkw > 0) got += ", ";
  }
  got += ")";
  std::string msg =
      str_cat(sigs_[0].name, "() received an invalid combination of arguments - got ", got, ", but expected ");
  if (sigs_.size() == 1) {
    msg += display(sigs_[0]);
  } else {
    msg += "one of:\n";
    for (const Signature& s : sigs_) msg += " * " + display(s) + "\n";
  }
  throw TypeError(msg);
}

// ---- getters ----------------------------------------------------------------

const Tensor& ParsedArgsBase::tensor(int i) {
  PyObject* o = args_[i];
  if (is_tensor(o)) return unpack_tensor(o);
  temps_[i] = scalar_to_tensor(o);
  return temps_[i];
}

std::optional<Tensor> ParsedArgsBase::optional_tensor(int i) {
  if (is_none(i)) return std::nullopt;
  return tensor(i);
}

Scalar ParsedArgsBase::scalar(int i) {
  PyObject* o = args_[i];
  if (!o) {
    const Param& p = sig_->params[i];
    return p.default_is_float ? Scalar(p.default_double) : Scalar(p.default_int);
  }
  if (PyBool_Check(o)) return Scalar(o == Py_True);
  if (PyLong_Check(o)) return unpack_int_scalar(o);
  if (PyFloat_Check(o)) return Scalar(PyFloat_AS_DOUBLE(o));
  if (PyComplex_Check(o)) return Scalar(unpack_complex(o));
  if (!is_tensor(o)) return numpy_scalar_value(o, numpy_scalar_kind(o));  // check() admitted it
  const Tensor& t = unpack_tensor(o);
  if (t.is_floating_point()) return Scalar(t.item<double>());
  if (t.is_complex()) return Scalar(t.item<std::complex<double>>());
  if (t.dtype() == ScalarType::Bool) return Scalar(t.item<bool>());
  return Scalar(t.item<int64_t>());
}

std::optional<Scalar> ParsedArgsBase::scalar_optional(int i) {
  if (is_none(i)) return std::nullopt;
  return scalar(i);
}

// The value of a one-element tensor as an int, read on the host (another
// device's element is copied there first, as PyTorch's argument parser does).
static int64_t host_int(const Tensor& t) { return (t.is_cuda() ? t.to(Device(DeviceType::CPU)) : t).item<int64_t>(); }

int64_t ParsedArgsBase::int64(int i) {
  PyObject* o = args_[i];
  if (!o) return sig_->params[i].default_int;
  if (is_tensor(o)) return host_int(unpack_tensor(o));
  return unpack_long(o);
}

std::optional<int64_t> ParsedArgsBase::int64_optional(int i) {
  if (is_none(i)) return std::nullopt;
  return int64(i);
}

DimVector ParsedArgsBase::intlist(int i) {
  PyObject* o = args_[i];
  DimVector r;
  if (!o || o == Py_None) {
    const Param& p = sig_->params[i];
    if (!p.default_ints.empty()) {
      for (int64_t v : p.default_ints) r.push_back(v);
    } else if (p.has_default && !p.default_none && !p.default_empty_list) {
      r.assign(std::max(p.list_size, 1), p.default_int);
    }
    return r;
  }
  // PyTorch's error for an element that does not fit int64.
  auto element = [&](PyObject* item, Py_ssize_t pos) -> int64_t {
    if (is_tensor(item) && is_int_element(item)) return host_int(unpack_tensor(item));
    // A later element is checked here; bools pass as ints, as in PyTorch.
    if (!PyLong_Check(item) && !is_int(item)) {
      throw TypeError(str_cat(sig_->name, "(): argument '", sig_->params[i].name,
                              "' failed to unpack the object at pos ", pos + 1,
                              " with error \"type must be tuple of ints,but got ", type_name(item), "\""));
    }
    try {
      return unpack_long(item);
    } catch (const ValueError& e) {
      throw TypeError(str_cat(sig_->name, "(): argument '", sig_->params[i].name,
                              "' failed to unpack the object at pos ", pos + 1, " with error \"", e.what()));
    }
  };
  if (is_tensor(o)) {
    // A one-element integer tensor for an int list (checked in check()).
    r.assign(std::max(sig_->params[i].list_size, 1), host_int(unpack_tensor(o)));
    return r;
  }
  if (PyLong_Check(o) || is_int(o)) {
    // One int for an int[N] gives PyTorch's ValueError as it is; for a plain
    // int[] (varargs such as view(*size)) it is the first element.
    const int n = sig_->params[i].list_size;
    r.assign(std::max(n, 1), n > 0 ? unpack_long(o) : element(o, 0));
    return r;
  }
  Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
  PyObject** items = PySequence_Fast_ITEMS(o);
  for (Py_ssize_t k = 0; k < n; ++k) r.push_back(element(items[k], k));
  return r;
}

std::optional<std::vector<int64_t>> ParsedArgsBase::intlist_optional(int i) {
  if (is_none(i)) return std::nullopt;
  return intlist(i).operator IntArrayRef().vec();
}

double ParsedArgsBase::real(int i) {
  PyObject* o = args_[i];
  if (!o) return sig_->params[i].default_double;
  if (is_tensor(o)) {
    const Tensor& t = unpack_tensor(o);
    if (t.is_complex()) throw Error("value cannot be converted to type double without overflow");
    return t.item<double>();
  }
  return unpack_double(o);
}

std::optional<double> ParsedArgsBase::real_optional(int i) {
  if (is_none(i)) return std::nullopt;
  return real(i);
}

bool ParsedArgsBase::boolean(int i) {
  PyObject* o = args_[i];
  if (!o) return sig_->params[i].default_bool;
  return o == Py_True;
}

void ParsedArgsBase::check_factory_layout_and_pinning(int layout, int pin_memory) {
  if (!is_none(layout)) {
    PyObject* text = PyObject_Str(args_[layout]);
    if (!text) throw python_error();
    const std::string name = PyUnicode_AsUTF8(text);
    Py_DECREF(text);
    if (name != "torch.strided")
      throw NotImplementedError(str_cat("Ember's factories make strided tensors, not ", name));
  }
  if (boolean(pin_memory)) {
    throw Error(
        "pin_memory=True requires a CUDA or other accelerator backend; no pinned memory allocator is available on "
        "this system.");
  }
}

std::optional<bool> ParsedArgsBase::boolean_optional(int i) {
  if (is_none(i)) return std::nullopt;
  return boolean(i);
}

std::string ParsedArgsBase::string(int i) {
  PyObject* o = args_[i];
  return o ? PyUnicode_AsUTF8(o) : sig_->params[i].default_string;
}

std::optional<std::string> ParsedArgsBase::string_optional(int i) {
  if (is_none(i)) return std::nullopt;
  return string(i);
}

ScalarType ParsedArgsBase::scalartype(int i) { return parse_dtype(args_[i]); }

std::optional<ScalarType> ParsedArgsBase::scalartype_optional(int i) {
  if (is_none(i)) return std::nullopt;
  return parse_dtype(args_[i]);
}

Device ParsedArgsBase::device(int i) { return parse_device(args_[i]); }

std::optional<Device> ParsedArgsBase::device_optional(int i) {
  if (is_none(i)) return std::nullopt;
  return parse_device(args_[i]);
}

std::optional<Device> ParsedArgsBase::factory_device(int i) {
  if (!is_none(i)) return parse_device(args_[i]);
  const Device d = get_default_device();
  if (d.is_cpu()) return std::nullopt;
  return d;
}

MemoryFormat ParsedArgsBase::memoryformat(int i) {
  if (args_[i]) return memory_format_of(args_[i]);
  const std::string& name = sig_->params[i].default_string;
  for (int f = 0; f < kNumMemoryFormats; ++f) {
    if (name == memory_format_name(static_cast<MemoryFormat>(f))) return static_cast<MemoryFormat>(f);
  }
  throw Error(str_cat("ArgParser: unknown memory format default '", name, "'"));
}

std::optional<MemoryFormat> ParsedArgsBase::memoryformat_optional(int i) {
  if (is_none(i)) return std::nullopt;
  return memory_format_of(args_[i]);
}

std::vector<Tensor> ParsedArgsBase::tensorlist(int i) {
  std::vector<Tensor> out;
  PyObject* o = args_[i];
  if (!o) return out;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
  PyObject** items = PySequence_Fast_ITEMS(o);
  out.reserve(n);
  for (Py_ssize_t k = 0; k < n; ++k) out.push_back(unpack_tensor(items[k]));
  return out;
}

std::vector<std::optional<Tensor>> ParsedArgsBase::optional_tensorlist(int i) {
  std::vector<std::optional<Tensor>> out;
  PyObject* o = args_[i];
  if (!o) return out;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
  PyObject** items = PySequence_Fast_ITEMS(o);
  for (Py_ssize_t k = 0; k < n; ++k) {
    if (items[k] == Py_None) {
      out.emplace_back(std::nullopt);
    } else {
      out.emplace_back(unpack_tensor(items[k]));
    }
  }
  return out;
}

std::vector<double> ParsedArgsBase::doublelist(int i) {
  std::vector<double> out;
  PyObject* o = args_[i];
  if (!o) return out;
  if (!PyTuple_Check(o) && !PyList_Check(o)) return {unpack_double(o)};
  Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
  PyObject** items = PySequence_Fast_ITEMS(o);
  for (Py_ssize_t k = 0; k < n; ++k) out.push_back(unpack_double(items[k]));
  return out;
}

std::optional<std::vector<double>> ParsedArgsBase::doublelist_optional(int i) {
  if (is_none(i)) return std::nullopt;
  return doublelist(i);
}

Generator ParsedArgsBase::generator(int i) { return unpack_generator(args_[i]); }

std::optional<Generator> ParsedArgsBase::generator_optional(int i) {
  if (is_none(i)) return std::nullopt;
  return unpack_generator(args_[i]);
}

}  // namespace ember::python

namespace ember::python {

namespace {

constexpr const char* kSignaturesCapsule = "ember.ArgSignatures";

void free_signatures(PyObject* capsule) {
  delete static_cast<ArgParser*>(PyCapsule_GetPointer(capsule, kSignaturesCapsule));
}

// _arg_signatures(formats: list[str], is_method: bool) -> capsule
PyObject* arg_signatures(PyObject*, PyObject* args) {
  EMBER_PY_TRY
  PyObject* formats = nullptr;
  int is_method = 0;
  if (!PyArg_ParseTuple(args, "O!p", &PyList_Type, &formats, &is_method)) return nullptr;
  std::vector<std::string> texts;
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(formats); ++i) {
    const char* text = PyUnicode_AsUTF8(PyList_GET_ITEM(formats, i));
    if (!text) return nullptr;
    texts.emplace_back(text);
  }
  if (texts.empty()) throw ValueError("_arg_signatures: no signature given");
  auto parser = std::make_unique<ArgParser>(texts, is_method != 0);
  parser->name_missing_arguments();
  if (parser->max_params() > static_cast<size_t>(kMaxCheckedParams)) {
    throw ValueError("_arg_signatures: too many parameters");
  }
  PyObject* capsule = PyCapsule_New(parser.get(), kSignaturesCapsule, free_signatures);
  if (capsule) parser.release();
  return capsule;
  EMBER_PY_CATCH
}

// The arguments of a checked call, converted as a binding converts them.
class CheckedArgs : public ParsedArgs<kMaxCheckedParams> {
 public:
  // Unpacks each int and int-list argument given as Python ints: one past
  // int64 raises PyTorch's ValueError (a list's, the TypeError naming its
  // element), as the binding's parser does before the function runs.
  void unpack_ints() {
    for (size_t i = 0; i < sig_->params.size(); ++i) {
      PyObject* o = args_[i];
      if (!o || o == Py_None || is_tensor(o)) continue;
      const ParamType type = sig_->params[i].type;
      if (type == ParamType::Int && PyLong_Check(o)) {
        int64(static_cast<int>(i));
      } else if (type == ParamType::IntList) {
        intlist(static_cast<int>(i));
      }
    }
  }
};

// _check_args(signatures, *args, **kwargs): True when the call goes to
// __torch_function__ (an argument overrides it, or a mode is active), which
// then sees the arguments unchecked; False when one signature matches; else
// PyTorch's TypeError. A method's self (the first argument) is not matched.
PyObject* check_args(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  EMBER_PY_TRY
  if (nargs < 1) throw TypeError("_check_args: missing the signatures");
  auto* parser = static_cast<ArgParser*>(PyCapsule_GetPointer(args[0], kSignaturesCapsule));
  if (!parser) return nullptr;
  if (torch_function::wants_dispatch(nullptr, args + 1, nargs - 1, kwnames)) Py_RETURN_TRUE;
  Py_ssize_t skip = parser->is_method() ? 2 : 1;
  if (nargs < skip) skip = nargs;
  CheckedArgs parsed;
  parser->match(args + skip, nargs - skip, kwnames, parsed);
  parsed.unpack_ints();
  Py_RETURN_FALSE;
  EMBER_PY_CATCH
}

PyMethodDef kArgCheckMethods[] = {
    {"_arg_signatures", arg_signatures, METH_VARARGS, nullptr},
    {"_check_args", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>(check_args)),
     METH_FASTCALL | METH_KEYWORDS, nullptr},
    {nullptr, nullptr, 0, nullptr}};

}  // namespace

void init_arg_checks(PyObject* module) {
  if (PyModule_AddFunctions(module, kArgCheckMethods) < 0) throw python_error();
}

}  // namespace ember::python
