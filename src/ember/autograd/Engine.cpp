// The backward engine: counts dependencies from the roots, then runs nodes
// in decreasing sequence number as their inputs become complete, summing
// gradients that meet at one input and undoing broadcasts per InputMetadata.
#include "ember/autograd/Engine.h"

#include <atomic>
#include <cctype>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "ember/autograd/AutogradMeta.h"
#include "ember/autograd/FunctionsManual.h"
#include "ember/autograd/GradMode.h"
#include "ember/autograd/GraphHooks.h"
#include "ember/autograd/Profiler.h"
#include "ember/ops/Ops.h"
#include "ember/ops/TensorIterator.h"

namespace ember::autograd {

namespace {

// The node that feeds the user's grad_outputs into the graph.
class GraphRoot final : public Node {
 public:
  GraphRoot(edge_list roots, variable_list grads) : grads_(std::move(grads)) { next_edges_ = std::move(roots); }
  std::string name() const override { return "GraphRoot"; }
  variable_list apply(variable_list&&) override { return grads_; }

 private:
  variable_list grads_;
};

bool is_expandable_to(IntArrayRef shape, IntArrayRef desired) {
  if (shape.size() > desired.size()) return false;
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t s = shape[shape.size() - 1 - i], d = desired[desired.size() - 1 - i];
    if (s != d && s != 1) return false;
  }
  return true;
}

Tensor validate_grad(const Node& producer, size_t index, Tensor grad, const InputMetadata& meta) {
  if (!grad.sizes().equals(meta.shape)) {
    if (!is_expandable_to(meta.shape, grad.sizes())) {
      throw Error(str_cat("Function ", producer.name(), " returned an invalid gradient at index ", index, " - got ",
                          shape_string(grad.sizes()), " but expected shape compatible with ",
                          shape_string(meta.shape)));
    }
    grad = generated::sum_to(grad, meta.shape);
  }
  if (grad.dtype() != meta.dtype) {
    // A real input of a complex computation takes the real part of its gradient.
    if (grad.is_complex() && !is_complex_type(meta.dtype)) grad = ember::real(grad);
    grad = grad.to(meta.dtype);
  }
  return grad;
}

thread_local std::optional<AnomalyReport> t_anomaly_report;

// Note [Anomaly mode]: a node whose backward raises, or returns NaN while
// check_nan is on, leaves a report (its name and forward trace) that the
// Python layer turns into PyTorch's "Error detected in ..." warning.
variable_list apply_checked(Node& n, variable_list&& in) {
  variable_list out;
  try {
    out = n.apply(std::move(in));
  } catch (...) {
    t_anomaly_report = AnomalyReport{n.name(), n.forward_trace};
    throw;
  }
  if (!AnomalyMode::should_check_nan()) return out;
  for (size_t i = 0; i < out.size(); ++i) {
    const Tensor& g = out[i];
    if (!g.defined() || !g.is_floating_point() || g.is_meta()) continue;
    if (g.isnan().any().to(Device(DeviceType::CPU)).item<bool>()) {
      t_anomaly_report = AnomalyReport{n.name(), n.forward_trace};
      throw Error(str_cat("Function '", n.name(), "' returned nan values in its ", i, "th output."));
    }
  }
  return out;
}

// Note [Complex gradients]: the derivative formulas below were checked
// against PyTorch's conjugate-Wirtinger convention for complex tensors; the
// others are written for real tensors only, so a complex tensor reaching one
// of them is an error rather than a wrong gradient.
bool complex_formula_checked(const std::string& name) {
  static const std::unordered_set<std::string> checked = {
      "AbsBackward0", "AddBackward0", "AngleBackward0", "CatBackward0", "CloneBackward0", "ComplexBackward0",
      "ExpandBackward0", "MeanBackward0", "MeanBackward1", "NegBackward0", "PermuteBackward0", "SelectBackward0",
      "SgnBackward0", "SliceBackward0", "SplitBackward0", "SqueezeBackward0", "SqueezeBackward1", "StackBackward0",
      "SubBackward0", "SumBackward0", "SumBackward1", "TBackward0", "ToCopyBackward0", "TransposeBackward0",
      "UnsqueezeBackward0", "ViewAsRealBackward0", "ViewAsComplexBackward0", "ViewBackward0", "WhereBackward0",
      "UnsafeViewBackward0", "ReshapeAliasBackward0", "FftC2CBackward0", "FftR2CBackward0", "FftC2RBackward0",
      "ConjPhysicalBackward0", "ConjBackward0", "NegViewBackward0", "AsStridedBackward0", "ConstantPadNdBackward0",
      "MulBackward0", "DivBackward0", "ExpBackward0", "LogBackward0", "SqrtBackward0", "RsqrtBackward0", "SinBackward0",
      "CosBackward0", "TanBackward0", "AsinhBackward0", "AcoshBackward0", "AtanhBackward0", "Log10Backward0",
      "Log2Backward0", "Log1PBackward0", "Expm1Backward0", "Exp2Backward0", "SincBackward0", "ReciprocalBackward0",
      "AsinBackward0", "AcosBackward0", "AtanBackward0", "SinhBackward0", "CoshBackward0", "PowBackward0",
      "MmBackward0", "BmmBackward0", "MvBackward0", "DotBackward0", "VdotBackward0", "PolarBackward0",
      "CumsumBackward0", "SqueezeBackward4", "TanhBackward0", "SigmoidBackward0", "CumprodBackward0",
      "LogsumexpBackward0", "VarBackward0", "StdBackward0", "TraceBackward0", "RollBackward0", "StdMeanBackward0",
      "VarMeanBackward0", "PowBackward1", "PowBackward2", "RepeatBackward0", "GatherBackward0", "IndexSelectBackward0",
      "MaskedFillBackward0", "MaskedFillBackward1", "UnbindBackward0", "TakeBackward0", "UnfoldBackward0",
      // alpha and beta conjugated, the matrices' conjugate transposes
      "AddmmBackward0", "AddmvBackward0", "BaddbmmBackward0", "AddbmmBackward0", "IndexFillBackward0",
      "IndexFillBackward1", "IndexCopyBackward0", "MaskedScatterBackward0", "ScatterBackward0", "ScatterBackward1",
      "PutBackward0", "IndexPutBackward0", "FillBackward2", "FillBackward3", "SplitWithSizesBackward0",
      "SqueezeBackward2", "ZeroBackward0",
      // the padding's index maps, linear
      "ReflectionPad1DBackward0", "ReflectionPad2DBackward0", "ReflectionPad3DBackward0", "ReplicationPad1DBackward0",
      "ReplicationPad2DBackward0", "ReplicationPad3DBackward0",
      // linear, or conjugated for complex inputs (prod, vector norms)
      "AliasBackward0", "TrilBackward0", "TriuBackward0", "DiagonalBackward0", "IndexBackward0", "FlipBackward0",
      "ProdBackward0", "ProdBackward1", "LinalgVectorNormBackward0",
      // ember.linalg's Functions (python/ember/_linalg_autograd.py): PyTorch's complex formulas
      "LinalgSolveExBackward0", "LinalgInvExBackward0", "LinalgSolveTriangularBackward0", "LinalgLuFactorExBackward0",
      "LinalgCholeskyExBackward0", "CholeskyInverseBackward0", "LinalgEighBackward0", "LinalgSvdBackward0",
      "LinalgQrBackward0", "LinalgEigBackward0", "LinalgLstsqBackward0", "LinalgDetBackward0", "LinalgSlogdetBackward0",
      "LinalgPinvBackward0", "LinalgMatrixExpBackward0", "LinalgLuSolveBackward0",
      // conjugated for complex inputs, as PyTorch's formulas
      "LerpBackward0", "LerpBackward1", "AddcmulBackward0", "AddcdivBackward0", "IndexAddBackward0",
      "ScatterAddBackward0", "MaskedSelectBackward0", "LogaddexpBackward0", "LogcumsumexpBackward0", "AddrBackward0",
      // composites recorded as one node (CompositeOps.cpp, ember._linalg_autograd.named): their parts' formulas
      "RsubBackward0", "RsubBackward1", "LinalgCrossBackward0", "DiagEmbedBackward0", "PixelShuffleBackward0",
      "PixelUnshuffleBackward0", "ChannelShuffleBackward0", "Rot90Backward0", "BlockDiagBackward0", "DistBackward0",
      "LinalgLuBackward0", "LuUnpackBackward0", "LinalgHouseholderProductBackward0", "OrmqrBackward0",
      "TriangularSolveBackward0", "NormBackward1",
      // Python nodes of linear steps (ember.autograd.function._linear_node), conjugated as PyTorch's
      "MulBackward1", "DivBackward1", "AddBackward1", "UnsqueezeBackward1", "TransposeBackward1",
      // PyTorch's complex formula (python/ember/_linalg_autograd.py)
      "CholeskySolveBackward0"};
  return checked.count(name) != 0;
}

void check_complex_support(const Node& n) {
  bool complex = false;
  for (size_t i = 0; i < n.num_inputs() && !complex; ++i) complex = is_complex_type(n.input_metadata(i).dtype);
  for (const Edge& e : n.next_edges()) {
    if (complex) break;
    if (e.is_valid() && e.input_nr < e.function->num_inputs()) {
      complex = is_complex_type(e.function->input_metadata(e.input_nr).dtype);
    }
  }
  if (!complex) return;
  const std::string name = n.name();
  // Operators' nodes end in a digit; custom Functions (whose formulas are the user's) do not.
  if (name.empty() || !std::isdigit(static_cast<unsigned char>(name.back())) || complex_formula_checked(name)) return;
  throw NotImplementedError(str_cat("the derivative for '", name,
                                    "' is not implemented for complex tensors in Ember yet (its formula is for "
                                    "real tensors)"));
}

// The graph task running on this thread, for will_engine_execute_node.
struct TaskView {
  const std::unordered_map<Node*, int>* deps;
  const std::unordered_set<Node*>* needed;
  const std::unordered_map<Node*, std::vector<std::pair<uint32_t, size_t>>>* captures;
  bool capture;
  int64_t id;
};
thread_local const TaskView* t_task = nullptr;
std::atomic<int64_t> g_next_task_id{0};

class TaskViewGuard {
 public:
  explicit TaskViewGuard(const TaskView* view) : prev_(t_task) { t_task = view; }
  ~TaskViewGuard() { t_task = prev_; }
  TaskViewGuard(const TaskViewGuard&) = delete;
  TaskViewGuard& operator=(const TaskViewGuard&) = delete;

 private:
  const TaskView* prev_;
};

struct ReadyCompare {
  bool operator()(Node* a, Node* b) const { return a->sequence_nr() < b->sequence_nr(); }
};

}  // namespace

int64_t current_graph_task_id() { return t_task == nullptr ? -1 : t_task->id; }

std::optional<bool> will_engine_execute_node(const Node* n) {
  if (t_task == nullptr) return std::nullopt;
  Node* key = const_cast<Node*>(n);
  if (!t_task->deps->count(key)) return false;
  return !t_task->capture || t_task->needed->count(key) != 0 || t_task->captures->count(key) != 0;
}

std::optional<AnomalyReport> take_anomaly_report() {
  std::optional<AnomalyReport> r = std::move(t_anomaly_report);
  t_anomaly_report.reset();
  return r;
}

variable_list run_backward(const edge_list& roots, const variable_list& grad_outputs, bool keep_graph,
                           bool create_graph, const edge_list& inputs, bool allow_unused, bool accumulate_grad) {
  auto root = std::make_shared<GraphRoot>(roots, grad_outputs);

  // 1. dependency counts over the reachable graph
  std::unordered_map<Node*, int> deps;
  std::vector<Node*> order;  // discovery order, for the "needed" pass
  {
    std::vector<Node*> stack{root.get()};
    std::unordered_set<Node*> seen{root.get()};
    while (!stack.empty()) {
      Node* n = stack.back();
      stack.pop_back();
      order.push_back(n);
      for (const Edge& e : n->next_edges()) {
        if (!e.is_valid()) continue;
        Node* next = e.function.get();
        ++deps[next];
        if (seen.insert(next).second) stack.push_back(next);
      }
    }
  }

  // 2. for autograd.grad: which nodes must run to reach the inputs
  const bool capture = !inputs.empty();
  std::unordered_map<Node*, std::vector<std::pair<uint32_t, size_t>>> captures;  // node -> (input_nr, result idx)
  std::unordered_set<Node*> needed;
  if (capture) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i].is_valid()) captures[inputs[i].function.get()].emplace_back(inputs[i].input_nr, i);
    }
    // A node is needed if it leads to a captured node; iterate to a fixpoint
    // in reverse discovery order (children mostly come later).
    bool changed = true;
    while (changed) {
      changed = false;
      for (auto it = order.rbegin(); it != order.rend(); ++it) {
        Node* n = *it;
        if (needed.count(n)) continue;
        bool need = false;
        for (const Edge& e : n->next_edges()) {
          if (e.is_valid() && (captures.count(e.function.get()) || needed.count(e.function.get()))) need = true;
        }
        if (need) {
          needed.insert(n);
          changed = true;
        }
      }
    }
  }
  variable_list captured(inputs.size());

  // 3. run
  const TaskView view{&deps, &needed, &captures, capture, g_next_task_id.fetch_add(1)};
  TaskViewGuard task_guard(&view);
  GradModeGuard mode(create_graph);
  TopLevelGuard top_level;
  std::unordered_map<Node*, variable_list> buffers;
  std::priority_queue<Node*, std::vector<Node*>, ReadyCompare> ready;
  ready.push(root.get());
  while (!ready.empty()) {
    Node* n = ready.top();
    ready.pop();
    variable_list in;
    if (n != root.get()) {
      auto it = buffers.find(n);
      if (it != buffers.end()) {
        in = std::move(it->second);
        buffers.erase(it);
      }
      in.resize(std::max<size_t>(in.size(), n->num_inputs()));
      for (const auto* hooks : {&n->tensor_pre_hooks(), &n->retains_grad_hooks()}) {
        for (const auto& [nr, hook] : *hooks) {
          if (nr < in.size() && in[nr].defined()) {
            Tensor replaced = hook(in[nr]);
            if (replaced.defined()) in[nr] = std::move(replaced);
          }
        }
      }
    }
    std::optional<NodeHooks> node_hooks_of_n = n != root.get() ? node_hooks(*n) : std::nullopt;
    if (node_hooks_of_n) {
      for (const auto& hook : node_hooks_of_n->pre) {
        variable_list replaced = hook(in);
        if (replaced.empty()) continue;
        if (replaced.size() != in.size()) {
          throw Error(str_cat("hook '", n->name(), "' has returned an incorrect number of values (got ",
                              replaced.size(), ", but expected ", in.size(), ")"));
        }
        in = std::move(replaced);
      }
    }
    if (capture) {
      auto c = captures.find(n);
      if (c != captures.end()) {
        for (auto [nr, idx] : c->second) captured[idx] = nr < in.size() ? in[nr] : Tensor();
      }
      bool is_leaf_acc = dynamic_cast<AccumulateGrad*>(n) != nullptr;
      if (n != root.get() && (!needed.count(n) || (is_leaf_acc && !accumulate_grad))) continue;
    }

    variable_list in_copy;
    if (!n->post_hooks().empty() || (node_hooks_of_n && !node_hooks_of_n->post.empty())) in_copy = in;
    check_complex_support(*n);
    std::optional<profiler::RecordScope> prof;
    if (profiler::is_active()) prof.emplace("autograd::engine::evaluate_function: " + n->name());
    variable_list out = AnomalyMode::is_enabled() ? apply_checked(*n, std::move(in)) : n->apply(std::move(in));
    prof.reset();
    if (!keep_graph) n->release_variables();
    // As PyTorch: gradients take their inputs' shapes (sum_to) before the node's post hooks see them.
    const edge_list& next = n->next_edges();
    for (size_t i = 0; i < out.size() && i < next.size(); ++i) {
      if (next[i].is_valid() && out[i].defined()) {
        out[i] = validate_grad(*n, i, std::move(out[i]), next[i].function->input_metadata(next[i].input_nr));
      }
    }
    for (const auto& hook : n->post_hooks()) hook(out, in_copy);
    for (const auto& hook : node_hooks_of_n ? node_hooks_of_n->post : std::vector<NodePostHook>{}) {
      variable_list replaced = hook(out, in_copy);
      if (replaced.empty()) continue;
      if (replaced.size() != out.size()) {
        throw Error(str_cat("hook '", n->name(), "' has returned an incorrect number of values (got ", replaced.size(),
                            ", but expected ", out.size(), ")"));
      }
      out = std::move(replaced);
    }

    const edge_list& edges = n->next_edges();
    if (out.size() != edges.size() && !edges.empty()) {
      throw Error(str_cat("function ", n->name(), " returned an incorrect number of gradients (expected ", edges.size(),
                          ", got ", out.size(), ")"));
    }
    for (size_t i = 0; i < edges.size(); ++i) {
      const Edge& e = edges[i];
      if (!e.is_valid()) continue;
      Node* next = e.function.get();
      if (out[i].defined()) {
        Tensor g = std::move(out[i]);
        variable_list& buf = buffers[next];
        if (buf.size() <= e.input_nr) buf.resize(std::max<size_t>(next->num_inputs(), e.input_nr + 1));
        Tensor& slot = buf[e.input_nr];
        slot = slot.defined() ? slot + g : std::move(g);
      }
      if (--deps[next] == 0) ready.push(next);
    }
  }

  if (capture) {
    for (size_t i = 0; i < captured.size(); ++i) {
      EMBER_CHECK(captured[i].defined() || allow_unused, "The differentiated Tensor at index ", i,
                  " appears to not have been used in the graph. Set allow_unused=True if this is the desired "
                  "behavior.");
    }
  }
  return captured;
}

namespace {

std::atomic<EngineEntryCheck> g_entry_check{nullptr};

void check_entry() {
  if (EngineEntryCheck check = g_entry_check.load(std::memory_order_relaxed)) check();
}

edge_list roots_of(const variable_list& tensors) {
  edge_list roots;
  for (size_t i = 0; i < tensors.size(); ++i) {
    Edge e = tensors[i].defined() ? gradient_edge(tensors[i]) : Edge();
    EMBER_CHECK(e.is_valid(), "element ", i, " of tensors does not require grad and does not have a grad_fn");
    roots.push_back(std::move(e));
  }
  return roots;
}

variable_list make_grads(const variable_list& outputs, const variable_list& grads) {
  variable_list result;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor& out = outputs[i];
    Tensor g = i < grads.size() ? grads[i] : Tensor();
    if (!g.defined()) {
      EMBER_CHECK(out.numel() == 1, "grad can be implicitly created only for scalar outputs");
      EMBER_CHECK(out.is_floating_point(), "grad can be implicitly created only for real scalar outputs but got ",
                  scalar_type_name(out.dtype()));
      g = ones_like(out);
    } else {
      EMBER_CHECK(g.sizes().equals(out.sizes()), "Mismatch in shape: grad_output[", i, "] has a shape of torch.Size(",
                  shape_string(g.sizes()), ") and output[", i, "] has a shape of torch.Size(",
                  shape_string(out.sizes()), ").");
    }
    result.push_back(std::move(g));
  }
  return result;
}

}  // namespace

void backward(const variable_list& tensors, const variable_list& grad_tensors, std::optional<bool> retain_graph,
              bool create_graph, const variable_list& inputs) {
  check_entry();
  edge_list roots = roots_of(tensors);
  variable_list grads = make_grads(tensors, grad_tensors);
  bool keep = retain_graph.value_or(create_graph);
  if (inputs.empty()) {
    run_backward(roots, grads, keep, create_graph, {}, false, true);
    return;
  }
  edge_list in_edges;
  for (const Tensor& t : inputs) {
    Edge e = gradient_edge(t);
    EMBER_CHECK(e.is_valid(), "One of the differentiated Tensors does not require grad");
    in_edges.push_back(std::move(e));
  }
  variable_list got = run_backward(roots, grads, keep, create_graph, in_edges, true, false);
  // backward(inputs=...) accumulates into exactly those tensors' .grad.
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!got[i].defined()) continue;
    Tensor& g = const_cast<Tensor&>(inputs[i]).mutable_grad();
    g = g.defined() ? g + got[i] : (create_graph ? got[i] : got[i].detach().clone());
  }
}

variable_list grad(const variable_list& outputs, const variable_list& inputs, const variable_list& grad_outputs,
                   std::optional<bool> retain_graph, bool create_graph, bool allow_unused) {
  check_entry();
  edge_list roots = roots_of(outputs);
  variable_list grads = make_grads(outputs, grad_outputs);
  edge_list in_edges;
  for (size_t i = 0; i < inputs.size(); ++i) {
    Edge e = gradient_edge(inputs[i]);
    EMBER_CHECK(e.is_valid(), "One of the differentiated Tensors does not require grad");
    in_edges.push_back(std::move(e));
  }
  return run_backward(roots, grads, retain_graph.value_or(create_graph), create_graph, in_edges, allow_unused, false);
}

void set_engine_entry_check(EngineEntryCheck check) { g_entry_check.store(check, std::memory_order_relaxed); }

}  // namespace ember::autograd
