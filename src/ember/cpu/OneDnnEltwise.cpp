// Note [GELU through oneDNN]
// PyTorch's CPU GELU (erf form, forward and backward) hands contiguous
// float32 inputs of more than one element, and bfloat16 (float16) ones on
// CPUs where it multiplies bfloat16 (float16) matrices with oneDNN
// (onednn_takes_reduced), to oneDNN's eltwise primitive; everything else takes its
// vectorised loop. oneDNN's JIT kernel has its own erf, so the two paths
// differ in the last bits for most inputs. Ember takes the same primitive on
// the same inputs (UnaryOps.cpp) and gets the same bits.
#include "ember/cpu/OneDnnEltwise.h"

#ifdef EMBER_USE_ONEDNN
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <unordered_map>

#include "ember/ops/Parallel.h"
#endif

namespace ember::native {

#ifdef EMBER_USE_ONEDNN
namespace {

const dnnl::engine& engine() {
  static const dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  return eng;
}

// A 1-d dense descriptor of n elements of dtype; nothing where oneDNN
// should not run (no elements, inside a parallel region, another dtype).
std::optional<dnnl::memory::desc> describe(ScalarType dtype, int64_t n) {
  if (n <= 0 || in_parallel_region()) return std::nullopt;
  dnnl::memory::data_type dt;
  switch (dtype) {
    case ScalarType::Float: dt = dnnl::memory::data_type::f32; break;
    case ScalarType::BFloat16: dt = dnnl::memory::data_type::bf16; break;
    case ScalarType::Half: dt = dnnl::memory::data_type::f16; break;
    default: return std::nullopt;
  }
  return dnnl::memory::desc(dnnl::memory::dims{n}, dt, dnnl::memory::format_tag::a);
}

dnnl::eltwise_forward::primitive_desc gelu_forward_pd(const dnnl::memory::desc& md) {
  return {engine(), dnnl::prop_kind::forward_training, dnnl::algorithm::eltwise_gelu_erf, md, md, 0.0f, 0.0f};
}

void run(const dnnl::primitive& prim, const std::unordered_map<int, dnnl::memory>& args) {
  sync_openmp_threads();
  thread_local dnnl::stream strm(engine());
  prim.execute(strm, args);
  strm.wait();
}

}  // namespace
#endif

bool onednn_gelu_erf(ScalarType dtype, int64_t n, const void* x, void* y) {
#ifdef EMBER_USE_ONEDNN
  const auto md = describe(dtype, n);
  if (!md) return false;
  try {
    dnnl::memory xm(*md, engine(), const_cast<void*>(x)), ym(*md, engine(), y);
    run(dnnl::eltwise_forward(gelu_forward_pd(*md)), {{DNNL_ARG_SRC, xm}, {DNNL_ARG_DST, ym}});
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
#else
  (void)dtype, (void)n, (void)x, (void)y;
  return false;
#endif
}

bool onednn_gelu_erf_backward(ScalarType dtype, int64_t n, const void* x, const void* dy, void* dx) {
#ifdef EMBER_USE_ONEDNN
  const auto md = describe(dtype, n);
  if (!md) return false;
  try {
    dnnl::eltwise_backward::primitive_desc pd(engine(), dnnl::algorithm::eltwise_gelu_erf, *md, *md, *md, 0.0f, 0.0f,
                                              gelu_forward_pd(*md));
    dnnl::memory xm(*md, engine(), const_cast<void*>(x)), dym(*md, engine(), const_cast<void*>(dy)),
        dxm(*md, engine(), dx);
    run(dnnl::eltwise_backward(pd), {{DNNL_ARG_SRC, xm}, {DNNL_ARG_DIFF_DST, dym}, {DNNL_ARG_DIFF_SRC, dxm}});
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
#else
  (void)dtype, (void)n, (void)x, (void)dy, (void)dx;
  return false;
#endif
}

}  // namespace ember::native
