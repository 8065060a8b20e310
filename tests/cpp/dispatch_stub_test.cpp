// A stub's kernel by the device of its tensor arguments (Note [Stub device]),
// and the missing-kernel error of host-only functions, without a GPU: a
// tensor that only claims to live on CUDA stands in (no kernel reads it).
#include <gtest/gtest.h>

#include <string>

#include "ember/core/Storage.h"
#include "ember/ops/Dispatch.h"
#include "ember/ops/DispatchStub.h"
#include "ember/ops/Ops.h"

using namespace ember;

namespace {

using ProbeFn = std::string (*)(const TensorBase& a, const TensorBase& b, int tag);

std::string cpu_probe(const TensorBase&, const TensorBase&, int tag) { return "cpu" + std::to_string(tag); }
std::string cuda_probe(const TensorBase&, const TensorBase&, int tag) { return "cuda" + std::to_string(tag); }

DispatchStub<ProbeFn> probe_stub(bool with_cuda) {
  DispatchStub<ProbeFn> stub;
  stub.table[static_cast<int>(CpuCapability::Default)] = &cpu_probe;
  if (with_cuda) stub.cuda = &cuda_probe;
  return stub;
}

TensorBase on_device(DeviceType device) {
  Storage storage = make_intrusive<StorageImpl>(DataPtr(nullptr, nullptr, nullptr, Device(device)), 0);
  return TensorBase(make_intrusive<TensorImpl>(storage, ScalarType::Float, IntArrayRef{0}));
}

}  // namespace

TEST(DispatchStub, CpuTensorsRunTheCpuKernel) {
  const auto stub = probe_stub(true);
  EXPECT_EQ(stub(on_device(DeviceType::CPU), on_device(DeviceType::CPU), 1), "cpu1");
  // no defined tensor: the CPU
  EXPECT_EQ(stub(TensorBase(), TensorBase(), 2), "cpu2");
}

TEST(DispatchStub, CudaTensorsRunTheCudaKernel) {
  const auto stub = probe_stub(true);
  EXPECT_EQ(stub(on_device(DeviceType::CUDA), on_device(DeviceType::CUDA), 3), "cuda3");
  // the first defined tensor decides
  EXPECT_EQ(stub(TensorBase(), on_device(DeviceType::CUDA), 4), "cuda4");
  EXPECT_EQ(stub(on_device(DeviceType::CUDA), on_device(DeviceType::CPU), 5), "cuda5");
  EXPECT_EQ(stub(on_device(DeviceType::CPU), on_device(DeviceType::CUDA), 6), "cpu6");
}

TEST(DispatchStub, DeviceWithoutKernelRaises) {
  const auto stub = probe_stub(false);
  EXPECT_THROW(stub(on_device(DeviceType::CUDA), TensorBase(), 7), Error);
  EXPECT_THROW(stub(on_device(DeviceType::Meta), TensorBase(), 8), Error);
  // the explicit CPU kernel
  EXPECT_EQ(stub.get()(on_device(DeviceType::CUDA), TensorBase(), 9), "cpu9");
}

TEST(Dispatch, CheckCpuOnlyNamesTheOperator) {
  const TensorBase cpu = on_device(DeviceType::CPU), cuda = on_device(DeviceType::CUDA);
  EXPECT_NO_THROW(dispatch::check_cpu_only("aten::histc", cpu, TensorBase(), on_device(DeviceType::Meta)));
  try {
    dispatch::check_cpu_only("aten::histc", cpu, cuda);
    FAIL() << "expected the missing-kernel error";
  } catch (const Error& e) {
    // A CUDA build raises PyTorch's NotImplementedError; a CPU build says it has no CUDA.
    EXPECT_NE(std::string(e.what()).find("Could not run 'aten::histc'"), std::string::npos) << e.what();
  }
}

TEST(Dispatch, MissingKernelNamesTheOperatorOnce) {
  // schema names ("neg") and names with the namespace ("aten::neg") give the same words
  for (const char* op : {"neg", "aten::neg"}) {
    try {
      dispatch::missing_kernel(op, DeviceType::Meta);
      FAIL() << "expected the missing-kernel error";
    } catch (const NotImplementedError& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.rfind("aten::neg: attempted to run this operator with Meta tensors", 0), 0u) << what;
    }
  }
}
