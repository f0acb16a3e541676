// ops/gather.h: where GatherND's slices start for index tuples known before
// the run (gather_nd_offsets over gather_nd_layout), negatives counted from
// the end, and the index out of range named with its tuple and position.
#include "ops/gather.h"

#include <gtest/gtest.h>

namespace hone::ops {
namespace {

TEST(GatherNdOffsets, TuplesStartSlicesPerBatchRow) {
  // Data [2, 3, 4], whole rows by (i, j) tuples: slices of 4.
  auto l = gather_nd_layout({2, 3, 4}, {3, 2}, 0);
  ASSERT_TRUE(l) << l.error().to_string();
  auto off = gather_nd_offsets(*l, {1, 0, 0, 2, -1, -3});
  ASSERT_TRUE(off) << off.error().to_string();
  EXPECT_EQ(*off, (std::vector<int64_t>{12, 8, 12}));
  // batch_dims 1: tuple t of row b counts along axis 1 from b's block of 12.
  l = gather_nd_layout({2, 3, 4}, {2, 2, 1}, 1);
  ASSERT_TRUE(l);
  EXPECT_EQ(l->out, (std::vector<int64_t>{2, 2, 4}));
  off = gather_nd_offsets(*l, {-1, 0, 2, -3});
  ASSERT_TRUE(off);
  EXPECT_EQ(*off, (std::vector<int64_t>{8, 0, 20, 12}));
  // Single elements (k covers every axis after the batch ones).
  l = gather_nd_layout({2, 3, 4}, {2, 1, 2}, 1);
  ASSERT_TRUE(l);
  off = gather_nd_offsets(*l, {2, 3, -3, -4});
  ASSERT_TRUE(off);
  EXPECT_EQ(*off, (std::vector<int64_t>{11, 12}));
}

TEST(GatherNdOffsets, AnIndexOutOfRangeIsNamed) {
  auto l = gather_nd_layout({2, 3, 4}, {2, 2}, 0);
  ASSERT_TRUE(l);
  auto off = gather_nd_offsets(*l, {1, 2, 0, 3});
  ASSERT_FALSE(off);
  EXPECT_EQ(off.error().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(off.error().message().find("GatherND index 3 (tuple 1, position 1) is out of range "
                                       "for dim 3"),
            std::string::npos)
      << off.error().message();
  EXPECT_FALSE(gather_nd_offsets(*l, {0, 0, -4, 0}));
  EXPECT_FALSE(gather_nd_offsets(*l, {0, 0, 1}));  // short
}

}  // namespace
}  // namespace hone::ops
