#pragma once
// The fallback in front of every generated operator that does not read the
// conjugate and negative bits (Note [Conjugate and negative bits],
// core/TensorImpl.h): such an operator gets its operands resolved, and an
// operand it writes (in place or out=) is computed in a resolved copy that is
// then copied back through copy_, which reads the bits.

#include <optional>
#include <vector>

#include "ember/core/Macros.h"
#include "ember/ops/Tensor.h"

namespace ember::dispatch {

// The flag test each generated operator makes: does any tensor operand carry a bit?
inline bool has_math_bits(const Tensor& t) { return t.has_math_bits(); }
inline bool has_math_bits(const std::optional<Tensor>& t) { return t && t->has_math_bits(); }
inline bool has_math_bits(const std::vector<Tensor>& ts) {
  for (const Tensor& t : ts) {
    if (t.has_math_bits()) return true;
  }
  return false;
}
inline bool has_math_bits(const std::vector<std::optional<Tensor>>& ts) {
  for (const auto& t : ts) {
    if (has_math_bits(t)) return true;
  }
  return false;
}
// For an operand an operator takes conjugated: only the negative bit needs resolving.
inline bool has_neg_bit(const Tensor& t) { return t.defined() && t.is_neg(); }

// A read operand with its bits resolved (a materialised copy; itself without bits).
EMBER_API Tensor resolve_math_bits(const Tensor& t);
EMBER_API std::optional<Tensor> resolve_math_bits(const std::optional<Tensor>& t);
EMBER_API std::vector<Tensor> resolve_math_bits(const std::vector<Tensor>& ts);
EMBER_API std::vector<std::optional<Tensor>> resolve_math_bits(const std::vector<std::optional<Tensor>>& ts);
// t itself unless it has the negative bit (then resolved, both bits).
inline Tensor resolve_neg_bit(const Tensor& t) { return has_neg_bit(t) ? resolve_math_bits(t) : t; }

// A written operand: a resolved copy to compute in when it carries a bit.
EMBER_API Tensor resolve_written(const char* op, const Tensor& t);
EMBER_API const std::vector<Tensor>& resolve_written(const char* op, const std::vector<Tensor>& ts);
// Copies the result computed in `resolved` back into `original` (resized as
// an out= argument is); nothing to do when they are the same tensor.
EMBER_API void write_back(const Tensor& original, const Tensor& resolved);
inline void write_back(const std::vector<Tensor>&, const std::vector<Tensor>&) {}

// The original of a written operand when r is its resolved copy, else r.
inline Tensor original_of(const Tensor& r) { return r; }
template <typename... Rest>
Tensor original_of(const Tensor& r, const Tensor& resolved, const Tensor& original, const Rest&... rest) {
  return r.is_same(resolved) ? original : original_of(r, rest...);
}

// An alias of t without bits: what its storage holds.
EMBER_API Tensor physical_alias(const Tensor& t);

// copy_ when either side has a bit (every device's copy_ kernel starts here):
// the stored values, then the bits in which the two differ applied in place.
EMBER_API Tensor& copy_with_math_bits(Tensor& self, const Tensor& src, bool non_blocking);

}  // namespace ember::dispatch
