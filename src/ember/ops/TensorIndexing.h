#pragma once
// Indexing with Python's rules from C++ (Note [Python indexing] in
// ops/TensorIndexing.cpp; Python's index objects are converted to these):
//   using namespace ember::indexing;
//   x.index({Slice(), 0, None, "...", mask})     is x[:, 0, None, ..., mask]
//   x.index_put_({Slice(1, None), idx}, 0.5)      is x[1:, idx] = 0.5

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include "ember/ops/Tensor.h"

namespace ember::indexing {

constexpr int64_t INDEX_MAX = std::numeric_limits<int64_t>::max();
constexpr int64_t INDEX_MIN = std::numeric_limits<int64_t>::min();

struct EllipsisIndexType {};
inline constexpr EllipsisIndexType Ellipsis{};
inline constexpr std::nullopt_t None = std::nullopt;

// start:stop:step with Python's defaults for what is left out.
class EMBER_API Slice {
 public:
  Slice(std::optional<int64_t> start = std::nullopt, std::optional<int64_t> stop = std::nullopt,
        std::optional<int64_t> step = std::nullopt);
  int64_t start() const { return start_; }
  int64_t stop() const { return stop_; }
  int64_t step() const { return step_; }

 private:
  int64_t start_, stop_, step_;
};

// One entry of an index: None, Ellipsis ("..."), an integer, a bool, a Slice
// or a tensor (an advanced index).
class EMBER_API TensorIndex {
 public:
  enum class Kind { None, Ellipsis, Integer, Boolean, Slice, Tensor };

  TensorIndex(std::nullopt_t) : kind_(Kind::None) {}  // NOLINT
  TensorIndex(EllipsisIndexType) : kind_(Kind::Ellipsis) {}  // NOLINT
  TensorIndex(const char* text);  // NOLINT: "..." only
  TensorIndex(int64_t i) : kind_(Kind::Integer), integer_(i) {}  // NOLINT
  TensorIndex(int i) : TensorIndex(static_cast<int64_t>(i)) {}  // NOLINT
  template <typename T, std::enable_if_t<std::is_same_v<T, bool>, int> = 0>
  TensorIndex(T b) : kind_(Kind::Boolean), boolean_(b) {}  // NOLINT
  TensorIndex(Slice s) : kind_(Kind::Slice), slice_(s) {}  // NOLINT
  TensorIndex(Tensor t) : kind_(Kind::Tensor), tensor_(std::move(t)) {}  // NOLINT

  Kind kind() const { return kind_; }
  bool is_none() const { return kind_ == Kind::None; }
  bool is_ellipsis() const { return kind_ == Kind::Ellipsis; }
  bool is_integer() const { return kind_ == Kind::Integer; }
  bool is_boolean() const { return kind_ == Kind::Boolean; }
  bool is_slice() const { return kind_ == Kind::Slice; }
  bool is_tensor() const { return kind_ == Kind::Tensor; }
  int64_t integer() const { return integer_; }
  bool boolean() const { return boolean_; }
  const Slice& slice() const { return slice_; }
  const Tensor& tensor() const { return tensor_; }

 private:
  Kind kind_;
  int64_t integer_ = 0;
  bool boolean_ = false;
  Slice slice_;
  Tensor tensor_;
};

// self[indices]. `single`: one index not inside a tuple (x[1:] rather than
// x[1:,]), whose full slices still record a slice as in Python.
EMBER_API Tensor get_item(const Tensor& self, const TensorIndex* indices, size_t n, bool single);
// self[indices] = value.
EMBER_API void set_item(const Tensor& self, const TensorIndex* indices, size_t n, bool single, const Tensor& value);

// The pieces Python's fast paths share.
EMBER_API Tensor apply_select(const Tensor& self, int64_t dim, int64_t index, int64_t real_dim);
EMBER_API Tensor apply_slice(const Tensor& self, int64_t dim, const Slice& s, bool keep_full);
// True/False as an index tensor: one position (0) or none.
EMBER_API Tensor bool_index(bool value);
// dst = src with Python assignment's broadcasting (leading ones dropped).
EMBER_API void copy_to(const Tensor& dst, const Tensor& src);

}  // namespace ember::indexing
