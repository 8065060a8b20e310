// CTC loss on CUDA tensors, computed on the host: the arguments are copied to
// the CPU, the CPU kernel runs (the forward's log-alpha recursion and the
// backward's log-beta pass), the results come back to the argument's device.
// PyTorch's CUDA kernels run the same recursions in the same log space; the
// results agree within the loss tolerances, not bit for bit.
// tools/cuda_opdb_coverage.py counts these apart from device kernels.
#include <tuple>

#include "ember/ops/Ops.h"
#include "ember/ops/generated/DispatchTables.h"

namespace ember::cuda {
namespace {

constexpr int kCpu = static_cast<int>(DeviceType::CPU);
const Device kHost(DeviceType::CPU);

Tensor host(const Tensor& t) { return t.defined() ? t.to(kHost) : t; }

Tensor back(const Tensor& t, const Device& device) { return t.defined() ? t.to(device) : t; }
std::tuple<Tensor, Tensor> back(const std::tuple<Tensor, Tensor>& r, const Device& device) {
  return {back(std::get<0>(r), device), back(std::get<1>(r), device)};
}

#define EMBER_CUDA_HOST_ENTRY(name, params, call_args, first)                                             \
  auto name##_on_host params { return back(dispatch::name##_kernels[kCpu] call_args, (first).device()); } \
  [[maybe_unused]] const bool name##_registered = [] {                                                    \
    dispatch::name##_kernels[static_cast<int>(DeviceType::CUDA)] = &name##_on_host;                       \
    return true;                                                                                          \
  }()

EMBER_CUDA_HOST_ENTRY(_ctc_loss,
                      (const Tensor& log_probs, const Tensor& targets, IntArrayRef input_lengths,
                       IntArrayRef target_lengths, int64_t blank, bool zero_infinity),
                      (host(log_probs), host(targets), input_lengths, target_lengths, blank, zero_infinity), log_probs);
EMBER_CUDA_HOST_ENTRY(_ctc_loss_backward,
                      (const Tensor& grad, const Tensor& log_probs, const Tensor& targets, IntArrayRef input_lengths,
                       IntArrayRef target_lengths, const Tensor& neg_log_likelihood, const Tensor& log_alpha,
                       int64_t blank, bool zero_infinity),
                      (host(grad), host(log_probs), host(targets), input_lengths, target_lengths,
                       host(neg_log_likelihood), host(log_alpha), blank, zero_infinity),
                      log_probs);

#undef EMBER_CUDA_HOST_ENTRY

}  // namespace
}  // namespace ember::cuda
