// The LAPACK primitives of linalg on CUDA tensors, computed on the host: the
// arguments are copied to the CPU, the CPU kernel (OpenBLAS's LAPACK) runs,
// the results come back to the argument's device. PyTorch computes these with
// cuSOLVER/MAGMA, which this build does not link; results agree within the
// linalg tolerances, not bit for bit. tools/cuda_opdb_coverage.py counts the
// operators registered here (EMBER_CUDA_HOST_ENTRY) apart from device kernels.
#include <string>
#include <tuple>

#include "ember/ops/Ops.h"
#include "ember/ops/generated/DispatchTables.h"

namespace ember::cuda {
namespace {

constexpr int kCpu = static_cast<int>(DeviceType::CPU);
const Device kHost(DeviceType::CPU);

Tensor host(const Tensor& t) { return t.defined() ? t.to(kHost) : t; }

// Results back on `device` (tensors; tuples of tensors).
Tensor back(const Tensor& t, const Device& device) { return t.defined() ? t.to(device) : t; }
template <typename... T>
std::tuple<T...> back(const std::tuple<T...>& r, const Device& device) {
  return std::apply([&](const auto&... t) { return std::tuple<T...>(back(t, device)...); }, r);
}

#define EMBER_CUDA_HOST_ENTRY(name, params, call_args, first)                                             \
  auto name##_on_host params { return back(dispatch::name##_kernels[kCpu] call_args, (first).device()); } \
  [[maybe_unused]] const bool name##_registered = [] {                                                    \
    dispatch::name##_kernels[static_cast<int>(DeviceType::CUDA)] = &name##_on_host;                       \
    return true;                                                                                          \
  }()

EMBER_CUDA_HOST_ENTRY(_linalg_lapack_getrf, (const Tensor& a), (host(a)), a);
EMBER_CUDA_HOST_ENTRY(_linalg_lapack_getrs,
                      (const Tensor& lu, const Tensor& piv, const Tensor& b, bool trans, bool conj),
                      (host(lu), host(piv), host(b), trans, conj), b);
EMBER_CUDA_HOST_ENTRY(_linalg_lapack_potrf, (const Tensor& a, bool upper), (host(a), upper), a);
EMBER_CUDA_HOST_ENTRY(_linalg_lapack_potri, (const Tensor& a, bool upper), (host(a), upper), a);
EMBER_CUDA_HOST_ENTRY(_linalg_lapack_trsm, (const Tensor& a, const Tensor& b, bool upper, bool left, bool unit),
                      (host(a), host(b), upper, left, unit), b);
EMBER_CUDA_HOST_ENTRY(_linalg_lapack_geqrf, (const Tensor& a), (host(a)), a);
EMBER_CUDA_HOST_ENTRY(_linalg_lapack_orgqr, (const Tensor& a, const Tensor& tau), (host(a), host(tau)), a);
EMBER_CUDA_HOST_ENTRY(_linalg_lapack_ormqr,
                      (const Tensor& a, const Tensor& tau, const Tensor& c, bool left, bool transpose),
                      (host(a), host(tau), host(c), left, transpose), c);
EMBER_CUDA_HOST_ENTRY(_linalg_lapack_syevd, (const Tensor& a, bool vectors, bool upper), (host(a), vectors, upper), a);
EMBER_CUDA_HOST_ENTRY(_linalg_lapack_gesdd, (const Tensor& a, bool vectors, bool full), (host(a), vectors, full), a);
EMBER_CUDA_HOST_ENTRY(_linalg_lapack_gels, (const Tensor& a, const Tensor& b, double rcond, const std::string& driver),
                      (host(a), host(b), rcond, driver), a);
EMBER_CUDA_HOST_ENTRY(_linalg_lapack_geev, (const Tensor& a, bool vectors), (host(a), vectors), a);
EMBER_CUDA_HOST_ENTRY(_linalg_lapack_sytrf, (const Tensor& a, bool upper, bool hermitian), (host(a), upper, hermitian),
                      a);
EMBER_CUDA_HOST_ENTRY(_linalg_lapack_sytrs,
                      (const Tensor& ld, const Tensor& piv, const Tensor& b, bool upper, bool hermitian),
                      (host(ld), host(piv), host(b), upper, hermitian), b);

#undef EMBER_CUDA_HOST_ENTRY

}  // namespace
}  // namespace ember::cuda
