// Note [FFT through MKL]
// PyTorch's x86-64 CPU wheels compute _fft_c2c, _fft_r2c and _fft_c2r with
// MKL's DFTI (2024.2, the version Ember loads for its products, Note [MKL for
// matrix products]); the same library given the same descriptor returns the
// same bits, for every length, batch and thread count measured (decision
// 0029-mkl-fft-lapack). So when MKL is loaded the primitives hand it each
// transform as PyTorch's kernel does:
// - the batch dims first, sorted by decreasing input stride, then the
//   transformed dims in the given order; the batch dims collapsed to one by
//   a reshape (a view where possible, else a contiguous copy);
// - a contiguous output of that batched shape, viewed back afterwards (so the
//   output layout is Note [FFT output layout]'s);
// - one descriptor: the signal sizes (the larger of input and output length
//   per dim), out of place, the batch as the number of transforms, input and
//   output distances and strides in elements, complex-complex storage for
//   the conjugate-even side of r2c/c2r, and the normalization as the forward
//   or backward scale (1/n or 1/sqrt(n) of the whole signal, in double).
// Committed descriptors are kept per configuration (and thread count) and
// shared: MKL allows concurrent computes on one committed descriptor.
#include "ember/cpu/MklFFT.h"

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>

#include "ember/cpu/MklLibrary.h"
#include "ember/ops/Parallel.h"

namespace ember::native::mkl_fft {

namespace {

using MklLong = long;  // MKL_LONG of the LP64 interface
using Handle = void*;

enum : int {
  kForwardScale = 4,
  kBackwardScale = 5,
  kNumberOfTransforms = 7,
  kConjugateEvenStorage = 10,
  kPlacement = 11,
  kInputStrides = 12,
  kOutputStrides = 13,
  kInputDistance = 14,
  kOutputDistance = 15,
  kComplex = 32,
  kReal = 33,
  kComplexComplex = 39,
  kNotInplace = 44,
};

struct Dfti {
  MklLong (*create_s_1d)(Handle*, int, MklLong);
  MklLong (*create_d_1d)(Handle*, int, MklLong);
  MklLong (*create_s_md)(Handle*, int, MklLong, const MklLong*);
  MklLong (*create_d_md)(Handle*, int, MklLong, const MklLong*);
  MklLong (*set_value)(Handle, int, ...);
  MklLong (*commit)(Handle);
  MklLong (*compute_forward)(Handle, void*, void*);
  MklLong (*compute_backward)(Handle, void*, void*);
  MklLong (*free_descriptor)(Handle*);
  const char* (*error_message)(MklLong);
  bool loaded = false;
};

Dfti load() {
  Dfti d{};
  void* lib = blas::mkl_library();
  if (!lib) return d;
  d.loaded = blas::find_symbol(lib, "DftiCreateDescriptor_s_1d", d.create_s_1d) &&
             blas::find_symbol(lib, "DftiCreateDescriptor_d_1d", d.create_d_1d) &&
             blas::find_symbol(lib, "DftiCreateDescriptor_s_md", d.create_s_md) &&
             blas::find_symbol(lib, "DftiCreateDescriptor_d_md", d.create_d_md) &&
             blas::find_symbol(lib, "DftiSetValue", d.set_value) &&
             blas::find_symbol(lib, "DftiCommitDescriptor", d.commit) &&
             blas::find_symbol(lib, "DftiComputeForward", d.compute_forward) &&
             blas::find_symbol(lib, "DftiComputeBackward", d.compute_backward) &&
             blas::find_symbol(lib, "DftiFreeDescriptor", d.free_descriptor) &&
             blas::find_symbol(lib, "DftiErrorMessage", d.error_message);
  return d;
}

const Dfti& dfti() {
  static const Dfti d = load();
  return d;
}

void check(MklLong status) {
  if (status != 0) throw Error(str_cat("MKL FFT error: ", dfti().error_message(status)));
}

using Descriptor = std::shared_ptr<void>;

// Everything a descriptor is built from, as one key.
using PlanKey = std::vector<int64_t>;

Descriptor make_descriptor(const std::vector<int64_t>& in_strides, const std::vector<int64_t>& out_strides,
                           const std::vector<int64_t>& sizes, bool complex_in, bool complex_out, int64_t normalization,
                           bool forward, bool is_double) {
  const Dfti& f = dfti();
  const int64_t signal_ndim = static_cast<int64_t>(sizes.size()) - 1;
  const int domain = (forward ? complex_in : complex_out) ? kComplex : kReal;
  Handle raw = nullptr;
  if (signal_ndim == 1) {
    check((is_double ? f.create_d_1d : f.create_s_1d)(&raw, domain, sizes[1]));
  } else {
    std::vector<MklLong> lengths(sizes.begin() + 1, sizes.end());
    check((is_double ? f.create_d_md : f.create_s_md)(&raw, domain, signal_ndim, lengths.data()));
  }
  Descriptor desc(raw, [](void* h) { dfti().free_descriptor(&h); });
  check(f.set_value(raw, kPlacement, kNotInplace));
  check(f.set_value(raw, kNumberOfTransforms, static_cast<MklLong>(sizes[0])));
  check(f.set_value(raw, kInputDistance, static_cast<MklLong>(in_strides[0])));
  check(f.set_value(raw, kOutputDistance, static_cast<MklLong>(out_strides[0])));
  // Strides lead with an offset, always 0.
  std::vector<MklLong> ist(signal_ndim + 1, 0), ost(signal_ndim + 1, 0);
  for (int64_t i = 1; i <= signal_ndim; ++i) {
    ist[i] = in_strides[i];
    ost[i] = out_strides[i];
  }
  check(f.set_value(raw, kInputStrides, ist.data()));
  check(f.set_value(raw, kOutputStrides, ost.data()));
  if (!complex_in || !complex_out) check(f.set_value(raw, kConjugateEvenStorage, kComplexComplex));
  if (normalization != 0) {
    int64_t numel = 1;
    for (int64_t i = 1; i <= signal_ndim; ++i) numel *= sizes[i];
    const double n = static_cast<double>(numel);
    const double scale = normalization == 1 ? 1.0 / std::sqrt(n) : 1.0 / n;
    check(f.set_value(raw, forward ? kForwardScale : kBackwardScale, scale));
  }
  check(f.commit(raw));
  return desc;
}

Descriptor cached_descriptor(const std::vector<int64_t>& in_strides, const std::vector<int64_t>& out_strides,
                             const std::vector<int64_t>& sizes, bool complex_in, bool complex_out,
                             int64_t normalization, bool forward, bool is_double) {
  static std::mutex mutex;
  static std::map<PlanKey, Descriptor> cache;
  constexpr size_t kMaxPlans = 64;
  PlanKey key{complex_in, complex_out, normalization, forward, is_double, in_parallel_region() ? 1 : get_num_threads()};
  key.insert(key.end(), sizes.begin(), sizes.end());
  key.insert(key.end(), in_strides.begin(), in_strides.end());
  key.insert(key.end(), out_strides.begin(), out_strides.end());
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(key);
    if (it != cache.end()) return it->second;
  }
  Descriptor desc =
      make_descriptor(in_strides, out_strides, sizes, complex_in, complex_out, normalization, forward, is_double);
  std::lock_guard<std::mutex> lock(mutex);
  if (cache.size() >= kMaxPlans) cache.clear();
  cache.emplace(key, desc);
  return desc;
}

template <typename C>
void fill_conjugate(const Tensor& out, const std::vector<int64_t>& dims) {
  const int64_t ndim = out.dim();
  const int64_t last = dims.back();
  const int64_t n = out.size(last), half = n / 2 + 1;
  if (half >= n) return;
  std::vector<bool> mirrored(ndim, false);
  for (int64_t d : dims) mirrored[d] = true;
  auto sizes = out.sizes();
  auto strides = out.strides();
  // Iterate over every index whose last-dim coordinate is in [half, n).
  std::vector<int64_t> extent(sizes.begin(), sizes.end());
  extent[last] = n - half;
  int64_t total = 1;
  for (int64_t e : extent) total *= e;
  C* base = static_cast<C*>(out.data_ptr());
  std::vector<int64_t> idx(ndim, 0);
  for (int64_t count = 0; count < total; ++count) {
    int64_t dst = 0, src = 0;
    for (int64_t d = 0; d < ndim; ++d) {
      const int64_t i = d == last ? idx[d] + half : idx[d];
      dst += i * strides[d];
      src += (mirrored[d] ? (sizes[d] - i) % sizes[d] : i) * strides[d];
    }
    base[dst] = std::conj(base[src]);
    for (int64_t d = ndim - 1; d >= 0; --d) {
      if (++idx[d] < extent[d]) break;
      idx[d] = 0;
    }
  }
}

}  // namespace

bool available() { return dfti().loaded; }

Tensor exec(const Tensor& self, const std::vector<int64_t>& out_sizes, const std::vector<int64_t>& dims,
            ScalarType out_dtype, int64_t normalization, bool forward) {
  const int64_t ndim = self.dim();
  const int64_t signal_ndim = static_cast<int64_t>(dims.size());
  const int64_t batch_dims = ndim - signal_ndim;
  // Batch dims first, by decreasing input stride; then the transformed dims.
  std::vector<bool> transformed(ndim, false);
  for (int64_t d : dims) transformed[d] = true;
  std::vector<int64_t> permutation;
  for (int64_t d = 0; d < ndim; ++d) {
    if (!transformed[d]) permutation.push_back(d);
  }
  auto self_strides = self.strides();
  std::stable_sort(permutation.begin(), permutation.end(),
                   [&](int64_t a, int64_t b) { return self_strides[a] > self_strides[b]; });
  permutation.insert(permutation.end(), dims.begin(), dims.end());
  std::vector<int64_t> batched{-1};
  for (int64_t d : dims) batched.push_back(self.size(d));
  Tensor input = self.permute(permutation).reshape(batched);
  // DFTI refuses zero strides (expanded inputs): those are copied.
  for (int64_t i = 0; i < input.dim(); ++i) {
    if (input.stride(i) == 0 && input.size(i) > 1) {
      input = input.contiguous();
      break;
    }
  }
  const int64_t batch = input.size(0);
  std::vector<int64_t> signal{batch}, batched_out{batch};
  for (int64_t i = 0; i < signal_ndim; ++i) {
    signal.push_back(std::max(input.size(i + 1), out_sizes[dims[i]]));
    batched_out.push_back(out_sizes[dims[i]]);
  }
  Tensor out = ember::empty(batched_out, out_dtype, self.device());
  std::vector<int64_t> in_strides(input.strides().begin(), input.strides().end());
  std::vector<int64_t> out_strides(out.strides().begin(), out.strides().end());
  const bool is_double = out_dtype == ScalarType::Double || out_dtype == ScalarType::ComplexDouble;
  blas::sync_mkl_threads();
  Descriptor desc = cached_descriptor(in_strides, out_strides, signal, is_complex_type(input.dtype()),
                                      is_complex_type(out_dtype), normalization, forward, is_double);
  void* in_ptr = const_cast<void*>(input.data_ptr());
  check((forward ? dfti().compute_forward : dfti().compute_backward)(desc.get(), in_ptr, out.data_ptr()));
  // Back to the original dims: the batch dims in permutation order, then the signal.
  std::vector<int64_t> strides(ndim);
  int64_t batch_numel = 1;
  for (int64_t i = batch_dims - 1; i >= 0; --i) {
    strides[permutation[i]] = batch_numel * out.stride(0);
    batch_numel *= out_sizes[permutation[i]];
  }
  for (int64_t i = batch_dims; i < ndim; ++i) strides[permutation[i]] = out.stride(1 + i - batch_dims);
  return out.as_strided(out_sizes, strides, out.storage_offset());
}

void fill_conjugate_symmetry(const Tensor& out, const std::vector<int64_t>& dims) {
  if (out.dtype() == ScalarType::ComplexDouble) {
    fill_conjugate<std::complex<double>>(out, dims);
  } else {
    fill_conjugate<std::complex<float>>(out, dims);
  }
}

}  // namespace ember::native::mkl_fft
