#pragma once
// Helpers the generated operator wrappers call to record the backward graph.

#include <initializer_list>
#include <optional>

#include "ember/autograd/AutogradMeta.h"
#include "ember/autograd/GradMode.h"
#include "ember/autograd/SavedVariable.h"

namespace ember::autograd {

namespace detail {
// Optional tensor arguments (Tensor? in ops.yaml) count as undefined when absent.
inline bool requires_grad_of(const Tensor& t) { return t.defined() && t.requires_grad(); }
inline bool requires_grad_of(const std::optional<Tensor>& t) { return t && requires_grad_of(*t); }
inline Edge edge_of(const Tensor& t) { return t.defined() ? gradient_edge(t) : Edge(); }
inline Edge edge_of(const std::optional<Tensor>& t) { return t ? edge_of(*t) : Edge(); }
}  // namespace detail

template <typename... Ts>
inline bool compute_requires_grad(const Ts&... ts) {
  if (!GradMode::is_enabled()) return false;
  return (... || detail::requires_grad_of(ts));
}

template <typename... Ts>
inline edge_list collect_next_edges(const Ts&... ts) {
  edge_list edges;
  edges.reserve(sizeof...(Ts));
  (edges.push_back(detail::edge_of(ts)), ...);
  return edges;
}

// Makes grad_fn the history of a fresh output.
EMBER_API void set_history(const Tensor& result, const std::shared_ptr<Node>& grad_fn);
// Makes grad_fn the new history of a tensor modified in place.
EMBER_API void rebase_history(const Tensor& self, const std::shared_ptr<Node>& grad_fn);
// Throws PyTorch's error for an in-place op on a leaf that requires grad.
EMBER_API void check_inplace(const Tensor& self, bool requires_grad);
EMBER_API void throw_out_requires_grad(const char* op);

template <typename... Ts>
inline void check_no_grad_for_out(const char* op, const Ts&... ts) {
  if (compute_requires_grad(ts...)) throw_out_requires_grad(op);
}

}  // namespace ember::autograd
