// torch._grouped_mm: one matrix product per group, for mixture-of-experts
// layers. A 2-d operand is cut into groups along its jagged dim by the int32
// end offsets `offs`; two 3-d operands are a batch (bmm). Operand layouts and
// the output's padded row stride are those of the grouped GEMM kernels
// PyTorch targets (rows or columns contiguous, the other stride a multiple of
// 16 bytes); every device multiplies group by group with mm.
#include "ember/ops/Ops.h"
#include "ember/ops/generated/NativeFunctions.h"

namespace ember::native {

namespace {

bool is_grouped_float(ScalarType t) {
  return t == ScalarType::BFloat16 || t == ScalarType::Float || t == ScalarType::Half;
}

// Either the rows or the columns of the last two dims are contiguous, the
// other stride covering them and 16-byte aligned.
void check_grouped_layout(const Tensor& m) {
  const int64_t d = m.dim() - 1;
  const IntArrayRef st = m.strides(), sz = m.sizes();
  const int64_t align = 16 / static_cast<int64_t>(m.element_size());
  if (st[d - 1] == 1 && st[d] >= std::max<int64_t>(1, sz[d - 1])) {
    EMBER_CHECK(st[d] % align == 0, "strides should be multiple of 16 bytes");
  } else if (st[d] == 1 && st[d - 1] >= std::max<int64_t>(1, sz[d])) {
    EMBER_CHECK(st[d - 1] % align == 0, "strides should be multiple of 16 bytes");
  } else {
    EMBER_CHECK(false, "Invalid strides/sizes, got ", shape_string(st), " for strides and ", shape_string(sz),
                " for sizes");
  }
}

// The group ends, read on the host.
std::vector<int64_t> group_ends(const Tensor& offs) {
  const Tensor host = offs.to(Device(DeviceType::CPU)).contiguous();
  const int32_t* p = static_cast<const int32_t*>(host.data_ptr());
  return std::vector<int64_t>(p, p + host.numel());
}

}  // namespace

Tensor _grouped_mm(const Tensor& self, const Tensor& mat2, const std::optional<Tensor>& offs_,
                   const std::optional<Tensor>& bias, std::optional<ScalarType> out_dtype) {
  const bool has_offs = offs_.has_value() && offs_->defined();
  EMBER_CHECK(is_grouped_float(self.dtype()), "Expected mat_a to be Float32, BFloat16 or Float16 matrix, got ",
              dtype_message_name(self.dtype()));
  EMBER_CHECK(is_grouped_float(mat2.dtype()), "Expected mat_b to be Float32, BFloat16 or Float16 matrix, got ",
              dtype_message_name(mat2.dtype()));
  EMBER_CHECK(self.dim() == 2 || self.dim() == 3, "mat_a has to be 2 or 3d");
  EMBER_CHECK(mat2.dim() == 2 || mat2.dim() == 3, "mat_b has to be 2 or 3d");
  const bool a2 = self.dim() == 2, b2 = mat2.dim() == 2;
  if (!a2 || !b2) {
    EMBER_CHECK(self.sizes()[self.dim() - 1] == mat2.sizes()[mat2.dim() - 2],
                "contraction dimension of mat_a and mat_b must match");
  }
  check_grouped_layout(self);
  check_grouped_layout(mat2);
  EMBER_CHECK(has_offs == (a2 || b2),
              "Have to provide offsets if there is a 2d matrix, or no offset if both matrices are 3d");
  if (has_offs) {
    EMBER_CHECK(offs_->dim() == 1, "offs has to be 1D");
    EMBER_CHECK(offs_->dtype() == ScalarType::Int, "Offsets have to be int32");
  }
  EMBER_CHECK(!(bias.has_value() && bias->defined()), "Bias not supported yet");
  const ScalarType dtype = out_dtype.value_or(self.dtype());
  EMBER_CHECK(dtype == self.dtype(), "Grouped gemm output dtype must match `mat_a` dtype");

  // The output: groups stacked along the jagged dim (2-d) or one per group (3-d),
  // its last dim's stride rounded up to 16 bytes.
  std::vector<int64_t> size;
  const int64_t groups = has_offs ? offs_->sizes()[0] : 0;
  if (a2 && b2) {
    size = {groups, self.sizes()[0], mat2.sizes()[1]};
  } else if (a2) {
    EMBER_CHECK(groups == mat2.sizes()[0], "matrix batch sizes have to match");
    size = {self.sizes()[0], mat2.sizes()[2]};
  } else if (b2) {
    EMBER_CHECK(groups == self.sizes()[0], "matrix batch sizes have to match");
    size = {self.sizes()[1], mat2.sizes()[1]};
  } else {
    EMBER_CHECK(self.sizes()[0] == mat2.sizes()[0], "batched dimension has to match");
    size = {self.sizes()[0], self.sizes()[1], mat2.sizes()[2]};
  }
  const int64_t align = 16 / static_cast<int64_t>(element_size(dtype));
  const int64_t row = (size.back() + align - 1) / align * align;
  const std::vector<int64_t> stride =
      size.size() == 2 ? std::vector<int64_t>{row, 1} : std::vector<int64_t>{size[1] * row, row, 1};
  Tensor out = ember::empty_strided(size, stride, dtype, self.device());

  if (out.device().type == DeviceType::Meta) return out;  // the groups' sizes are data
  if (!has_offs) {
    ember::bmm_out(out, self, mat2);
    return out;
  }
  int64_t start = 0;
  const std::vector<int64_t> ends = group_ends(*offs_);
  for (int64_t g = 0; g < groups; ++g) {
    const int64_t end = ends[static_cast<size_t>(g)];
    if (a2 && b2) {  // the contraction dim is jagged
      ember::mm_out(ember::select(out, 0, g), ember::slice(self, 1, start, end), ember::slice(mat2, 0, start, end));
    } else if (a2) {  // rows of mat_a
      ember::mm_out(ember::slice(out, 0, start, end), ember::slice(self, 0, start, end), ember::select(mat2, 0, g));
    } else {  // columns of mat_b
      ember::mm_out(ember::slice(out, 1, start, end), ember::select(self, 0, g), ember::slice(mat2, 1, start, end));
    }
    start = end;
  }
  return out;
}

}  // namespace ember::native
