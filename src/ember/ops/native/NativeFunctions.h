#pragma once
// Hand-written implementations named in ops.yaml's dispatch entries.
// Structured ops take a trailing `out` that may be undefined (allocate),
// the input itself (in-place) or a user tensor (out=).

#include <optional>

#include "ember/ops/Tensor.h"

namespace ember::native {

// factories
Tensor empty(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Device> device);
Tensor empty_strided(IntArrayRef size, IntArrayRef stride, std::optional<ScalarType> dtype,
                     std::optional<Device> device);
Tensor zeros(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Device> device);
Tensor ones(IntArrayRef size, std::optional<ScalarType> dtype, std::optional<Device> device);
Tensor full(IntArrayRef size, const Scalar& fill_value, std::optional<ScalarType> dtype,
            std::optional<Device> device);
Tensor empty_like(const Tensor& self, std::optional<ScalarType> dtype, std::optional<Device> device);
Tensor zeros_like(const Tensor& self, std::optional<ScalarType> dtype, std::optional<Device> device);
Tensor ones_like(const Tensor& self, std::optional<ScalarType> dtype, std::optional<Device> device);

// in-place fills and copies
Tensor& fill_(Tensor& self, const Scalar& value);
Tensor& zero_(Tensor& self);
Tensor& copy_(Tensor& self, const Tensor& src, bool non_blocking);
Tensor to_copy(const Tensor& self, std::optional<ScalarType> dtype, std::optional<Device> device,
               bool non_blocking);
Tensor to_dtype(const Tensor& self, ScalarType dtype, bool non_blocking, bool copy);
Tensor to_device(const Tensor& self, Device device, std::optional<ScalarType> dtype, bool non_blocking,
                 bool copy);
Tensor clone(const Tensor& self);
Tensor contiguous(const Tensor& self);

// elementwise arithmetic
Tensor& add_out(const Tensor& self, const Tensor& other, const Scalar& alpha, Tensor& out);
Tensor& sub_out(const Tensor& self, const Tensor& other, const Scalar& alpha, Tensor& out);
Tensor& mul_out(const Tensor& self, const Tensor& other, Tensor& out);
Tensor& neg_out(const Tensor& self, Tensor& out);

// reductions
Tensor& sum_out(const Tensor& self, std::optional<ScalarType> dtype, Tensor& out);
Tensor& sum_dim_out(const Tensor& self, std::optional<std::vector<int64_t>> dim, bool keepdim,
                    std::optional<ScalarType> dtype, Tensor& out);

// views
Tensor as_strided(const Tensor& self, IntArrayRef size, IntArrayRef stride,
                  std::optional<int64_t> storage_offset);
Tensor expand(const Tensor& self, IntArrayRef size, bool implicit);
Tensor view(const Tensor& self, IntArrayRef size);
Tensor reshape(const Tensor& self, IntArrayRef shape);
Tensor unsqueeze(const Tensor& self, int64_t dim);
Tensor permute(const Tensor& self, IntArrayRef dims);

}  // namespace ember::native
