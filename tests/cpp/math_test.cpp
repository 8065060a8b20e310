// Elementwise math through the C++ API: accuracy of the vectorised float32
// functions against double-precision references, special values, dtype
// rules of the engine and integer division errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>

#include "ember/cpu/Sleef.h"
#include "ember/ops/DispatchStub.h"
#include "ember/ops/Ops.h"

using namespace ember;

namespace {

int64_t ulp_distance(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return (std::isnan(a) && std::isnan(b)) ? 0 : INT64_MAX;
  int32_t ia, ib;
  std::memcpy(&ia, &a, 4);
  std::memcpy(&ib, &b, 4);
  int64_t la = ia < 0 ? -int64_t(ia & 0x7fffffff) : ia;
  int64_t lb = ib < 0 ? -int64_t(ib & 0x7fffffff) : ib;
  return la > lb ? la - lb : lb - la;
}

// Inputs spread over [lo, hi], plus the edges of float32's range.
std::vector<double> sweep(double lo, double hi, int n) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(lo + (hi - lo) * i / (n - 1));
  return v;
}

template <typename Op, typename Ref>
int64_t max_ulp(const std::vector<double>& xs, Op op, Ref ref) {
  Tensor x = from_vector(xs, {static_cast<int64_t>(xs.size())}, ScalarType::Float);
  std::vector<double> got = to_vector(op(x));
  int64_t worst = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    float in = static_cast<float>(xs[i]);
    float want = static_cast<float>(ref(static_cast<double>(in)));
    worst = std::max(worst, ulp_distance(static_cast<float>(got[i]), want));
  }
  return worst;
}

}  // namespace

TEST(Math, ExpLogTanhSigmoidAccuracy) {
  auto wide = sweep(-100, 100, 200001);
  EXPECT_LE(max_ulp(wide, [](const Tensor& t) { return exp(t); }, [](double v) { return std::exp(v); }), 1);
  EXPECT_LE(max_ulp(wide, [](const Tensor& t) { return tanh(t); }, [](double v) { return std::tanh(v); }), 2);
  EXPECT_LE(max_ulp(
                sweep(-80, 80, 200001), [](const Tensor& t) { return sigmoid(t); },
                [](double v) { return 1.0 / (1.0 + std::exp(-v)); }),
            2);
  auto pos = sweep(1e-30, 1e6, 200001);
  auto small = sweep(1e-6, 4, 200001);
  for (const auto& xs : {pos, small}) {
    EXPECT_LE(max_ulp(xs, [](const Tensor& t) { return log(t); }, [](double v) { return std::log(v); }), 1);
  }
  // Subnormal inputs and results.
  std::vector<double> tiny = {1e-40, 1e-45, 3e-39, 1.17e-38};
  EXPECT_LE(max_ulp(tiny, [](const Tensor& t) { return log(t); }, [](double v) { return std::log(v); }), 1);
  std::vector<double> under = {-87.5, -90.0, -100.0, -103.9, -103.98, -110.0};
  EXPECT_LE(max_ulp(under, [](const Tensor& t) { return exp(t); }, [](double v) { return std::exp(v); }), 1);
}

TEST(Math, GeluFloatMatchesErfFormula) {
  auto xs = sweep(-8, 8, 100001);
  Tensor x = from_vector(xs, {static_cast<int64_t>(xs.size())}, ScalarType::Float);
  std::vector<double> got = to_vector(gelu(x));
  for (size_t i = 0; i < xs.size(); ++i) {
    double v = static_cast<float>(xs[i]);
    double want = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
    EXPECT_NEAR(got[i], want, 1e-6 * std::max(1.0, std::fabs(v))) << v;
  }
}

TEST(Math, SpecialValues) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  Tensor x = from_vector({inf, -inf, nan, 0.0, -0.0, 89.0, -104.0}, {7}, ScalarType::Float);
  std::vector<double> e = to_vector(exp(x));
  EXPECT_EQ(e[0], inf);
  EXPECT_EQ(e[1], 0.0);
  EXPECT_TRUE(std::isnan(e[2]));
  EXPECT_EQ(e[3], 1.0);
  EXPECT_EQ(e[5], inf);
  EXPECT_EQ(e[6], 0.0);
  std::vector<double> l = to_vector(log(x));
  EXPECT_EQ(l[0], inf);
  EXPECT_TRUE(std::isnan(l[1]));
  EXPECT_EQ(l[3], -inf);
  EXPECT_EQ(l[4], -inf);
  std::vector<double> t = to_vector(tanh(x));
  EXPECT_EQ(t[0], 1.0);
  EXPECT_EQ(t[1], -1.0);
  EXPECT_TRUE(std::signbit(t[4]));
}

TEST(Math, IntegerInputsPromoteToDefaultFloat) {
  Tensor i = from_vector({1, 4, 9}, {3}, ScalarType::Long);
  Tensor r = sqrt(i);
  EXPECT_EQ(r.dtype(), ScalarType::Float);
  EXPECT_EQ(to_vector(r), (std::vector<double>{1, 2, 3}));
  Tensor out = empty({3}, ScalarType::Long);
  try {
    sqrt_out(out, i);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "result type Float can't be cast to the desired output type Long");
  }
}

TEST(Math, SameDtypeOutIsExact) {
  Tensor x = from_vector({1.5, -2.5}, {2});
  Tensor out = empty({2}, ScalarType::Double);
  try {
    abs_out(out, x);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "Found dtype Double but expected Float");
  }
  Tensor ok = empty({2}, ScalarType::Double);
  exp_out(ok, x);  // float ops cast into a wider out=
  EXPECT_EQ(ok.dtype(), ScalarType::Double);
}

TEST(Math, ComparisonsWithWeakScalars) {
  Tensor u = from_vector({1, 255}, {2}, ScalarType::Byte);
  // The number takes the tensor's dtype: -1 becomes 255 in uint8, as in PyTorch.
  Tensor r = eq(u, Scalar(int64_t(-1)));
  EXPECT_EQ(r.dtype(), ScalarType::Bool);
  EXPECT_EQ(to_vector(r), (std::vector<double>{0, 1}));
  Tensor f = lt(u, Scalar(1.5));
  EXPECT_EQ(to_vector(f), (std::vector<double>{1, 0}));
}

TEST(Math, IntegerDivisionByZeroThrows) {
  Tensor a = from_vector({5, 7}, {2}, ScalarType::Int);
  Tensor z = zeros({2}, ScalarType::Int);
  EXPECT_THROW(remainder(a, z), Error);
  EXPECT_THROW(div(a, z, std::string("floor")), Error);
  Tensor m = from_vector({-2147483648.0}, {1}, ScalarType::Int);
  Tensor m1 = from_vector({-1}, {1}, ScalarType::Int);
  EXPECT_EQ(to_vector(div(m, m1, std::string("trunc"))), std::vector<double>{-2147483648.0});
  EXPECT_EQ(to_vector(remainder(m, m1)), std::vector<double>{0});
}

TEST(Math, WhereAndClamp) {
  Tensor c = from_vector({1, 0, 1}, {3}, ScalarType::Bool);
  Tensor a = from_vector({1, 2, 3}, {3}, ScalarType::Long);
  Tensor r = where(c, a, Scalar(2.5));
  EXPECT_EQ(r.dtype(), ScalarType::Float);
  EXPECT_EQ(to_vector(r), (std::vector<double>{1, 2.5, 3}));
  Tensor k = clamp(a, std::optional<Scalar>(Scalar(int64_t(2))), std::optional<Scalar>());
  EXPECT_EQ(to_vector(k), (std::vector<double>{2, 2, 3}));
}

// ---- vectorised float32 functions (cpu/kernels/VecMath.h) ---------------------------------
// Dense sweeps: float bit patterns at a fixed stride across each function's
// range (every binade, subnormals included), each result against the double
// result rounded to float: within 1 ulp (the worst errors, over every float,
// are 1.2-1.4 ulp of the exact value; docs/decisions/0010). math_test also runs under EMBER_CPU_CAPABILITY=
// default and avx2 (tests/cpp/CMakeLists.txt), so every build is covered.

namespace {

struct VecCase {
  const char* name;
  Tensor (*op)(const Tensor&);
  double (*ref)(double);
  float lo, hi;  // the swept range
  int64_t max_ulp;
};

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Inputs in [lo, hi]: every stride-th float (by bit pattern) of each sign's part.
std::vector<double> bit_sweep(float lo, float hi, uint32_t stride) {
  std::vector<double> v;
  for (uint64_t u = 0; u < 0x7f800000u; u += stride) {
    const float p = from_bits(static_cast<uint32_t>(u));
    if (p >= lo && p <= hi) v.push_back(p);
    if (-p >= lo && -p <= hi && p != 0) v.push_back(-p);
  }
  return v;
}

const VecCase kVecCases[] = {
    {"erf", [](const Tensor& t) { return erf(t); }, [](double v) { return std::erf(v); }, -1e30f, 1e30f, 1},
    {"erfc", [](const Tensor& t) { return erfc(t); }, [](double v) { return std::erfc(v); }, -1e30f, 1e30f, 1},
    {"log1p", [](const Tensor& t) { return log1p(t); }, [](double v) { return std::log1p(v); }, -1.0f, 3e38f, 1},
    {"expm1", [](const Tensor& t) { return expm1(t); }, [](double v) { return std::expm1(v); }, -120.0f, 89.0f, 1},
    {"log2", [](const Tensor& t) { return log2(t); }, [](double v) { return std::log2(v); }, 0.0f, 3e38f, 1},
    {"log10", [](const Tensor& t) { return log10(t); }, [](double v) { return std::log10(v); }, 0.0f, 3e38f, 1},
    {"exp2", [](const Tensor& t) { return exp2(t); }, [](double v) { return std::exp2(v); }, -160.0f, 130.0f, 1},
    {"tan", [](const Tensor& t) { return tan(t); }, [](double v) { return std::tan(v); }, -1e5f, 1e5f, 1},
    {"asin", [](const Tensor& t) { return asin(t); }, [](double v) { return std::asin(v); }, -1.0f, 1.0f, 1},
    {"acos", [](const Tensor& t) { return acos(t); }, [](double v) { return std::acos(v); }, -1.0f, 1.0f, 1},
    {"atan", [](const Tensor& t) { return atan(t); }, [](double v) { return std::atan(v); }, -3e38f, 3e38f, 1},
    {"sinh", [](const Tensor& t) { return sinh(t); }, [](double v) { return std::sinh(v); }, -90.0f, 90.0f, 1},
    {"cosh", [](const Tensor& t) { return cosh(t); }, [](double v) { return std::cosh(v); }, -90.0f, 90.0f, 1},
    // asinh and acosh are libm's float functions, as PyTorch's (2 ulps).
    {"asinh", [](const Tensor& t) { return asinh(t); }, [](double v) { return std::asinh(v); }, -3e38f, 3e38f, 2},
    {"acosh", [](const Tensor& t) { return acosh(t); }, [](double v) { return std::acosh(v); }, 1.0f, 3e38f, 2},
    {"atanh", [](const Tensor& t) { return atanh(t); }, [](double v) { return std::atanh(v); }, -1.0f, 1.0f, 1},
};

}  // namespace

// Whether SLEEF computes these functions (Note [SLEEF for vector math]): it
// is loaded and the AVX2 or AVX512 kernels run; then the results are PyTorch's.
bool sleef_active() {
  const std::string cap = cpu_capability_name(cpu_capability());
  return sleef_info().find("not loaded") == std::string::npos && (cap == "AVX2" || cap == "AVX512");
}

TEST(Math, VectorisedFunctionsWithinUlps) {
  for (const VecCase& c : kVecCases) {
    const std::vector<double> xs = bit_sweep(c.lo, c.hi, 1543);
    const std::vector<double> got =
        to_vector(c.op(from_vector(xs, {static_cast<int64_t>(xs.size())}, ScalarType::Float)));
    int64_t worst = 0;
    double worst_x = 0;
    for (size_t i = 0; i < xs.size(); ++i) {
      const float want = static_cast<float>(c.ref(xs[i]));
      const float g = static_cast<float>(got[i]);
      // With SLEEF (the AVX2/AVX512 kernels), sinh and cosh overflow slightly below
      // FLT_MAX, as PyTorch's do (Note [SLEEF for vector math]).
      const bool sleef_edge = sleef_active() && (std::string(c.name) == "sinh" || std::string(c.name) == "cosh");
      if (sleef_edge && std::isinf(g) && std::fabs(want) > 1.5e38f) continue;
      if (std::isnan(want) || std::isinf(want) || want == 0 || std::isinf(g)) {
        // Exact, including the sign of zero (one ulp at the overflow/underflow edges).
        const bool same = (std::isnan(want) && std::isnan(g)) || (want == g && std::signbit(want) == std::signbit(g));
        if (!same && !(std::isnan(want) || std::isnan(g)) && ulp_distance(g, want) <= 1) continue;
        EXPECT_TRUE(same) << c.name << "(" << xs[i] << ") = " << g << ", want " << want;
        continue;
      }
      const int64_t d = ulp_distance(g, want);
      if (d > worst) worst = d, worst_x = xs[i];
    }
    EXPECT_LE(worst, c.max_ulp) << c.name << " at x = " << worst_x << " (" << xs.size() << " inputs)";
  }
}

TEST(Math, VectorisedFunctionsSpecialValues) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  const double tiny = 1.401298464324817e-45;  // the smallest subnormal float
  const std::vector<double> xs = {0.0, -0.0, inf, -inf, nan, 1.0, -1.0, 2.0, -2.0, tiny, -tiny};
  Tensor x = from_vector(xs, {static_cast<int64_t>(xs.size())}, ScalarType::Float);
  // Expected results, in the order of xs.
  struct Want {
    Tensor (*op)(const Tensor&);
    std::vector<double> v;
  };
  const double pi = static_cast<float>(3.14159265358979323846), pio2 = static_cast<float>(1.57079632679489661923);
  const Want wants[] = {
      {[](const Tensor& t) { return erf(t); },
       {0.0, -0.0, 1, -1, nan, 0.84270079, -0.84270079, 0.99532227, -0.99532227, tiny, -tiny}},
      {[](const Tensor& t) { return erfc(t); },
       {1, 1, 0, 2, nan, 0.15729921, 1.84270079, 0.0046777350, 1.99532227, 1, 1}},
      {[](const Tensor& t) { return log1p(t); },
       {0.0, -0.0, inf, nan, nan, 0.69314718, -inf, 1.09861229, nan, tiny, -tiny}},
      {[](const Tensor& t) { return expm1(t); },
       {0.0, -0.0, inf, -1, nan, 1.71828183, -0.63212056, 6.3890561, -0.86466472, tiny, -tiny}},
      {[](const Tensor& t) { return log2(t); }, {-inf, -inf, inf, nan, nan, 0, nan, 1, nan, -149, nan}},
      {[](const Tensor& t) { return log10(t); }, {-inf, -inf, inf, nan, nan, 0, nan, 0.30103, nan, -44.85346985, nan}},
      {[](const Tensor& t) { return exp2(t); }, {1, 1, inf, 0, nan, 2, 0.5, 4, 0.25, 1, 1}},
      {[](const Tensor& t) { return tan(t); },
       {0.0, -0.0, nan, nan, nan, 1.55740772, -1.55740772, -2.18503986, 2.18503986, tiny, -tiny}},
      {[](const Tensor& t) { return asin(t); }, {0.0, -0.0, nan, nan, nan, pio2, -pio2, nan, nan, tiny, -tiny}},
      {[](const Tensor& t) { return acos(t); }, {pio2, pio2, nan, nan, nan, 0, pi, nan, nan, pio2, pio2}},
      {[](const Tensor& t) { return atan(t); },
       {0.0, -0.0, pio2, -pio2, nan, 0.78539816, -0.78539816, 1.10714872, -1.10714872, tiny, -tiny}},
      {[](const Tensor& t) { return sinh(t); },
       {0.0, -0.0, inf, -inf, nan, 1.17520119, -1.17520119, 3.62686041, -3.62686041, tiny, -tiny}},
      {[](const Tensor& t) { return cosh(t); },
       {1, 1, inf, inf, nan, 1.54308063, 1.54308063, 3.76219569, 3.76219569, 1, 1}},
      {[](const Tensor& t) { return asinh(t); },
       {0.0, -0.0, inf, -inf, nan, 0.88137359, -0.88137359, 1.44363548, -1.44363548, tiny, -tiny}},
      {[](const Tensor& t) { return acosh(t); }, {nan, nan, inf, nan, nan, 0, nan, 1.3169579, nan, nan, nan}},
      {[](const Tensor& t) { return atanh(t); }, {0.0, -0.0, nan, nan, nan, inf, -inf, nan, nan, tiny, -tiny}},
  };
  for (size_t k = 0; k < sizeof(wants) / sizeof(wants[0]); ++k) {
    const std::vector<double> got = to_vector(wants[k].op(x));
    for (size_t i = 0; i < xs.size(); ++i) {
      const double w = wants[k].v[i];
      // SLEEF's log1p flushes the smallest denormals to 0, as PyTorch's does.
      if (k == 2 && sleef_active() && std::fabs(xs[i]) == tiny && got[i] == 0) continue;
      if (std::isnan(w)) {
        EXPECT_TRUE(std::isnan(got[i])) << "function " << k << " at x = " << xs[i];
      } else if (std::isinf(w) || w == 0) {
        EXPECT_EQ(got[i], w) << "function " << k << " at x = " << xs[i];
        EXPECT_EQ(std::signbit(got[i]), std::signbit(w)) << "function " << k << " at x = " << xs[i];
      } else {
        EXPECT_NEAR(got[i], w, 2e-7 * std::fabs(w) + 1e-45) << "function " << k << " at x = " << xs[i];
      }
    }
  }
  // Overflow and underflow edges.
  Tensor big = from_vector({88.7f, 88.8f, 89.5f, 128.0f, -150.0f, -149.5f, 10.1f, -10.1f}, {8}, ScalarType::Float);
  std::vector<double> e2 = to_vector(exp2(big));
  EXPECT_EQ(e2[3], inf);
  EXPECT_EQ(e2[4], 0.0);  // 2^-150 is a tie: to even, 0
  EXPECT_EQ(e2[5], tiny);  // 2^-149.5 rounds up to the smallest subnormal
  std::vector<double> sh = to_vector(sinh(big));
  EXPECT_TRUE(std::isfinite(sh[1]));  // sinh(88.8) = 1.84e38 is finite
  EXPECT_EQ(sh[2], inf);
  std::vector<double> ec = to_vector(erfc(big));
  EXPECT_EQ(ec[6], 0.0);
  EXPECT_EQ(ec[7], 2.0);
}
