// Note [16-bit products through oneDNN]
// On CPUs with bfloat16 support (AVX-512 BW/VL/DQ, or AVX2-VNNI-2) PyTorch
// multiplies bfloat16 matrices with oneDNN's matmul (products, or batches of
// them, of more than 16^3 multiply-adds), and float16 ones where the CPU has AVX512-FP16 (or AVX2-VNNI-2);
// elsewhere it takes its own loops. Ember does the same: oneDNN accumulates
// the exact 16-bit products in float32 in its own order (AMX tiles where the
// CPU has them), so the same primitive gives the same bits, and runs one to
// three orders of magnitude faster than a float32 product of the converted
// operands. The operands are described by their strides, so transposed views
// are read in place; batches with a zero batch stride are made dense first.
#include "ember/cpu/OneDnnMatmul.h"

#ifdef EMBER_USE_ONEDNN
#include <oneapi/dnnl/dnnl.hpp>

#include "ember/ops/Parallel.h"
#endif

namespace ember::native {

#ifdef EMBER_USE_ONEDNN
namespace {

bool has_isa(dnnl::cpu_isa have, dnnl::cpu_isa want) {
  return (static_cast<unsigned>(have) & static_cast<unsigned>(want)) == static_cast<unsigned>(want);
}

const dnnl::engine& engine() {
  static const dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  return eng;
}

}  // namespace
#endif

bool onednn_takes_reduced(ScalarType dtype) {
#ifdef EMBER_USE_ONEDNN
  if (dtype != ScalarType::BFloat16 && dtype != ScalarType::Half) return false;
  static const dnnl::cpu_isa isa = dnnl::get_effective_cpu_isa();
  if (has_isa(isa, dnnl::cpu_isa::avx2_vnni_2)) return true;
  if (dtype == ScalarType::BFloat16) return has_isa(isa, dnnl::cpu_isa::avx512_core);
  return has_isa(isa, dnnl::cpu_isa::avx512_core_fp16);
#else
  (void)dtype;
  return false;
#endif
}

bool onednn_reduced_matmul(ScalarType dtype, int64_t batch, int64_t m, int64_t n, int64_t k, const void* a,
                           int64_t a_bs, int64_t a_rs, int64_t a_cs, const void* b, int64_t b_bs, int64_t b_rs,
                           int64_t b_cs, void* c, bool accumulate) {
#ifdef EMBER_USE_ONEDNN
  if (dtype != ScalarType::BFloat16 && dtype != ScalarType::Half) return false;
  if (batch <= 0 || m <= 0 || n <= 0 || k <= 0 || in_parallel_region()) return false;
  if (!onednn_takes_reduced(dtype)) return false;
  if (batch > 1 && (a_bs == 0 || b_bs == 0)) return false;
  using dims = dnnl::memory::dims;
  const auto dt = dtype == ScalarType::BFloat16 ? dnnl::memory::data_type::bf16 : dnnl::memory::data_type::f16;
  // Size-1 dims may carry any stride; oneDNN wants a sensible one.
  if (m == 1) a_rs = k * a_cs;
  if (k == 1) a_cs = 1, b_rs = n * b_cs;
  if (n == 1) b_cs = 1;
  try {
    dnnl::memory::desc a_md(dims{batch, m, k}, dt, dims{batch == 1 ? m * k : a_bs, a_rs, a_cs});
    dnnl::memory::desc b_md(dims{batch, k, n}, dt, dims{batch == 1 ? k * n : b_bs, b_rs, b_cs});
    dnnl::memory::desc c_md(dims{batch, m, n}, dt, dims{m * n, n, 1});
    dnnl::primitive_attr attr;
    if (accumulate) {
      dnnl::post_ops ops;
      ops.append_sum(1.0f);
      attr.set_post_ops(ops);
    }
    dnnl::matmul::primitive_desc pd(engine(), a_md, b_md, c_md, attr);
    dnnl::matmul prim(pd);
    dnnl::memory am(a_md, engine(), const_cast<void*>(a)), bm(b_md, engine(), const_cast<void*>(b)),
        cm(c_md, engine(), c);
    sync_openmp_threads();
    thread_local dnnl::stream strm(engine());
    prim.execute(strm, {{DNNL_ARG_SRC, am}, {DNNL_ARG_WEIGHTS, bm}, {DNNL_ARG_DST, cm}});
    strm.wait();
    return true;
  } catch (const dnnl::error&) {
    return false;
  }
#else
  (void)dtype, (void)batch, (void)m, (void)n, (void)k, (void)a, (void)a_bs, (void)a_rs, (void)a_cs, (void)b;
  (void)b_bs, (void)b_rs, (void)b_cs, (void)c, (void)accumulate;
  return false;
#endif
}

}  // namespace ember::native
