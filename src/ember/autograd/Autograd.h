#pragma once
// Helpers the generated operator wrappers call to record the backward graph.

#include <initializer_list>
#include <optional>

#include "ember/autograd/AutogradMeta.h"
#include "ember/autograd/GradMode.h"
#include "ember/autograd/SavedVariable.h"
#include "ember/autograd/ViewAutograd.h"

namespace ember::autograd {

namespace detail {
inline bool requires_grad_of(const Tensor& t) { return t.defined() && t.requires_grad(); }
inline bool requires_grad_of(const std::optional<Tensor>& t) { return t && requires_grad_of(*t); }
inline bool requires_grad_of(const TensorList& ts) {
  for (const Tensor& t : ts) {
    if (requires_grad_of(t)) return true;
  }
  return false;
}
inline void append_edges(edge_list& edges, const Tensor& t) {
  edges.push_back(t.defined() ? gradient_edge(t) : Edge());
}
inline void append_edges(edge_list& edges, const std::optional<Tensor>& t) {
  edges.push_back(t && t->defined() ? gradient_edge(*t) : Edge());
}
inline void append_edges(edge_list& edges, const TensorList& ts) {
  for (const Tensor& t : ts) append_edges(edges, t);
}
}  // namespace detail

// True when grad mode is on and any argument (tensor, optional tensor or
// tensor list) requires grad.
template <typename... Ts>
inline bool compute_requires_grad(const Ts&... ts) {
  if (!GradMode::is_enabled() || !at_top_level()) return false;
  return (... || detail::requires_grad_of(ts));
}

// One edge per tensor (lists contribute one per element), in order.
template <typename... Ts>
inline edge_list collect_next_edges(const Ts&... ts) {
  edge_list edges;
  edges.reserve(sizeof...(Ts));
  (detail::append_edges(edges, ts), ...);
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
