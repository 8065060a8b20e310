#pragma once
// Runs the backward graph.

#include <optional>
#include <string>

#include "ember/autograd/Node.h"

namespace ember::autograd {

// Propagates grad_outputs from roots. With `inputs` non-empty (autograd.grad),
// returns the gradients reaching those edges and does not touch .grad unless
// accumulate_grad. Otherwise gradients accumulate into leaves' .grad.
EMBER_API variable_list run_backward(const edge_list& roots, const variable_list& grad_outputs, bool keep_graph,
                                     bool create_graph, const edge_list& inputs, bool allow_unused,
                                     bool accumulate_grad);

// In anomaly mode: the node whose backward last failed on this thread.
struct AnomalyReport {
  std::string node_name;
  std::string forward_trace;
};
EMBER_API std::optional<AnomalyReport> take_anomaly_report();

// tensor.backward() / autograd.backward(): checks inputs like PyTorch, builds
// implicit gradients of scalar outputs and runs the engine.
EMBER_API void backward(const variable_list& tensors, const variable_list& grad_tensors = {},
                        std::optional<bool> retain_graph = std::nullopt, bool create_graph = false,
                        const variable_list& inputs = {});
// autograd.grad().
EMBER_API variable_list grad(const variable_list& outputs, const variable_list& inputs,
                             const variable_list& grad_outputs = {}, std::optional<bool> retain_graph = std::nullopt,
                             bool create_graph = false, bool allow_unused = false);

// Called as backward() or grad() starts; the Python layer sets one that raises
// when the caller holds the GIL, as PyTorch's engine does (Python's own entry
// points release it first, C++ extension code must too).
using EngineEntryCheck = void (*)();
EMBER_API void set_engine_entry_check(EngineEntryCheck check);

}  // namespace ember::autograd
