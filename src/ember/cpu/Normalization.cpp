// Batch, layer and group normalisation on the CPU: checks (PyTorch's
// messages), per-channel coefficients, running statistics, and the calls into
// cpu/kernels/NormalizationKernel.cpp. 16-bit float inputs compute in float.
#include <cmath>

#include "ember/cpu/NNStubs.h"
#include "ember/cpu/ReduceStubs.h"
#include "ember/cpu/ReducedFloat.h"
#include "ember/ops/Ops.h"
#include "ember/ops/Parallel.h"
#include "ember/ops/generated/NativeFunctions.h"

namespace ember {
namespace cpu {
EMBER_DEFINE_DISPATCH(BatchNormStatsFn, batch_norm_stats_stub);
EMBER_DEFINE_DISPATCH(BatchNormApplyFn, batch_norm_apply_stub);
EMBER_DEFINE_DISPATCH(BatchNormBackwardReduceFn, batch_norm_backward_reduce_stub);
EMBER_DEFINE_DISPATCH(BatchNormBackwardApplyFn, batch_norm_backward_apply_stub);
EMBER_DEFINE_DISPATCH(BatchNormBackwardContiguousFn, batch_norm_backward_contiguous_stub);
EMBER_DEFINE_DISPATCH(BatchNormBackwardContiguousFn, batch_norm_backward_rows_stub);
EMBER_DEFINE_DISPATCH(BatchNorm16StatsFn, batch_norm_16bit_stats_stub);
EMBER_DEFINE_DISPATCH(BatchNorm16ApplyFn, batch_norm_16bit_apply_stub);
EMBER_DEFINE_DISPATCH(BatchNorm16BackwardFn, batch_norm_16bit_backward_stub);
EMBER_DEFINE_DISPATCH(LayerNormFn, layer_norm_stub);
EMBER_DEFINE_DISPATCH(LayerNormFn, layer_norm_16bit_stub);
EMBER_DEFINE_DISPATCH(LayerNormBackwardFn, layer_norm_backward_stub);
EMBER_DEFINE_DISPATCH(GroupNormFn, group_norm_stub);
EMBER_DEFINE_DISPATCH(GroupNormBackwardFn, group_norm_backward_stub);
}  // namespace cpu

namespace native {
namespace {

Tensor opt(const std::optional<Tensor>& t) { return t && t->defined() ? *t : Tensor(); }

// The dtype the kernels compute in; integer inputs get PyTorch's error.
ScalarType compute_dtype(const Tensor& input, const char* kernel_name) {
  const ScalarType t = input.dtype();
  if (t == ScalarType::Float || t == ScalarType::Double) return t;
  if (is_reduced_float(t)) return ScalarType::Float;
  throw NotImplementedError(str_cat("\"", kernel_name, "\" not implemented for '", dtype_message_name(t), "'"));
}

// Parameters share the input's dtype (float parameters may go with 16-bit input).
void check_mixed(const Tensor& input, std::initializer_list<const Tensor*> params) {
  for (const Tensor* p : params) {
    if (!p->defined() || p->dtype() == input.dtype()) continue;
    EMBER_CHECK(is_reduced_float(input.dtype()) && p->dtype() == ScalarType::Float,
                "mixed dtype (CPU): all inputs must share same datatype.");
  }
}

std::vector<double> to_doubles(const Tensor& t) {
  Tensor d = t.to(ScalarType::Double).contiguous();
  const double* p = d.data_ptr<double>();
  return std::vector<double>(p, p + d.numel());
}

Tensor from_doubles(const std::vector<double>& v, ScalarType dtype) {
  Tensor r = ember::empty({static_cast<int64_t>(v.size())}, dtype);
  if (dtype == ScalarType::Double) {
    std::copy(v.begin(), v.end(), r.data_ptr<double>());
  } else {
    float* p = r.data_ptr<float>();
    for (size_t i = 0; i < v.size(); ++i) p[i] = static_cast<float>(v[i]);
  }
  return r;
}

Tensor in_dtype(const Tensor& t, ScalarType dtype) { return t.to(dtype).contiguous(); }

// The dtype of a parameter's gradient: the parameter's own.
Tensor grad_like(const Tensor& g, const Tensor& param, ScalarType fallback) {
  return g.to(param.defined() ? param.dtype() : fallback);
}

}  // namespace

// ---- batch norm -------------------------------------------------------------------

namespace {

template <typename T>
std::vector<T> values_as(const Tensor& t) {
  Tensor c = t.to(CppTypeToScalarType<T>::value).contiguous();
  const T* p = c.data_ptr<T>();
  return std::vector<T>(p, p + c.numel());
}

template <typename T>
void store_values(const Tensor& dst, const std::vector<T>& v) {
  Tensor r = ember::empty({static_cast<int64_t>(v.size())}, CppTypeToScalarType<T>::value);
  std::copy(v.begin(), v.end(), r.data_ptr<T>());
  dst.copy_(r.view(dst.sizes()));
}

// input viewed with the channel dim first, then the others from the largest
// stride down (memory order).
Tensor channel_first_in_memory_order(const Tensor& input) {
  std::vector<int64_t> order;
  for (int64_t d = 0; d < input.dim(); ++d)
    if (d != 1) order.push_back(d);
  std::stable_sort(order.begin(), order.end(), [&](int64_t p, int64_t q) { return input.stride(p) > input.stride(q); });
  order.insert(order.begin(), 1);
  return input.permute(order);
}

// PyTorch's invstd of a biased variance (0 where both it and eps are 0).
double inv_std(double var, double eps) { return var != 0 || eps != 0 ? 1.0 / std::sqrt(var + eps) : 0.0; }

// Note [Batch norm in PyTorch's order]
// PyTorch's batch norm takes one of two routes. An input contiguous in NCHW
// or channels-last order goes through its collect-stats and transform
// kernels (cpu/kernels: mean and squared deviations per channel, then
// x * alpha + beta, fused), with the statistics' follow-up in the element
// type. Any other layout takes the mean from mean(), the squared deviations
// in double in memory order, and ((x - mean) * invstd) * weight + bias
// unfused. 16-bit inputs compute in float here (PyTorch differs in a few
// last bits there).
template <typename T>
std::tuple<Tensor, Tensor, Tensor> batch_norm_forward(const Tensor& input, const Tensor& weight, const Tensor& bias,
                                                      const Tensor& rmean, const Tensor& rvar, bool training,
                                                      double momentum, double eps) {
  const ScalarType T_ = CppTypeToScalarType<T>::value;
  const int64_t N = input.size(0), C = input.size(1), S = input.numel() / (N * C);
  const double n = static_cast<double>(N * S);
  const bool cl = input.is_contiguous(MemoryFormat::ChannelsLast) || input.is_contiguous(MemoryFormat::ChannelsLast3d);
  const bool fast = input.is_contiguous() || cl;
  std::vector<T> mean(C), invstd(C);
  Tensor save_mean, save_invstd;
  if (training) {
    std::vector<T> var_sum(C);
    std::vector<T> rm = rmean.defined() ? values_as<T>(rmean) : std::vector<T>();
    std::vector<T> rv = rvar.defined() ? values_as<T>(rvar) : std::vector<T>();
    if (fast) {
      cpu::BatchNormArgs a{N, C, S, S == 1 || (cl && !input.is_contiguous())};
      // Rows of channels: the input's storage read in its own order.
      Tensor x = a.channels_last && !input.is_contiguous()
                     ? in_dtype(input.dim() == 4 ? input.permute({0, 2, 3, 1}) : input.permute({0, 2, 3, 4, 1}), T_)
                     : in_dtype(input, T_);
      cpu::batch_norm_stats_stub.get()(T_, x.data_ptr(), mean.data(), var_sum.data(), a);
      const T mom = static_cast<T>(momentum);
      for (int64_t c = 0; c < C; ++c) {
        // The element type's division, then the invstd in double.
        invstd[c] = static_cast<T>(inv_std(static_cast<double>(var_sum[c] / static_cast<T>(N * S)), eps));
        if (rmean.defined()) rm[c] = mom * mean[c] + (1 - mom) * rm[c];
        if (rvar.defined()) {
          const double unbiased = var_sum[c] / static_cast<T>(N * S - 1);
          rv[c] = static_cast<T>(static_cast<double>(mom) * unbiased + static_cast<double>((1 - mom) * rv[c]));
        }
      }
    } else {
      std::vector<int64_t> dims{0};
      for (int64_t d = 2; d < input.dim(); ++d) dims.push_back(d);
      mean = values_as<T>(ember::mean(input, dims, false, T_));
      Tensor xs = in_dtype(channel_first_in_memory_order(input), T_);
      const T* xp = xs.data_ptr<T>();
      const int64_t R = N * S;
      for (int64_t c = 0; c < C; ++c) {
        const double m = mean[c];
        double acc = 0;
        for (int64_t r = 0; r < R; ++r) {
          const double d = static_cast<double>(xp[c * R + r]) - m;
          acc += d * d;
        }
        invstd[c] = static_cast<T>(inv_std(acc / n, eps));
        if (rmean.defined()) rm[c] = static_cast<T>(momentum * m + (1 - momentum) * static_cast<double>(rm[c]));
        if (rvar.defined())
          rv[c] = static_cast<T>(momentum * (acc / (n - 1)) + (1 - momentum) * static_cast<double>(rv[c]));
      }
    }
    if (rmean.defined()) store_values(rmean, rm);
    if (rvar.defined()) store_values(rvar, rv);
    save_mean = ember::empty({C}, T_);
    save_invstd = ember::empty({C}, T_);
    std::copy(mean.begin(), mean.end(), save_mean.data_ptr<T>());
    std::copy(invstd.begin(), invstd.end(), save_invstd.data_ptr<T>());
  } else {
    mean = values_as<T>(rmean);
    std::vector<T> rv = values_as<T>(rvar);
    if (fast) {
      for (int64_t c = 0; c < C; ++c) invstd[c] = T(1) / std::sqrt(rv[c] + static_cast<T>(eps));
    } else {
      // PyTorch takes these as tensor operations (its sqrt is MKL's, as Ember's).
      Tensor root = ember::sqrt(rvar.to(T_) + Scalar(eps));
      invstd = values_as<T>(ember::div(ember::ones_like(root), root));
    }
    save_mean = ember::empty({0}, T_);
    save_invstd = ember::empty({0}, T_);
  }
  std::vector<T> w = weight.defined() ? values_as<T>(weight) : std::vector<T>();
  std::vector<T> b = bias.defined() ? values_as<T>(bias) : std::vector<T>();
  Tensor y;
  if (fast) {
    cpu::BatchNormArgs a{N, C, S, S == 1 || (cl && !input.is_contiguous())};
    if (a.channels_last && !input.is_contiguous()) {
      const std::vector<int64_t> perm =
          input.dim() == 4 ? std::vector<int64_t>{0, 2, 3, 1} : std::vector<int64_t>{0, 2, 3, 4, 1};
      Tensor x = in_dtype(input.permute(perm), T_);
      Tensor yp = ember::empty(x.sizes(), T_);
      cpu::batch_norm_apply_stub.get()(T_, x.data_ptr(), yp.data_ptr(), mean.data(), invstd.data(),
                                       w.empty() ? nullptr : w.data(), b.empty() ? nullptr : b.data(), a);
      std::vector<int64_t> inv(perm.size());
      for (size_t i = 0; i < perm.size(); ++i) inv[perm[i]] = static_cast<int64_t>(i);
      y = yp.permute(inv);
    } else {
      Tensor x = in_dtype(input, T_);
      y = ember::empty(input.sizes(), T_);
      cpu::batch_norm_apply_stub.get()(T_, x.data_ptr(), y.data_ptr(), mean.data(), invstd.data(),
                                       w.empty() ? nullptr : w.data(), b.empty() ? nullptr : b.data(), a);
    }
  } else {
    Tensor x = in_dtype(input, T_);
    y = ember::empty(input.sizes(), T_);
    const T* xp = x.data_ptr<T>();
    T* yp = y.data_ptr<T>();
    for (int64_t r = 0; r < N * C; ++r) {
      const int64_t c = r % C;
      const T m = mean[c], is = invstd[c], wc = w.empty() ? T(1) : w[c], bc = b.empty() ? T(0) : b[c];
      for (int64_t i = 0; i < S; ++i) yp[r * S + i] = ((xp[r * S + i] - m) * is) * wc + bc;
    }
  }
  return {y.to(input.dtype()), save_mean, save_invstd};
}

// A 16-bit value as PyTorch's 16-bit scalar arithmetic leaves it.
float round_to(float v, ScalarType t) {
  return t == ScalarType::BFloat16 ? static_cast<float>(BFloat16(v)) : static_cast<float>(Half(v));
}

std::vector<float> floats_of(const Tensor& t) { return values_as<float>(t); }

Tensor tensor_of(const std::vector<float>& v, ScalarType dtype) {
  Tensor r = ember::empty({static_cast<int64_t>(v.size())}, ScalarType::Float);
  std::copy(v.begin(), v.end(), r.data_ptr<float>());
  return r.to(dtype);
}

// An uninitialised tensor like input, in its layout (contiguous or channels last).
Tensor empty_in_layout_of(const Tensor& input, bool rows) {
  if (!rows || input.is_contiguous()) return ember::empty(input.sizes(), input.dtype());
  const std::vector<int64_t> perm =
      input.dim() == 4 ? std::vector<int64_t>{0, 2, 3, 1} : std::vector<int64_t>{0, 2, 3, 4, 1};
  std::vector<int64_t> shape, inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    shape.push_back(input.size(perm[i]));
    inv[perm[i]] = static_cast<int64_t>(i);
  }
  return ember::empty(shape, input.dtype()).permute(inv);
}

// Whether the parameters are float (else the input's 16-bit dtype).
bool float_params(std::initializer_list<const Tensor*> params) {
  for (const Tensor* p : params)
    if (p->defined() && p->dtype() == ScalarType::Float) return true;
  return false;
}

// A 16-bit input in a layout of PyTorch's kernels (Note [16-bit batch norm]
// in cpu/kernels): statistics from its collect-stats kernel, their
// follow-up in float (parameters of the input's 16-bit dtype: as measured
// against PyTorch, bfloat16 steps for bfloat16, float steps rounded at the
// end for float16), then the transform.
std::tuple<Tensor, Tensor, Tensor> batch_norm_forward_16bit(const Tensor& input, const Tensor& weight,
                                                            const Tensor& bias, const Tensor& rmean, const Tensor& rvar,
                                                            bool training, double momentum, double eps) {
  const ScalarType H = input.dtype();
  const int64_t N = input.size(0), C = input.size(1), S = input.numel() / (N * C), R = N * S;
  const bool mixed = float_params({&weight, &bias, &rmean, &rvar});
  const ScalarType P = mixed ? ScalarType::Float : H;
  const bool cl = input.is_contiguous(MemoryFormat::ChannelsLast) || input.is_contiguous(MemoryFormat::ChannelsLast3d);
  const cpu::BatchNormArgs a{N, C, S, S == 1 || (cl && !input.is_contiguous()), P == ScalarType::Half};
  std::vector<float> mean(C), invstd(C);
  Tensor save_mean, save_invstd;
  if (training) {
    std::vector<float> var_sum(C);
    // bfloat16 parameters: the statistics in bfloat16 steps (each rounded; n
    // too); float16 ones: in float steps, the results rounded.
    const bool steps16 = !mixed && H == ScalarType::BFloat16;
    cpu::batch_norm_16bit_stats_stub.get()(H, input.data_ptr(), mean.data(), var_sum.data(), a, steps16);
    std::vector<float> rm = rmean.defined() ? floats_of(rmean) : std::vector<float>();
    std::vector<float> rv = rvar.defined() ? floats_of(rvar) : std::vector<float>();
    auto r = [&](float v) { return steps16 ? round_to(v, H) : v; };
    const float mom = r(static_cast<float>(momentum)), keep = r(1 - mom);
    for (int64_t c = 0; c < C; ++c) {
      const float var = r(var_sum[c] / r(static_cast<float>(R)));
      invstd[c] = r(static_cast<float>(inv_std(static_cast<double>(var), eps)));
      if (rmean.defined()) rm[c] = r(r(mom * mean[c]) + r(keep * rm[c]));
      if (rvar.defined()) rv[c] = mom * r(var_sum[c] / r(static_cast<float>(R - 1))) + r(keep * rv[c]);
    }
    if (!mixed) {
      for (int64_t c = 0; c < C; ++c) {
        mean[c] = round_to(mean[c], H);
        invstd[c] = round_to(invstd[c], H);
      }
    }
    if (rmean.defined()) rmean.copy_(tensor_of(rm, rmean.dtype()).view(rmean.sizes()));
    if (rvar.defined()) rvar.copy_(tensor_of(rv, rvar.dtype()).view(rvar.sizes()));
    save_mean = tensor_of(mean, P);
    save_invstd = tensor_of(invstd, P);
  } else {
    mean = floats_of(rmean);
    std::vector<float> rv = floats_of(rvar);
    for (int64_t c = 0; c < C; ++c) invstd[c] = 1.f / std::sqrt(rv[c] + static_cast<float>(eps));
    save_mean = ember::empty({0}, P);
    save_invstd = ember::empty({0}, P);
  }
  std::vector<float> w = weight.defined() ? floats_of(weight) : std::vector<float>();
  std::vector<float> b = bias.defined() ? floats_of(bias) : std::vector<float>();
  Tensor y = empty_in_layout_of(input, a.channels_last);
  cpu::batch_norm_16bit_apply_stub.get()(H, input.data_ptr(), y.data_ptr(), mean.data(), invstd.data(),
                                         w.empty() ? nullptr : w.data(), b.empty() ? nullptr : b.data(), a);
  return {y, save_mean, save_invstd};
}

// The backward pass of batch_norm_forward_16bit (input and grad_out in the
// same layout of PyTorch's kernels).
std::tuple<Tensor, Tensor, Tensor> batch_norm_backward_16bit(const Tensor& grad_out, const Tensor& input,
                                                             const Tensor& weight, const Tensor& rmean,
                                                             const Tensor& rvar, const Tensor& save_mean,
                                                             const Tensor& save_invstd, bool train, double eps,
                                                             std::array<bool, 3> mask) {
  const ScalarType H = input.dtype();
  const int64_t N = input.size(0), C = input.size(1), S = input.numel() / (N * C);
  const ScalarType P = float_params({&weight, &rmean, &rvar, &save_mean, &save_invstd}) ? ScalarType::Float : H;
  const cpu::BatchNormArgs a{N, C, S, S == 1 || !input.is_contiguous()};
  std::vector<float> mean, invstd;
  if (train) {
    mean = floats_of(save_mean);
    invstd = floats_of(save_invstd);
  } else {
    mean = floats_of(rmean);
    invstd = floats_of(rvar);
    for (float& v : invstd) v = static_cast<float>(1 / std::sqrt(static_cast<double>(v) + eps));
  }
  EMBER_CHECK(static_cast<int64_t>(mean.size()) == C && static_cast<int64_t>(invstd.size()) == C,
              "batch_norm_backward: statistics should contain ", C, " elements");
  std::vector<float> w = weight.defined() ? floats_of(weight) : std::vector<float>();
  std::vector<float> sum_dy(C), dotp(C);
  Tensor gx = mask[0] ? empty_in_layout_of(input, a.channels_last) : Tensor();
  cpu::batch_norm_16bit_backward_stub.get()(H, grad_out.data_ptr(), input.data_ptr(), mask[0] ? gx.data_ptr() : nullptr,
                                            mean.data(), invstd.data(), w.empty() ? nullptr : w.data(), sum_dy.data(),
                                            dotp.data(), train, a);
  Tensor gw, gb;
  if (mask[1]) {
    std::vector<float> g(C);
    for (int64_t c = 0; c < C; ++c) g[c] = dotp[c] * invstd[c];
    gw = tensor_of(g, P);
  }
  if (mask[2]) gb = tensor_of(sum_dy, P);
  return {gx, gw, gb};
}

// A 16-bit input in neither layout (Note [Batch norm in PyTorch's order]):
// statistics in the parameters' dtype (the input's unless they are float),
// squared deviations summed in float, and each step of the transform
// rounded to that dtype.
std::tuple<Tensor, Tensor, Tensor> batch_norm_forward_16bit_strided(const Tensor& input, const Tensor& weight,
                                                                    const Tensor& bias, const Tensor& rmean,
                                                                    const Tensor& rvar, bool training, double momentum,
                                                                    double eps) {
  const int64_t N = input.size(0), C = input.size(1), S = input.numel() / (N * C);
  const bool mixed = (weight.defined() && weight.dtype() != input.dtype()) ||
                     (bias.defined() && bias.dtype() != input.dtype()) ||
                     (rmean.defined() && rmean.dtype() != input.dtype());
  const ScalarType P = mixed ? ScalarType::Float : input.dtype();
  Tensor mean, invstd;
  if (training) {
    std::vector<int64_t> dims{0};
    for (int64_t d = 2; d < input.dim(); ++d) dims.push_back(d);
    mean = ember::mean(input, dims, false, P);
    std::vector<float> m = values_as<float>(mean);
    Tensor xs = in_dtype(channel_first_in_memory_order(input), ScalarType::Float);
    const float* xp = xs.data_ptr<float>();
    const int64_t R = N * S;
    std::vector<double> iv(C), rm, rv;
    if (rmean.defined()) rm = to_doubles(rmean);
    if (rvar.defined()) rv = to_doubles(rvar);
    for (int64_t c = 0; c < C; ++c) {
      float acc = 0;
      for (int64_t r = 0; r < R; ++r) {
        const float d = xp[c * R + r] - m[c];
        acc += d * d;
      }
      iv[c] = static_cast<float>(inv_std(static_cast<double>(acc / static_cast<float>(R)), eps));
      if (rmean.defined()) rm[c] = momentum * static_cast<double>(m[c]) + (1 - momentum) * rm[c];
      if (rvar.defined())
        rv[c] = momentum * static_cast<double>(acc / static_cast<float>(R - 1)) + (1 - momentum) * rv[c];
    }
    invstd = from_doubles(iv, ScalarType::Float).to(P);
    if (rmean.defined()) rmean.copy_(from_doubles(rm, ScalarType::Double).view(rmean.sizes()));
    if (rvar.defined()) rvar.copy_(from_doubles(rv, ScalarType::Double).view(rvar.sizes()));
  } else {
    mean = rmean.to(P);
    Tensor root = ember::sqrt(rvar.to(P) + Scalar(eps));
    invstd = ember::div(ember::ones_like(root), root);
  }
  std::vector<int64_t> shape(input.dim(), 1);
  shape[1] = C;
  Tensor y = (input - mean.view(shape)) * invstd.view(shape);
  if (weight.defined()) y = y * weight.to(P).view(shape);
  if (bias.defined()) y = y + bias.to(P).view(shape);
  Tensor empty_stats = ember::empty({0}, P);
  return {y.to(input.dtype()).contiguous(), training ? mean : empty_stats, training ? invstd : empty_stats.clone()};
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> batch_norm_cpu(const Tensor& input, const std::optional<Tensor>& weight_opt,
                                                  const std::optional<Tensor>& bias_opt,
                                                  const std::optional<Tensor>& running_mean_opt,
                                                  const std::optional<Tensor>& running_var_opt, bool training,
                                                  double momentum, double eps) {
  Tensor weight = opt(weight_opt), bias = opt(bias_opt), rmean = opt(running_mean_opt), rvar = opt(running_var_opt);
  EMBER_CHECK(input.dim() >= 2, "batch_norm: expected at least 2-D input, got ", input.dim(), "-D");
  const int64_t N = input.size(0), C = input.size(1);
  for (auto [name, t] : {std::pair<const char*, const Tensor*>{"weight", &weight},
                         {"bias", &bias},
                         {"running_mean", &rmean},
                         {"running_var", &rvar}}) {
    EMBER_CHECK(!t->defined() || t->numel() == C, name, " should contain ", C, " elements not ", t->numel());
  }
  EMBER_CHECK(training || rmean.defined(), "running_mean must be defined in evaluation mode");
  EMBER_CHECK(training || rvar.defined(), "running_var must be defined in evaluation mode");
  check_mixed(input, {&weight, &bias, &rmean, &rvar});
  const ScalarType T = compute_dtype(input, "batch_norm");
  // The meta kernel runs when any argument is meta.
  if (input.is_meta() || dispatch::is_meta_arg(weight_opt) || dispatch::is_meta_arg(bias_opt) ||
      dispatch::is_meta_arg(running_mean_opt) || dispatch::is_meta_arg(running_var_opt)) {
    // PyTorch's meta function: statistics of C elements in evaluation too (where the CPU kernel's are empty).
    return {ember::empty(input.sizes(), input.dtype(), input.device()), ember::empty({C}, T, input.device()),
            ember::empty({C}, T, input.device())};
  }
  const int64_t S = C > 0 && N > 0 ? input.numel() / (N * C) : 0;
  if (input.numel() == 0) {
    Tensor nan_stats = ember::empty({C}, T);
    nan_stats.fill_(Scalar(NAN));
    return {ember::empty(input.sizes(), input.dtype()), training ? nan_stats : ember::empty({0}, T),
            training ? nan_stats.clone() : ember::empty({0}, T)};
  }
  const bool layout_fast = input.is_contiguous() || input.is_contiguous(MemoryFormat::ChannelsLast) ||
                           input.is_contiguous(MemoryFormat::ChannelsLast3d);
  if (is_reduced_float(input.dtype())) {
    return layout_fast ? batch_norm_forward_16bit(input, weight, bias, rmean, rvar, training, momentum, eps)
                       : batch_norm_forward_16bit_strided(input, weight, bias, rmean, rvar, training, momentum, eps);
  }
  return T == ScalarType::Double ? batch_norm_forward<double>(input, weight, bias, rmean, rvar, training, momentum, eps)
                                 : batch_norm_forward<float>(input, weight, bias, rmean, rvar, training, momentum, eps);
}

// The mean and invstd a float/double backward uses, in the input's type: the
// saved ones in training, else the running mean and 1 / sqrt(var + eps)
// computed in double (as PyTorch).
std::pair<Tensor, Tensor> backward_statistics(ScalarType T, int64_t C, const Tensor& running_mean,
                                              const Tensor& running_var, const Tensor& save_mean,
                                              const Tensor& save_invstd, bool train, double eps) {
  Tensor mean = (train ? save_mean : running_mean).to(T).contiguous();
  EMBER_CHECK(mean.numel() == C, "batch_norm_backward: statistics should contain ", C, " elements");
  if (train) return {mean, save_invstd.to(T).contiguous()};
  std::vector<double> var = to_doubles(running_var), inv(C);
  for (int64_t c = 0; c < C; ++c) inv[c] = 1 / std::sqrt(var[c] + eps);
  return {mean, from_doubles(inv, T)};
}

// Contiguous float and double inputs: PyTorch's kernel order, bit for bit
// (Note [Batch norm backward order] in NormalizationKernel.cpp).
std::tuple<Tensor, Tensor, Tensor> batch_norm_backward_contiguous(const Tensor& grad_out, const Tensor& input,
                                                                  const Tensor& weight, const Tensor& running_mean,
                                                                  const Tensor& running_var, const Tensor& save_mean,
                                                                  const Tensor& save_invstd, bool train, double eps,
                                                                  std::array<bool, 3> mask, const cpu::BatchNormArgs& a,
                                                                  bool rows) {
  const ScalarType T = input.dtype();
  auto [mean, invstd] = backward_statistics(T, a.C, running_mean, running_var, save_mean, save_invstd, train, eps);
  // dx in input's memory format (the kernels write it in input's order).
  Tensor gx = mask[0] ? ember::empty_like(input, std::nullopt, std::nullopt, input.suggest_memory_format()) : Tensor();
  Tensor gw = mask[1] ? ember::empty({a.C}, T) : Tensor();
  Tensor gb = mask[2] ? ember::empty({a.C}, T) : Tensor();
  Tensor w = weight.defined() ? weight.contiguous() : Tensor();
  (rows ? cpu::batch_norm_backward_rows_stub : cpu::batch_norm_backward_contiguous_stub)
      .get()(T, grad_out.data_ptr(), input.data_ptr(), w.defined() ? w.data_ptr() : nullptr, mean.data_ptr(),
             invstd.data_ptr(), gx.defined() ? gx.data_ptr() : nullptr, gw.defined() ? gw.data_ptr() : nullptr,
             gb.defined() ? gb.data_ptr() : nullptr, train, a);
  if (gw.defined()) gw = grad_like(gw, weight, T);
  if (gb.defined()) gb = grad_like(gb, weight, T);
  return {gx, gw, gb};
}

// Other layouts (an expanded grad_out, strided input): PyTorch's generic loop,
// channel by channel: sum(dy) as its sum over the other dimensions, dotp =
// sum of float (x - mean) * dy in double, dx = (dy - sum / n - (x - mean) * k)
// * invstd * w with k = float(dotp) * invstd * invstd / n, in the input's type.
template <typename T>
std::tuple<Tensor, Tensor, Tensor> batch_norm_backward_strided_typed(const Tensor& grad_out, const Tensor& input,
                                                                     const Tensor& weight, const Tensor& mean_t,
                                                                     const Tensor& invstd_t, bool train,
                                                                     std::array<bool, 3> mask) {
  const int64_t N = input.size(0), C = input.size(1), S = input.numel() / (N * C), n = N * S;
  std::vector<int64_t> dims{0};
  for (int64_t d = 2; d < input.dim(); ++d) dims.push_back(d);
  const Tensor sum = grad_out.sum(dims).contiguous();
  const Tensor x = input.contiguous(), dy = grad_out.contiguous();
  const T *xp = x.data_ptr<T>(), *gp = dy.data_ptr<T>(), *sp = sum.data_ptr<T>();
  const T *mp = mean_t.data_ptr<T>(), *rp = invstd_t.data_ptr<T>();
  const Tensor w_t = weight.defined() ? weight.contiguous() : Tensor();
  Tensor gx = mask[0] ? ember::empty(input.sizes(), input.dtype()) : Tensor();
  Tensor gw = mask[1] ? ember::empty({C}, input.dtype()) : Tensor();
  Tensor gb = mask[2] ? ember::empty({C}, input.dtype()) : Tensor();
  parallel_for(0, C, 1, [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      const T w = w_t.defined() ? w_t.data_ptr<T>()[c] : T(1), m = mp[c], r = rp[c];
      double dotp = 0;
      for (int64_t i = 0; i < N; ++i) {
        const int64_t off = (i * C + c) * S;
        for (int64_t j = 0; j < S; ++j) dotp += static_cast<T>((xp[off + j] - m) * gp[off + j]);
      }
      if (mask[0]) {
        T* o = gx.data_ptr<T>();
        const T k = static_cast<T>(dotp) * r * r / static_cast<T>(n);
        const T grad_mean = sp[c] / static_cast<T>(n);
        for (int64_t i = 0; i < N; ++i) {
          const int64_t off = (i * C + c) * S;
          for (int64_t j = 0; j < S; ++j) {
            if (train) {
              const T gi = (xp[off + j] - m) * k;
              o[off + j] = (gp[off + j] - grad_mean - gi) * r * w;
            } else {
              o[off + j] = gp[off + j] * r * w;
            }
          }
        }
      }
      if (mask[1]) gw.data_ptr<T>()[c] = static_cast<T>(dotp * r);
      if (mask[2]) gb.data_ptr<T>()[c] = sp[c];
    }
  });
  return {gx, gw, gb};
}

std::tuple<Tensor, Tensor, Tensor> batch_norm_backward_strided(const Tensor& grad_out, const Tensor& input,
                                                               const Tensor& weight, const Tensor& running_mean,
                                                               const Tensor& running_var, const Tensor& save_mean,
                                                               const Tensor& save_invstd, bool train, double eps,
                                                               std::array<bool, 3> mask) {
  const ScalarType T = input.dtype();
  auto [mean, invstd] =
      backward_statistics(T, input.size(1), running_mean, running_var, save_mean, save_invstd, train, eps);
  auto [gx, gw, gb] =
      T == ScalarType::Float
          ? batch_norm_backward_strided_typed<float>(grad_out, input, weight, mean, invstd, train, mask)
          : batch_norm_backward_strided_typed<double>(grad_out, input, weight, mean, invstd, train, mask);
  if (gw.defined()) gw = grad_like(gw, weight, T);
  if (gb.defined()) gb = grad_like(gb, weight, T);
  return {gx, gw, gb};
}

std::tuple<Tensor, Tensor, Tensor> batch_norm_backward_cpu(const Tensor& grad_out, const Tensor& input,
                                                           const std::optional<Tensor>& weight_opt,
                                                           const std::optional<Tensor>& running_mean_opt,
                                                           const std::optional<Tensor>& running_var_opt,
                                                           const std::optional<Tensor>& save_mean_opt,
                                                           const std::optional<Tensor>& save_invstd_opt, bool train,
                                                           double eps, std::array<bool, 3> mask) {
  Tensor weight = opt(weight_opt);
  const ScalarType T = compute_dtype(input, "batch_norm_backward");
  if (is_reduced_float(input.dtype()) && input.numel() > 0 && grad_out.dtype() == input.dtype()) {
    // PyTorch's kernels take input and grad_out stored alike.
    const bool both_contiguous = input.is_contiguous() && grad_out.is_contiguous();
    const bool both_channels_last =
        !input.is_contiguous() && !grad_out.is_contiguous() &&
        ((input.is_contiguous(MemoryFormat::ChannelsLast) && grad_out.is_contiguous(MemoryFormat::ChannelsLast)) ||
         (input.is_contiguous(MemoryFormat::ChannelsLast3d) && grad_out.is_contiguous(MemoryFormat::ChannelsLast3d)));
    if (both_contiguous || both_channels_last) {
      return batch_norm_backward_16bit(grad_out, input, weight, opt(running_mean_opt), opt(running_var_opt),
                                       opt(save_mean_opt), opt(save_invstd_opt), train, eps, mask);
    }
  }
  const int64_t N = input.size(0), C = input.size(1);
  const int64_t S = C > 0 && N > 0 ? input.numel() / (N * C) : 0;
  cpu::BatchNormArgs a{N, C, S};
  if ((T == ScalarType::Float || T == ScalarType::Double) && input.dtype() == T && grad_out.dtype() == T &&
      input.numel() > 0 && (!weight.defined() || weight.dtype() == T)) {
    // PyTorch's kernels by the memory format input and grad_out share.
    const MemoryFormat f = input.suggest_memory_format();
    const bool rows = S == 1 || f != MemoryFormat::Contiguous;
    if (input.is_contiguous(f) && grad_out.is_contiguous(f) && grad_out.suggest_memory_format() == f) {
      return batch_norm_backward_contiguous(grad_out, input, weight, opt(running_mean_opt), opt(running_var_opt),
                                            opt(save_mean_opt), opt(save_invstd_opt), train, eps, mask, a, rows);
    }
    return batch_norm_backward_strided(grad_out, input, weight, opt(running_mean_opt), opt(running_var_opt),
                                       opt(save_mean_opt), opt(save_invstd_opt), train, eps, mask);
  }
  std::vector<double> mean, invstd;
  if (train) {
    mean = to_doubles(opt(save_mean_opt));
    invstd = to_doubles(opt(save_invstd_opt));
  } else {
    mean = to_doubles(opt(running_mean_opt));
    std::vector<double> var = to_doubles(opt(running_var_opt));
    invstd.resize(C);
    for (int64_t c = 0; c < C; ++c) invstd[c] = 1.0 / std::sqrt(var[c] + eps);
  }
  EMBER_CHECK(static_cast<int64_t>(mean.size()) == C && static_cast<int64_t>(invstd.size()) == C,
              "batch_norm_backward: statistics should contain ", C, " elements");
  std::vector<double> w = weight.defined() ? to_doubles(weight) : std::vector<double>(C, 1.0);
  Tensor x = in_dtype(input, T), dy = in_dtype(grad_out, T);

  std::vector<double> sum_dy(C, 0.0), sum_dy_xmu(C, 0.0);
  if ((mask[1] || mask[2] || (train && mask[0])) && input.numel() > 0) {
    Tensor m = from_doubles(mean, T), s1 = ember::empty({C}, T), s2 = ember::empty({C}, T);
    cpu::batch_norm_backward_reduce_stub.get()(T, dy.data_ptr(), x.data_ptr(), m.data_ptr(), s1.data_ptr(),
                                               s2.data_ptr(), a);
    sum_dy = to_doubles(s1);
    sum_dy_xmu = to_doubles(s2);
  }
  Tensor gx, gw, gb;
  if (mask[0]) {
    const double M = static_cast<double>(N * S);
    std::vector<double> k1(C), k2(C, 0.0), k3(C, 0.0);
    for (int64_t c = 0; c < C; ++c) {
      k1[c] = invstd[c] * w[c];
      if (train) {
        k2[c] = -k1[c] * invstd[c] * invstd[c] * sum_dy_xmu[c] / M;
        k3[c] = -k1[c] * sum_dy[c] / M - mean[c] * k2[c];
      }
    }
    gx = ember::empty(input.sizes(), T);
    if (input.numel() > 0) {
      Tensor t1 = from_doubles(k1, T), t2 = from_doubles(k2, T), t3 = from_doubles(k3, T);
      cpu::batch_norm_backward_apply_stub.get()(T, dy.data_ptr(), x.data_ptr(), gx.data_ptr(), t1.data_ptr(),
                                                t2.data_ptr(), t3.data_ptr(), a);
    }
    gx = gx.to(input.dtype());
  }
  if (mask[1]) {
    std::vector<double> g(C);
    for (int64_t c = 0; c < C; ++c) g[c] = sum_dy_xmu[c] * invstd[c];
    gw = grad_like(from_doubles(g, T), weight, input.dtype());
  }
  if (mask[2]) gb = grad_like(from_doubles(sum_dy, T), weight, input.dtype());
  return {gx, gw, gb};
}

Tensor batch_norm(const Tensor& input, const std::optional<Tensor>& weight_opt, const std::optional<Tensor>& bias_opt,
                  const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var, bool training,
                  double momentum, double eps, bool /*cudnn_enabled*/) {
  const int64_t C = input.size(1);
  Tensor weight = opt(weight_opt), bias = opt(bias_opt);
  if (input.numel() == 0) {
    // Empty input: a fresh tensor that stays connected to weight and bias.
    Tensor out = input.clone();
    // weight[0] and bias[0] as PyTorch: 0-dim operands (a weaker dtype priority), an IndexError when empty.
    if (weight.defined()) out = out * weight.select(0, 0);
    if (bias.defined()) out = out + bias.select(0, 0);
    return out;
  }
  Tensor rmean = opt(running_mean), rvar = opt(running_var);
  EMBER_CHECK(!rmean.defined() || rmean.numel() == C, "running_mean should contain ", C, " elements not ",
              rmean.numel());
  EMBER_CHECK(training || rmean.defined(), "running_mean must be defined in evaluation mode");
  EMBER_CHECK(!rvar.defined() || rvar.numel() == C, "running_var should contain ", C, " elements not ", rvar.numel());
  EMBER_CHECK(training || rvar.defined(), "running_var must be defined in evaluation mode");
  EMBER_CHECK(!weight.defined() || weight.numel() == C, "weight should contain ", C, " elements not ", weight.numel());
  EMBER_CHECK(!bias.defined() || bias.numel() == C, "bias should contain ", C, " elements not ", bias.numel());
  return std::get<0>(
      ember::native_batch_norm(input, weight_opt, bias_opt, running_mean, running_var, training, momentum, eps));
}

// ---- layer norm -------------------------------------------------------------------

namespace {
// Rows (M) and row length (D) of a layer norm, checked.
std::pair<int64_t, int64_t> layer_norm_dims(const Tensor& input, IntArrayRef shape, const Tensor& weight,
                                            const Tensor& bias) {
  EMBER_CHECK(!shape.empty(),
              "Expected normalized_shape to be at least 1-dimensional, i.e., containing at least one element, but "
              "got normalized_shape = ",
              shape_string(shape));
  EMBER_CHECK(!weight.defined() || weight.sizes().equals(shape),
              "Expected weight to be of same shape as normalized_shape, but got weight of shape ",
              shape_string(weight.sizes()), " and normalized_shape = ", shape_string(shape));
  EMBER_CHECK(!bias.defined() || bias.sizes().equals(shape),
              "Expected bias to be of same shape as normalized_shape, but got bias of shape ",
              shape_string(bias.sizes()), " and normalized_shape = ", shape_string(shape));
  const int64_t nd = input.dim(), k = static_cast<int64_t>(shape.size());
  bool ok = nd >= k;
  for (int64_t i = 0; ok && i < k; ++i) ok = input.size(nd - k + i) == shape[i];
  EMBER_CHECK(
      ok, "Given normalized_shape=", shape_string(shape), ", expected input with shape [*",
      [&] {
        std::string s;
        for (int64_t v : shape) s += ", " + std::to_string(v);
        return s;
      }(),
      "], but got input of size", shape_string(input.sizes()));
  int64_t M = 1, D = 1;
  for (int64_t i = 0; i < nd - k; ++i) M *= input.size(i);
  for (int64_t v : shape) D *= v;
  return {M, D};
}
}  // namespace

std::tuple<Tensor, Tensor, Tensor> layer_norm_cpu(const Tensor& input, IntArrayRef normalized_shape,
                                                  const std::optional<Tensor>& weight_opt,
                                                  const std::optional<Tensor>& bias_opt, double eps) {
  Tensor weight = opt(weight_opt), bias = opt(bias_opt);
  auto [M, D] = layer_norm_dims(input, normalized_shape, weight, bias);
  check_mixed(input, {&weight, &bias});
  const ScalarType T = compute_dtype(input, "LayerNormKernelImpl");
  const Device dev = input.device();
  // A 16-bit input on the CPU or CUDA: its kernel reads and writes the 16-bit
  // data and computes in float (float parameters and statistics).
  const bool in_16bit = is_reduced_float(input.dtype()) && (dev.is_cpu() || dev.is_cuda());
  Tensor x = in_16bit ? input.contiguous() : in_dtype(input, T);
  Tensor g = weight.defined() ? in_dtype(weight, T) : Tensor();
  Tensor b = bias.defined() ? in_dtype(bias, T) : Tensor();
  DimVector stat_shape;
  const int64_t axis = input.dim() - static_cast<int64_t>(normalized_shape.size());
  for (int64_t i = 0; i < input.dim(); ++i) stat_shape.push_back(i < axis ? input.size(i) : 1);
  Tensor y = ember::empty(input.sizes(), x.dtype(), dev), mean = ember::empty(stat_shape, T, dev),
         rstd = ember::empty(stat_shape, T, dev);
  const bool meta = input.is_meta() || dispatch::is_meta_arg(weight) || dispatch::is_meta_arg(bias);
  if (M > 0 && D > 0 && !meta) {  // a meta result has no values to compute
    auto& stub = in_16bit ? cpu::layer_norm_16bit_stub : cpu::layer_norm_stub;
    cpu::kernel_for(stub, x, "aten::native_layer_norm")(x.dtype(), x.data_ptr(), g.defined() ? g.data_ptr() : nullptr,
                                                        b.defined() ? b.data_ptr() : nullptr, y.data_ptr(),
                                                        mean.data_ptr(), rstd.data_ptr(), M, D, eps);
  }
  // The statistics have the parameters' dtype, as in PyTorch's CPU kernel:
  // the input's, or float32 for float parameters with 16-bit input. Its meta
  // function and its CUDA kernel give them the computation's dtype (float32
  // for 16-bit input).
  const bool mixed =
      (weight.defined() && weight.dtype() != input.dtype()) || (bias.defined() && bias.dtype() != input.dtype());
  const ScalarType stats = mixed || !input.is_cpu() ? T : input.dtype();
  return {y.to(input.dtype()), mean.to(stats), rstd.to(stats)};
}

std::tuple<Tensor, Tensor, Tensor> layer_norm_backward_cpu(const Tensor& grad_out, const Tensor& input,
                                                           IntArrayRef normalized_shape, const Tensor& mean,
                                                           const Tensor& rstd, const std::optional<Tensor>& weight_opt,
                                                           std::array<bool, 3> mask) {
  Tensor weight = opt(weight_opt);
  auto [M, D] = layer_norm_dims(input, normalized_shape, weight, Tensor());
  const ScalarType T = compute_dtype(input, "LayerNormBackwardKernelImpl");
  Tensor x = in_dtype(input, T), dy = in_dtype(grad_out, T), m = in_dtype(mean, T), r = in_dtype(rstd, T);
  Tensor g = weight.defined() ? in_dtype(weight, T) : Tensor();
  Tensor gx, gw, gb;
  const Device dev = input.device();
  if (mask[0]) gx = ember::empty(input.sizes(), T, dev);
  if (mask[1]) gw = ember::zeros(normalized_shape, T, dev);
  if (mask[2]) gb = ember::zeros(normalized_shape, T, dev);
  if (M > 0 && D > 0) {
    auto ptr = [](const Tensor& t) { return t.defined() ? t.data_ptr() : nullptr; };
    // The CPU kernel reads 16-bit steps from the input's dtype; CUDA's computes in T.
    cpu::kernel_for(cpu::layer_norm_backward_stub, x, "aten::native_layer_norm_backward")(
        dev.is_cpu() ? input.dtype() : T, dy.data_ptr(), x.data_ptr(), m.data_ptr(), r.data_ptr(), ptr(g), ptr(gx),
        ptr(gw), ptr(gb), M, D);
  }
  if (gx.defined()) gx = gx.to(input.dtype());
  if (gw.defined()) gw = grad_like(gw, weight, input.dtype());
  if (gb.defined()) gb = grad_like(gb, weight, input.dtype());
  return {gx, gw, gb};
}

Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight,
                  const std::optional<Tensor>& bias, double eps, bool /*cudnn_enable*/) {
  return std::get<0>(ember::native_layer_norm(input, normalized_shape, weight, bias, eps));
}

// ---- group norm -------------------------------------------------------------------

std::tuple<Tensor, Tensor, Tensor> group_norm_cpu(const Tensor& input, const std::optional<Tensor>& weight_opt,
                                                  const std::optional<Tensor>& bias_opt, int64_t N, int64_t C,
                                                  int64_t HxW, int64_t group, double eps) {
  Tensor weight = opt(weight_opt), bias = opt(bias_opt);
  EMBER_CHECK(group > 0 && C % group == 0, "Expected number of channels in input to be divisible by num_groups, ",
              "but got input of shape ", shape_string(input.sizes()), " and num_groups=", group);
  EMBER_CHECK(input.numel() == N * C * HxW, "Expected the input to have ", N * C * HxW, " elements, but got ",
              input.numel());
  EMBER_CHECK(!weight.defined() || weight.numel() == C, "Expected weight to be a vector of size equal to the number ",
              "of channels in input, but got weight of shape ", shape_string(weight.sizes()), " and input of shape ",
              shape_string(input.sizes()));
  EMBER_CHECK(!bias.defined() || bias.numel() == C, "Expected bias to be a vector of size equal to the number of ",
              "channels in input, but got bias of shape ", shape_string(bias.sizes()), " and input of shape ",
              shape_string(input.sizes()));
  check_mixed(input, {&weight, &bias});
  const ScalarType T = compute_dtype(input, "GroupNormKernelImpl");
  if (input.is_meta() || dispatch::is_meta_arg(weight) || dispatch::is_meta_arg(bias)) {
    // PyTorch's meta function keeps the statistics in the input's dtype.
    const Device dev = input.device();
    return {ember::empty(input.sizes(), input.dtype(), dev), ember::empty({N, group}, input.dtype(), dev),
            ember::empty({N, group}, input.dtype(), dev)};
  }
  Tensor x = in_dtype(input, T);
  Tensor g = weight.defined() ? in_dtype(weight, T) : Tensor();
  Tensor b = bias.defined() ? in_dtype(bias, T) : Tensor();
  Tensor y = ember::empty(input.sizes(), T), mean = ember::empty({N, group}, T), rstd = ember::empty({N, group}, T);
  if (input.numel() > 0) {
    cpu::group_norm_stub.get()(T, x.data_ptr(), g.defined() ? g.data_ptr() : nullptr,
                               b.defined() ? b.data_ptr() : nullptr, y.data_ptr(), mean.data_ptr(), rstd.data_ptr(),
                               cpu::GroupNormArgs{N, C, HxW, group, is_reduced_float(input.dtype())}, eps);
  }
  // The statistics have the parameters' dtype, as in PyTorch's CPU kernel:
  // the input's, or float32 for float parameters with 16-bit input. Its meta
  // function and its CUDA kernel give them the computation's dtype (float32
  // for 16-bit input).
  const bool mixed =
      (weight.defined() && weight.dtype() != input.dtype()) || (bias.defined() && bias.dtype() != input.dtype());
  const ScalarType stats = mixed || !input.is_cpu() ? T : input.dtype();
  return {y.to(input.dtype()), mean.to(stats), rstd.to(stats)};
}

std::tuple<Tensor, Tensor, Tensor> group_norm_backward_cpu(const Tensor& grad_out, const Tensor& input,
                                                           const Tensor& mean, const Tensor& rstd,
                                                           const std::optional<Tensor>& weight_opt, int64_t N,
                                                           int64_t C, int64_t HxW, int64_t group,
                                                           std::array<bool, 3> mask) {
  Tensor weight = opt(weight_opt);
  EMBER_CHECK(group > 0 && C % group == 0 && input.numel() == N * C * HxW,
              "native_group_norm_backward: inconsistent sizes");
  const ScalarType T = compute_dtype(input, "GroupNormBackwardKernelImpl");
  Tensor x = in_dtype(input, T), dy = in_dtype(grad_out, T), m = in_dtype(mean, T), r = in_dtype(rstd, T);
  Tensor g = weight.defined() ? in_dtype(weight, T) : Tensor();
  Tensor gx, gw, gb;
  if (mask[0]) gx = ember::empty(input.sizes(), T);
  if (mask[1]) gw = ember::zeros({C}, T);
  if (mask[2]) gb = ember::zeros({C}, T);
  if (input.numel() > 0) {
    auto ptr = [](const Tensor& t) { return t.defined() ? t.data_ptr() : nullptr; };
    cpu::group_norm_backward_stub.get()(T, dy.data_ptr(), x.data_ptr(), m.data_ptr(), r.data_ptr(), ptr(g), ptr(gx),
                                        ptr(gw), ptr(gb),
                                        cpu::GroupNormArgs{N, C, HxW, group, is_reduced_float(input.dtype())});
  }
  if (gx.defined()) gx = gx.to(input.dtype());
  if (gw.defined()) gw = grad_like(gw, weight, input.dtype());
  if (gb.defined()) gb = grad_like(gb, weight, input.dtype());
  return {gx, gw, gb};
}

Tensor group_norm(const Tensor& input, int64_t num_groups, const std::optional<Tensor>& weight_opt,
                  const std::optional<Tensor>& bias_opt, double eps, bool /*cudnn_enabled*/) {
  EMBER_CHECK(input.dim() >= 2, "Expected at least 2 dimensions for input tensor but received ", input.dim());
  const int64_t N = input.size(0), C = input.size(1);
  EMBER_CHECK(num_groups > 0, "Expected num_groups to be positive, but got num_groups=", num_groups);
  EMBER_CHECK(C % num_groups == 0, "Expected number of channels in input to be divisible by num_groups, but got ",
              "input of shape ", shape_string(input.sizes()), " and num_groups=", num_groups);
  Tensor weight = opt(weight_opt), bias = opt(bias_opt);
  EMBER_CHECK(!weight.defined() || (weight.dim() == 1 && weight.numel() == C),
              "Expected weight to be a vector of size equal to the number of channels in input, but got weight of "
              "shape ",
              shape_string(weight.sizes()), " and input of shape ", shape_string(input.sizes()));
  // PyTorch's message names the weight's shape here (an empty one without a weight).
  EMBER_CHECK(!bias.defined() || (bias.dim() == 1 && bias.numel() == C),
              "Expected bias to be a vector of size equal to the number of channels in input, but got bias of "
              "shape ",
              weight.defined() ? shape_string(weight.sizes()) : std::string("[0]"), " and input of shape ",
              shape_string(input.sizes()));
  int64_t HxW = 1;
  for (int64_t d = 2; d < input.dim(); ++d) HxW *= input.size(d);
  return std::get<0>(ember::native_group_norm(input.contiguous(), weight_opt, bias_opt, N, C, HxW, num_groups, eps));
}

}  // namespace native
}  // namespace ember
