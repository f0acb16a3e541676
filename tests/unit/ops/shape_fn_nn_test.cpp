// The shape functions of ops/shape_fn_nn.h (Attention, DeformConv,
// MaxRoiPool, Col2Im, CenterCropPad, AffineGrid, GridSample, RoiAlign) over
// concrete and symbolic
// dims, and their errors.
#include "ops/shape_fn_nn.h"

#include <gtest/gtest.h>

#include "ops/shape_fn_test_util.h"

namespace hone::ops {
namespace {

using namespace shape_fn_test;  // Ints, Dims, kBatch, kSeq, fails_with

const Dim kPast = Dim::symbol("past");

TEST(ShapeFnNn, AttentionFourDimsWithPast) {
  const AttentionHeads none;
  const Dims q{kBatch, 8, kSeq, 64}, kv{kBatch, 2, kSeq, 64}, past{kBatch, 2, kPast, 64};
  EXPECT_EQ(attention_shape<Dim>(none, 0, q, kv, kv).value(), (Dims{kBatch, 8, kSeq, 64}));
  EXPECT_EQ(attention_shape<Dim>(none, 3, q, kv, kv).value(), (Dims{kBatch, 8, kSeq, kSeq}));
  // A symbolic past plus a symbolic new length: a dim named by the sum (ops/sym_int.h).
  EXPECT_EQ(attention_shape<Dim>(none, 1, q, kv, kv, &past)->at(2), Dim::symbol("(past+seq)"));
  const Ints past4{1, 2, 5, 64};
  EXPECT_EQ(attention_shape<int64_t>(none, 2, {1, 8, 3, 64}, {1, 2, 3, 64}, {1, 2, 3, 32}, &past4)
                .value(),
            (Ints{1, 2, 8, 32}));
}

TEST(ShapeFnNn, AttentionThreeDimsSplitsHeads) {
  AttentionHeads heads;
  heads.q_num_heads = 8;
  heads.kv_num_heads = 2;
  const Ints q{1, 5, 512}, kv{1, 7, 128};
  EXPECT_EQ(attention_shape<int64_t>(heads, 0, q, kv, kv).value(), (Ints{1, 5, 512}));
  EXPECT_EQ(attention_shape<int64_t>(heads, 1, q, kv, kv).value(), (Ints{1, 2, 7, 64}));
  EXPECT_EQ(attention_shape<Dim>(heads, 3, {kBatch, kSeq, 512}, {kBatch, 7, 128}, {kBatch, 7, 128})
                .value(),
            (Dims{kBatch, 8, kSeq, 7}));
  EXPECT_TRUE(fails_with(attention_shape<int64_t>(heads, 1, q, {1, 7, 127}, kv),
                         ErrorCode::kInvalidArgument,
                         "Attention: input K's last dim 127 does not divide into 2 heads"));
  EXPECT_TRUE(fails_with(attention_shape<int64_t>({}, 0, q, kv, kv), ErrorCode::kInvalidArgument,
                         "3-D inputs need attributes q_num_heads"));
  EXPECT_TRUE(fails_with(attention_shape<int64_t>(heads, 0, q, {1, 2, 7, 64}, kv),
                         ErrorCode::kInvalidArgument, "must all be 3-D or all 4-D"));
}

TEST(ShapeFnNn, DeformConvAndMaxRoiPool) {
  EXPECT_EQ(deform_conv_shape<Dim>({kBatch, 3, 32, 32}, {8, 3, 3, 3}, {kBatch, 18, 30, 30}).value(),
            (Dims{kBatch, 8, 30, 30}));
  EXPECT_TRUE(fails_with(deform_conv_shape<int64_t>({1, 3, 8, 8}, {8, 3, 3, 3}, {1, 18, 6}),
                         ErrorCode::kInvalidArgument, "DeformConv: input X [1,3,8,8]"));
  EXPECT_EQ(max_roi_pool_shape<Dim>({kBatch, 16, 32, 32}, {kSeq, 5}, {7, 7}).value(),
            (Dims{kSeq, 16, 7, 7}));
  EXPECT_TRUE(fails_with(max_roi_pool_shape<int64_t>({1, 16, 32}, {4, 5}, {7, 7}),
                         ErrorCode::kInvalidArgument, "MaxRoiPool: input X [1,16,32] must be 4-D"));
}

TEST(ShapeFnNn, Col2ImDividesChannelsByTheBlock) {
  EXPECT_EQ(col2im_shape<int64_t>({1, 12, 9}, {4, 4}, {2, 2}).value(), (Ints{1, 3, 4, 4}));
  EXPECT_EQ(col2im_shape<Dim>({kBatch, 12, kSeq}, {4, 4}, {2, 2}).value(), (Dims{kBatch, 3, 4, 4}));
  EXPECT_TRUE(col2im_shape<Dim>({kBatch, kSeq, 9}, {4, 4}, {2, 2})->at(1).is_unknown());
  EXPECT_TRUE(fails_with(col2im_shape<int64_t>({1, 10, 9}, {4, 4}, {2, 2}),
                         ErrorCode::kInvalidArgument,
                         "Col2Im: dim 1 of input 'input' [1,10,9] does not divide by 4"));
  EXPECT_TRUE(fails_with(col2im_shape<int64_t>({1, 12, 9}, {4, 4}, {2}),
                         ErrorCode::kInvalidArgument, "of one length"));
}

TEST(ShapeFnNn, CenterCropPadAndAffineGrid) {
  EXPECT_EQ(center_crop_pad_shape<Dim>({kBatch, 20, 30}, {10, 40}, {-2, -1}).value(),
            (Dims{kBatch, 10, 40}));
  EXPECT_EQ(center_crop_pad_shape<int64_t>({20, 30}, {10, 40}, {}).value(), (Ints{10, 40}));
  EXPECT_TRUE(fails_with(center_crop_pad_shape<int64_t>({20, 30}, {10}, {}),
                         ErrorCode::kInvalidArgument, "CenterCropPad: input shape [10]"));
  EXPECT_TRUE(fails_with(center_crop_pad_shape<int64_t>({20, 30}, {10}, {2}),
                         ErrorCode::kInvalidArgument, "CenterCropPad: axes 2 is out of range"));
  EXPECT_EQ(affine_grid_shape<Dim>({2, 3, 16, 24}).value(), (Dims{2, 16, 24, 2}));
  EXPECT_EQ(affine_grid_shape<int64_t>({2, 3, 4, 16, 24}).value(), (Ints{2, 4, 16, 24, 3}));
  EXPECT_TRUE(fails_with(affine_grid_shape<int64_t>({2, 3}), ErrorCode::kInvalidArgument,
                         "AffineGrid: input size [2,3] must have 4 or 5 values"));
}

TEST(ShapeFnNn, GridSampleTakesTheGridsPointsAndRoiAlignTheRois) {
  // RAFT's lookup: [N*H*W, 1, h, w] sampled at [N*H*W, 9, 9, 2].
  EXPECT_EQ(grid_sample_shape<Dim>({kBatch, 1, 16, 16}, {kBatch, 9, 9, 2}).value(),
            (Dims{kBatch, 1, 9, 9}));
  EXPECT_EQ(grid_sample_shape<int64_t>({2, 3, 4, 5, 6}, {2, 7, 8, 9, 3}).value(),
            (Ints{2, 3, 7, 8, 9}));
  EXPECT_TRUE(fails_with(grid_sample_shape<int64_t>({2, 3, 4, 5}, {2, 7, 8, 3}),
                         ErrorCode::kInvalidArgument,
                         "GridSample: grid [2,7,8,3] must be [N, out..., 2] for X [2,3,4,5]"));
  EXPECT_TRUE(fails_with(grid_sample_shape<int64_t>({2, 3, 4, 5}, {1, 7, 8, 2}),
                         ErrorCode::kInvalidArgument, "GridSample: grid [1,7,8,2]"));
  EXPECT_EQ(roi_align_shape<Dim>({kBatch, 16, 20, 20}, {kSeq, 4}, 7, 5).value(),
            (Dims{kSeq, 16, 7, 5}));
  EXPECT_TRUE(fails_with(roi_align_shape<int64_t>({1, 16, 20}, {3, 4}, 7, 7),
                         ErrorCode::kInvalidArgument, "RoiAlign: input X [1,16,20] must be 4-D"));
}

}  // namespace
}  // namespace hone::ops
