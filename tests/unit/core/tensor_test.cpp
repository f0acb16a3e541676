#include "hone/tensor.h"

#include <cmath>

#include <gtest/gtest.h>

#include "hone/half.h"
#include "hone/shape.h"

namespace hone {
namespace {

TEST(Tensor, ZerosIsZeroFilledAndAligned) {
  Tensor t = Tensor::zeros(DType::kF32, {2, 3});
  EXPECT_EQ(t.numel(), 6);
  EXPECT_EQ(t.nbytes(), 24u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw()) % 64, 0u);
  for (float v : t.span<float>()) EXPECT_EQ(v, 0.0f);
}

TEST(Tensor, CopySharesCloneDoesNot) {
  Tensor a = Tensor::from<float>({2}, {1, 2});
  Tensor b = a;
  Tensor c = a.clone();
  a.data<float>()[0] = 5;
  EXPECT_EQ(b.data<float>()[0], 5);
  EXPECT_EQ(c.data<float>()[0], 1);
}

TEST(Tensor, AllocateRejectsNegativeAndOverflowingShapes) {
  auto neg = Tensor::allocate(DType::kF32, {2, -1});
  ASSERT_FALSE(neg);
  EXPECT_EQ(neg.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(neg.error().message().find("axis 1"), std::string::npos);
  auto huge = Tensor::allocate(DType::kF32, {1LL << 40, 1LL << 40});
  ASSERT_FALSE(huge);
  EXPECT_EQ(huge.error().code(), ErrorCode::kInvalidArgument);
}

TEST(Tensor, AdoptOwnsForeignStorageAndChecksItsSize) {
  int freed = 0;
  {
    auto* block = new float[6]{1, 2, 3, 4, 5, 6};
    std::shared_ptr<void> storage(block, [&freed](void* p) {
      delete[] static_cast<float*>(p);
      ++freed;
    });
    auto t = Tensor::adopt(DType::kF32, {2, 3}, storage, 6 * sizeof(float));
    ASSERT_TRUE(t) << t.error().to_string();
    EXPECT_TRUE(t->owns());
    EXPECT_EQ(t->raw(), block);
    EXPECT_EQ(t->data<float>()[5], 0.0f);  // zero-filled, as allocate()'s
    auto small = Tensor::adopt(DType::kF32, {2, 4}, storage, 6 * sizeof(float));
    ASSERT_FALSE(small);
    EXPECT_EQ(small.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(small.error().message().find("storage of 24 bytes"), std::string::npos)
        << small.error().message();
    storage.reset();
    EXPECT_EQ(freed, 0);  // the tensor still holds it
  }
  EXPECT_EQ(freed, 1);
  EXPECT_EQ(*Tensor::bytes_for(DType::kF16, {3, 5}), 30u);
  EXPECT_FALSE(Tensor::bytes_for(DType::kF32, {2, -1}));
}

TEST(Tensor, ReshapedKeepsBytesAndChecksCount) {
  Tensor a = Tensor::from<int32_t>({2, 3}, {0, 1, 2, 3, 4, 5});
  auto r = a.reshaped({3, 2});
  ASSERT_TRUE(r);
  EXPECT_EQ(r->data<int32_t>()[5], 5);
  EXPECT_FALSE(a.reshaped({4}));
}

TEST(Half, RoundTripsAndRoundsToNearestEven) {
  for (float f : {0.0f, 1.0f, -2.5f, 65504.0f, 6.103515625e-05f, 5.960464477539063e-08f}) {
    EXPECT_EQ(Half::from_float(f).to_float(), f) << f;
  }
  EXPECT_TRUE(std::isinf(Half::from_float(70000.0f).to_float()));
  EXPECT_TRUE(std::isnan(Half::from_float(NAN).to_float()));
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties to even (1).
  EXPECT_EQ(Half::from_float(1.0f + 0.00048828125f).to_float(), 1.0f);
  EXPECT_EQ(BFloat16::from_float(1.0f).to_float(), 1.0f);
  EXPECT_EQ(BFloat16::from_float(3.140625f).to_float(), 3.140625f);
}

TEST(Shape, SymbolicDimsBindAndPrint) {
  Shape s{Dim::symbol("batch"), 3};
  EXPECT_EQ(s.to_string(), "[batch,3]");
  EXPECT_FALSE(s.is_static());
  auto bound = s.bind({{"batch", 8}});
  ASSERT_TRUE(bound);
  EXPECT_EQ(*bound, (std::vector<int64_t>{8, 3}));
  auto missing = s.bind({});
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message().find("batch"), std::string::npos);
}

TEST(Tensor, SetElementFromDoubleConvertsLikeACast) {
  Tensor f = Tensor::zeros(DType::kF16, {2});
  tensor_set_element_from_double(f, 1, 1.5);
  EXPECT_EQ(tensor_element_as_double(f, 1), 1.5);
  Tensor i = Tensor::zeros(DType::kI32, {3});
  tensor_set_element_from_double(i, 0, -7.9);
  tensor_set_element_from_double(i, 1, std::nan(""));
  tensor_set_element_from_double(i, 2, 42);
  EXPECT_EQ(i.data<int32_t>()[0], -7);
  EXPECT_EQ(i.data<int32_t>()[1], 0);
  EXPECT_EQ(i.data<int32_t>()[2], 42);
  Tensor b = Tensor::zeros(DType::kBool, {2});
  tensor_set_element_from_double(b, 0, 0.25);
  EXPECT_TRUE(b.data<bool>()[0]);
  EXPECT_FALSE(b.data<bool>()[1]);
  Tensor u = Tensor::zeros(DType::kU64, {1});
  tensor_set_element_from_double(u, 0, 9007199254740992.0);
  EXPECT_EQ(u.data<uint64_t>()[0], uint64_t{9007199254740992});
}

}  // namespace
}  // namespace hone
