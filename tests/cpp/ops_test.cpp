// Operators and autograd through the C++ API.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ember/autograd/Engine.h"
#include "ember/ops/Ops.h"
#include "ember/ops/TensorIterator.h"

using namespace ember;

TEST(Ops, BroadcastAdd) {
  Tensor a = from_vector({1, 2, 3}, {3});
  Tensor b = from_vector({10, 20}, {2, 1});
  Tensor c = add(a, b, 2);
  EXPECT_TRUE(c.sizes().equals({2, 3}));
  EXPECT_EQ(to_vector(c), (std::vector<double>{21, 22, 23, 41, 42, 43}));
}

TEST(Ops, PromotionIntPlusFloat) {
  Tensor a = from_vector({1, 2}, {2}, ScalarType::Long);
  Tensor b = from_vector({0.5, 0.25}, {2}, ScalarType::Float);
  Tensor c = a * b;
  EXPECT_EQ(c.dtype(), ScalarType::Float);
  EXPECT_EQ(to_vector(c), (std::vector<double>{0.5, 0.5}));
}

TEST(Ops, SizeMismatchMessage) {
  Tensor a = ones({3});
  Tensor b = ones({4});
  try {
    add(a, b);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 0");
  }
}

TEST(Ops, SumDims) {
  Tensor x = from_vector({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_EQ(to_vector(x.sum()), std::vector<double>{21});
  EXPECT_EQ(to_vector(x.sum(std::vector<int64_t>{0})), (std::vector<double>{5, 7, 9}));
  Tensor s = x.sum(std::vector<int64_t>{1}, /*keepdim=*/true);
  EXPECT_TRUE(s.sizes().equals({2, 1}));
  EXPECT_EQ(to_vector(s), (std::vector<double>{6, 15}));
  EXPECT_EQ(x.to(ScalarType::Long).sum().dtype(), ScalarType::Long);
}

TEST(Ops, NonContiguousInput) {
  Tensor x = from_vector({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor t = x.permute({1, 0});
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_EQ(to_vector(t + t), (std::vector<double>{2, 8, 4, 10, 6, 12}));
}

TEST(Autograd, AddMulSumGradients) {
  Tensor a = from_vector({1, 2, 3}, {3});
  Tensor b = from_vector({4, 5, 6}, {3});
  a.set_requires_grad(true);
  b.set_requires_grad(true);
  Tensor loss = (a * b + a).sum();
  loss.backward();
  EXPECT_EQ(to_vector(a.grad()), (std::vector<double>{5, 6, 7}));
  EXPECT_EQ(to_vector(b.grad()), (std::vector<double>{1, 2, 3}));
}

TEST(Autograd, BroadcastGradientIsReduced) {
  Tensor a = from_vector({1, 2, 3}, {3});
  Tensor b = from_vector({1, 1}, {2, 1});
  a.set_requires_grad(true);
  b.set_requires_grad(true);
  (a * b).sum().backward();
  EXPECT_EQ(to_vector(a.grad()), (std::vector<double>{2, 2, 2}));
  EXPECT_TRUE(b.grad().sizes().equals({2, 1}));
  EXPECT_EQ(to_vector(b.grad()), (std::vector<double>{6, 6}));
}

TEST(Autograd, SecondBackwardThroughFreedGraphThrows) {
  Tensor a = from_vector({1, 2}, {2});
  a.set_requires_grad(true);
  Tensor y = (a * a).sum();
  y.backward();
  EXPECT_THROW(y.backward(), Error);
}

TEST(Autograd, InPlaceOnLeafThrows) {
  Tensor a = ones({2});
  a.set_requires_grad(true);
  EXPECT_THROW(a.add_(ones({2})), Error);
}

// ---- the common device of an elementwise operator ------------------------------------

namespace {
// A tensor that says it lives on cuda:0 (a distinct, never-read address): the
// device check runs before any kernel, so it needs no GPU.
Tensor on_cuda_without_data(std::vector<int64_t> sizes, uintptr_t address) {
  const DimVector strides = contiguous_strides(IntArrayRef(sizes));
  int64_t numel = 1;
  for (int64_t s : sizes) numel *= s;
  auto storage = make_intrusive<StorageImpl>(
      DataPtr(reinterpret_cast<void*>(address), nullptr, nullptr, Device(DeviceType::CUDA, 0)),
      static_cast<size_t>(numel) * sizeof(float));
  return Tensor(make_intrusive<TensorImpl>(Storage(std::move(storage)), ScalarType::Float, IntArrayRef(sizes),
                                           IntArrayRef(strides), 0));
}

std::string device_error(const Tensor& a, const Tensor& b, Tensor out) {
  try {
    TensorIterator::binary_op(out, a, b);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(TensorIteratorDevice, CpuScalarIsANumberOfACudaOperator) {
  // As PyTorch's TensorIteratorTest.CPUScalar: the result and x on CUDA, the 0-dim y stays on the CPU.
  Tensor x = on_cuda_without_data({2, 3}, 0x1000);
  Tensor out = on_cuda_without_data({2, 3}, 0x2000);
  Tensor y = from_vector({1.5}, {});
  for (bool scalar_first : {false, true}) {
    TensorIterator it = scalar_first ? TensorIterator::binary_op(out, y, x) : TensorIterator::binary_op(out, x, y);
    EXPECT_TRUE(it.output().is_cuda());
    EXPECT_TRUE(it.operand(scalar_first ? 2 : 1).is_cuda());
    EXPECT_TRUE(it.operand(scalar_first ? 1 : 2).is_cpu());
  }
}

TEST(TensorIteratorDevice, CpuTensorWithDimsIsRefusedCommonDeviceFirst) {
  const std::string want =
      "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!";
  Tensor x = on_cuda_without_data({2}, 0x1000);
  Tensor out = on_cuda_without_data({2}, 0x2000);
  Tensor y = from_vector({1.0, 2.0}, {2});
  EXPECT_EQ(device_error(x, y, out), want);
  EXPECT_EQ(device_error(y, x, out), want);
}

TEST(TensorIteratorDevice, CpuScalarFirstRunsTheKernelOfTheResultsDevice) {
  // The first operand is a 0-dim CPU tensor, the result on CUDA: the CUDA kernel is asked
  // for (here, without the CUDA library, the missing-kernel error), never the CPU's.
  Tensor x = on_cuda_without_data({2, 3}, 0x1000);
  Tensor out = on_cuda_without_data({2, 3}, 0x2000);
  Tensor y = from_vector({1.5}, {});
  try {
    ember::add_out(out, y, x);
    FAIL() << "a CUDA kernel ran without a GPU";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("CUDA"), std::string::npos) << e.what();
  }
}
