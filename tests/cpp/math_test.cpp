// Elementwise math through the C++ API: accuracy of the vectorised float32
// functions against double-precision references, special values, dtype
// rules of the engine and integer division errors.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

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
  EXPECT_LE(max_ulp(sweep(-80, 80, 200001), [](const Tensor& t) { return sigmoid(t); },
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
