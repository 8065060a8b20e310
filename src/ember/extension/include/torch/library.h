#pragma once
// TORCH_LIBRARY / TORCH_LIBRARY_FRAGMENT / TORCH_LIBRARY_IMPL for extensions
// built against Ember. Each shared library keeps its own list of definitions
// and kernels, filled by static initializers when it is loaded; ember.ops
// reads the list through the exported C function
// ember_library_registrations_v1 (with the GIL held) and registers each entry
// as ember.library would: a schema string, and kernels as pybind11 functions.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <torch/torch.h>

#include "ember/extension/Pybind11.h"

namespace c10 {
// The dispatch keys an extension may register kernels for.
enum class DispatchKey : uint8_t {
  Undefined,
  CPU,
  CUDA,
  Meta,
  Autograd,
  AutogradCPU,
  AutogradCUDA,
  CompositeImplicitAutograd,
  CompositeExplicitAutograd,
};
}  // namespace c10

namespace ember::extension::library {

inline const char* key_name(std::optional<c10::DispatchKey> key) {
  if (!key) return "";
  switch (*key) {
    case c10::DispatchKey::CPU: return "CPU";
    case c10::DispatchKey::CUDA: return "CUDA";
    case c10::DispatchKey::Meta: return "Meta";
    case c10::DispatchKey::Autograd: return "Autograd";
    case c10::DispatchKey::AutogradCPU: return "AutogradCPU";
    case c10::DispatchKey::AutogradCUDA: return "AutogradCUDA";
    case c10::DispatchKey::CompositeImplicitAutograd: return "CompositeImplicitAutograd";
    case c10::DispatchKey::CompositeExplicitAutograd: return "CompositeExplicitAutograd";
    default: return "";
  }
}

// ---- schema inference (m.def("name", fn) without a schema) -------------------

template <typename T>
struct SchemaType;
template <typename T>
struct SchemaType<const T> : SchemaType<T> {};
template <typename T>
struct SchemaType<T&> : SchemaType<T> {};
template <typename T>
struct SchemaType<T&&> : SchemaType<T> {};
template <>
struct SchemaType<Tensor> {
  static std::string name() { return "Tensor"; }
};
template <>
struct SchemaType<int64_t> {
  static std::string name() { return "int"; }
};
template <>
struct SchemaType<double> {
  static std::string name() { return "float"; }
};
template <>
struct SchemaType<bool> {
  static std::string name() { return "bool"; }
};
template <>
struct SchemaType<std::string> {
  static std::string name() { return "str"; }
};
template <>
struct SchemaType<Scalar> {
  static std::string name() { return "Scalar"; }
};
template <>
struct SchemaType<ScalarType> {
  static std::string name() { return "ScalarType"; }
};
template <>
struct SchemaType<IntArrayRef> {
  static std::string name() { return "int[]"; }
};
template <typename T>
struct SchemaType<std::vector<T>> {
  static std::string name() { return SchemaType<T>::name() + "[]"; }
};
template <typename T>
struct SchemaType<std::optional<T>> {
  static std::string name() { return SchemaType<T>::name() + "?"; }
};

template <typename T>
struct SchemaReturn {
  static std::string text() { return SchemaType<T>::name(); }
};
template <>
struct SchemaReturn<void> {
  static std::string text() { return "()"; }
};
template <typename... Ts>
struct SchemaReturn<std::tuple<Ts...>> {
  static std::string text() {
    std::string out = "(";
    std::string sep;
    ((out += sep + SchemaType<Ts>::name(), sep = ", "), ...);
    return out + ")";
  }
};

template <typename F>
struct Signature : Signature<decltype(&std::decay_t<F>::operator())> {};
template <typename R, typename... Args>
struct Signature<R (*)(Args...)> {
  static std::string text() {
    std::string out = "(";
    std::string sep;
    size_t index = 0;
    ((out += sep + SchemaType<Args>::name() + " _" + std::to_string(index++), sep = ", "), ...);
    return out + ") -> " + SchemaReturn<R>::text();
  }
};
template <typename R, typename... Args>
struct Signature<R(Args...)> : Signature<R (*)(Args...)> {};
template <typename C, typename R, typename... Args>
struct Signature<R (C::*)(Args...) const> : Signature<R (*)(Args...)> {};
template <typename C, typename R, typename... Args>
struct Signature<R (C::*)(Args...)> : Signature<R (*)(Args...)> {};

// ---- the per-library list -----------------------------------------------------

struct Entry {
  std::string kind;  // "def" or "impl"
  std::string ns;
  std::string key;  // dispatch key name; "" for a def's own kernel
  std::string text;  // a schema (def) or an operator name (impl)
  std::function<pybind11::object()> make_kernel;  // empty for a bare definition
  std::string file;
  uint32_t line;
};

// Hidden, so that every shared library has its own list even when loaded
// with RTLD_GLOBAL.
__attribute__((visibility("hidden"))) inline std::vector<Entry>& entries() {
  static std::vector<Entry> list;
  return list;
}

template <typename F>
std::function<pybind11::object()> kernel_maker(F f) {
  return [f]() -> pybind11::object { return pybind11::cpp_function(f); };
}

}  // namespace ember::extension::library

namespace torch {

// A kernel for one dispatch key: m.impl("op", torch::dispatch(c10::DispatchKey::CPU, fn)).
template <typename F>
struct DispatchedKernel {
  c10::DispatchKey key;
  F fn;
};
template <typename F>
DispatchedKernel<std::decay_t<F>> dispatch(c10::DispatchKey key, F&& fn) {
  return {key, std::forward<F>(fn)};
}

// The object TORCH_LIBRARY* blocks receive as `m`.
class Library {
 public:
  enum Kind { DEF, IMPL, FRAGMENT };

  Library(Kind kind, std::string ns, std::optional<c10::DispatchKey> key, const char* file, uint32_t line)
      : kind_(kind), ns_(std::move(ns)), key_(key), file_(file), line_(line) {}

  // Declares an operator from its schema ("myop(Tensor x, int n=1) -> Tensor").
  Library& def(const char* schema) & {
    check_def("def");
    add("def", "", schema, {});
    return *this;
  }
  Library& def(const std::string& schema) & { return def(schema.c_str()); }

  // Declares an operator with its kernel, which serves every dispatch key
  // (CompositeImplicitAutograd, as in PyTorch). A name without a schema gets
  // the schema of the function's C++ types.
  template <typename F>
  Library& def(const char* name_or_schema, F&& fn) & {
    check_def("def");
    std::string text(name_or_schema);
    if (text.find('(') == std::string::npos) text += ::ember::extension::library::Signature<std::decay_t<F>>::text();
    add("def", "CompositeImplicitAutograd", text, ::ember::extension::library::kernel_maker(std::forward<F>(fn)));
    return *this;
  }

  // A kernel of an operator for this library's dispatch key (every key when
  // the library has none).
  template <typename F>
  Library& impl(const char* name, F&& fn) & {
    add("impl", ::ember::extension::library::key_name(key_), name,
        ::ember::extension::library::kernel_maker(std::forward<F>(fn)));
    return *this;
  }
  template <typename F>
  Library& impl(const char* name, DispatchedKernel<F> kernel) & {
    if (key_ && *key_ != kernel.key)
      throw ::ember::Error(::ember::str_cat("Library.impl: kernel for ", name, " registered to dispatch key ",
                                            ::ember::extension::library::key_name(kernel.key),
                                            " in a library for another dispatch key"));
    add("impl", ::ember::extension::library::key_name(kernel.key), name,
        ::ember::extension::library::kernel_maker(std::move(kernel.fn)));
    return *this;
  }

 private:
  void check_def(const char* what) const {
    if (kind_ == IMPL)
      throw ::ember::Error(::ember::str_cat(what, "(...): a TORCH_LIBRARY_IMPL block cannot define operators (", file_,
                                            ":", line_, ")"));
  }
  void add(const char* kind, std::string key, std::string text, std::function<pybind11::object()> make) {
    ::ember::extension::library::entries().push_back(
        {kind, ns_, std::move(key), std::move(text), std::move(make), file_, line_});
  }

  Kind kind_;
  std::string ns_;
  std::optional<c10::DispatchKey> key_;
  const char* file_;
  uint32_t line_;
};

namespace detail {
// Runs a TORCH_LIBRARY block when its shared library is loaded.
struct TorchLibraryInit {
  TorchLibraryInit(Library::Kind kind, void (*init)(Library&), const char* ns, std::optional<c10::DispatchKey> key,
                   const char* file, uint32_t line) {
    Library library(kind, ns, key, file, line);
    init(library);
  }
};
}  // namespace detail

}  // namespace torch

#define TORCH_FN(func) (&func)
#define TORCH_SELECTIVE_SCHEMA(schema) schema
#define TORCH_SELECTIVE_NAME(name) name

#define EMBER_LIBRARY_CONCAT_(a, b) a##b
#define EMBER_LIBRARY_CONCAT(a, b) EMBER_LIBRARY_CONCAT_(a, b)

// TORCH_LIBRARY(ns, m) { m.def(...); }: defines the operators of namespace ns.
#define TORCH_LIBRARY(ns, m)                                                                 \
  static void TORCH_LIBRARY_init_##ns(torch::Library&);                                      \
  static const torch::detail::TorchLibraryInit TORCH_LIBRARY_static_init_##ns(               \
      torch::Library::DEF, &TORCH_LIBRARY_init_##ns, #ns, std::nullopt, __FILE__, __LINE__); \
  void TORCH_LIBRARY_init_##ns(torch::Library& m)

// More definitions for a namespace, in another block or library.
#define TORCH_LIBRARY_FRAGMENT(ns, m)                                                                           \
  static void EMBER_LIBRARY_CONCAT(TORCH_LIBRARY_FRAGMENT_init_##ns##_, __LINE__)(torch::Library&);             \
  static const torch::detail::TorchLibraryInit EMBER_LIBRARY_CONCAT(TORCH_LIBRARY_FRAGMENT_static_init_##ns##_, \
                                                                    __LINE__)(                                  \
      torch::Library::FRAGMENT, &EMBER_LIBRARY_CONCAT(TORCH_LIBRARY_FRAGMENT_init_##ns##_, __LINE__), #ns,      \
      std::nullopt, __FILE__, __LINE__);                                                                        \
  void EMBER_LIBRARY_CONCAT(TORCH_LIBRARY_FRAGMENT_init_##ns##_, __LINE__)(torch::Library & m)

// TORCH_LIBRARY_IMPL(ns, CPU, m) { m.impl("op", fn); }: kernels of ns's
// operators for one dispatch key (CPU, CUDA, Meta, Autograd, ...).
#define TORCH_LIBRARY_IMPL(ns, k, m)                                                                              \
  static void EMBER_LIBRARY_CONCAT(TORCH_LIBRARY_IMPL_init_##ns##_##k##_, __LINE__)(torch::Library&);             \
  static const torch::detail::TorchLibraryInit EMBER_LIBRARY_CONCAT(TORCH_LIBRARY_IMPL_static_init_##ns##_##k##_, \
                                                                    __LINE__)(                                    \
      torch::Library::IMPL, &EMBER_LIBRARY_CONCAT(TORCH_LIBRARY_IMPL_init_##ns##_##k##_, __LINE__), #ns,          \
      std::make_optional(c10::DispatchKey::k), __FILE__, __LINE__);                                               \
  void EMBER_LIBRARY_CONCAT(TORCH_LIBRARY_IMPL_init_##ns##_##k##_, __LINE__)(torch::Library & m)

// The list of this library's definitions and kernels, read by ember.ops:
// (kind, namespace, dispatch key, schema or name, kernel or None) tuples.
extern "C" __attribute__((visibility("default"), used)) inline PyObject* ember_library_registrations_v1() {
  try {
    pybind11::list out;
    for (const auto& e : ::ember::extension::library::entries()) {
      pybind11::object kernel = e.make_kernel ? e.make_kernel() : pybind11::none();
      out.append(pybind11::make_tuple(e.kind, e.ns, e.key, e.text, kernel, e.file + ":" + std::to_string(e.line)));
    }
    return out.release().ptr();
  } catch (pybind11::error_already_set& error) {
    error.restore();
  } catch (const std::exception& error) {
    PyErr_SetString(PyExc_RuntimeError, error.what());
  }
  return nullptr;
}
