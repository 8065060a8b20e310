// CPU searchsorted, bincount and histc: values placed in, or counted into, bins.
#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>
#include <type_traits>
#include <vector>

#include "ember/cpu/GroupedOps.h"
#include "ember/cpu/OpMessages.h"
#include "ember/ops/OpChecks.h"
#include "ember/ops/Ops.h"
#include "ember/ops/Parallel.h"
#include "ember/ops/TensorIterator.h"
#include "ember/ops/generated/NativeFunctions.h"

namespace ember::native {

// ---- searchsorted --------------------------------------------------------------------------------

Tensor& searchsorted_out(const Tensor& sorted_sequence, const Tensor& self, bool out_int32, bool right,
                         std::optional<std::string> side, const std::optional<Tensor>& sorter, Tensor& out) {
  if (side) {
    EMBER_CHECK(*side == "left" || *side == "right",
                "torch.searchsorted(): side can only be 'left' or 'right' but got ", *side);
    EMBER_CHECK(
        !(right && *side == "left"),
        "torch.searchsorted(): side and right can't be set to opposites, got side of left while right was True");
    right = *side == "right";
  }
  EMBER_CHECK(!sorter || !sorter->defined(), "torch.searchsorted(): sorter is not supported");
  const Tensor& bd = sorted_sequence;
  bool ok = bd.dim() == 1;
  if (!ok && bd.dim() == self.dim() && bd.dim() > 0) {
    ok = true;
    for (int64_t i = 0; i + 1 < bd.dim(); ++i) ok = ok && bd.sizes()[i] == self.sizes()[i];
  }
  EMBER_CHECK(ok,
              "torch.searchsorted(): boundaries tensor should be 1 dimension or the first N-1 dimensions of "
              "boundaries tensor and input value tensor must match, but we got boundaries tensor ",
              shape_string(bd.sizes()), " and input value tensor ", shape_string(self.sizes()));
  const ScalarType rt = out_int32 ? ScalarType::Int : ScalarType::Long;
  check_out_dtype(out, rt);
  if (out.defined()) {
    resize_output(out, self.sizes());
  } else {
    out = ember::empty(self.sizes(), rt, self.device());
  }
  // No values to search (Note [Meta tensors]); the meta kernel runs when any argument is meta.
  if (out.is_meta() || sorted_sequence.is_meta()) return out;
  const ScalarType ct = promote_types(bd.dtype(), self.dtype());
  if (ct == ScalarType::Bool) throw NotImplementedError("\"searchsorted_out_cpu\" not implemented for 'Bool'");
  Tensor b = bd.to(ct).contiguous(), v = self.to(ct).contiguous();
  Tensor r = ember::empty(self.sizes(), ScalarType::Long, self.device());
  const int64_t nb = b.dim() > 0 ? b.sizes()[b.dim() - 1] : 1;
  const int64_t nv = v.numel();
  const int64_t per_line = bd.dim() <= 1 ? nv : (self.dim() > 0 ? self.sizes()[self.dim() - 1] : 1);
  int64_t* rp = r.data_ptr<int64_t>();
  EMBER_DISPATCH_ALL_TYPES(ct, "searchsorted", [&] {
    const scalar_t* bp = static_cast<const scalar_t*>(b.data_ptr());
    const scalar_t* vp = static_cast<const scalar_t*>(v.data_ptr());
    const int64_t lines = std::max<int64_t>(per_line, 1);
    const bool one_line = bd.dim() <= 1;
    // left: the first position whose value is >= x; right: the first whose value is > x
    // (NaN last either way). Branch-free bisection: the comparison picks the half.
    auto search = [&](auto right_tag) {
      constexpr bool kRight = decltype(right_tag)::value;
      parallel_for(0, nv, 4096, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          const scalar_t* line = one_line ? bp : bp + (i / lines) * nb;
          const scalar_t x = vp[i];
          int64_t lo = 0, len = nb;
          while (len > 0) {
            const int64_t half = len >> 1;
            const bool go_right = kRight ? !(line[lo + half] > x) : !(line[lo + half] >= x);
            lo = go_right ? lo + half + 1 : lo;
            len = go_right ? len - half - 1 : half;
          }
          rp[i] = lo;
        }
      });
    };
    if (right) {
      search(std::true_type{});
    } else {
      search(std::false_type{});
    }
  });
  out.copy_(r);
  return out;
}

Tensor searchsorted_scalar(const Tensor& sorted_sequence, const Scalar& self, bool out_int32, bool right,
                           std::optional<std::string> side, const std::optional<Tensor>& sorter) {
  Tensor v = ember::scalar_tensor(self, sorted_sequence.dtype(), sorted_sequence.device());
  return ember::searchsorted(sorted_sequence, v, out_int32, right, side, sorter);
}

// ---- bincount, histc ------------------------------------------------------------------------------

Tensor bincount(const Tensor& self, const std::optional<Tensor>& weights, int64_t minlength) {
  if (!is_integral_type(self.dtype(), false)) {
    throw NotImplementedError(str_cat("\"bincount_cpu\" not implemented for '", dtype_message_name(self.dtype()), "'"));
  }
  EMBER_CHECK(minlength >= 0, "minlength should be >= 0");
  const bool has_w = weights && weights->defined();
  EMBER_CHECK(self.dim() == 1 || (self.dim() == 0 && self.numel() == 0) || self.dim() == 1,
              "bincount only supports 1-d non-negative integral inputs.");
  if (has_w) {
    EMBER_CHECK(weights->dim() == 1 && weights->numel() == self.numel(),
                "weights should be 1-d and have the same length as input");
  }
  if (self.dim() == 1 && self.numel() == 0) return ember::zeros({minlength}, ScalarType::Long, self.device());
  Tensor x = self.to(ScalarType::Long).contiguous();
  const int64_t* xp = x.data_ptr<int64_t>();
  const int64_t n = x.numel();
  int64_t mx = -1;
  for (int64_t i = 0; i < n; ++i) {
    EMBER_CHECK(xp[i] >= 0, "bincount only supports 1-d non-negative integral inputs.");
    mx = std::max(mx, xp[i]);
  }
  const int64_t bins = std::max(mx + 1, minlength);
  if (!has_w) {
    Tensor out = ember::zeros({bins}, ScalarType::Long, self.device());
    int64_t* op = out.data_ptr<int64_t>();
    for (int64_t i = 0; i < n; ++i) ++op[xp[i]];
    return out;
  }
  const ScalarType wt = weights->dtype() == ScalarType::Float ? ScalarType::Float : ScalarType::Double;
  Tensor w = weights->to(wt).contiguous();
  Tensor out = ember::zeros({bins}, wt, self.device());
  if (wt == ScalarType::Float) {
    const float* wp = w.data_ptr<float>();
    float* op = out.data_ptr<float>();
    for (int64_t i = 0; i < n; ++i) op[xp[i]] += wp[i];
  } else {
    const double* wp = w.data_ptr<double>();
    double* op = out.data_ptr<double>();
    for (int64_t i = 0; i < n; ++i) op[xp[i]] += wp[i];
  }
  return out;
}

// PyTorch's elements per chunk of its histogram kernels.
constexpr int64_t kHistogramGrainSize = 200;

// Note [histc in the input's dtype]
// PyTorch's histc takes its edges from linspace(lo, hi, bins + 1) in the
// input's dtype and places each element by (x - left) * bins / (right - left)
// computed in that dtype: a 16-bit float rounds after every operation (its
// arithmetic is float's, rounded back), and each thread's counts add up in
// it too (a bfloat16 count stops at 256 per thread).
Tensor& histc_out(const Tensor& self, int64_t bins, const Scalar& min, const Scalar& max, Tensor& out) {
  EMBER_CHECK(bins > 0, "torch.histogram(): bins must be > 0, but got ", bins, " for dimension 0");
  if (self.is_meta()) {
    check_out_dtype(out, self.dtype());
    // PyTorch's meta function: the range given (a range from the data is not known here) and the result.
    EMBER_CHECK(!(min.to_double() > max.to_double()), "histc(): max must be larger than min");
    if (out.defined()) {
      resize_output(out, {bins});
    } else {
      out = ember::empty({bins}, self.dtype(), self.device());
    }
    return out;
  }
  // The outer edges in double (the range given, else the data's extremes), as PyTorch.
  // PyTorch's order of errors: the extremes (aminmax), the edges (linspace in the input's
  // dtype), out='s dtype, then the kernel's dtypes.
  double lo = min.to_double(), hi = max.to_double();
  if (lo == hi && self.numel() > 0) {
    if (self.is_complex()) math::not_implemented_for("aminmax_cpu", self.dtype());
    lo = ember::min(self).item<double>(), hi = ember::max(self).item<double>();
    // PyTorch's extremes of data with a NaN are the processor's default NaN (its sign set).
    if (std::isnan(lo)) lo = hi = std::copysign(std::numeric_limits<double>::quiet_NaN(), -1.0);
  }
  if (lo == hi) lo -= 1, hi += 1;
  EMBER_CHECK(std::isfinite(lo) && std::isfinite(hi), "torch.histc: range of [", lo, ", ", hi, "] is not finite");
  EMBER_CHECK(lo < hi, "torch.histc: max must be larger than min");
  // PyTorch's linear interpolation (Note [histc in the input's dtype]).
  Tensor edges = ember::linspace(lo, hi, bins + 1, self.dtype(), self.device());
  EMBER_CHECK(!out.defined() || out.dtype() == self.dtype(),
              "torch.histogram: input tensor and hist tensor should have the same dtype, but got input ",
              cpp_type_name(self.dtype()), " and hist ", cpp_type_name(out.dtype()));
  if (!is_floating_type(self.dtype())) math::not_implemented_for("histogram_cpu", self.dtype());
  Tensor x = self.contiguous();
  Tensor r = ember::zeros({bins}, self.dtype(), self.device());
  auto count = [&](auto zero) {
    using T = decltype(zero);
    using M = std::conditional_t<std::is_same_v<T, double>, double, float>;  // T's arithmetic
    auto round = [](M v) { return static_cast<M>(T(v)); };  // to T and back: a no-op for float, double
    const T* xp = x.data_ptr<T>();
    const M left = M(edges.data_ptr<T>()[0]), right = M(edges.data_ptr<T>()[bins]);
    const M width = round(right - left), scale = round(static_cast<M>(bins));
    // Each of PyTorch's thread chunks counts in T; the chunks' counts add up in T's arithmetic.
    std::vector<M> total(static_cast<size_t>(bins), M(0));
    std::mutex mutex;
    ember::parallel_for(0, x.numel(), kHistogramGrainSize, [&](int64_t begin, int64_t end) {
      std::vector<T> counts(static_cast<size_t>(bins), T(0));
      for (int64_t i = begin; i < end; ++i) {
        const M v = M(xp[i]);
        if (!(v >= left && v <= right)) continue;  // outside, or NaN
        int64_t pos = static_cast<int64_t>(round(round(round(v - left) * scale) / width));
        if (pos == bins) pos -= 1;
        counts[pos] = T(M(counts[pos]) + M(1));
      }
      std::lock_guard<std::mutex> lock(mutex);
      for (int64_t b = 0; b < bins; ++b) total[b] += static_cast<M>(counts[b]);
    });
    T* out_counts = r.data_ptr<T>();
    for (int64_t b = 0; b < bins; ++b) out_counts[b] = T(total[b]);
  };
  switch (self.dtype()) {
    case ScalarType::Float: count(float{}); break;
    case ScalarType::Double: count(double{}); break;
    case ScalarType::Half: count(Half{}); break;
    default: count(BFloat16{}); break;
  }
  if (out.defined()) {
    resize_output(out, {bins});
  } else {
    out = ember::empty({bins}, self.dtype(), self.device());
  }
  out.copy_(r);
  return out;
}

// ---- histogramdd ----------------------------------------------------------------------------------

namespace {

// Rows [begin, end) of x (n x d) added into hist; edges[k] holds bins[k] + 1
// values. kLinear: the edges are evenly spaced (PyTorch's linear interpolation
// with local search): the bin is estimated by division, then looked up among
// the neighbouring edges; otherwise binary search over all edges.
template <typename T, bool kLinear>
void histogramdd_rows(const T* x, int64_t d, const std::vector<const T*>& edges, const std::vector<int64_t>& bins,
                      const T* weight, int64_t begin, int64_t end, T* hist) {
  for (int64_t i = begin; i < end; ++i) {
    const T* row = x + i * d;
    int64_t flat = 0;
    bool inside = true;
    for (int64_t k = 0; k < d; ++k) {
      const T v = row[k];
      const T* e = edges[k];
      const int64_t last = bins[k];
      if (!(v >= e[0] && v <= e[last])) {
        inside = false;
        break;
      }
      int64_t pos;
      if constexpr (kLinear) {
        const int64_t guess = static_cast<int64_t>((v - e[0]) * static_cast<T>(last) / (e[last] - e[0]));
        const int64_t lo = std::max<int64_t>(0, guess - 1), hi = std::min<int64_t>(guess + 2, last + 1);
        pos = std::upper_bound(e + lo, e + hi, v) - e - 1;
      } else {
        pos = std::upper_bound(e, e + last + 1, v) - e - 1;
      }
      // the last edge belongs to the last bin
      if (pos == last) --pos;
      flat = flat * bins[k] + pos;
    }
    if (inside) hist[flat] += weight ? weight[i] : T(1);
  }
}

}  // namespace

Tensor histogramdd_counts(const Tensor& points, const std::vector<Tensor>& edges, const std::optional<Tensor>& weight,
                          bool linear) {
  EMBER_CHECK(points.device().type == DeviceType::CPU, "histogramdd: expected CPU points, got ", points.device().str());
  const ScalarType dt = points.dtype();
  EMBER_CHECK(points.dim() == 2 && static_cast<int64_t>(edges.size()) == points.sizes()[1],
              "histogramdd: expected one edge tensor per column of the points");
  const Tensor x = points.contiguous();
  const int64_t n = x.sizes()[0], d = x.sizes()[1];
  std::vector<Tensor> e(static_cast<size_t>(d));
  std::vector<int64_t> bins(static_cast<size_t>(d));
  int64_t total = 1;
  for (int64_t k = 0; k < d; ++k) {
    e[k] = edges[k].to(dt).contiguous();
    bins[k] = e[k].numel() - 1;
    EMBER_CHECK(bins[k] >= 0, "histogramdd: every dimension needs at least one edge");
    total *= bins[k];
  }
  Tensor w;
  if (weight && weight->defined()) {
    w = weight->reshape({-1}).to(dt).contiguous();
    EMBER_CHECK(w.numel() == n, "histogramdd: expected one weight per point");
  }
  Tensor hist = ember::zeros(bins, dt, points.device());
  if (n == 0 || total == 0) return hist;
  auto run = [&](auto zero) {
    using scalar_t = decltype(zero);
    std::vector<const scalar_t*> ep(static_cast<size_t>(d));
    for (int64_t k = 0; k < d; ++k) ep[k] = static_cast<const scalar_t*>(e[k].data_ptr());
    const scalar_t* xp = static_cast<const scalar_t*>(x.data_ptr());
    const scalar_t* wp = w.defined() ? static_cast<const scalar_t*>(w.data_ptr()) : nullptr;
    scalar_t* hp = static_cast<scalar_t*>(hist.data_ptr());
    // PyTorch's split: one piece of rows per thread (pieces of more than
    // 200 / d rows), each into a histogram of its own, then added in thread
    // order.
    const int64_t grain = 200 / d;
    const int64_t threads = get_num_threads();
    int64_t pieces = 1;
    if (n > grain && threads > 1 && !in_parallel_region()) {
      pieces = grain > 0 ? std::min(threads, (n + grain - 1) / grain) : threads;
    }
    auto rows = [&](int64_t b, int64_t end, scalar_t* h) {
      if (linear) {
        histogramdd_rows<scalar_t, true>(xp, d, ep, bins, wp, b, end, h);
      } else {
        histogramdd_rows<scalar_t, false>(xp, d, ep, bins, wp, b, end, h);
      }
    };
    if (pieces == 1) {
      rows(0, n, hp);
      return;
    }
    const int64_t chunk = (n + pieces - 1) / pieces;
    std::vector<scalar_t> partial(static_cast<size_t>(pieces * total), scalar_t(0));
    parallel_for(0, pieces, 1, [&](int64_t b, int64_t end) {
      for (int64_t t = b; t < end; ++t) {
        rows(t * chunk, std::min(n, (t + 1) * chunk), partial.data() + t * total);
      }
    });
    for (int64_t t = 0; t < pieces; ++t) {
      const scalar_t* p = partial.data() + t * total;
      for (int64_t j = 0; j < total; ++j) hp[j] += p[j];
    }
  };
  if (dt == ScalarType::Float) {
    run(float(0));
  } else if (dt == ScalarType::Double) {
    run(double(0));
  } else {
    throw NotImplementedError(str_cat("\"histogramdd\" not implemented for '", dtype_message_name(dt), "'"));
  }
  return hist;
}

Tensor histogramdd_extremes(const Tensor& points) {
  EMBER_CHECK(points.device().type == DeviceType::CPU, "histogramdd: expected CPU points, got ", points.device().str());
  EMBER_CHECK(points.dim() == 2, "histogramdd: expected points of two dimensions");
  const Tensor x = points.contiguous();
  const int64_t n = x.sizes()[0], d = x.sizes()[1];
  Tensor out = ember::empty({2, d}, x.dtype(), x.device());
  if (n == 0) return out;
  auto run = [&](auto zero) {
    using scalar_t = decltype(zero);
    const scalar_t* xp = static_cast<const scalar_t*>(x.data_ptr());
    scalar_t* lo = static_cast<scalar_t*>(out.data_ptr());
    scalar_t* hi = lo + d;
    for (int64_t k = 0; k < d; ++k) lo[k] = hi[k] = xp[k];
    // a NaN, once met, stays (v < NaN and v > NaN are false)
    for (int64_t i = 1; i < n; ++i) {
      const scalar_t* row = xp + i * d;
      for (int64_t k = 0; k < d; ++k) {
        const scalar_t v = row[k];
        if (v < lo[k] || v != v) lo[k] = v;
        if (v > hi[k] || v != v) hi[k] = v;
      }
    }
  };
  if (x.dtype() == ScalarType::Float) {
    run(float(0));
  } else if (x.dtype() == ScalarType::Double) {
    run(double(0));
  } else {
    throw NotImplementedError(str_cat("\"histogramdd\" not implemented for '", dtype_message_name(x.dtype()), "'"));
  }
  return out;
}

// ---- segment ids ----------------------------------------------------------------------------------

Tensor segment_ids(const Tensor& bounds, int64_t size) {
  EMBER_CHECK(bounds.dim() >= 1 && bounds.sizes().back() >= 1, "segment_reduce: expected segment boundaries");
  if (bounds.is_cuda()) {
    // The ids are found on the host from the boundaries' values, then moved back.
    return segment_ids(bounds.to(Device(DeviceType::CPU)), size).to(bounds.device());
  }
  EMBER_CHECK(bounds.is_cpu(), "segment_reduce: expected CPU boundaries, got ", bounds.device().str());
  const Tensor b = bounds.to(ScalarType::Long).contiguous();
  const int64_t m = b.sizes().back();
  const int64_t lines = b.numel() / m;
  const int64_t last = std::max<int64_t>(m - 2, 0);
  std::vector<int64_t> shape(b.sizes().begin(), b.sizes().end() - 1);
  shape.push_back(size);
  Tensor out = ember::empty(shape, ScalarType::Long, bounds.device());
  const int64_t* bp = b.data_ptr<int64_t>();
  int64_t* op = out.data_ptr<int64_t>();
  for (int64_t r = 0; r < lines; ++r) {
    const int64_t* line = bp + r * m;
    int64_t* dst = op + r * size;
    const bool sorted = std::is_sorted(line, line + m);
    int64_t i = 0;
    for (int64_t p = 0; p < size; ++p) {
      // the first boundary above p (a walk when the boundaries ascend)
      if (sorted) {
        while (i < m && line[i] <= p) ++i;
      } else {
        i = std::upper_bound(line, line + m, p) - line;
      }
      dst[p] = std::min(std::max<int64_t>(i - 1, 0), last);
    }
  }
  return out;
}

}  // namespace ember::native
