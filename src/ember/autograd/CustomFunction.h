#pragma once
// Custom autograd functions in C++ (PyTorch's torch::autograd::Function):
//
//   struct MulConst : ember::autograd::Function<MulConst> {
//     static Tensor forward(AutogradContext* ctx, Tensor x, double c) {
//       ctx->saved_data["c"] = c;
//       return x * c;
//     }
//     static variable_list backward(AutogradContext* ctx, variable_list grads) {
//       return {grads[0] * ctx->saved_data["c"].toDouble(), Tensor()};
//     }
//   };
//   Tensor y = MulConst::apply(x, 2.5);
//
// apply runs forward without recording, then records one node,
// "torch::autograd::CppNode<MulConst>", whose backward calls T::backward
// with one gradient per output and expects one per forward argument
// (undefined for arguments that are not tensors).

#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ember/autograd/Autograd.h"
#include "ember/autograd/Node.h"
#include "ember/autograd/SavedVariable.h"
#include "ember/ops/IValue.h"

namespace ember::autograd {

using tensor_list = std::vector<Tensor>;

class CppNodeBase;

// What forward tells backward: saved tensors and values, and which inputs it
// modified and which outputs have no gradient.
class EMBER_API AutogradContext {
 public:
  // Values kept for backward: ctx->saved_data["c"] = 2.5.
  std::unordered_map<std::string, IValue> saved_data;

  void save_for_backward(variable_list to_save) { to_save_ = std::move(to_save); }
  // Inputs forward changed in place (they must be returned as outputs).
  void mark_dirty(const variable_list& inputs) { dirty_ = inputs; }
  // Outputs that get no gradient (indices, masks).
  void mark_non_differentiable(const variable_list& outputs) { non_differentiable_ = outputs; }
  // When false, backward sees undefined gradients for outputs that got none
  // (by default it sees zeros).
  void set_materialize_grads(bool value) { materialize_grads_ = value; }
  // The tensors save_for_backward kept, checked against in-place changes.
  variable_list get_saved_variables() const;
  // Whether the gradient of the index-th tensor input is needed.
  bool needs_input_grad(size_t index) const;

 private:
  friend class CppNodeBase;
  variable_list to_save_, dirty_, non_differentiable_;
  std::vector<SavedVariable> saved_;
  bool materialize_grads_ = true;
  std::weak_ptr<Node> grad_fn_;
};

// The node of a C++ custom function (the type-independent part).
class EMBER_API CppNodeBase : public Node {
 public:
  variable_list apply(variable_list&& grads) override;
  void release_variables() override;

  // Before forward: the tensor arguments and which arguments they are.
  void set_inputs(const variable_list& inputs, std::vector<bool> is_tensor_argument, bool executable);
  // After forward: gives the outputs their history and saves the tensors.
  void wrap_outputs(const variable_list& inputs, variable_list& outputs, bool executable);

  AutogradContext ctx_;

 protected:
  virtual variable_list call_backward(AutogradContext* ctx, variable_list grads) = 0;

 private:
  std::vector<bool> is_tensor_argument_;
  std::mutex mutex_;
};

// A C++ type's readable name ("MulConst", "(anonymous namespace)::F").
EMBER_API std::string demangle(const char* mangled);

template <class T>
class CppNode final : public CppNodeBase {
 public:
  std::string name() const override { return "torch::autograd::CppNode<" + demangle(typeid(T).name()) + ">"; }

 protected:
  variable_list call_backward(AutogradContext* ctx, variable_list grads) override {
    return T::backward(ctx, std::move(grads));
  }
};

namespace detail {
// The tensors among a function's arguments (one flag per argument).
struct ExtractTensors {
  variable_list& tensors;
  std::vector<bool>& is_tensor;
  void operator()(const Tensor& t) {
    is_tensor.push_back(true);
    tensors.push_back(t);
  }
  void operator()(const std::optional<Tensor>& t) {
    is_tensor.push_back(true);
    tensors.push_back(t ? *t : Tensor());
  }
  void operator()(const std::vector<Tensor>& ts) {
    for (const Tensor& t : ts) (*this)(t);
  }
  template <typename U>
  void operator()(const U&) {
    is_tensor.push_back(false);
  }
};

inline variable_list as_list(const Tensor& t) { return {t}; }
inline variable_list as_list(const variable_list& ts) { return ts; }
inline void from_list(Tensor& out, variable_list&& ts) { out = std::move(ts.at(0)); }
inline void from_list(variable_list& out, variable_list&& ts) { out = std::move(ts); }
}  // namespace detail

template <typename X, typename... Args>
using forward_t = decltype(X::forward(nullptr, std::declval<Args>()...));

template <class T>
struct Function {
  template <typename X = T, typename... Args>
  static auto apply(Args&&... args) -> std::enable_if_t<std::is_same_v<X, T>, forward_t<X, Args...>> {
    auto node = std::make_shared<CppNode<T>>();
    variable_list inputs;
    std::vector<bool> is_tensor;
    detail::ExtractTensors extract{inputs, is_tensor};
    (extract(args), ...);
    const bool executable = compute_requires_grad(inputs);
    node->set_inputs(inputs, std::move(is_tensor), executable);
    forward_t<X, Args...> outputs;
    {
      GradModeGuard no_grad(false);
      outputs = T::forward(&node->ctx_, std::forward<Args>(args)...);
    }
    variable_list wrapped = detail::as_list(outputs);
    node->wrap_outputs(inputs, wrapped, executable);
    detail::from_list(outputs, std::move(wrapped));
    return outputs;
  }
};

}  // namespace ember::autograd
