// CPU kernels of _fft_c2c, _fft_r2c and _fft_c2r over strided tensors
// (plans in cpu/FFTPlan.h). A multi-dimensional transform runs one pass per
// dimension: the first reads the input, the later ones work in place on the
// output. Each pass gathers groups of lines into contiguous buffers, runs the
// 1-D plan on each and scatters them back, in parallel over the lines.
//
// Note [FFT output layout]
// As PyTorch's CPU kernels do, the output puts the batch dimensions first,
// ordered by the input's strides, then the transformed dimensions (sorted by
// the input's strides, the one-sided last dimension of r2c/c2r kept last),
// contiguous in that order: the last transformed dimension has stride 1.
#include <algorithm>
#include <cmath>
#include <complex>
#include <numeric>
#include <vector>

#include "ember/cpu/FFTPlan.h"
#include "ember/cpu/MklFFT.h"
#include "ember/ops/FftDims.h"
#include "ember/ops/Ops.h"
#include "ember/ops/Parallel.h"
#include "ember/ops/generated/NativeFunctions.h"

namespace ember::native {

namespace {

constexpr int64_t kLinesPerGroup = 8;

enum class Kind { C2C, R2CFull, R2C, C2R };

// Transformed dims sorted by decreasing input stride (the last one kept last when keep_last).
std::vector<int64_t> sort_dims(const Tensor& self, std::vector<int64_t> dims, bool keep_last) {
  auto st = self.strides();
  std::stable_sort(dims.begin(), dims.end() - (keep_last ? 1 : 0), [&](int64_t a, int64_t b) { return st[a] > st[b]; });
  return dims;
}

// An output of `sizes` laid out as Note [FFT output layout] says.
Tensor alloc_output(const Tensor& self, const std::vector<int64_t>& sizes, const std::vector<int64_t>& dims,
                    ScalarType dtype) {
  const int64_t ndim = static_cast<int64_t>(sizes.size());
  std::vector<bool> transformed(ndim, false);
  for (int64_t d : dims) transformed[d] = true;
  std::vector<int64_t> order;
  for (int64_t d = 0; d < ndim; ++d) {
    if (!transformed[d]) order.push_back(d);
  }
  auto st = self.strides();
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return st[a] > st[b]; });
  order.insert(order.end(), dims.begin(), dims.end());
  std::vector<int64_t> permuted_sizes, inverse(ndim);
  for (int64_t i = 0; i < ndim; ++i) {
    permuted_sizes.push_back(sizes[order[i]]);
    inverse[order[i]] = i;
  }
  return ember::empty(permuted_sizes, dtype, self.device()).permute(inverse);
}

double norm_scale(int64_t normalization, int64_t signal_numel) {
  if (normalization == 1) return 1.0 / std::sqrt(static_cast<double>(signal_numel));
  if (normalization == 2) return 1.0 / static_cast<double>(signal_numel);
  return 1.0;
}

// Element offsets of the starts of every line along dim `d` (dims other than
// d, the smallest stride of `layout` innermost), for two tensors of equal
// sizes outside d.
void line_offsets(const Tensor& src, const Tensor& dst, int64_t d, std::vector<int64_t>& src_off,
                  std::vector<int64_t>& dst_off) {
  const int64_t ndim = dst.dim();
  std::vector<int64_t> others;
  for (int64_t i = 0; i < ndim; ++i) {
    if (i != d) others.push_back(i);
  }
  auto dst_st = dst.strides();
  std::stable_sort(others.begin(), others.end(), [&](int64_t a, int64_t b) { return dst_st[a] > dst_st[b]; });
  int64_t lines = 1;
  for (int64_t i : others) lines *= dst.size(i);
  src_off.assign(lines, 0);
  dst_off.assign(lines, 0);
  int64_t block = lines;
  for (int64_t i : others) {
    const int64_t size = dst.size(i);
    block /= size;
    if (size == 1) continue;
    for (int64_t l = 0; l < lines; ++l) {
      const int64_t idx = (l / block) % size;
      src_off[l] += idx * src.stride(i);
      dst_off[l] += idx * dst.stride(i);
    }
  }
}

// One pass along dim d: src (length n_in along d) -> dst (length n_out along d).
// Kind says the element types: C2C complex -> complex, R2CFull real -> complex
// (full spectrum), R2C real -> onesided complex, C2R onesided complex -> real.
template <typename T>
void fft_pass(const Tensor& src, const Tensor& dst, int64_t d, int64_t n, Kind kind, bool inverse, T scale) {
  using C = std::complex<T>;
  std::vector<int64_t> src_off, dst_off;
  line_offsets(src, dst, d, src_off, dst_off);
  const int64_t lines = static_cast<int64_t>(src_off.size());
  const int64_t n_in = src.size(d), n_out = dst.size(d);
  const int64_t s_in = src.stride(d), s_out = dst.stride(d);
  const bool real_in = kind == Kind::R2CFull || kind == Kind::R2C;
  const bool real_out = kind == Kind::C2R;
  const char* src_base = static_cast<const char*>(src.data_ptr());
  char* dst_base = static_cast<char*>(dst.data_ptr());
  std::shared_ptr<const fft::ComplexPlan<T>> cplan;
  std::shared_ptr<const fft::RealPlan<T>> rplan;
  int64_t work = 0;
  if (kind == Kind::C2C || kind == Kind::R2CFull) {
    cplan = fft::complex_plan<T>(n);
    work = cplan->work_size();
  } else {
    rplan = fft::real_plan<T>(n);
    work = rplan->work_size();
  }
  const int64_t buf_len = n + 2;  // complex slots per line (a real line of n fits in n/2 + 1)
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(n, 1));
  parallel_for(0, lines, grain, [&](int64_t l0, int64_t l1) {
    std::vector<C> buf(static_cast<size_t>(kLinesPerGroup * buf_len)), scratch(static_cast<size_t>(work + 1));
    std::vector<T> rbuf(real_in || real_out ? static_cast<size_t>(kLinesPerGroup * buf_len) : 0);
    // Full groups of a mixed-radix complex transform run kPackLines lines per call.
    constexpr int64_t pack = fft::ComplexPlan<T>::kPackLines;
    const bool packable = cplan && n > 1 && kLinesPerGroup % pack == 0;
    const bool packable_real = kind == Kind::R2C && rplan->even() && n > 2 && kLinesPerGroup % pack == 0;
    const fft::ComplexPlan<T>* packed_plan = packable ? cplan.get() : packable_real ? &rplan->half_plan() : nullptr;
    std::vector<T> packed_work(packed_plan ? static_cast<size_t>(packed_plan->packed_work_size()) : 0);
    // Full groups of a complex transform of unchanged length skip the line
    // buffers: the packed transform reads and writes the tensors.
    const bool direct = packable && kind == Kind::C2C && n_in == n && n_out == n;
    const bool direct_real = packable_real && n_in == n && s_in == 1;
    for (int64_t g0 = l0; g0 < l1; g0 += kLinesPerGroup) {
      const int64_t g = std::min(kLinesPerGroup, l1 - g0);
      if (direct && g == kLinesPerGroup) {
        for (int64_t k = 0; k < g; k += pack) {
          const C* in[pack];
          C* out[pack];
          for (int64_t j = 0; j < pack; ++j) {
            in[j] = reinterpret_cast<const C*>(src_base) + src_off[g0 + k + j];
            out[j] = reinterpret_cast<C*>(dst_base) + dst_off[g0 + k + j];
          }
          cplan->run_packed(in, s_in, out, s_out, packed_work.data(), inverse, scale);
        }
        continue;
      }
      if (direct_real && g == kLinesPerGroup) {
        // Pairs of contiguous reals are the half-length complex input.
        for (int64_t k = 0; k < g; k += pack) {
          const C* in[pack];
          C* out[pack];
          for (int64_t j = 0; j < pack; ++j) {
            in[j] = reinterpret_cast<const C*>(reinterpret_cast<const T*>(src_base) + src_off[g0 + k + j]);
            out[j] = reinterpret_cast<C*>(dst_base) + dst_off[g0 + k + j];
          }
          if (packed_plan->direct()) {
            packed_plan->run_packed(in, 1, out, s_out, packed_work.data(), false, scale, rplan->split_twiddles());
          } else {
            packed_plan->run_packed(in, 1, out, s_out, packed_work.data(), false);
            for (int64_t j = 0; j < pack; ++j) rplan->split_even_odd(out[j], s_out, scale);
          }
        }
        continue;
      }
      // Gather (zero-filling what the input lacks).
      const int64_t in_len = kind == Kind::C2R ? n / 2 + 1 : n;
      const int64_t copy_len = std::min(n_in, in_len);
      for (int64_t i = 0; i < copy_len; ++i) {
        for (int64_t k = 0; k < g; ++k) {
          if (real_in) {
            rbuf[k * buf_len + i] = reinterpret_cast<const T*>(src_base)[src_off[g0 + k] + i * s_in];
          } else {
            buf[k * buf_len + i] = reinterpret_cast<const C*>(src_base)[src_off[g0 + k] + i * s_in];
          }
        }
      }
      for (int64_t k = 0; k < g; ++k) {
        C* line = buf.data() + k * buf_len;
        T* rline = real_in || real_out ? rbuf.data() + k * buf_len : nullptr;
        if (real_in) std::fill(rline + copy_len, rline + in_len, T(0));
        if (!real_in) std::fill(line + copy_len, line + in_len, C(0, 0));
        const bool packed = packable && g == kLinesPerGroup;
        switch (kind) {
          case Kind::C2C:
            if (!packed) cplan->run(line, scratch.data(), inverse);
            break;
          case Kind::R2CFull:
            for (int64_t i = 0; i < n; ++i) line[i] = C(rline[i], 0);
            if (!packed) cplan->run(line, scratch.data(), inverse);
            break;
          case Kind::R2C:
            if (packable_real && g == kLinesPerGroup) {
              rplan->pack_even_odd(rline, line);
            } else {
              rplan->forward(rline, line, scratch.data());
            }
            break;
          case Kind::C2R: rplan->inverse(line, rline, scratch.data()); break;
        }
      }
      if (packed_plan && g == kLinesPerGroup) {
        for (int64_t k = 0; k < g; k += pack) {
          packed_plan->run_packed(buf.data() + k * buf_len, buf_len, packed_work.data(), inverse);
        }
        if (packable_real) {
          for (int64_t k = 0; k < g; ++k) rplan->split_even_odd(buf.data() + k * buf_len);
        }
      }
      // Scatter (scaled).
      for (int64_t i = 0; i < n_out; ++i) {
        for (int64_t k = 0; k < g; ++k) {
          if (real_out) {
            reinterpret_cast<T*>(dst_base)[dst_off[g0 + k] + i * s_out] = rbuf[k * buf_len + i] * scale;
          } else {
            reinterpret_cast<C*>(dst_base)[dst_off[g0 + k] + i * s_out] = buf[k * buf_len + i] * scale;
          }
        }
      }
    }
  });
}

template <typename F>
void dispatch_fft(ScalarType t, const F& f) {
  if (t == ScalarType::Float || t == ScalarType::ComplexFloat) {
    f(float{});
  } else if (t == ScalarType::Double || t == ScalarType::ComplexDouble) {
    f(double{});
  } else {
    throw Error(str_cat("Unsupported dtype ", scalar_type_name(t)));
  }
}

// Base pointers must address element 0 of each tensor (storage offset included).
Tensor c2c_passes(const Tensor& self, const Tensor& out, const std::vector<int64_t>& dims, int64_t normalization,
                  bool forward) {
  int64_t signal = 1;
  for (int64_t d : dims) signal *= out.size(d);
  dispatch_fft(self.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T scale = static_cast<T>(norm_scale(normalization, signal));
    for (size_t i = dims.size(); i-- > 0;) {
      const bool first = i + 1 == dims.size();
      fft_pass<T>(first ? self : out, out, dims[i], out.size(dims[i]), Kind::C2C, !forward, i == 0 ? scale : T(1));
    }
  });
  return out;
}

// MKL's DFTI computes non-empty transforms when loaded (Note [FFT through MKL]).
bool use_mkl(const Tensor& input, const std::vector<int64_t>& out_sizes) {
  if (input.is_meta() || input.numel() == 0 || !mkl_fft::available()) return false;
  for (int64_t s : out_sizes) {
    if (s == 0) return false;
  }
  return true;
}

}  // namespace

Tensor fft_c2c_cpu(const Tensor& self, IntArrayRef dim, int64_t normalization, bool forward) {
  EMBER_CHECK(is_complex_type(self.dtype()), "_fft_c2c expects a complex input tensor, but got ",
              scalar_type_name(self.dtype()));
  auto dims = fft_wrap_dims(dim, self.dim());
  if (dims.empty()) return self.clone();
  dims = sort_dims(self, dims, false);
  std::vector<int64_t> sizes(self.sizes().begin(), self.sizes().end());
  if (use_mkl(self, sizes)) return mkl_fft::exec(self, sizes, dims, self.dtype(), normalization, forward);
  Tensor out = alloc_output(self, sizes, dims, self.dtype());
  if (self.is_meta() || out.numel() == 0) return out;
  return c2c_passes(self, out, dims, normalization, forward);
}

Tensor fft_r2c_cpu(const Tensor& self, IntArrayRef dim, int64_t normalization, bool onesided) {
  EMBER_CHECK(self.dtype() == ScalarType::Float || self.dtype() == ScalarType::Double,
              "_fft_r2c expects a real floating point input tensor, but got ", scalar_type_name(self.dtype()));
  auto dims = fft_wrap_dims(dim, self.dim());
  EMBER_CHECK(!dims.empty(), "_fft_r2c must transform at least one dimension");
  const int64_t last = dims.back();
  const int64_t n = self.size(last);
  dims = sort_dims(self, dims, true);
  std::vector<int64_t> sizes(self.sizes().begin(), self.sizes().end());
  if (onesided) sizes[last] = n / 2 + 1;
  if (use_mkl(self, sizes)) {
    Tensor result = mkl_fft::exec(self, sizes, dims, to_complex_type(self.dtype()), normalization, true);
    if (!onesided) mkl_fft::fill_conjugate_symmetry(result, fft_wrap_dims(dim, self.dim()));
    return result;
  }
  Tensor out = alloc_output(self, sizes, dims, to_complex_type(self.dtype()));
  if (self.is_meta() || out.numel() == 0) return out;
  int64_t signal = 1;
  for (int64_t d : dims) signal *= self.size(d);
  dispatch_fft(self.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T scale = static_cast<T>(norm_scale(normalization, signal));
    fft_pass<T>(self, out, last, n, onesided ? Kind::R2C : Kind::R2CFull, false, dims.size() == 1 ? scale : T(1));
    for (size_t i = dims.size() - 1; i-- > 0;) {
      fft_pass<T>(out, out, dims[i], out.size(dims[i]), Kind::C2C, false, i == 0 ? scale : T(1));
    }
  });
  return out;
}

Tensor fft_c2r_cpu(const Tensor& self, IntArrayRef dim, int64_t normalization, int64_t last_dim_size) {
  EMBER_CHECK(is_complex_type(self.dtype()), "_fft_c2r expects a complex input tensor, but got ",
              scalar_type_name(self.dtype()));
  EMBER_CHECK(last_dim_size >= 1, "Invalid number of data points (", last_dim_size, ") specified");
  auto dims = fft_wrap_dims(dim, self.dim());
  EMBER_CHECK(!dims.empty(), "_fft_c2r must transform at least one dimension");
  Tensor input = self;
  if (dims.size() > 1) {
    // As PyTorch does: a C2C over the leading dims, then a 1-D C2R.
    std::vector<int64_t> lead(dims.begin(), dims.end() - 1);
    input = fft_c2c_cpu(self, lead, normalization, false);
  }
  const int64_t last = dims.back();
  std::vector<int64_t> sizes(input.sizes().begin(), input.sizes().end());
  sizes[last] = last_dim_size;
  if (use_mkl(input, sizes) && input.size(last) == last_dim_size / 2 + 1) {
    return mkl_fft::exec(input, sizes, {last}, to_real_type(self.dtype()), normalization, false);
  }
  Tensor out = alloc_output(input, sizes, {last}, to_real_type(self.dtype()));
  if (self.is_meta() || out.numel() == 0) return out;
  dispatch_fft(self.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T scale = static_cast<T>(norm_scale(normalization, last_dim_size));
    fft_pass<T>(input, out, last, last_dim_size, Kind::C2R, true, scale);
  });
  return out;
}

}  // namespace ember::native
