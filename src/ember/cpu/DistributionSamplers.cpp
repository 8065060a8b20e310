// Samplers behind ember.distributions: standard gamma, Dirichlet, Poisson and
// binomial draws, and the reparameterized gradients of gamma and Dirichlet
// samples. Draws follow PyTorch's CPU kernels element by element in memory
// order (53-bit uniforms, Box-Muller normals in double with the cached second
// value), so equal seeds give equal samples. This file is compiled for the
// baseline capability only: no fused multiply-adds, as in PyTorch's build.
#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>

#include "ember/cpu/OpMessages.h"
#include "ember/ops/Ops.h"
#include "ember/ops/TensorIterator.h"
#include "ember/ops/generated/NativeFunctions.h"

namespace ember::native {

namespace {

constexpr double kPiD = 3.14159265358979323846;

double uniform01(GeneratorImpl* g) {
  return static_cast<double>(g->random64() & ((uint64_t(1) << 53) - 1)) * (1.0 / 9007199254740992.0);
}

double normal01(GeneratorImpl* g) {
  if (g->next_double_normal_sample) {
    const double cached = *g->next_double_normal_sample;
    g->next_double_normal_sample.reset();
    return cached;
  }
  const double u1 = uniform01(g);
  const double u2 = uniform01(g);
  const double r = std::sqrt(-2.0 * std::log1p(-u2));
  const double theta = 2.0 * kPiD * u1;
  g->next_double_normal_sample = r * std::sin(theta);
  return r * std::cos(theta);
}

[[noreturn]] void not_implemented(const char* op, ScalarType t) {
  const std::string name(legacy_type_name(t));
  throw NotImplementedError(str_cat("\"", op, "\" not implemented for '", name.substr(0, name.size() - 6), "'"));
}

// Marsaglia-Tsang with the boost for alpha < 1; T is the parameter's type (the
// boosted alpha and d are formed in it), the rest runs in double. The float
// literals are part of the result: they round as PyTorch's do.
template <typename T>
double gamma_draw(T alpha, GeneratorImpl* g) {
  double scale = 1.0f;
  if (alpha < 1.0f) {
    if (alpha == 0.f) return 0.0;
    scale *= std::pow(1 - uniform01(g), static_cast<T>(1.0f / alpha));
    alpha += 1.0f;
  }
  const double d = alpha - static_cast<T>(1.0f / 3.0f);
  const double c = 1.0f / std::sqrt(9.0f * d);
  for (;;) {
    double x, y;
    do {
      x = normal01(g);
      y = 1.0f + c * x;
    } while (y <= 0);
    const double v = y * y * y;
    const double u = 1 - uniform01(g);
    const double xx = x * x;
    if (u < 1.0f - 0.0331f * xx * xx) return scale * d * v;
    if (std::log(u) < 0.5f * xx + d * (1.0f - v + std::log(v))) return scale * d * v;
  }
}

int64_t poisson_draw(double lambda, GeneratorImpl* g) {
  EMBER_CHECK(lambda >= 0, "invalid Poisson rate, expected rate to be non-negative");
  if (lambda >= 10) {
    // Transformed rejection (Hormann 1993).
    const double slam = std::sqrt(lambda);
    const double loglam = std::log(lambda);
    const double b = 0.931 + 2.53 * slam;
    const double a = -0.059 + 0.02483 * b;
    const double invalpha = 1.1239 + 1.1328 / (b - 3.4);
    const double vr = 0.9277 - 3.6224 / (b - 2);
    for (;;) {
      const double u = uniform01(g) - 0.5;
      const double v = uniform01(g);
      const double us = 0.5 - std::fabs(u);
      const int64_t k = static_cast<int64_t>(std::floor((2 * a / us + b) * u + lambda + 0.43));
      if (us >= 0.07 && v <= vr) return k;
      if (k < 0 || (us < 0.013 && v > us)) continue;
      if (std::log(v) + std::log(invalpha) - std::log(a / (us * us) + b) <=
          -lambda + k * loglam - std::lgamma(static_cast<double>(k) + 1))
        return k;
    }
  }
  if (lambda == 0) return 0;
  const double limit = std::exp(-lambda);
  int64_t count = 0;
  double prod = 1.0;
  for (;;) {
    prod *= uniform01(g);
    if (prod <= limit) return count;
    ++count;
  }
}

// log(k!) minus its Stirling approximation.
double stirling_tail(double k) {
  static const double table[] = {0.0810614667953272,  0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
                                 0.0166446911898211,  0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
                                 0.00925546218271273, 0.00833056343336287};
  if (k < 10) return table[static_cast<size_t>(k)];
  const double kp1sq = (k + 1) * (k + 1);
  return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1);
}

template <typename T>
T binomial_by_inversion(T count, T prob, GeneratorImpl* g) {
  double total = 0;
  T successes = 0;
  const double logq = std::log1p(-prob);
  for (;;) {
    total += std::ceil(std::log(uniform01(g)) / logq);
    if (total > count) return successes;
    successes = successes + 1;
  }
}

// BTRS, transformed rejection (Hormann 1993), as PyTorch evaluates it.
template <typename T>
T binomial_btrs(T count, T prob, GeneratorImpl* g) {
  const double spq = std::sqrt(count * prob * (1 - prob));
  const double b = 1.15 + 2.53 * spq;
  const double a = -0.0873 + 0.0248 * b + 0.01 * prob;
  const double c = count * prob + 0.5;
  const double v_r = 0.92 - 4.2 / b;
  const double r = prob / (1 - prob);
  const double alpha = (2.83 + 5.1 / b) * spq;
  const double m = std::floor((count + 1) * prob);
  for (;;) {
    const double u = uniform01(g) - 0.5;
    double v = uniform01(g);
    const double us = 0.5 - std::fabs(u);
    const T k = static_cast<T>(std::floor((2 * a / us + b) * u + c));
    if (k < 0 || k > count) continue;
    if (us >= 0.07 && v <= v_r) return k;
    v = std::log(v * alpha / (a / (us * us) + b));
    const double bound = (m + 0.5) * std::log((m + 1) / (r * (count - m + 1))) +
                         (count + 1) * std::log((count - m + 1) / (count - k + 1)) +
                         (k + 0.5) * std::log(r * (count - k + 1) / (k + 1)) + stirling_tail(m) +
                         stirling_tail(count - m) - stirling_tail(k) - stirling_tail(count - k);
    if (v <= bound) return k;
  }
}

template <typename T>
T binomial_draw(T count, T prob, GeneratorImpl* g) {
  if (count <= 0.0 || prob <= 0.0) return 0;
  if (prob >= 1.0) return count;
  if (prob <= 0.5) {
    return count * prob >= 10.0 ? binomial_btrs<T>(count, prob, g) : binomial_by_inversion<T>(count, prob, g);
  }
  if (prob > 0.5) {
    const T q = 1.0 - prob;
    return count - (count * q >= 10.0 ? binomial_btrs<T>(count, q, g) : binomial_by_inversion<T>(count, q, g));
  }
  return static_cast<T>(NAN);
}

// Digamma by recurrence to x >= 10 and the asymptotic series; T is the
// argument's type, A the accumulator's.
template <typename T, typename A>
T digamma_of(T x) {
  if (x == 0) return INFINITY;
  A reflection = 0;
  if (x < 0) {
    if (x == std::floor(x)) return INFINITY;
    reflection = -static_cast<T>(kPiD) / std::tan(static_cast<T>(kPiD) * x);
    x = 1 - x;
  }
  A result = 0;
  while (x < 10) {
    result -= 1 / x;
    x += 1;
  }
  if (x == 10) return result + static_cast<A>(2.25175258906672110764) + reflection;
  static const A coef[] = {8.33333333333333333333E-2,  -2.10927960927960927961E-2, 7.57575757575757575758E-3,
                           -4.16666666666666666667E-3, 3.96825396825396825397E-3,  -8.33333333333333333333E-3,
                           8.33333333333333333333E-2};
  A tail = 0;
  if (x < 1.0e17f) {
    const A z = 1.0 / (x * x);
    A poly = 0;
    for (A c : coef) poly = poly * z + c;
    tail = z * poly;
  }
  return static_cast<T>(result + std::log(x) - (0.5f / x) - tail + reflection);
}

// -(d/dalpha cdf(x; alpha)) / pdf(x; alpha) for a standard gamma sample x.
double gamma_grad_one(double alpha, double x) {
  if (x < 0.8f) {
    // Taylor series for small x.
    double numer = 1, denom = alpha;
    double s1 = numer / denom, s2 = numer / (denom * denom);
    for (int i = 1; i <= 5; ++i) {
      numer *= -x / static_cast<double>(i);
      denom += 1;
      s1 += numer / denom;
      s2 += numer / (denom * denom);
    }
    const double pow_x_alpha = std::pow(x, alpha);
    const double pdf = std::pow(x, alpha - 1) * std::exp(-x);
    const double cdf = pow_x_alpha * s1;
    const double cdf_alpha = (std::log(x) - digamma_of<double, double>(alpha)) * cdf - pow_x_alpha * s2;
    const double result = -cdf_alpha / pdf;
    return std::isnan(result) ? 0.0 : result;
  }
  if (alpha > 8.0f) {
    // Rice saddle-point expansion for large alpha.
    if (0.9f * alpha <= x && x <= 1.1f * alpha) {
      const double n1 = 1 + 24 * alpha * (1 + 12 * alpha);
      const double n2 = 1440 * (alpha * alpha) + 6 * x * (53 - 120 * x) - 65 * x * x / alpha + alpha * (107 + 3600 * x);
      const double den = 1244160 * (alpha * alpha) * (alpha * alpha);
      return n1 * n2 / den;
    }
    const double den = std::sqrt(8 * alpha);
    const double t2 = den / (alpha - x);
    const double t3 = std::pow(x - alpha - alpha * std::log(x / alpha), -1.5);
    const double t23 = x < alpha ? t2 - t3 : t2 + t3;
    const double t1 = std::log(x / alpha) * t23 - std::sqrt(2 / alpha) * (alpha + x) / ((alpha - x) * (alpha - x));
    const double stirling = 1 + 1 / (12 * alpha) * (1 + 1 / (24 * alpha));
    return -stirling * (x * t1) / den;
  }
  // Bivariate rational approximation in u = log(x / alpha), v = log(alpha).
  static const double c[3][8] = {
      {0.16009398, -0.094634809, 0.025146376, -0.0030648343, 1, 0.32668115, 0.10406089, 0.0014179084},
      {0.53487893, 0.1298071, 0.065735949, -0.0015649758, 0.16639465, 0.020070113, -0.0035938915, -0.00058392623},
      {0.040121004, -0.0065914022, -0.0026286047, -0.0013441777, 0.017050642, -0.0021309326, 0.00085092367,
       -1.5247877e-07},
  };
  const double u = std::log(x / alpha);
  const double v = std::log(alpha);
  double cv[8];
  for (int i = 0; i < 8; ++i) cv[i] = c[0][i] + u * (c[1][i] + u * c[2][i]);
  const double p = cv[0] + v * (cv[1] + v * (cv[2] + v * cv[3]));
  const double q = cv[4] + v * (cv[5] + v * (cv[6] + v * cv[7]));
  return std::exp(p / q);
}

// Beta(alpha, beta) sample x near 0: Taylor series of the alpha gradient.
template <typename T>
T beta_grad_alpha_small(T x, T alpha, T beta) {
  const T factor = digamma_of<T, double>(alpha) - digamma_of<T, double>(alpha + beta) - std::log(x);
  T numer = 1;
  T series = numer / alpha * (factor + 1 / alpha);
  for (int i = 1; i <= 10; ++i) {
    const T fi = static_cast<T>(i);
    numer *= (fi - beta) * x / fi;
    const T denom = alpha + fi;
    series += numer / denom * (factor + 1 / denom);
  }
  const T result = x * std::pow(1 - x, -beta) * series;
  return std::isnan(result) ? static_cast<T>(0.f) : result;
}

// Beta(alpha, beta) sample x near 0: Taylor series of the beta gradient.
template <typename T>
T beta_grad_beta_small(T x, T alpha, T beta) {
  const T factor = digamma_of<T, double>(alpha + beta) - digamma_of<T, double>(beta);
  T numer = 1, betas = 1, dbetas = 0, series = factor / alpha;
  for (int i = 1; i <= 8; ++i) {
    const T fi = static_cast<T>(i);
    numer *= -x / fi;
    dbetas = dbetas * (beta - fi) + betas;
    betas = betas * (beta - fi);
    series += numer / (alpha + fi) * (dbetas + factor * betas);
  }
  const T result = -std::pow(1 - x, 1 - beta) * series;
  return std::isnan(result) ? static_cast<T>(0.f) : result;
}

// Large alpha and beta: Rice saddle-point expansion, in double.
double beta_grad_alpha_mid(double x, double alpha, double beta) {
  const double total = alpha + beta;
  const double mean = alpha / total;
  const double sd = std::sqrt(alpha * beta / (total + 1)) / total;
  if (mean - 0.1 * sd <= x && x <= mean + 0.1 * sd) {
    const double b2 = beta * beta;
    const double poly = 47 * x * b2 * b2 + alpha * ((43 + 20 * (16 + 27 * beta) * x) * b2 * beta +
                                                    alpha * (3 * (59 + 180 * beta - 90 * x) * b2 +
                                                             alpha * ((453 + 1620 * beta * (1 - x) - 455 * x) * beta +
                                                                      alpha * (8 * (1 - x) * (135 * beta - 11)))));
    const double pre_num = (1 + 12 * alpha) * (1 + 12 * beta) / (total * total);
    const double pre_den = 12960 * alpha * alpha * alpha * beta * beta * (1 + 12 * total);
    return pre_num / (1 - x) * poly / pre_den;
  }
  const double prefactor = -x / std::sqrt(2 * alpha * beta / total);
  const double stirling = (1 + 1 / (12 * alpha) + 1 / (288 * alpha * alpha)) *
                          (1 + 1 / (12 * beta) + 1 / (288 * beta * beta)) /
                          (1 + 1 / (12 * total) + 1 / (288 * total * total));
  const double t1_num = 2 * (alpha * alpha) * (x - 1) + alpha * beta * (x - 1) - x * (beta * beta);
  const double axbx = alpha * (x - 1) + beta * x;
  const double t1_den = std::sqrt(2 * alpha / beta) * std::pow(total, 1.5) * axbx * axbx;
  const double t1 = t1_num / t1_den;
  const double t2 = 0.5f * std::log(alpha / (total * x));
  const double t3 = std::sqrt(8 * alpha * beta / total) / (beta * x + alpha * (x - 1));
  const double t4_base = beta * std::log(beta / (total * (1 - x))) + alpha * std::log(alpha / (total * x));
  const double t4 = std::pow(t4_base, -1.5);
  return stirling * prefactor * (t1 + t2 * (t3 + (x < mean ? t4 : -t4)));
}

// -(d/dalpha cdf(x; alpha, total - alpha)) / pdf / (1 - x) for a Beta sample x.
template <typename T>
T dirichlet_grad_one(T x, T alpha, T total) {
  const double xd = x, ad = alpha, td = total;
  const T beta = total - alpha;
  const double bd = td - ad;
  const T boundary = total * x * (1 - x);
  if (x <= 0.5f && boundary < 2.5f) return beta_grad_alpha_small<T>(x, alpha, beta);
  if (x >= 0.5f && boundary < 0.75f) return -beta_grad_beta_small<T>(1 - x, beta, alpha);
  if (alpha > 6 && beta > 6) return static_cast<T>(beta_grad_alpha_mid(xd, ad, bd));
  // A rational correction to an analytic approximation.
  static const double c[2][3][3][4] = {
      {{{1.003668233, -0.01061107488, -0.0657888334, 0.01201642863},
        {0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033},
        {-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013}},
       {{0.221950385, -0.3187676331, 0.01799915743, 0.01074823814},
        {-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057},
        {0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05}},
       {{-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565},
        {0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181},
        {0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05}}},
      {{{1, -0.02924021934, -0.04438342661, 0.007285809825},
        {0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521},
        {-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149}},
       {{0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273},
        {0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956},
        {-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05}},
       {{0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05},
        {0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05},
        {-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06}}},
  };
  const double u = std::log(xd);
  const double a = std::log(ad) - u;
  const double b = std::log(td) - a;
  const double pu[3] = {1, u, u * u};
  const double pa[3] = {1, a, a * a};
  double p = 0.0, q = 0.0;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      const double ua = pu[i] * pa[j];
      p += ua * (c[0][i][j][0] + b * (c[0][i][j][1] + b * (c[0][i][j][2] + b * c[0][i][j][3])));
      q += ua * (c[1][i][j][0] + b * (c[1][i][j][1] + b * (c[1][i][j][2] + b * c[1][i][j][3])));
    }
  }
  const double approx =
      xd * (digamma_of<T, double>(static_cast<T>(td)) - digamma_of<T, double>(static_cast<T>(ad))) / bd;
  return static_cast<T>(p / q * approx);
}

template <typename Fn>
void for_float_double(ScalarType t, const char* name, Fn fn) {
  if (t == ScalarType::Float) {
    fn(float());
  } else if (t == ScalarType::Double) {
    fn(double());
  } else {
    not_implemented(name, t);
  }
}

}  // namespace

Tensor _standard_gamma(const Tensor& self, std::optional<Generator> generator) {
  Tensor out = ember::zeros(self.sizes(), self.dtype(), self.device());
  Tensor in = self.contiguous();
  for_float_double(self.dtype(), "gamma_cpu", [&](auto tag) {
    using T = decltype(tag);
    if (out.is_meta()) return;
    GeneratorImpl* g = generator_or_default(generator);
    std::lock_guard<std::mutex> lock(g->mutex);
    const T* a = static_cast<const T*>(in.data_ptr());
    T* o = static_cast<T*>(out.data_ptr());
    for (int64_t i = 0; i < out.numel(); ++i) {
      o[i] = std::max(std::numeric_limits<T>::min(), static_cast<T>(gamma_draw<T>(a[i], g)));
    }
  });
  return out;
}

Tensor _standard_gamma_grad(const Tensor& self, const Tensor& output) {
  Tensor out = ember::empty(self.sizes(), self.dtype(), self.device());
  Tensor a_in = self.contiguous(), x_in = output.expand(self.sizes()).contiguous();
  for_float_double(self.dtype(), "_standard_gamma_grad_cpu", [&](auto tag) {
    using T = decltype(tag);
    if (out.is_meta()) return;
    const T* a = static_cast<const T*>(a_in.data_ptr());
    const T* x = static_cast<const T*>(x_in.data_ptr());
    T* o = static_cast<T*>(out.data_ptr());
    for (int64_t i = 0; i < out.numel(); ++i) o[i] = static_cast<T>(gamma_grad_one(a[i], x[i]));
  });
  return out;
}

Tensor _sample_dirichlet(const Tensor& self, std::optional<Generator> generator) {
  Tensor out = ember::zeros(self.sizes(), self.dtype(), self.device());
  Tensor in = self.contiguous();
  for_float_double(self.dtype(), "dirichlet", [&](auto tag) {
    using T = decltype(tag);
    if (out.is_meta()) return;
    Tensor gam = ember::zeros(self.sizes(), ScalarType::Double, self.device());
    {
      GeneratorImpl* g = generator_or_default(generator);
      std::lock_guard<std::mutex> lock(g->mutex);
      const T* a = static_cast<const T*>(in.data_ptr());
      double* gd = static_cast<double*>(gam.data_ptr());
      for (int64_t i = 0; i < gam.numel(); ++i) {
        gd[i] = std::max(std::numeric_limits<double>::min(), gamma_draw<double>(static_cast<double>(a[i]), g));
      }
    }
    Tensor sum = gam.sum(std::vector<int64_t>{-1}, true).expand(self.sizes()).contiguous();
    const double* gd = static_cast<const double*>(gam.data_ptr());
    const double* sd = static_cast<const double*>(sum.data_ptr());
    T* o = static_cast<T*>(out.data_ptr());
    const T lo = std::numeric_limits<T>::min();
    const T hi = std::nextafter(static_cast<T>(1), static_cast<T>(0));
    for (int64_t i = 0; i < out.numel(); ++i) o[i] = std::min(hi, std::max(lo, static_cast<T>(gd[i] / sd[i])));
  });
  return out;
}

Tensor _dirichlet_grad(const Tensor& x, const Tensor& alpha, const Tensor& total) {
  EMBER_CHECK(x.sizes().equals(alpha.sizes()) && x.sizes().equals(total.sizes()),
              "_dirichlet_grad: expected x, alpha, and total to have the same shape");
  Tensor out = ember::empty(x.sizes(), x.dtype(), x.device());
  Tensor xc = x.contiguous(), ac = alpha.contiguous(), tc = total.contiguous();
  for_float_double(x.dtype(), "_dirichlet_grad_cpu", [&](auto tag) {
    using T = decltype(tag);
    if (out.is_meta()) return;
    const T* xp = static_cast<const T*>(xc.data_ptr());
    const T* ap = static_cast<const T*>(ac.data_ptr());
    const T* tp = static_cast<const T*>(tc.data_ptr());
    T* o = static_cast<T*>(out.data_ptr());
    for (int64_t i = 0; i < out.numel(); ++i) o[i] = dirichlet_grad_one<T>(xp[i], ap[i], tp[i]);
  });
  return out;
}

Tensor& cauchy_(Tensor& self, double median, double sigma, std::optional<Generator> generator) {
  EMBER_CHECK(sigma > 0.0, "cauchy_ expects sigma > 0.0, but found sigma=", sigma);
  EMBER_CHECK(is_floating_type(self.dtype()),
              "Cauchy distribution is a continuous probability distribution. dtype must be a floating point but you "
              "specified ",
              cpp_type_name(self.dtype()));
  if (self.is_meta() || self.numel() == 0) return self;
  // Drawn in self's memory order (a transposed self takes the draws column by
  // column), as PyTorch's TensorIterator loop: a dense tensor laid out as self.
  Tensor res = ember::empty_like(self, ScalarType::Double);
  {
    GeneratorImpl* g = generator_or_default(generator);
    std::lock_guard<std::mutex> lock(g->mutex);
    double* o = static_cast<double*>(res.data_ptr());
    for (int64_t i = 0; i < res.numel(); ++i) o[i] = median + sigma * std::tan(kPiD * (uniform01(g) - 0.5));
  }
  self.copy_(res);
  return self;
}

Tensor poisson(const Tensor& self, std::optional<Generator> generator) {
  Tensor out = ember::zeros(self.sizes(), self.dtype(), self.device());
  const ScalarType t = self.dtype();
  // The dtype is checked even when there is nothing to draw, as PyTorch.
  if (!out.is_meta() && !is_floating_type(t)) not_implemented("poisson_cpu", t);
  if (out.is_meta() || out.numel() == 0) return out;
  Tensor in = self.to(ScalarType::Double).contiguous();
  Tensor res = ember::empty(self.sizes(), ScalarType::Double, self.device());
  {
    GeneratorImpl* g = generator_or_default(generator);
    std::lock_guard<std::mutex> lock(g->mutex);
    const double* r = static_cast<const double*>(in.data_ptr());
    double* o = static_cast<double*>(res.data_ptr());
    for (int64_t i = 0; i < res.numel(); ++i) o[i] = static_cast<double>(poisson_draw(r[i], g));
  }
  out.copy_(res);
  return out;
}

Tensor binomial(const Tensor& count, const Tensor& prob, std::optional<Generator> generator) {
  // PyTorch's checks: floating operands, one dtype, then the broadcast shape.
  auto check_floating = [](const Tensor& t, const char* name) {
    if (!is_floating_type(t.dtype())) {
      throw ValueError(str_cat("binomial only supports floating-point dtypes for ", name,
                               ", got: ", dtype_message_name(t.scalar_type())));
    }
  };
  check_floating(count, "count");
  check_floating(prob, "prob");
  EMBER_CHECK(prob.scalar_type() == count.scalar_type(), "Found dtype ", dtype_message_name(prob.scalar_type()),
              " but expected ", dtype_message_name(count.scalar_type()));
  const DimVector shape = infer_broadcast_size(count.sizes(), prob.sizes());
  Tensor out = ember::zeros(shape, count.dtype(), count.device());
  Tensor cc = count.expand(shape).contiguous(), pc = prob.expand(shape).contiguous();
  for_float_double(count.dtype(), "binomial_cpu", [&](auto tag) {
    using T = decltype(tag);
    if (out.is_meta()) return;
    GeneratorImpl* g = generator_or_default(generator);
    std::lock_guard<std::mutex> lock(g->mutex);
    const T* c = static_cast<const T*>(cc.data_ptr());
    const T* p = static_cast<const T*>(pc.data_ptr());
    T* o = static_cast<T*>(out.data_ptr());
    for (int64_t i = 0; i < out.numel(); ++i) o[i] = binomial_draw<T>(c[i], p[i], g);
  });
  return out;
}

}  // namespace ember::native
