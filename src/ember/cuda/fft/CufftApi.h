#pragma once
// The part of cuFFT's C API the CUDA FFTs call, declared here (the build
// neither includes cufft.h nor links libcufft): its handle, status and
// transform types with cuFFT's documented values, the entry points as
// function pointers resolved from the library opened at run time (Note
// [Finding cuFFT] in SpectralOps.cpp), and the files tried for it. Plain C++
// (streams are passed as void*, the pointer cudaStream_t is), so the host
// tests check it without a GPU.
#include <dlfcn.h>

#include <cstddef>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <vector>

namespace ember::cuda::cufft {

// The soname of cuFFT 12, the cuFFT of CUDA 13 (the nvidia-cufft wheel
// puts it in site-packages/nvidia/cu13/lib).
constexpr const char* kSoname = "libcufft.so.12";
// The wheel's lib folder relative to the nvidia package folder.
constexpr const char* kWheelLibDir = "cu13/lib";

using Handle = int;  // cufftHandle

enum Result : int {  // cufftResult
  kSuccess = 0x0,
  kInvalidPlan = 0x1,
  kAllocFailed = 0x2,
  kInvalidType = 0x3,
  kInvalidValue = 0x4,
  kInternalError = 0x5,
  kExecFailed = 0x6,
  kSetupFailed = 0x7,
  kInvalidSize = 0x8,
  kUnalignedData = 0x9,
  kInvalidDevice = 0xB,
  kNoWorkspace = 0xD,
  kNotImplemented = 0xE,
  kNotSupported = 0x10,
  kMissingDependency = 0x11,
  kNvrtcFailure = 0x12,
  kNvjitlinkFailure = 0x13,
  kNvshmemFailure = 0x14,
};

enum Type : int {  // cufftType
  kR2C = 0x2a,
  kC2R = 0x2c,
  kC2C = 0x29,
  kD2Z = 0x6a,
  kZ2D = 0x6c,
  kZ2Z = 0x69,
};

constexpr int kForward = -1;  // CUFFT_FORWARD
constexpr int kInverse = 1;  // CUFFT_INVERSE

// The cuFFT entry points used: member, the library's symbol name, signature.
#define EMBER_CUFFT_FUNCTIONS(_)                                                                              \
  _(create, "cufftCreate", Result(Handle*))                                                                   \
  _(destroy, "cufftDestroy", Result(Handle))                                                                  \
  _(set_auto_allocation, "cufftSetAutoAllocation", Result(Handle, int))                                       \
  _(make_plan_many64, "cufftMakePlanMany64",                                                                  \
    Result(Handle, int, long long*, long long*, long long, long long, long long*, long long, long long, Type, \
           long long, size_t*))                                                                               \
  _(set_work_area, "cufftSetWorkArea", Result(Handle, void*))                                                 \
  _(set_stream, "cufftSetStream", Result(Handle, void*))                                                      \
  _(exec_c2c, "cufftExecC2C", Result(Handle, void*, void*, int))                                              \
  _(exec_r2c, "cufftExecR2C", Result(Handle, void*, void*))                                                   \
  _(exec_c2r, "cufftExecC2R", Result(Handle, void*, void*))                                                   \
  _(exec_z2z, "cufftExecZ2Z", Result(Handle, void*, void*, int))                                              \
  _(exec_d2z, "cufftExecD2Z", Result(Handle, void*, void*))                                                   \
  _(exec_z2d, "cufftExecZ2D", Result(Handle, void*, void*))                                                   \
  _(get_version, "cufftGetVersion", Result(int*))

struct Api {
#define EMBER_CUFFT_MEMBER(member, symbol, signature) std::add_pointer_t<signature> member = nullptr;
  EMBER_CUFFT_FUNCTIONS(EMBER_CUFFT_MEMBER)
#undef EMBER_CUFFT_MEMBER
};

// The symbol names of Api's members, in order.
inline std::vector<std::string> symbol_names() {
  std::vector<std::string> names;
#define EMBER_CUFFT_NAME(member, symbol, signature) names.emplace_back(symbol);
  EMBER_CUFFT_FUNCTIONS(EMBER_CUFFT_NAME)
#undef EMBER_CUFFT_NAME
  return names;
}

// Resolves every entry point from `lib` (a dlopen handle); returns the
// names not found, comma-separated ("" when all were).
inline std::string resolve(void* lib, Api& api) {
  std::string missing;
#define EMBER_CUFFT_RESOLVE(member, symbol, signature)                              \
  api.member = reinterpret_cast<std::add_pointer_t<signature>>(dlsym(lib, symbol)); \
  if (api.member == nullptr) {                                                      \
    missing += std::string(missing.empty() ? "" : ", ") + (symbol);                 \
  }
  EMBER_CUFFT_FUNCTIONS(EMBER_CUFFT_RESOLVE)
#undef EMBER_CUFFT_RESOLVE
  return missing;
}

// cuFFT's name of a status, as PyTorch's messages print it.
inline const char* result_name(int r) {
  switch (r) {
    case kSuccess: return "CUFFT_SUCCESS";
    case kInvalidPlan: return "CUFFT_INVALID_PLAN";
    case kAllocFailed: return "CUFFT_ALLOC_FAILED";
    case kInvalidType: return "CUFFT_INVALID_TYPE";
    case kInvalidValue: return "CUFFT_INVALID_VALUE";
    case kInternalError: return "CUFFT_INTERNAL_ERROR";
    case kExecFailed: return "CUFFT_EXEC_FAILED";
    case kSetupFailed: return "CUFFT_SETUP_FAILED";
    case kInvalidSize: return "CUFFT_INVALID_SIZE";
    case kUnalignedData: return "CUFFT_UNALIGNED_DATA";
    case kInvalidDevice: return "CUFFT_INVALID_DEVICE";
    case kNoWorkspace: return "CUFFT_NO_WORKSPACE";
    case kNotImplemented: return "CUFFT_NOT_IMPLEMENTED";
    case kNotSupported: return "CUFFT_NOT_SUPPORTED";
    case kMissingDependency: return "CUFFT_MISSING_DEPENDENCY";
    case kNvrtcFailure: return "CUFFT_NVRTC_FAILURE";
    case kNvjitlinkFailure: return "CUFFT_NVJITLINK_FAILURE";
    case kNvshmemFailure: return "CUFFT_NVSHMEM_FAILURE";
    default: return "<unknown>";
  }
}

// The cuFFT type of a transform: complex or real input and output, float or double.
inline Type transform_type(bool complex_input, bool complex_output, bool is_double) {
  if (complex_input && complex_output) return is_double ? kZ2Z : kC2C;
  if (complex_input) return is_double ? kZ2D : kC2R;
  return is_double ? kD2Z : kR2C;
}

inline std::string parent_dir(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// The files tried for libcufft, in order (Note [Finding cuFFT]):
// `env_file` ($EMBER_CUFFT_LIBRARY) when set; the soname in the folder of the
// loaded libcublas (`cublas_file`: in the nvidia wheel's cu13/lib, cuFFT is
// its neighbour); in the wheel's folder beside an installed Ember
// (`own_dir`/../../nvidia/cu13/lib, as for cuDNN); then the soname alone
// (a copy already loaded, by PyTorch for one, or the loader's search path).
inline std::vector<std::string> library_candidates(const char* env_file, const std::string& cublas_file,
                                                   const std::string& own_dir) {
  std::vector<std::string> out;
  auto add = [&](const std::string& c) {
    for (const std::string& o : out) {
      if (o == c) return;
    }
    out.push_back(c);
  };
  if (env_file != nullptr && *env_file) add(env_file);
  if (cublas_file.find('/') != std::string::npos) add(parent_dir(cublas_file) + "/" + kSoname);
  if (!own_dir.empty()) add(own_dir + "/../../nvidia/" + kWheelLibDir + "/" + kSoname);
  add(kSoname);
  return out;
}

}  // namespace ember::cuda::cufft
