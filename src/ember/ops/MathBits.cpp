#include "ember/ops/MathBits.h"

#include "ember/ops/Ops.h"
#include "ember/ops/TensorIterator.h"

namespace ember::dispatch {

Tensor resolve_math_bits(const Tensor& t) { return t.has_math_bits() ? ember::clone(t) : t; }

std::optional<Tensor> resolve_math_bits(const std::optional<Tensor>& t) {
  if (!t) return t;
  return resolve_math_bits(*t);
}

std::vector<Tensor> resolve_math_bits(const std::vector<Tensor>& ts) {
  std::vector<Tensor> out;
  out.reserve(ts.size());
  for (const Tensor& t : ts) out.push_back(resolve_math_bits(t));
  return out;
}

std::vector<std::optional<Tensor>> resolve_math_bits(const std::vector<std::optional<Tensor>>& ts) {
  std::vector<std::optional<Tensor>> out;
  out.reserve(ts.size());
  for (const auto& t : ts) out.push_back(resolve_math_bits(t));
  return out;
}

Tensor resolve_written(const char* /*op*/, const Tensor& t) { return resolve_math_bits(t); }

const std::vector<Tensor>& resolve_written(const char* op, const std::vector<Tensor>& ts) {
  EMBER_CHECK(!has_math_bits(ts),
              "fallback doesn't currently support mutable TensorLists with conjugate or "
              "negative inputs. Please materialize all the input tensor(s) in the mutable "
              "TensorList inputs before calling ",
              op);
  return ts;
}

void write_back(const Tensor& original, const Tensor& resolved) {
  if (original.is_same(resolved)) return;
  resize_output(original, resolved.sizes());
  const_cast<Tensor&>(original).copy_(resolved);
}

Tensor physical_alias(const Tensor& t) {
  TensorImpl* base = t.unsafeGetTensorImpl();
  auto impl = make_intrusive<TensorImpl>(base->storage(), base->dtype(), base->sizes(), base->strides(),
                                         base->storage_offset());
  impl->set_version_counter(base->shared_version_counter());
  return Tensor(std::move(impl));
}

Tensor& copy_with_math_bits(Tensor& self, const Tensor& src, bool non_blocking) {
  Tensor dst = physical_alias(self);
  dst.copy_(physical_alias(src), non_blocking);
  const uint8_t differ = self.unsafeGetTensorImpl()->math_bits() ^ src.unsafeGetTensorImpl()->math_bits();
  if ((differ & TensorImpl::kConjBit) && is_complex_type_any_tier(dst.dtype())) dst.conj_physical_();
  if (differ & TensorImpl::kNegBit) dst.neg_();
  return self;
}

}  // namespace ember::dispatch
