#pragma once
// The elementwise engine (see Note [Elementwise engine]): broadcasts inputs,
// picks the common dtype with PyTorch's promotion rules, allocates or checks
// outputs, coalesces dimensions and runs a 1-D inner loop over all elements.

#include <functional>
#include <optional>

#include "ember/ops/Tensor.h"

namespace ember {

// Inner loop: data[k] points at operand k (outputs first), strides[k] is its
// byte stride, n the element count.
using LoopFn = void (*)(char** data, const int64_t* strides, int64_t n, void* ctx);

// Broadcast shape of two shapes; throws PyTorch's size-mismatch error.
EMBER_API DimVector infer_broadcast_size(IntArrayRef a, IntArrayRef b);

// Result dtype of an op over these tensors (wrapped numbers are weak, and a
// 0-dim tensor is weaker than a dimensioned one, as in PyTorch).
EMBER_API ScalarType result_type(const std::vector<const TensorBase*>& operands);

class EMBER_API TensorIterator {
 public:
  static constexpr int kMaxOperands = 4;

  // How op() assigns dtypes (see Note [Elementwise engine]).
  struct Config {
    bool promote_inputs = true;  // convert inputs to the common dtype
    bool int_to_float = false;  // an integral or bool common dtype becomes the default float
    std::optional<ScalarType> out_dtype;  // fixed result dtype (comparisons: Bool), any out= dtype allowed
    int num_unpromoted = 0;  // leading inputs kept as they are and left out of promotion
    bool exact_out_dtype = false;  // an out= tensor must have the result dtype (no cast)
    bool allow_cpu_scalars = true;  // a 0-dim CPU input joins a CUDA call as a number
  };
  // General builder for up to kMaxOperands - 1 inputs.
  static TensorIterator op(Tensor& out, std::initializer_list<Tensor> inputs, const Config& config);

  // out may be undefined (then it is allocated). Inputs are promoted to the
  // common dtype; the output takes it unless out already has a dtype.
  static TensorIterator binary_op(Tensor& out, const Tensor& a, const Tensor& b);
  // Like binary_op but the output is bool (comparisons).
  static TensorIterator comparison_op(Tensor& out, const Tensor& a, const Tensor& b);
  // Same dtype in and out; an out= tensor of another dtype is an error, as
  // in PyTorch's unary ops (abs, floor, neg, ...).
  static TensorIterator unary_op(Tensor& out, const Tensor& a);
  // Like unary_op/binary_op, but integral and bool inputs compute in the
  // default float dtype (exp, sqrt, true division, ...).
  static TensorIterator unary_float_op(Tensor& out, const Tensor& a);
  // Bool result from an input of any dtype, not promoted (isnan, logical_not).
  static TensorIterator unary_bool_op(Tensor& out, const Tensor& a);
  static TensorIterator binary_float_op(Tensor& out, const Tensor& a, const Tensor& b);
  // Copy/cast: no promotion, input broadcast to out's shape. check_overlap:
  // refuse a dst with stride-0 dimensions, as PyTorch does.
  static TensorIterator copy_op(const Tensor& dst, const Tensor& src, bool check_overlap = true);
  static TensorIterator nullary_op(const Tensor& out);

  int ntensors() const { return ntensors_; }
  int noutputs() const { return noutputs_; }
  ScalarType common_dtype() const { return common_dtype_; }
  ScalarType dtype(int k) const { return operands_[k].dtype(); }
  const Tensor& output() const { return operands_[0]; }
  const Tensor& operand(int k) const { return operands_[k]; }
  // Input k's value before its conversion to the common dtype, where k was
  // a 0-dim CPU input of another dtype and the common dtype is float16
  // or bfloat16 (PyTorch's original_scalar_value: mul, div and rounding
  // division of 16-bit floats by a number use it unrounded).
  std::optional<double> original_scalar(int k) const {
    if (!(original_scalar_mask_ & (1u << k))) return std::nullopt;
    return original_scalar_[k];
  }
  int64_t numel() const { return numel_; }
  // Outputs on the meta device: metadata only, kernels do not run.
  bool is_meta() const { return operands_[0].defined() && operands_[0].is_meta(); }
  IntArrayRef shape() const { return shape_; }
  // The iteration space after coalescing (outermost dim first, never empty)
  // and operand k's byte stride in dim d of it.
  IntArrayRef iter_shape() const { return iter_shape_; }
  int64_t iter_stride(int d, int k) const { return strides_[d * kMaxOperands + k]; }

  // Runs fn over every element, splitting the outer range across threads
  // when numel exceeds grain_size.
  void for_each(LoopFn fn, void* ctx, int64_t grain_size = 32768) const;
  // Convenience: any callable with the LoopFn signature minus ctx.
  template <typename F>
  void for_each(const F& f, int64_t grain_size = 32768) const {
    for_each([](char** d, const int64_t* s, int64_t n, void* c) { (*static_cast<const F*>(c))(d, s, n); },
             const_cast<F*>(&f), grain_size);
  }
  // Copies the computed result into the user's output when it had another dtype.
  void finish();

 private:
  void add_output(const Tensor& t) {
    operands_[ntensors_++] = t;
    ++noutputs_;
  }
  void add_input(const Tensor& t) { operands_[ntensors_++] = t; }
  void build(const Config& config);
  // Dims ordered innermost first by the operands' memory layout (PyTorch's
  // reorder_dimensions); outputs that are new or resized are left out.
  DimVector memory_order(unsigned skip_mask) const;
  // Strides of a new or resized output (PyTorch's memory-format propagation).
  DimVector output_strides(unsigned skip_mask, const DimVector& order) const;
  void compute_strides_and_coalesce(const DimVector& order);
  void compute_strides_and_coalesce() { compute_strides_and_coalesce(memory_order(0)); }
  void check_no_internal_overlap() const;
  void check_no_partial_overlap() const;
  void serial_for_each(LoopFn fn, void* ctx, int64_t begin, int64_t end) const;

  Tensor operands_[kMaxOperands];
  Tensor user_output_;  // set when the result must be cast back into it
  int ntensors_ = 0;
  int noutputs_ = 0;
  ScalarType common_dtype_ = ScalarType::Undefined;
  double original_scalar_[kMaxOperands] = {};
  unsigned original_scalar_mask_ = 0;
  DimVector shape_;  // logical (broadcast) shape
  DimVector iter_shape_;  // shape after coalescing, never empty
  int64_t numel_ = 0;
  // byte strides per dim per operand after coalescing: strides_[dim * kMaxOperands + k]
  std::vector<int64_t> strides_;
};

// Whether a result of dtype from may be written into an out= tensor of dtype
// to (no float -> integral, no non-bool -> bool).
EMBER_API bool can_cast(ScalarType from, ScalarType to);

// Checks that t may be resized to shape as an out= argument and does so.
EMBER_API void resize_output(const Tensor& t, IntArrayRef shape);

}  // namespace ember
