// Random sampling: argument checks, generator locking and the composite
// samplers (rand, randint, normal, multinomial, ...). The element loops live
// in cpu/kernels/RandomKernel.cpp; see Note [Random streams] there.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <limits>
#include <mutex>
#include <vector>

#include "ember/cpu/OpMessages.h"
#include "ember/cpu/RandomStubs.h"
#include "ember/ops/BuildInfo.h"
#include "ember/ops/MemoryOverlap.h"
#include "ember/ops/Ops.h"
#include "ember/ops/TensorIterator.h"
#include "ember/ops/generated/NativeFunctions.h"
#include "ember/ops/native/FactoryUtils.h"

namespace ember {

namespace cpu {
EMBER_DEFINE_DISPATCH(UniformFn, uniform_stub);
EMBER_DEFINE_DISPATCH(NormalFn, normal_stub);
EMBER_DEFINE_DISPATCH(RandomFromToFn, random_from_to_stub);
EMBER_DEFINE_DISPATCH(RandomFn, random_full_range_stub);
EMBER_DEFINE_DISPATCH(RandomFn, random_stub);
EMBER_DEFINE_DISPATCH(ExponentialFn, exponential_stub);
EMBER_DEFINE_DISPATCH(BernoulliScalarFn, bernoulli_scalar_stub);
EMBER_DEFINE_DISPATCH(BernoulliTensorFn, bernoulli_tensor_stub);
EMBER_DEFINE_DISPATCH(RandpermFn, randperm_device_stub);
EMBER_DEFINE_DISPATCH(MultinomialFn, multinomial_device_stub);
}  // namespace cpu

namespace native {

namespace {

// Largest finite value of a floating dtype, as a double.
double float_max(ScalarType t) {
  switch (t) {
    case ScalarType::Half: return 65504.0;
    case ScalarType::BFloat16: return 3.3895313892515355e38;
    case ScalarType::Float: return FLT_MAX;
    default: return DBL_MAX;
  }
}

int float_digits(ScalarType t) {
  switch (t) {
    case ScalarType::Half: return 11;
    case ScalarType::BFloat16: return 8;
    case ScalarType::Float: return 24;
    default: return 53;
  }
}

// The integer value v becomes after a round trip through the floating dtype t.
int64_t through_dtype(int64_t v, ScalarType t) {
  switch (t) {
    case ScalarType::Half: return static_cast<int64_t>(static_cast<float>(Half(static_cast<float>(v))));
    case ScalarType::BFloat16: return static_cast<int64_t>(static_cast<float>(BFloat16(static_cast<float>(v))));
    case ScalarType::Float: return static_cast<int64_t>(static_cast<float>(v));
    default: return static_cast<int64_t>(static_cast<double>(v));
  }
}

void integral_limits(ScalarType t, int64_t* lo, int64_t* hi) {
  switch (t) {
    case ScalarType::Byte:
      *lo = 0;
      *hi = 255;
      return;
    case ScalarType::Char:
      *lo = -128;
      *hi = 127;
      return;
    case ScalarType::Short:
      *lo = -32768;
      *hi = 32767;
      return;
    case ScalarType::Int:
      *lo = std::numeric_limits<int32_t>::min();
      *hi = std::numeric_limits<int32_t>::max();
      return;
    case ScalarType::Bool:
      *lo = 0;
      *hi = 1;
      return;
    default:
      *lo = std::numeric_limits<int64_t>::min();
      *hi = std::numeric_limits<int64_t>::max();
      return;
  }
}

// The smallest integer above `from` that the dtype represents exactly, when
// from + 1 is not representable (PyTorch's update_from).
int64_t update_from(int64_t from, ScalarType t) {
  const int64_t from_plus_1 = through_dtype(from + 1, t);
  if (from_plus_1 < from) {
    int64_t a = std::abs(from + 1);
    int n = 0;
    while (a >>= 1) ++n;
    from = from_plus_1 + (int64_t(1) << (n - float_digits(t) + 1));
  }
  return from;
}

int64_t update_to(int64_t to, ScalarType t) {
  const int64_t to_minus_1 = through_dtype(to - 1, t);
  if (to_minus_1 >= to) {
    int64_t a = std::abs(to - 1);
    int n = 0;
    while (a >>= 1) ++n;
    to = to_minus_1 - (int64_t(1) << (n - float_digits(t) + 1));
  }
  return to;
}

void check_from_to_in_range(int64_t from, int64_t to_inc, ScalarType t) {
  if (is_floating_type(t)) {
    const double hi = float_max(t);
    EMBER_CHECK(from >= -hi && from <= hi, "from is out of bounds for ", cpp_type_name(t));
    EMBER_CHECK(to_inc >= -hi && to_inc <= hi, "to - 1 is out of bounds for ", cpp_type_name(t));
  } else {
    EMBER_CHECK(!is_complex_type_any_tier(t),
                "check_random_bounds handles only integral, floating-point and boolean types");
    int64_t lo, hi;
    integral_limits(t, &lo, &hi);
    EMBER_CHECK(from >= lo && from <= hi, "from is out of bounds for ", cpp_type_name(t));
    EMBER_CHECK(to_inc >= lo && to_inc <= hi, "to - 1 is out of bounds for ", cpp_type_name(t));
  }
}

// The generator a sampler on `device` draws from: gen, which must be of the
// device's type, or the device's default generator.
GeneratorImpl* generator_for(const std::optional<Generator>& gen, Device device) {
  if (gen && gen->defined()) {
    // Meta tensors take the CPU's generators.
    const DeviceType want = device.is_cuda() ? DeviceType::CUDA : DeviceType::CPU;
    const DeviceType have = gen->get()->device.type;
    EMBER_CHECK(have == want, "Expected a '", device_type_name(want), "' device type for generator but found '",
                device_type_name(have), "'");
    return gen->get();
  }
  if (device.is_cuda()) {
    const CudaHooks* hooks = cuda_hooks();
    EMBER_CHECK(hooks, "Ember was built without CUDA kernels");
    return default_cuda_generator(device.index >= 0 ? device.index : hooks->current_device()).get();
  }
  return default_cpu_generator().get();
}

// Holds the generator's mutex for the duration of one sampling op.
struct LockedGenerator {
  explicit LockedGenerator(const std::optional<Generator>& gen, Device device = Device(DeviceType::CPU))
      : g(generator_for(gen, device)), lock(g->mutex) {}
  GeneratorImpl* g;
  std::lock_guard<std::mutex> lock;
};

// The stub's kernel for self's device.
template <typename Fn>
Fn kernel_for(const DispatchStub<Fn>& stub, const TensorBase& self) {
  if (self.is_cpu()) return stub.get();
  Fn fn = stub.for_device(self.device().type);
  EMBER_CHECK(fn, "sampling is not implemented for device ", self.device().str());
  return fn;
}

[[noreturn]] void not_implemented(const char* op, ScalarType t) {
  throw NotImplementedError(str_cat("\"", op, "\" not implemented for '",
                                    legacy_type_name(t).substr(0, legacy_type_name(t).size() - 6), "'"));
}

void check_std_tensor(const Tensor& std) {
  if (std.numel() == 0 || std.is_meta()) return;
  // One reduction (NaN fails the test, as in PyTorch); std is often expanded.
  EMBER_CHECK(std.min().to(Device(DeviceType::CPU)).item<double>() >= 0.0, "normal expects all elements of std >= 0.0");
}

}  // namespace

// ---- in-place samplers ----------------------------------------------------------

namespace {
// The (..., 2) real tensor over a complex tensor's storage, without autograd:
// complex samplers draw into it, as PyTorch's do.
Tensor real_pairs(const Tensor& self) {
  DimVector sizes(self.sizes()), strides(self.strides());
  for (auto& s : strides) s *= 2;
  sizes.push_back(2);
  strides.push_back(1);
  return Tensor(make_intrusive<TensorImpl>(self.unsafeGetTensorImpl()->storage(), to_real_type(self.dtype()), sizes,
                                           strides, self.storage_offset() * 2));
}
}  // namespace

Tensor& uniform_(Tensor& self, double from, double to, std::optional<Generator> generator) {
  assert_no_internal_overlap(self);  // PyTorch refuses to sample into overlapping elements
  const ScalarType t = self.dtype();
  if (is_complex_type_any_tier(t)) {
    Tensor pairs = real_pairs(self);
    uniform_(pairs, from, to, generator);
    return self;
  }
  if (!is_floating_type(t)) not_implemented("check_uniform_bounds", t);
  const double hi = float_max(t);
  EMBER_CHECK(from >= -hi && from <= hi, "from is out of bounds for ", cpp_type_name(t));
  EMBER_CHECK(to >= -hi && to <= hi, "to is out of bounds for ", cpp_type_name(t));
  EMBER_CHECK(from <= to, "uniform_ expects to return a [from, to) range, but found from=", from, " > to=", to);
  EMBER_CHECK(to - from <= hi, "uniform_ expects to-from <= std::numeric_limits<",
              legacy_type_name(t).substr(0, legacy_type_name(t).size() - 6), ">::max(), but found to=", to,
              " and from=", from, " which result in to-from to exceed the limit");
  if (self.numel() == 0 || self.is_meta()) return self;  // a meta tensor has no data: no draws
  LockedGenerator g(generator, self.device());
  kernel_for(cpu::uniform_stub, self)(self, from, to, g.g);
  return self;
}

Tensor& normal_(Tensor& self, double mean, double std, std::optional<Generator> generator) {
  assert_no_internal_overlap(self);  // PyTorch refuses to sample into overlapping elements
  EMBER_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
  if (is_complex_type_any_tier(self.dtype())) {
    // Each part has half the variance.
    Tensor pairs = real_pairs(self);
    normal_(pairs, mean, std / std::sqrt(2.0), generator);
    return self;
  }
  // PyTorch's kernel picks its loop by dtype only when there is something to draw.
  if (self.numel() == 0) return self;
  if (!is_floating_type(self.dtype()))
    not_implemented(self.is_cuda() ? "normal_kernel_cuda" : "normal_kernel_cpu", self.dtype());
  if (self.is_meta()) return self;  // a meta tensor has no data: no draws
  LockedGenerator g(generator, self.device());
  kernel_for(cpu::normal_stub, self)(self, mean, std, g.g);
  return self;
}

Tensor& random_(Tensor& self, std::optional<Generator> generator) {
  assert_no_internal_overlap(self);  // PyTorch refuses to sample into overlapping elements
  if (self.numel() == 0 || self.is_meta()) return self;  // a meta tensor has no data: no draws
  LockedGenerator g(generator, self.device());
  kernel_for(cpu::random_stub, self)(self, g.g);
  return self;
}

Tensor& random_from_(Tensor& self, int64_t from, std::optional<int64_t> to_opt, std::optional<Generator> generator) {
  assert_no_internal_overlap(self);  // PyTorch refuses to sample into overlapping elements
  const ScalarType t = self.dtype();
  if (to_opt) {
    int64_t to = *to_opt;
    EMBER_CHECK(from < to, "random_ expects 'from' to be less than 'to', but got from=", from, " >= to=", to);
    if (is_floating_type(t)) {
      from = update_from(from, t);
      to = update_to(to, t);
      EMBER_CHECK(from < to,
                  "random_ expects 'from' casted to dtype to be less than 'to' casted to dtype, but got from=", from,
                  " >= to=", to);
    }
    check_from_to_in_range(from, to - 1, t);
    if (self.numel() == 0 || self.is_meta()) return self;  // a meta tensor has no data: no draws
    LockedGenerator g(generator, self.device());
    kernel_for(cpu::random_from_to_stub, self)(self, static_cast<uint64_t>(to) - static_cast<uint64_t>(from), from,
                                               g.g);
  } else if (from != std::numeric_limits<int64_t>::min()) {
    int64_t to_inc;
    if (is_floating_type(t)) {
      const int digits = float_digits(t);
      to_inc = digits >= 63 ? std::numeric_limits<int64_t>::max() : (int64_t(1) << digits);
      from = update_from(from, t);
      EMBER_CHECK(
          from < to_inc,
          "random_ expects 'from' casted to dtype to be less than or equal to 'to_inc' casted to dtype, but got "
          "from=",
          from, " > to_inc=", to_inc);
    } else {
      int64_t lo;
      integral_limits(t, &lo, &to_inc);
    }
    check_from_to_in_range(from, to_inc, t);
    if (self.numel() == 0 || self.is_meta()) return self;  // a meta tensor has no data: no draws
    LockedGenerator g(generator, self.device());
    kernel_for(cpu::random_from_to_stub, self)(self, static_cast<uint64_t>(to_inc) - static_cast<uint64_t>(from) + 1,
                                               from, g.g);
  } else {
    if (self.numel() == 0 || self.is_meta()) return self;  // a meta tensor has no data: no draws
    LockedGenerator g(generator, self.device());
    kernel_for(cpu::random_full_range_stub, self)(self, g.g);
  }
  return self;
}

Tensor& random_to_(Tensor& self, int64_t to, std::optional<Generator> generator) {
  assert_no_internal_overlap(self);  // PyTorch refuses to sample into overlapping elements
  return random_from_(self, 0, to, generator);
}

Tensor& exponential_(Tensor& self, double lambd, std::optional<Generator> generator) {
  assert_no_internal_overlap(self);  // PyTorch refuses to sample into overlapping elements
  EMBER_CHECK(lambd > 0.0, "exponential_ expects lambda > 0.0, but found lambda=", lambd);
  if (self.numel() == 0) return self;
  EMBER_CHECK(is_floating_type(self.dtype()),
              "Exponential distribution is a continuous probability distribution. dtype must be a floating point but "
              "you specified ",
              legacy_type_name(self.dtype()).substr(0, legacy_type_name(self.dtype()).size() - 6));
  if (self.is_meta()) return self;  // a meta tensor has no data: no draws
  LockedGenerator g(generator, self.device());
  kernel_for(cpu::exponential_stub, self)(self, lambd, g.g);
  return self;
}

Tensor& bernoulli_float_(Tensor& self, double p, std::optional<Generator> generator) {
  assert_no_internal_overlap(self);  // PyTorch refuses to sample into overlapping elements
  EMBER_CHECK(0 <= p && p <= 1, "bernoulli_ expects p to be in [0, 1], but got p=", p);
  if (self.is_meta() || self.numel() == 0) return self;  // no draws (nor a loop for self's dtype)
  LockedGenerator g(generator, self.device());
  kernel_for(cpu::bernoulli_scalar_stub, self)(self, p, g.g);
  return self;
}

Tensor& bernoulli_tensor_(Tensor& self, const Tensor& p, std::optional<Generator> generator) {
  assert_no_internal_overlap(self);  // PyTorch refuses to sample into overlapping elements
  if (!is_floating_type(p.dtype())) {
    const std::string_view name = legacy_type_name(p.dtype());
    EMBER_CHECK(self.is_cpu() || self.is_meta(), "expected probabilities tensor to have floating type, got ",
                name.substr(0, name.size() - 6));
    // The CPU kernel picks its loop by p's dtype only when there is something to draw.
    if (self.numel() == 0) return self;
    not_implemented("bernoulli_tensor_cpu_p_", p.dtype());
  }
  // A CUDA self takes probabilities from any device, as PyTorch's.
  const Tensor pd = self.is_cuda() && p.device() != self.device() ? p.to(self.device()) : p;
  Tensor pe = pd.sizes().equals(self.sizes()) ? pd : pd.expand(self.sizes());
  if (self.is_meta()) return self;  // a meta tensor has no data: no draws
  if (p.is_meta()) throw NotImplementedError("Cannot inplace into non-meta tensor with meta tensor argument");
  if (self.numel() == 0) return self;  // no draws (nor a loop for self's dtype)
  LockedGenerator g(generator, self.device());
  kernel_for(cpu::bernoulli_tensor_stub, self)(self, pe, g.g);
  return self;
}

// ---- functional samplers -----------------------------------------------------------

Tensor& bernoulli_out(const Tensor& self, std::optional<Generator> generator, Tensor& out) {
  if (!out.defined()) {
    out = ember::empty(self.sizes(), self.dtype(), self.device());
  } else {
    resize_output(out, self.sizes());
  }
  return bernoulli_tensor_(out, self, generator);
}

Tensor bernoulli_p(const Tensor& self, double p, std::optional<Generator> generator) {
  Tensor out = ember::empty_like(self);
  bernoulli_float_(out, p, generator);
  return out;
}

Tensor& rand_out(IntArrayRef size, std::optional<Generator> generator, std::optional<ScalarType> dtype,
                 std::optional<Device> device, Tensor& out) {
  prepare_factory_out(out, size, dtype, device, get_default_dtype());
  return uniform_(out, 0.0, 1.0, generator);
}

Tensor& randn_out(IntArrayRef size, std::optional<Generator> generator, std::optional<ScalarType> dtype,
                  std::optional<Device> device, Tensor& out) {
  prepare_factory_out(out, size, dtype, device, get_default_dtype());
  return normal_(out, 0.0, 1.0, generator);
}

Tensor& randint_low_out(int64_t low, int64_t high, IntArrayRef size, std::optional<Generator> generator,
                        std::optional<ScalarType> dtype, std::optional<Device> device, Tensor& out) {
  prepare_factory_out(out, size, dtype, device, ScalarType::Long);
  return random_from_(out, low, high, generator);
}

Tensor& randint_out(int64_t high, IntArrayRef size, std::optional<Generator> generator, std::optional<ScalarType> dtype,
                    std::optional<Device> device, Tensor& out) {
  return randint_low_out(0, high, size, generator, dtype, device, out);
}

Tensor& randperm_out(int64_t n, std::optional<Generator> generator, std::optional<ScalarType> dtype,
                     std::optional<Device> device, Tensor& out) {
  if (!out.defined()) {
    out = ember::empty({n}, dtype.value_or(ScalarType::Long), device);
  } else {
    EMBER_CHECK(n >= 0, "n must be non-negative, got", n);
    prepare_factory_out(out, {n}, dtype, device, ScalarType::Long);
  }
  const ScalarType t = out.dtype();
  // The largest value must be representable (exactly, for floating types).
  if (!is_floating_type(t) && t != ScalarType::Bool) {
    int64_t lo, hi;
    integral_limits(t, &lo, &hi);
    static const char* names[] = {"uint8_t", "int8_t", "int16_t", "int32_t", "int64_t"};
    EMBER_CHECK(n - 1 <= hi, "value cannot be converted to type ", names[static_cast<int>(t)], " without overflow");
  }
  EMBER_CHECK(t != ScalarType::Half || n <= (int64_t(1) << 11) + 1, "n cannot be greater than 2049 for Half type.");
  EMBER_CHECK(t != ScalarType::Float || n <= (int64_t(1) << 24) + 1, "n cannot be greater than 2^24+1 for Float type.");
  EMBER_CHECK(t != ScalarType::Double || n <= (int64_t(1) << 53) + 1,
              "n cannot be greater than 2^53+1 for Double type.");
  if (out.device().is_cuda()) {
    kernel_for(cpu::randperm_device_stub, out)(out, n, generator);
    return out;
  }
  if (t == ScalarType::Bool) not_implemented("randperm", t);
  if (out.is_meta()) return out;  // a meta tensor has no data: no draws
  LockedGenerator g(generator, out.device());
  EMBER_DISPATCH_ALL_TYPES(t, "randperm", [&] {
    scalar_t* r = static_cast<scalar_t*>(out.data_ptr());
    const int64_t s = out.stride(0);
    if (n < static_cast<int64_t>(std::numeric_limits<uint32_t>::max() / 20)) {
      // Fisher-Yates over 0..n-1 with 32-bit draws.
      for (int64_t i = 0; i < n; ++i) r[i * s] = convert<scalar_t>(i);
      for (int64_t i = 0; i < n - 1; ++i) {
        const int64_t z = static_cast<int64_t>(g.g->random() % static_cast<uint64_t>(n - i));
        std::swap(r[i * s], r[(z + i) * s]);
      }
    } else {
      // Inside-out shuffle with 64-bit draws, for n near the 32-bit range.
      for (int64_t i = 0; i < n; ++i) {
        const int64_t z = static_cast<int64_t>(g.g->random64() % static_cast<uint64_t>(i + 1));
        r[i * s] = r[z * s];
        r[z * s] = convert<scalar_t>(i);
      }
    }
  });
  return out;
}

Tensor& normal_float_float_out(double mean, double std, IntArrayRef size, std::optional<Generator> generator,
                               std::optional<ScalarType> dtype, std::optional<Device> device, Tensor& out) {
  prepare_factory_out(out, size, dtype, device, get_default_dtype());
  return normal_(out, mean, std, generator);
}

// normal with tensor arguments draws N(0, 1) (or N(0, std)) into the output
// and then scales and shifts it elementwise, as PyTorch does.
Tensor& normal_tensor_float_out(const Tensor& mean, double std, std::optional<Generator> generator, Tensor& out) {
  EMBER_CHECK(std >= 0.0, "normal expects std >= 0.0, but found std ", std);
  if (!out.defined()) {
    out = ember::empty(mean.sizes(), mean.dtype(), mean.device());
  } else {
    resize_output(out, infer_broadcast_size(mean.sizes(), out.sizes()));
  }
  normal_(out, 0.0, std, generator);
  out.add_(mean);
  return out;
}

Tensor& normal_float_tensor_out(double mean, const Tensor& std, std::optional<Generator> generator, Tensor& out) {
  check_std_tensor(std);
  if (!out.defined()) {
    out = ember::empty(std.sizes(), std.dtype(), std.device());
  } else {
    resize_output(out, std.sizes());
  }
  normal_(out, 0.0, 1.0, generator);
  out.mul_(std);
  out.add_(ember::full({}, Scalar(mean), out.dtype(), out.device()));
  return out;
}

Tensor& normal_tensor_tensor_out(const Tensor& mean, const Tensor& std, std::optional<Generator> generator,
                                 Tensor& out) {
  check_std_tensor(std);
  DimVector shape = infer_broadcast_size(mean.sizes(), std.sizes());
  if (!out.defined()) {
    out = ember::empty(shape, mean.dtype(), mean.device());
  } else {
    resize_output(out, shape);
  }
  normal_(out, 0.0, 1.0, generator);
  out.mul_(std);
  out.add_(mean);
  return out;
}

Tensor rand_like(const Tensor& self, std::optional<Generator> generator, std::optional<ScalarType> dtype,
                 std::optional<Device> device, std::optional<MemoryFormat> memory_format) {
  Tensor out = ember::empty_like(self, dtype, device, memory_format);
  return uniform_(out, 0.0, 1.0, generator);
}

Tensor randn_like(const Tensor& self, std::optional<Generator> generator, std::optional<ScalarType> dtype,
                  std::optional<Device> device, std::optional<MemoryFormat> memory_format) {
  Tensor out = ember::empty_like(self, dtype, device, memory_format);
  return normal_(out, 0.0, 1.0, generator);
}

Tensor randint_like_low(const Tensor& self, int64_t low, int64_t high, std::optional<Generator> generator,
                        std::optional<ScalarType> dtype, std::optional<Device> device,
                        std::optional<MemoryFormat> memory_format) {
  Tensor out = ember::empty_like(self, dtype, device, memory_format);
  return random_from_(out, low, high, generator);
}

Tensor randint_like(const Tensor& self, int64_t high, std::optional<Generator> generator,
                    std::optional<ScalarType> dtype, std::optional<Device> device,
                    std::optional<MemoryFormat> memory_format) {
  return randint_like_low(self, 0, high, generator, dtype, device, memory_format);
}

// ---- multinomial -------------------------------------------------------------------

namespace {

// Without replacement (or one sample): the Gumbel-max idea in its exponential
// form, as PyTorch does it: q ~ Exp(1) elementwise, then the n largest of p / q.
template <typename T>
void multinomial_top(const Tensor& self, int64_t n_sample, GeneratorImpl* g, Tensor& result) {
  using acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
  Tensor q = ember::empty_like(self);
  cpu::exponential_stub(q, 1.0, g);
  const int64_t n_cat = self.size(-1);
  const int64_t n_dist = self.dim() == 2 ? self.size(0) : 1;
  const int64_t ps0 = self.dim() == 2 ? self.stride(0) : 0, ps1 = self.stride(-1);
  const int64_t qs0 = q.dim() == 2 ? q.stride(0) : 0, qs1 = q.stride(-1);
  const int64_t rs0 = result.dim() == 2 ? result.stride(0) : 0, rs1 = result.stride(-1);
  const T* p = static_cast<const T*>(self.data_ptr());
  const T* qd = static_cast<const T*>(q.data_ptr());
  int64_t* r = static_cast<int64_t*>(result.data_ptr());
  using Elem = std::pair<T, int64_t>;
  std::vector<Elem> row(static_cast<size_t>(n_cat));
  auto isnan_ = [](T v) { return std::isnan(static_cast<double>(v)); };
  // PyTorch's topk order: NaN first, then descending.
  auto before = [&](const Elem& a, const Elem& b) {
    return (isnan_(a.first) && !isnan_(b.first)) || (static_cast<double>(a.first) > static_cast<double>(b.first));
  };
  for (int64_t i = 0; i < n_dist; ++i) {
    for (int64_t j = 0; j < n_cat; ++j) {
      // p / q in T's arithmetic (16-bit types divide in float and round).
      const acc a = static_cast<acc>(p[i * ps0 + j * ps1]);
      const acc b = static_cast<acc>(qd[i * qs0 + j * qs1]);
      row[j] = {convert<T>(a / b), j};
    }
    if (n_sample == 1) {
      // argmax: the first largest (NaN counts as largest).
      int64_t best = 0;
      for (int64_t j = 1; j < n_cat; ++j) {
        const T a = row[j].first, b = row[best].first;
        if (isnan_(b)) break;
        if (isnan_(a) || static_cast<double>(a) > static_cast<double>(b)) best = j;
      }
      r[i * rs0] = best;
      continue;
    }
    // The same selection algorithm as PyTorch's topk, so ties come out alike.
    if (n_sample * 64 <= n_cat) {
      std::partial_sort(row.begin(), row.begin() + n_sample, row.end(), before);
    } else {
      std::nth_element(row.begin(), row.begin() + n_sample - 1, row.end(), before);
      std::sort(row.begin(), row.begin() + n_sample - 1, before);
    }
    for (int64_t j = 0; j < n_sample; ++j) r[i * rs0 + j * rs1] = row[j].second;
  }
}

template <typename T>
void multinomial_with_replacement(const Tensor& self, int64_t n_sample, GeneratorImpl* g, Tensor& result) {
  using acc = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const int64_t n_cat = self.size(-1);
  const int64_t n_dist = self.dim() == 2 ? self.size(0) : 1;
  const int64_t ps0 = self.dim() == 2 ? self.stride(0) : 0, ps1 = self.stride(-1);
  const int64_t rs0 = result.dim() == 2 ? result.stride(0) : 0, rs1 = result.stride(-1);
  const T* p = static_cast<const T*>(self.data_ptr());
  int64_t* r = static_cast<int64_t*>(result.data_ptr());
  // The cumulative distribution is kept in T (float for 16-bit types).
  using cum_t = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, T>;
  std::vector<cum_t> cum(static_cast<size_t>(n_cat));
  for (int64_t i = 0; i < n_dist; ++i) {
    acc sum = 0;
    for (int64_t j = 0; j < n_cat; ++j) {
      const acc v = static_cast<acc>(p[i * ps0 + j * ps1]);
      EMBER_CHECK(v >= 0, "invalid multinomial distribution (encountering probability entry < 0)");
      EMBER_CHECK(std::isfinite(v),
                  "invalid multinomial distribution (encountering probability entry = infinity or NaN)");
      sum += v;
      cum[j] = static_cast<cum_t>(sum);
    }
    EMBER_CHECK(sum > 0, "invalid multinomial distribution (sum of probabilities <= 0)");
    for (int64_t j = 0; j < n_cat; ++j) cum[j] = static_cast<cum_t>(static_cast<acc>(cum[j]) / sum);
    for (int64_t k = 0; k < n_sample; ++k) {
      const double u = static_cast<double>(g->random64() & ((uint64_t(1) << 53) - 1)) * (1.0 / 9007199254740992.0);
      cum[n_cat - 1] = 1;
      int64_t left = 0, right = n_cat;
      while (right - left > 0) {
        const int64_t mid = left + (right - left) / 2;
        if (static_cast<double>(cum[mid]) < u) {
          left = mid + 1;
        } else {
          right = mid;
        }
      }
      r[i * rs0 + k * rs1] = left;
    }
  }
}

}  // namespace

Tensor& multinomial_out(const Tensor& self, int64_t n_sample, bool replacement, std::optional<Generator> generator,
                        Tensor& out) {
  EMBER_CHECK(self.dim() > 0 && self.dim() <= 2, "prob_dist must be 1 or 2 dim");
  EMBER_CHECK(is_floating_type(self.dtype()), "multinomial only supports floating-point dtypes for input, got: ",
              legacy_type_name(self.dtype()).substr(0, legacy_type_name(self.dtype()).size() - 6));
  EMBER_CHECK(!out.defined() || out.dtype() == ScalarType::Long, "multinomial expects Long tensor out, got: ",
              out.defined() ? legacy_type_name(out.dtype()).substr(0, legacy_type_name(out.dtype()).size() - 6) : "");
  EMBER_CHECK(n_sample > 0, "cannot sample n_sample <= 0 samples");
  const int64_t n_cat = self.size(-1);
  EMBER_CHECK(replacement || n_sample <= n_cat,
              "cannot sample n_sample > prob_dist.size(-1) samples without replacement");
  EMBER_CHECK(n_cat <= (int64_t(1) << 24), "number of categories cannot exceed 2^24");
  DimVector shape = self.dim() == 1 ? DimVector{n_sample} : DimVector{self.size(0), n_sample};
  if (!out.defined()) {
    out = ember::empty(shape, ScalarType::Long, self.device());
  } else {
    EMBER_CHECK(out.device() == self.device(), "Attempting to copy from device ", self.device().str(), " to device ",
                out.device().str(), ", but cross-device copies are not allowed!");
    resize_output(out, shape);
  }
  if (out.numel() == 0 || out.is_meta()) return out;  // a meta result has no data: no draws
  if (out.device().is_cuda()) {
    kernel_for(cpu::multinomial_device_stub, out)(self, n_sample, replacement, generator, out);
    return out;
  }
  if (!replacement || n_sample == 1) {
    std::vector<double> v = to_vector(self);
    bool ok = true;
    for (double x : v) ok = ok && (x < INFINITY) && (x >= 0);
    EMBER_CHECK(ok, "probability tensor contains either `inf`, `nan` or element < 0");
    const int64_t rows = self.dim() == 2 ? self.size(0) : 1;
    for (int64_t i = 0; i < rows; ++i) {
      double s = 0;
      for (int64_t j = 0; j < n_cat; ++j) s += v[static_cast<size_t>(i * n_cat + j)];
      EMBER_CHECK(s != 0, "invalid multinomial distribution (sum of probabilities <= 0)");
    }
  }
  LockedGenerator g(generator, self.device());
  auto run = [&](auto tag) {
    using T = decltype(tag);
    if (!replacement || n_sample == 1) {
      multinomial_top<T>(self, n_sample, g.g, out);
    } else {
      multinomial_with_replacement<T>(self, n_sample, g.g, out);
    }
  };
  switch (self.dtype()) {
    case ScalarType::Float: run(float()); break;
    case ScalarType::Double: run(double()); break;
    case ScalarType::Half: run(Half()); break;
    default: run(BFloat16()); break;
  }
  return out;
}

}  // namespace native
}  // namespace ember
