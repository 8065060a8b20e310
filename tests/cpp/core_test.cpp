// Core pieces: dtypes, promotion, shapes, storage sharing, half conversions.
#include <gtest/gtest.h>

#include <cmath>

#include "ember/core/DimVector.h"
#include "ember/core/Half.h"
#include "ember/core/ScalarType.h"
#include "ember/core/TensorImpl.h"

using namespace ember;

TEST(ScalarType, SizesAndNames) {
  EXPECT_EQ(element_size(ScalarType::Float), 4u);
  EXPECT_EQ(element_size(ScalarType::BFloat16), 2u);
  EXPECT_EQ(element_size(ScalarType::Long), 8u);
  EXPECT_EQ(scalar_type_name(ScalarType::Half), "float16");
  EXPECT_EQ(legacy_type_name(ScalarType::Float), "FloatTensor");
}

TEST(ScalarType, PromotionMatchesPyTorch) {
  EXPECT_EQ(promote_types(ScalarType::Byte, ScalarType::Char), ScalarType::Short);
  EXPECT_EQ(promote_types(ScalarType::Bool, ScalarType::Int), ScalarType::Int);
  EXPECT_EQ(promote_types(ScalarType::Half, ScalarType::BFloat16), ScalarType::Float);
  EXPECT_EQ(promote_types(ScalarType::Long, ScalarType::Half), ScalarType::Half);
  EXPECT_EQ(promote_types(ScalarType::Float, ScalarType::Double), ScalarType::Double);
  for (int a = 0; a < kNumScalarTypes; ++a) {
    for (int b = 0; b < kNumScalarTypes; ++b) {
      EXPECT_EQ(promote_types(ScalarType(a), ScalarType(b)), promote_types(ScalarType(b), ScalarType(a)));
    }
  }
}

TEST(Half, RoundTripsAndRounds) {
  for (float f : {0.f, 1.f, -2.5f, 65504.f, 6.1035156e-05f, 5.9604645e-08f}) {
    EXPECT_EQ(static_cast<float>(Half(f)), f);
  }
  EXPECT_TRUE(std::isinf(static_cast<float>(Half(70000.f))));
  EXPECT_TRUE(std::isnan(static_cast<float>(Half(NAN))));
  EXPECT_EQ(static_cast<float>(Half(1.0009765625f + 0.0004f)), 1.0009765625f);
  EXPECT_EQ(static_cast<float>(BFloat16(1.f)), 1.f);
  EXPECT_EQ(static_cast<float>(BFloat16(3.1415926f)), 3.140625f);
}

TEST(DimVector, InlineAndHeap) {
  DimVector v;
  for (int i = 0; i < 12; ++i) v.push_back(i);
  ASSERT_EQ(v.size(), 12u);
  EXPECT_EQ(v[11], 11);
  DimVector w = v;
  w.insert(0, -1);
  EXPECT_EQ(w[0], -1);
  EXPECT_EQ(w[12], 11);
  w.erase(0);
  EXPECT_TRUE(IntArrayRef(w).equals(v));
}

TEST(TensorImpl, StridesAndContiguity) {
  auto storage = make_intrusive<StorageImpl>(24 * 4, get_allocator(DeviceType::CPU));
  TensorImpl t(storage, ScalarType::Float, {2, 3, 4});
  EXPECT_TRUE(IntArrayRef(t.strides()).equals({12, 4, 1}));
  EXPECT_EQ(t.numel(), 24);
  EXPECT_TRUE(t.is_contiguous());
  t.set_sizes_and_strides({4, 3, 2}, {1, 4, 12}, 0);
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_EQ(t.version(), 0u);
  t.bump_version();
  EXPECT_EQ(t.version(), 1u);
}

TEST(Device, Parse) {
  EXPECT_EQ(Device::parse("cpu"), Device(DeviceType::CPU));
  EXPECT_EQ(Device::parse("cuda:1"), Device(DeviceType::CUDA, 1));
  EXPECT_THROW(Device::parse("tpu"), Error);
  EXPECT_THROW(Device::parse("cuda:x"), Error);
  EXPECT_EQ(Device::parse("meta"), Device(DeviceType::Meta));
  EXPECT_TRUE(Device::parse("meta:0").is_meta());
  EXPECT_EQ(Device(DeviceType::Meta).str(), "meta");
}

TEST(Allocator, MetaStorageHasSizeButNoData) {
  auto storage = make_intrusive<StorageImpl>(24 * 4, get_allocator(DeviceType::Meta));
  EXPECT_EQ(storage->nbytes(), 96u);
  EXPECT_EQ(storage->data(), nullptr);
  EXPECT_TRUE(storage->device().is_meta());
  storage->resize(200);
  EXPECT_EQ(storage->nbytes(), 200u);
  EXPECT_EQ(storage->data(), nullptr);
}
