// _fft_c2c, _fft_r2c and _fft_c2r on CUDA through cuFFT, computed as
// PyTorch's CUDA kernels compute them:
// - one cuFFT call transforms up to 3 dims of a batch: the dims not
//   transformed are moved first (by decreasing stride) and collapsed into one
//   batch dim (a view where possible), the output is a fresh contiguous
//   tensor of that batched shape, viewed back afterwards (CufftPlan.h);
// - C2C over more dims runs passes of up to 3 dims, innermost first, each
//   reading the previous pass's output;
// - R2C is a 1-D R2C along the last dim, then C2C passes over the others on
//   the one-sided result; the full (two-sided) spectrum is completed by
//   conjugate symmetry (FftFill.cu); a real input not aligned as complex
//   numbers is copied first;
// - C2R is C2C passes over all dims but the last (no normalization), then a
//   1-D C2R, whose input is always a buffer of its own (cuFFT overwrites a
//   C2R's input): the C2C's output, or a contiguous clone;
// - the normalization is a separate multiplication of the result by 1/n or
//   1/sqrt(n) (in double, as a number operand);
// - plans are cached per device, sizes, strides, type and precision in a
//   least-recently-used cache of 4096 plans per device; each call sets the
//   plan's stream to the current one and hands it a workspace from the
//   caching allocator.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ember/core/Error.h"
#include "ember/cuda/CudaContext.h"
#include "ember/cuda/CudaStream.h"
#include "ember/cuda/LibraryLoad.h"
#include "ember/cuda/fft/CufftApi.h"
#include "ember/cuda/fft/CufftPlan.h"
#include "ember/cuda/fft/FftFill.h"
#include "ember/ops/FftDims.h"
#include "ember/ops/Ops.h"
#include "ember/ops/generated/DispatchTables.h"

namespace ember::cuda::fft {
namespace {

// ---- loading cuFFT -----------------------------------------------------------------------

// Note [Finding cuFFT]
// libcufft.so.12 (cuFFT 12, CUDA 13) is opened on the first transform, by
// path, first match wins (cufft::library_candidates):
// 1. $EMBER_CUFFT_LIBRARY (a file);
// 2. beside the libcublas that libember_cuda loaded: the nvidia-cufft
//    wheel, a dependency of PyTorch's CUDA 13 wheels, shares the
//    nvidia/cu13/lib folder of the nvidia-cublas wheel;
// 3. ../../nvidia/cu13/lib beside libember_cuda (an installed wheel);
// 4. the soname alone: a copy already loaded (by PyTorch, for one) or the
//    loader's search path.
// Without it every other CUDA operator still runs; a transform raises a
// RuntimeError naming the library and the paths tried.
struct Loader {
  std::mutex mutex;
  bool tried = false;
  void* lib = nullptr;
  cufft::Api api;
  std::string error;
};

Loader& loader() {
  static Loader* l = new Loader();  // never destroyed: plans outlive static destructors
  return *l;
}

std::string file_of(const void* address) {
  Dl_info info;
  if (dladdr(address, &info) == 0 || info.dli_fname == nullptr) return "";
  return info.dli_fname;
}

std::string own_dir() {
  const std::string self = file_of(reinterpret_cast<const void*>(&own_dir));
  return self.empty() ? "" : cufft::parent_dir(self);
}

void load_locked(Loader& l) {
  if (l.tried) return;
  l.tried = true;
  const std::string cublas = file_of(reinterpret_cast<const void*>(&cublasCreate_v2));
  std::string tried;
  l.lib = open_first_library(cufft::library_candidates(std::getenv("EMBER_CUFFT_LIBRARY"), cublas, own_dir()), tried);
  if (l.lib == nullptr) {
    l.error = std::string("cuFFT (") + cufft::kSoname +
              ") could not be loaded; install the nvidia-cufft wheel (PyTorch's CUDA 13 wheels depend on it) or set "
              "EMBER_CUFFT_LIBRARY. Tried:" +
              tried;
    return;
  }
  const std::string missing = cufft::resolve(l.lib, l.api);
  if (!missing.empty()) {
    l.error = std::string("the loaded cuFFT (") + cufft::kSoname + ") lacks: " + missing;
    l.lib = nullptr;
  }
}

const cufft::Api& api() {
  Loader& l = loader();
  std::lock_guard<std::mutex> lock(l.mutex);
  load_locked(l);
  if (l.lib == nullptr) throw Error(l.error);
  return l.api;
}

// PyTorch's wording: "cuFFT error: CUFFT_INVALID_SIZE".
void check(cufft::Result r) {
  if (r != cufft::kSuccess) throw Error(str_cat("cuFFT error: ", cufft::result_name(r)));
}

// ---- plans -------------------------------------------------------------------------------

struct Plan {
  cufft::Handle handle = -1;
  size_t workspace = 0;
  bool clone_input = false;
  std::mutex mutex;  // stream, work area and execution of one call at a time

  Plan() = default;
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;
  ~Plan() {
    // An evicted plan; at exit the caches are never destroyed.
    if (handle >= 0) loader().api.destroy(handle);
  }
};

std::shared_ptr<Plan> make_plan(const PlanKey& key) {
  const cufft::Api& f = api();
  auto plan = std::make_shared<Plan>();
  check(f.create(&plan->handle));
  // The workspace comes from the caching allocator at each call.
  check(f.set_auto_allocation(plan->handle, 0));
  const PlanLayout layout = plan_layout(key);
  plan->clone_input = layout.clone_input;
  const auto sizes = key.sizes();
  std::vector<long long> n(sizes.begin() + 1, sizes.end());
  const int rank = static_cast<int>(n.size());
  const bool complex_in = key.kind() != FftKind::R2C;
  const bool complex_out = key.kind() != FftKind::C2R;
  const cufft::Type type = cufft::transform_type(complex_in, complex_out, key.is_double());
  std::vector<long long> in_embed = layout.in.embed, out_embed = layout.out.embed;
  size_t workspace = 0;
  if (layout.simple) {
    check(f.make_plan_many64(plan->handle, rank, n.data(), nullptr, 1, 1, nullptr, 1, 1, type, sizes[0], &workspace));
  } else {
    check(f.make_plan_many64(plan->handle, rank, n.data(), in_embed.data(), layout.in.stride, layout.in.dist,
                             out_embed.data(), layout.out.stride, layout.out.dist, type, sizes[0], &workspace));
  }
  plan->workspace = workspace;
  return plan;
}

PlanCache<Plan>& plan_cache(int device) {
  static std::mutex mutex;
  static auto* caches = new std::map<int, std::unique_ptr<PlanCache<Plan>>>();  // never destroyed
  std::lock_guard<std::mutex> lock(mutex);
  auto& c = (*caches)[device];
  if (!c) c = std::make_unique<PlanCache<Plan>>(kDefaultPlanCacheSize);
  return *c;
}

// ---- one cuFFT call ----------------------------------------------------------------------

std::vector<int64_t> vec(IntArrayRef a) { return std::vector<int64_t>(a.begin(), a.end()); }

// `self` transformed along `dims` (1 to 3, the last innermost) into a new
// tensor of `out_sizes` and `out_dtype`. out_sizes may hold a full length of
// an R2C's last dim: only its first n / 2 + 1 entries are written then.
Tensor exec_fft(const Tensor& self, const std::vector<int64_t>& out_sizes, const std::vector<int64_t>& dims,
                ScalarType out_dtype, bool forward) {
  const int device = self.device().index >= 0 ? self.device().index : current_device();
  DeviceGuard guard(device);
  const size_t signal_ndim = dims.size();
  const std::vector<int64_t> perm = batch_first_permutation(vec(self.strides()), dims);
  int64_t batch = 1;
  for (size_t i = 0; i + signal_ndim < perm.size(); ++i) batch *= self.size(perm[i]);
  std::vector<int64_t> batched{batch};
  for (int64_t d : dims) batched.push_back(self.size(d));
  Tensor input = self.permute(perm).reshape(batched);
  std::vector<int64_t> signal{batch}, batched_out{batch};
  for (size_t i = 0; i < signal_ndim; ++i) {
    signal.push_back(std::max(input.size(static_cast<int64_t>(i) + 1), out_sizes[dims[i]]));
    batched_out.push_back(out_sizes[dims[i]]);
  }
  Tensor out = ember::empty(batched_out, out_dtype, self.device());
  if (out.numel() > 0 && input.numel() > 0) {
    const bool complex_in = is_complex_type(input.dtype());
    const bool complex_out = is_complex_type(out_dtype);
    const bool is_double = out_dtype == ScalarType::Double || out_dtype == ScalarType::ComplexDouble;
    const PlanKey key(device, kind_of(complex_in, complex_out), is_double, signal, vec(input.strides()),
                      vec(out.strides()));
    std::shared_ptr<Plan> plan = plan_cache(device).lookup(key, [&] { return make_plan(key); });
    if (plan->clone_input) input = input.clone(MemoryFormat::Contiguous);
    const cufft::Api& f = api();
    Tensor workspace = ember::empty({static_cast<int64_t>(plan->workspace)}, ScalarType::Byte, self.device());
    void* in_ptr = input.data_ptr();
    void* out_ptr = out.data_ptr();
    std::lock_guard<std::mutex> lock(plan->mutex);
    check(f.set_stream(plan->handle, static_cast<void*>(current_stream(device))));
    check(f.set_work_area(plan->handle, workspace.data_ptr()));
    const int direction = forward ? cufft::kForward : cufft::kInverse;
    switch (cufft::transform_type(complex_in, complex_out, is_double)) {
      case cufft::kC2C: check(f.exec_c2c(plan->handle, in_ptr, out_ptr, direction)); break;
      case cufft::kZ2Z: check(f.exec_z2z(plan->handle, in_ptr, out_ptr, direction)); break;
      case cufft::kR2C: check(f.exec_r2c(plan->handle, in_ptr, out_ptr)); break;
      case cufft::kD2Z: check(f.exec_d2z(plan->handle, in_ptr, out_ptr)); break;
      case cufft::kC2R: check(f.exec_c2r(plan->handle, in_ptr, out_ptr)); break;
      case cufft::kZ2D: check(f.exec_z2d(plan->handle, in_ptr, out_ptr)); break;
    }
  }
  const std::vector<int64_t> strides = unbatched_strides(out_sizes, perm, vec(out.strides()), signal_ndim);
  return out.as_strided(out_sizes, strides, out.storage_offset());
}

// ---- the operators -----------------------------------------------------------------------

void check_precision(ScalarType t) {
  if (t != ScalarType::Float && t != ScalarType::Double && t != ScalarType::ComplexFloat &&
      t != ScalarType::ComplexDouble) {
    throw Error(str_cat("cuFFT doesn't support tensor of type: ", scalar_type_name(t)));
  }
}

Tensor apply_normalization(const Tensor& t, int64_t normalization, const std::vector<int64_t>& sizes,
                           const std::vector<int64_t>& dims) {
  const double scale = normalization_scale(normalization, sizes, dims);
  if (scale != 1.0) t.mul_(Scalar(scale));
  return t;
}

// C2C passes over `dims` (up to 3 dims each, innermost first), unnormalized.
Tensor c2c_passes(const Tensor& self, const std::vector<int64_t>& dims, bool forward) {
  const std::vector<int64_t> sizes = vec(self.sizes());
  std::vector<int64_t> remaining = dims;
  Tensor working = self;
  while (!remaining.empty()) {
    const std::vector<int64_t> pass = take_pass_dims(remaining, vec(working.strides()));
    working = exec_fft(working, sizes, pass, self.dtype(), forward);
  }
  return working;
}

Tensor fft_c2c_cuda(const Tensor& self, IntArrayRef dim, int64_t normalization, bool forward) {
  EMBER_CHECK(is_complex_type(self.dtype()), "_fft_c2c expects a complex input tensor, but got ",
              scalar_type_name(self.dtype()));
  const std::vector<int64_t> dims = fft_wrap_dims(dim, self.dim());
  if (dims.empty()) return self.clone();
  check_precision(self.dtype());
  Tensor out = c2c_passes(self, dims, forward);
  return apply_normalization(out, normalization, vec(self.sizes()), dims);
}

Tensor fft_r2c_cuda(const Tensor& self, IntArrayRef dim, int64_t normalization, bool onesided) {
  EMBER_CHECK(self.dtype() == ScalarType::Float || self.dtype() == ScalarType::Double,
              "_fft_r2c expects a real floating point input tensor, but got ", scalar_type_name(self.dtype()));
  const std::vector<int64_t> dims = fft_wrap_dims(dim, self.dim());
  EMBER_CHECK(!dims.empty(), "_fft_r2c must transform at least one dimension");
  const int64_t last = dims.back();
  const std::vector<int64_t> in_sizes = vec(self.sizes());
  const int64_t half = in_sizes[last] / 2 + 1;
  std::vector<int64_t> onesided_sizes = in_sizes;
  onesided_sizes[last] = half;
  const std::vector<int64_t>& out_sizes = onesided ? onesided_sizes : in_sizes;
  const ScalarType out_dtype = to_complex_type(self.dtype());
  // cuFFT reads a real input as pairs: its address must be aligned as a complex number's.
  Tensor input = self;
  const uintptr_t complex_size = 2 * self.element_size();
  if (reinterpret_cast<uintptr_t>(self.data_ptr()) % complex_size != 0) {
    input = self.movedim(last, -1).clone(MemoryFormat::Contiguous).movedim(-1, last);
  }
  // The last dim first (R2C), then the others (C2C) on the one-sided result.
  Tensor out = exec_fft(input, dims.size() == 1 ? out_sizes : onesided_sizes, {last}, out_dtype, true);
  if (dims.size() > 1) out = c2c_passes(out, std::vector<int64_t>(dims.begin(), dims.end() - 1), true);
  // Only the one-sided part is normalized: the rest is overwritten.
  apply_normalization(out.narrow(last, 0, half), normalization, in_sizes, dims);
  if (!onesided) {
    if (out.size(last) != in_sizes[last]) {
      Tensor full = ember::empty(in_sizes, out_dtype, self.device());
      full.narrow(last, 0, half).copy_(out);
      out = full;
    }
    if (out.numel() > 0) fill_conjugate_symmetry(out, dims);
  }
  return out;
}

Tensor fft_c2r_cuda(const Tensor& self, IntArrayRef dim, int64_t normalization, int64_t last_dim_size) {
  EMBER_CHECK(is_complex_type(self.dtype()), "_fft_c2r expects a complex input tensor, but got ",
              scalar_type_name(self.dtype()));
  EMBER_CHECK(last_dim_size >= 1, "Invalid number of data points (", last_dim_size, ") specified");
  check_precision(self.dtype());
  const std::vector<int64_t> dims = fft_wrap_dims(dim, self.dim());
  EMBER_CHECK(!dims.empty(), "_fft_c2r must transform at least one dimension");
  const int64_t last = dims.back();
  std::vector<int64_t> out_sizes = vec(self.sizes());
  out_sizes[last] = last_dim_size;
  // cuFFT reads n / 2 + 1 entries of the last dim: a longer input is
  // trimmed, a shorter one padded with zeros (as the CPU kernel reads it).
  Tensor input = self;
  const int64_t half = last_dim_size / 2 + 1;
  bool padded = false;  // input is a buffer of its own
  if (input.size(last) > half) {
    input = input.narrow(last, 0, half);
  } else if (input.size(last) < half) {
    std::vector<int64_t> sizes = vec(input.sizes());
    sizes[last] = half;
    Tensor z = ember::zeros(sizes, input.dtype(), input.device());
    z.narrow(last, 0, input.size(last)).copy_(input);
    input = z;
    padded = true;
  }
  // cuFFT overwrites a C2R's input: it gets a buffer of its own.
  Tensor temp = input;
  if (dims.size() > 1) {
    temp = c2c_passes(input, std::vector<int64_t>(dims.begin(), dims.end() - 1), false);
  } else if (!padded) {
    temp = input.clone(MemoryFormat::Contiguous);
  }
  Tensor out = exec_fft(temp, out_sizes, {last}, to_real_type(self.dtype()), false);
  return apply_normalization(out, normalization, out_sizes, dims);
}

[[maybe_unused]] const bool g_registered = [] {
  const int cuda = static_cast<int>(DeviceType::CUDA);
  dispatch::_fft_c2c_kernels[cuda] = &fft_c2c_cuda;
  dispatch::_fft_r2c_kernels[cuda] = &fft_r2c_cuda;
  dispatch::_fft_c2r_kernels[cuda] = &fft_c2r_cuda;
  return true;
}();

}  // namespace
}  // namespace ember::cuda::fft
