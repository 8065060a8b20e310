// Views, in-place operations on views (CopySlices) and advanced indexing
// through the C++ API.
#include <gtest/gtest.h>

#include "ember/autograd/Autograd.h"
#include "ember/autograd/Engine.h"
#include "ember/ops/Ops.h"

using namespace ember;

TEST(Views, ShareStorageAndVersion) {
  Tensor x = from_vector({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor row = x.select(0, 1);
  Tensor col = x.t().select(0, 2);
  EXPECT_EQ(row.storage_offset(), 3);
  EXPECT_TRUE(col.strides().equals({3}));
  EXPECT_TRUE(autograd::is_view(row));
  EXPECT_TRUE(autograd::view_base(col).is_same(x));
  row.fill_(0);
  EXPECT_EQ(to_vector(x), (std::vector<double>{1, 2, 3, 0, 0, 0}));
  EXPECT_EQ(x.unsafeGetTensorImpl()->version(), col.unsafeGetTensorImpl()->version());
}

TEST(Views, InPlaceOnViewRewritesBaseHistory) {
  Tensor x = from_vector({1, 2, 3, 4}, {2, 2}, ScalarType::Double);
  x.set_requires_grad(true);
  Tensor y = x * Scalar(3.0);
  Tensor v = y.select(0, 0);
  v.mul_(from_vector({10, 100}, {2}, ScalarType::Double));
  EXPECT_EQ(autograd::grad_fn(y)->name(), "torch::autograd::CopySlices");
  EXPECT_EQ(autograd::grad_fn(v)->name(), "AsStridedBackward0");
  y.sum().backward();
  EXPECT_EQ(to_vector(x.grad()), (std::vector<double>{30, 300, 3, 3}));
}

TEST(Views, InPlaceOnViewOfLeafThrows) {
  Tensor x = from_vector({1, 2}, {2}, ScalarType::Float);
  x.set_requires_grad(true);
  try {
    x.select(0, 0).zero_();
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "a view of a leaf Variable that requires grad is being used in an in-place operation.");
  }
}

TEST(Views, SplitOutputsMayNotBeModified) {
  Tensor x = from_vector({1, 2, 3, 4}, {4}, ScalarType::Float);
  x.set_requires_grad(true);
  std::vector<Tensor> parts = (x * Scalar(1.0)).split(2);
  EXPECT_THROW(parts[0].zero_(), Error);
}

TEST(Indexing, GatherAndPut) {
  Tensor x = from_vector({0, 1, 2, 3, 4, 5}, {3, 2});
  Tensor idx = from_vector({2, 0, 2}, {3}, ScalarType::Long);
  Tensor rows = index(x, {idx});
  EXPECT_TRUE(rows.sizes().equals({3, 2}));
  EXPECT_EQ(to_vector(rows), (std::vector<double>{4, 5, 0, 1, 4, 5}));
  Tensor cols = index(x, {std::nullopt, from_vector({1}, {1}, ScalarType::Long)});
  EXPECT_EQ(to_vector(cols), (std::vector<double>{1, 3, 5}));
  Tensor acc = zeros({3});
  acc.index_put_({idx}, from_vector({1, 10, 100}, {3}), true);
  EXPECT_EQ(to_vector(acc), (std::vector<double>{10, 0, 101}));
  EXPECT_THROW(index(x, {from_vector({3}, {1}, ScalarType::Long)}), IndexError);
}

TEST(Indexing, MaskAndSelect) {
  Tensor x = from_vector({1, 2, 3, 4}, {2, 2});
  Tensor mask = from_vector({1, 0, 0, 1}, {2, 2}, ScalarType::Bool);
  EXPECT_EQ(to_vector(index(x, {mask})), (std::vector<double>{1, 4}));
  EXPECT_EQ(to_vector(x.masked_fill(mask, Scalar(0))), (std::vector<double>{0, 2, 3, 0}));
  EXPECT_EQ(to_vector(x.index_select(1, from_vector({1, 1}, {2}, ScalarType::Long))),
            (std::vector<double>{2, 2, 4, 4}));
}
