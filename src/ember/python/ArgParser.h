#pragma once
// Parses Python call arguments against signatures written in PyTorch's
// notation ("add(Tensor input, Tensor other, *, Scalar alpha=1)"). Each
// signature is parsed once, at first use; a call then matches positional and
// keyword arguments by index with cheap type checks, and converts lazily.

#include <Python.h>

#include <optional>
#include <string>
#include <vector>

#include "ember/core/Device.h"
#include "ember/core/DimVector.h"
#include "ember/core/Generator.h"
#include "ember/core/MemoryFormat.h"
#include "ember/core/Scalar.h"
#include "ember/ops/Tensor.h"

namespace ember::python {

enum class ParamType : uint8_t {
  Tensor,
  TensorList,
  OptTensorList,
  Scalar,
  ScalarList,  // Scalar[]: a tuple or list of Python numbers
  Int,
  IntList,
  Float,
  FloatList,
  Bool,
  String,
  ScalarType,
  Device,
  Generator,
  MemoryFormat,
  Layout,
  Object  // any Python object: arguments PyTorch's Python code reads itself
};

struct Param {
  std::string name;
  PyObject* interned = nullptr;  // interned name, for fast keyword matching
  ParamType type;
  bool optional = false;
  bool kwarg_only = false;
  bool allow_number = false;  // Tensor params that accept Python numbers
  int list_size = 0;  // int[N]: a single int is accepted and repeated
  bool symint = false;  // SymInt: any one-element integer tensor is an int (PyTorch's __index__ rule)
  bool varargs_position = false;  // the only positional parameter, an int[]: zeros(3), view(2, 3)
  // default
  bool has_default = false;
  bool default_none = false;
  int64_t default_int = 0;
  double default_double = 0;
  bool default_bool = false;
  bool default_is_float = false;
  std::string default_string;
  bool default_empty_list = false;  // int[N] x=[]; otherwise int[N] x=k means N copies of k
  std::vector<int64_t> default_ints;  // int[N] x=[a,b]
  std::string text;  // as written, for messages
};

struct Signature {
  std::string name;
  std::vector<Param> params;
  size_t max_positional = 0;
  size_t required = 0;
  std::string text;
  // Whether a missing argument raises PyTorch's "missing ... required
  // positional arguments" (the signatures checked from Python list all of
  // PyTorch's overloads; the bindings' lack its hidden deprecated ones).
  bool names_missing = false;
  explicit Signature(const std::string& fmt);
  // Checks the arguments; fills out[] (nullptr = use default). On failure
  // with raise=true, throws TypeError naming the problem.
  bool match(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames, PyObject** out, bool raise) const;
};

class ParsedArgsBase {
 public:
  const Tensor& tensor(int i);
  std::vector<Tensor> tensorlist(int i);
  std::vector<std::optional<Tensor>> optional_tensorlist(int i);
  std::vector<double> doublelist(int i);
  std::optional<std::vector<double>> doublelist_optional(int i);
  std::optional<std::string> string_optional(int i);
  Generator generator(int i);
  std::optional<Generator> generator_optional(int i);
  std::optional<Tensor> optional_tensor(int i);
  Scalar scalar(int i);
  std::optional<Scalar> scalar_optional(int i);
  int64_t int64(int i);
  std::optional<int64_t> int64_optional(int i);
  DimVector intlist(int i);
  std::optional<std::vector<int64_t>> intlist_optional(int i);
  double real(int i);
  std::optional<double> real_optional(int i);
  bool boolean(int i);
  std::optional<bool> boolean_optional(int i);
  std::string string(int i);
  ScalarType scalartype(int i);
  std::optional<ScalarType> scalartype_optional(int i);
  Device device(int i);
  std::optional<Device> device_optional(int i);
  // A factory's device=: the default device (ember.set_default_device) when none is given.
  std::optional<Device> factory_device(int i);
  MemoryFormat memoryformat(int i);
  std::optional<MemoryFormat> memoryformat_optional(int i);
  bool is_none(int i) const { return !args_[i] || args_[i] == Py_None; }
  // A factory's layout= (strided only) and pin_memory= (refused without an accelerator), as PyTorch's CPU build.
  void check_factory_layout_and_pinning(int layout, int pin_memory);
  // After parse() returned -1: what __torch_function__ returned (a new reference).
  PyObject* torch_function_result() const { return torch_function_result_; }

 protected:
  ParsedArgsBase(PyObject** args, Tensor* temps) : args_(args), temps_(temps) {}
  friend class ArgParser;
  const Signature* sig_ = nullptr;
  PyObject* torch_function_result_ = nullptr;
  PyObject** args_;
  Tensor* temps_;
};

template <int N>
class ParsedArgs : public ParsedArgsBase {
 public:
  ParsedArgs() : ParsedArgsBase(storage_, temps_storage_) {}

 private:
  PyObject* storage_[N > 0 ? N : 1] = {};
  Tensor temps_storage_[N > 0 ? N : 1];
};

// Parameters a signature checked from Python (_check_args) may have.
constexpr int kMaxCheckedParams = 24;

class ArgParser {
 public:
  ArgParser(std::initializer_list<const char*> formats, bool is_method);
  ArgParser(const std::vector<std::string>& formats, bool is_method);
  bool is_method() const { return is_method_; }
  size_t max_params() const;
  // Returns the index of the matching signature; throws TypeError if none
  // matches. Returns -1 when __torch_function__ handled the call (the result
  // is out.torch_function_result()).
  int parse(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames, ParsedArgsBase& out) const;
  // The signature matching alone (no __torch_function__ dispatch).
  int match(PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames, ParsedArgsBase& out) const;
  void name_missing_arguments() {
    for (Signature& s : sigs_) s.names_missing = true;
  }

 private:
  std::vector<Signature> sigs_;
  bool is_method_;
};

// An argument's type as PyTorch's messages name it: ember.dtype is torch.dtype.
std::string type_name(PyObject* o);

// ember._C._arg_signatures(formats, is_method) and ember._C._check_args(sigs, *args, **kwargs):
// PyTorch's argument checks for functions written in Python (ember._argtypes).
void init_arg_checks(PyObject* module);

}  // namespace ember::python
