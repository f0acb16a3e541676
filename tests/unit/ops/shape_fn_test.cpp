// The shared shape functions (ops/shape_fn.h) over concrete and symbolic dims.
#include "ops/shape_fn.h"

#include <gtest/gtest.h>

#include "ops/shape_fn_test_util.h"

namespace hone::ops {
namespace {

using namespace shape_fn_test;  // Ints, Dims, kBatch, kSeq, fails_with

TEST(ShapeFn, BroadcastConcreteOnesAndLowerRanks) {
  EXPECT_EQ(broadcast_shape<int64_t>("Add", {{2, 1, 3}, {4, 1}}).value(), (Ints{2, 4, 3}));
  EXPECT_EQ(broadcast_shape<int64_t>("Where", {{3}, {1, 3}, {2, 1}}).value(), (Ints{2, 3}));
  EXPECT_EQ(broadcast_shape<int64_t>("Mul", {{}, {5}}).value(), (Ints{5}));
}

TEST(ShapeFn, BroadcastZeroDimsKeepZeroAgainstOne) {
  EXPECT_EQ(broadcast_shape<int64_t>("Add", {{0, 3}, {1, 3}}).value(), (Ints{0, 3}));
  EXPECT_EQ(broadcast_shape<int64_t>("Add", {{1}, {0}}).value(), (Ints{0}));
  // 0 is not 1: it does not stretch to 3.
  EXPECT_TRUE(fails_with(broadcast_shape<int64_t>("Sub", {{0}, {3}}), ErrorCode::kInvalidArgument,
                         "Sub: input shapes [0] [3] do not broadcast"));
}

TEST(ShapeFn, BroadcastSymbolicKeepsSymbolsAndUnknownsWhatCannotBeCompared) {
  EXPECT_EQ(broadcast_shape<Dim>("Add", {{kBatch, 3}, {1, 3}}).value(), (Dims{kBatch, 3}));
  EXPECT_EQ(broadcast_shape<Dim>("Add", {{kBatch, 1}, {kBatch, kSeq}}).value(),
            (Dims{kBatch, kSeq}));
  const Dims mixed = broadcast_shape<Dim>("Add", {{kBatch, 4}, {kSeq, 4}}).value();
  EXPECT_TRUE(mixed[0].is_unknown());
  EXPECT_EQ(mixed[1], Dim(4));
  EXPECT_TRUE(fails_with(broadcast_shape<Dim>("Mul", {{kBatch, 2}, {kBatch, 3}}),
                         ErrorCode::kInvalidArgument, "Mul: input shapes [batch,2] [batch,3]"));
}

TEST(ShapeFn, MatMulPromotesOneDimOperandsAndBroadcastsBatches) {
  EXPECT_EQ(matmul_shape<int64_t>({2, 1, 3, 4}, {5, 4, 6}).value(), (Ints{2, 5, 3, 6}));
  EXPECT_EQ(matmul_shape<int64_t>({4}, {4, 5}).value(), (Ints{5}));
  EXPECT_EQ(matmul_shape<int64_t>({3, 4}, {4}).value(), (Ints{3}));
  EXPECT_EQ(matmul_shape<int64_t>({4}, {4}).value(), (Ints{}));
  EXPECT_EQ(matmul_shape<Dim>({kBatch, kSeq, 64}, {64, 32}).value(), (Dims{kBatch, kSeq, 32}));
  // An unknown K is not a clash for the passes.
  EXPECT_EQ(matmul_shape<Dim>({kBatch, Dim::unknown()}, {64, 32}).value(), (Dims{kBatch, 32}));
}

TEST(ShapeFn, MatMulErrorsNameTheOpAndOperand) {
  EXPECT_TRUE(fails_with(matmul_shape<int64_t>({3, 4}, {5, 6}), ErrorCode::kInvalidArgument,
                         "MatMul: K dims 4 and 5 differ"));
  EXPECT_TRUE(fails_with(matmul_shape<int64_t>({}, {5, 6}), ErrorCode::kInvalidArgument,
                         "MatMul: input A is a scalar"));
  EXPECT_TRUE(fails_with(matmul_shape<int64_t>({2, 3, 4}, {3, 4, 5}), ErrorCode::kInvalidArgument,
                         "MatMul: input shapes [2] [3] do not broadcast"));
}

TEST(ShapeFn, GemmTransposesAndChecksC) {
  const GemmAttrs plain;
  GemmAttrs both;
  both.trans_a = both.trans_b = true;
  EXPECT_EQ(gemm_shape<int64_t>(plain, {3, 4}, {4, 5}).value(), (Ints{3, 5}));
  EXPECT_EQ(gemm_shape<int64_t>(both, {4, 3}, {5, 4}).value(), (Ints{3, 5}));
  const Ints row{5}, col{3, 1}, bad{2, 5}, too_long{1, 3, 5};
  EXPECT_TRUE(gemm_shape<int64_t>(plain, {3, 4}, {4, 5}, &row).has_value());
  EXPECT_TRUE(gemm_shape<int64_t>(plain, {3, 4}, {4, 5}, &col).has_value());
  EXPECT_TRUE(fails_with(gemm_shape<int64_t>(plain, {3, 4}, {4, 5}, &bad),
                         ErrorCode::kInvalidArgument, "Gemm: input C [2,5] does not broadcast"));
  EXPECT_TRUE(fails_with(gemm_shape<int64_t>(plain, {3, 4}, {4, 5}, &too_long),
                         ErrorCode::kInvalidArgument, "input C [1,3,5]"));
  EXPECT_TRUE(fails_with(gemm_shape<int64_t>(plain, {3, 4}, {5, 4}), ErrorCode::kInvalidArgument,
                         "Gemm: K dims 4 and 5 differ"));
  EXPECT_TRUE(fails_with(gemm_shape<int64_t>(plain, {3, 4, 1}, {4, 5}), ErrorCode::kInvalidArgument,
                         "must be 2-D"));
  const Dims c{kBatch, 1};
  EXPECT_EQ(gemm_shape<Dim>(plain, {kBatch, 8}, {8, 16}, &c).value(), (Dims{kBatch, 16}));
}

TEST(ShapeFn, BroadcastsToIsOneWay) {
  EXPECT_TRUE(check_broadcasts_to<int64_t>("PRelu", "slope", {3, 1, 1}, {2, 3, 4, 4}).has_value());
  EXPECT_TRUE(fails_with(check_broadcasts_to<int64_t>("PRelu", "slope", {2, 3}, {3}),
                         ErrorCode::kInvalidArgument, "PRelu: slope [2,3] does not broadcast"));
  // The input's 1 does not stretch to the slope's 3: that would grow the output.
  EXPECT_FALSE(check_broadcasts_to<int64_t>("PRelu", "slope", {3}, {2, 1}).has_value());
}

TEST(ShapeFn, TransposePermutesAnyDims) {
  const Ints perm{2, 0, 1};
  EXPECT_EQ(transpose_shape<int64_t>({2, 3, 4}, perm), (Ints{4, 2, 3}));
  EXPECT_EQ(transpose_shape<Dim>({kBatch, kSeq, 8}, perm), (Dims{8, kBatch, kSeq}));
}

Node node(const std::string& op, std::map<std::string, Attribute> attrs = {}) {
  Node n;
  n.op_type = op;
  n.attrs = std::move(attrs);
  return n;
}

TEST(ShapeFn, ConvWindowsWithDilationStridesAndSameUpper) {
  const Node dilated = node("Conv", {{"dilations", Ints{2, 2}}});
  EXPECT_EQ(conv_shape<int64_t>(dilated, {}, {1, 3, 32, 32}, {8, 3, 3, 3}).value(),
            (Ints{1, 8, 28, 28}));
  const Node same =
      node("Conv", {{"auto_pad", std::string("SAME_UPPER")}, {"strides", Ints{2, 2}}});
  EXPECT_EQ(conv_shape<int64_t>(same, {}, {1, 3, 7, 8}, {4, 3, 3, 3}).value(), (Ints{1, 4, 4, 4}));
  // 1-D, with pads.
  const Node padded = node("Conv", {{"pads", Ints{1, 1}}});
  EXPECT_EQ(conv_shape<int64_t>(padded, {}, {2, 3, 10}, {5, 3, 3}).value(), (Ints{2, 5, 10}));
}

TEST(ShapeFn, ConvSymbolicSpatialDimsAreNamedByTheirWindowAndTheOthersAreRight) {
  const Node conv = node("Conv");
  const Dims out = conv_shape<Dim>(conv, {}, {kBatch, 3, kSeq, 32}, {8, 3, 3, 3}).value();
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0], kBatch);
  EXPECT_EQ(out[1], Dim(8));
  EXPECT_EQ(out[2], Dim::symbol("(seq-2)"));
  EXPECT_EQ(out[3], Dim(30));
  // Whisper's second conv (k3, pad 1, stride 2) and wav2vec2's first (k10, stride 5):
  // (in + pads - window) / stride + 1, the form aot's window_of writes too.
  const Node whisper = node("Conv", {{"pads", Ints{1, 1}}, {"strides", Ints{2}}});
  EXPECT_EQ(conv_shape<Dim>(whisper, {}, {kBatch, 8, kSeq}, {8, 8, 3}).value()[2],
            Dim::symbol("(((seq-1)/2)+1)"));
  const Node wav2vec = node("Conv", {{"strides", Ints{5}}});
  // (seq-10)/5 + 1 is (seq/5) - 1: the multiple of 5 leaves the floor quotient.
  EXPECT_EQ(conv_shape<Dim>(wav2vec, {}, {kBatch, 1, kSeq}, {8, 1, 10}).value()[2],
            Dim::symbol("((seq/5)-1)"));
  // The same conv at a number agrees with the expression at that number.
  EXPECT_EQ(sym_eval(Dim::symbol("(((seq-10)/5)+1)"), {{"seq", 400}}).value(),
            conv_shape<int64_t>(wav2vec, {}, {1, 1, 400}, {8, 1, 10}).value()[2]);
  // SAME: ceil(in / stride); a strided ceil_mode pool and an unknown dim stay unknown.
  const Node same = node("Conv", {{"auto_pad", std::string("SAME_UPPER")}, {"strides", Ints{2}}});
  EXPECT_EQ(conv_shape<Dim>(same, {}, {kBatch, 3, kSeq}, {4, 3, 3}).value()[2],
            Dim::symbol("((seq+1)/2)"));
  PoolAttrs ceil;
  ceil.kernel_shape = {2};
  ceil.ceil_mode = true;
  const Node ceil_pool = node("MaxPool", {{"strides", Ints{2}}});
  EXPECT_TRUE(pool_shape<Dim>(ceil_pool, ceil, {kBatch, 3, kSeq}).value()[2].is_unknown());
  EXPECT_TRUE(
      conv_shape<Dim>(whisper, {}, {kBatch, 8, Dim::unknown()}, {8, 8, 3}).value()[2].is_unknown());
  // Weights whose kernel nobody knows: the spatial dims are unknown.
  const Dims open = conv_shape<Dim>(conv, {}, {kBatch, 3, 32, 32}, {8, 3, kSeq, 3}).value();
  EXPECT_TRUE(open[2].is_unknown() && open[3].is_unknown());
}

TEST(ShapeFn, ConvErrorsNameTheOpAndInput) {
  ConvAttrs attrs;
  attrs.kernel_shape = {5, 5};
  EXPECT_TRUE(fails_with(conv_shape<int64_t>(node("Conv"), attrs, {1, 3, 8, 8}, {4, 3, 3, 3}),
                         ErrorCode::kInvalidArgument, "Conv: kernel_shape [5,5] disagrees"));
  EXPECT_TRUE(fails_with(conv_shape<int64_t>(node("Conv"), {}, {1, 3, 8, 8}, {4, 3, 3}),
                         ErrorCode::kInvalidArgument, "Conv: weights W [4,3,3]"));
  // A window larger than the input: make_window's error, naming Conv.
  EXPECT_TRUE(fails_with(conv_shape<int64_t>(node("Conv"), {}, {1, 3, 2, 2}, {4, 3, 3, 3}),
                         ErrorCode::kInvalidArgument, "Conv"));
}

TEST(ShapeFn, PoolsCeilModeAndGlobal) {
  PoolAttrs attrs;
  attrs.kernel_shape = {3, 3};
  const Node strided = node("MaxPool", {{"strides", Ints{2, 2}}});
  EXPECT_EQ(pool_shape<int64_t>(strided, attrs, {1, 2, 6, 6}).value(), (Ints{1, 2, 2, 2}));
  attrs.ceil_mode = true;
  EXPECT_EQ(pool_shape<int64_t>(strided, attrs, {1, 2, 6, 6}).value(), (Ints{1, 2, 3, 3}));
  EXPECT_EQ(pool_shape<Dim>(strided, attrs, {kBatch, 2, 6, 6}).value(), (Dims{kBatch, 2, 3, 3}));
  EXPECT_TRUE(fails_with(pool_shape<int64_t>(strided, attrs, {1, 2}), ErrorCode::kInvalidArgument,
                         "MaxPool: input X [1,2] has no spatial dims"));
  EXPECT_EQ(global_pool_shape<Dim>("GlobalAveragePool", {kBatch, 16, 7, 7}).value(),
            (Dims{kBatch, 16, 1, 1}));
}

TEST(ShapeFn, ConcatAddsTheAxisAndChecksTheRest) {
  EXPECT_EQ(concat_shape<int64_t>(1, {{2, 3}, {2, 0}, {2, 4}}).value(), (Ints{2, 7}));
  EXPECT_EQ(concat_shape<int64_t>(-2, {{2, 3}, {5, 3}}).value(), (Ints{7, 3}));
  EXPECT_EQ(concat_shape<Dim>(0, {{kBatch, 8}, {4, 8}})->at(0), Dim::symbol("(batch+4)"));
  EXPECT_EQ(concat_shape<Dim>(0, {{Dim(), 8}, {4, 8}})->at(0), Dim::unknown());
  EXPECT_EQ(concat_shape<Dim>(1, {{kBatch, 8}, {kBatch, 4}}).value(), (Dims{kBatch, 12}));
  EXPECT_TRUE(fails_with(concat_shape<int64_t>(2, {{2, 3}}), ErrorCode::kInvalidArgument,
                         "Concat: axis 2 is out of range for input 0 [2,3]"));
  EXPECT_TRUE(fails_with(concat_shape<int64_t>(0, {{2, 3}, {2, 4}}), ErrorCode::kInvalidArgument,
                         "Concat: input 1's dims 3 and 4 differ"));
  EXPECT_TRUE(fails_with(concat_shape<int64_t>(0, {{2, 3}, {2}}), ErrorCode::kInvalidArgument,
                         "differ in rank"));
}

}  // namespace
}  // namespace hone::ops
