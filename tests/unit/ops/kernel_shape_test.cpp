// ops::check_kernel_shape: a Conv's or ConvTranspose's kernel_shape against
// its weights, the one check blas and onednn refuse such a node with.
#include "ops/kernel_shape.h"

#include <gtest/gtest.h>

namespace hone::ops {
namespace {

TEST(KernelShape, UnsetOrEqualToTheWeightsSpatialDimsAgrees) {
  EXPECT_TRUE(check_kernel_shape({}, {8, 3, 5, 5}));
  EXPECT_TRUE(check_kernel_shape({}, {}));
  EXPECT_TRUE(check_kernel_shape({5, 5}, {8, 3, 5, 5}));
  EXPECT_TRUE(check_kernel_shape({3}, {4, 2, 3}));
}

TEST(KernelShape, AnyOtherKernelIsRefusedNamingBoth) {
  const Result<void> r = check_kernel_shape({3, 3}, {8, 3, 5, 5});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(r.error().message(), "kernel_shape [3,3] disagrees with the weights [8,3,5,5]");
  EXPECT_FALSE(check_kernel_shape({5}, {8, 3, 5, 5}));  // too few dims
  EXPECT_FALSE(check_kernel_shape({5, 5, 5}, {8, 3, 5, 5}));
  EXPECT_FALSE(check_kernel_shape({5}, {8}));  // weights without spatial dims
}

}  // namespace
}  // namespace hone::ops
