// The reshaping, indexing and reducing shape functions (ops/shape_fn_tensor.h)
// over concrete and symbolic dims, and their errors.
#include "ops/shape_fn_tensor.h"

#include <limits>

#include <gtest/gtest.h>

#include "ops/broadcast.h"
#include "ops/shape_fn_test_util.h"
#include "ops/slice.h"

namespace hone::ops {
namespace {

using namespace shape_fn_test;  // Ints, Dims, kBatch, kSeq, fails_with

TEST(ShapeFnTensor, ReshapeCopiesZerosAndInfersMinusOne) {
  EXPECT_EQ(reshape_shape<int64_t>({2, 3, 4}, {0, -1}, false).value(), (Ints{2, 12}));
  EXPECT_EQ(reshape_shape<int64_t>({2, 3, 4}, {4, -1, 2}, false).value(), (Ints{4, 3, 2}));
  EXPECT_EQ(reshape_shape<int64_t>({2, 3, 4}, {24}, false).value(), (Ints{24}));
  // allowzero: a 0 is a 0.
  EXPECT_EQ(reshape_shape<int64_t>({0, 3}, {0, 3}, true).value(), (Ints{0, 3}));
  // A copied symbol cancels: the -1 is known.
  EXPECT_EQ(reshape_shape<Dim>({kBatch, 4, 8}, {0, -1}, false).value(), (Dims{kBatch, 32}));
  EXPECT_EQ(reshape_shape<Dim>({kBatch, kSeq, 8}, {0, 0, 2, 4}, false).value(),
            (Dims{kBatch, kSeq, 2, 4}));
  // A -1 over an uncopied symbol: the count divides exactly, a derived dim (sym_int.h).
  const Dims open = reshape_shape<Dim>({kBatch, 4, 8}, {-1, 8}, false).value();
  EXPECT_EQ(open[0], Dim::symbol("(4*" + kBatch.symbol_name() + ")"));
  EXPECT_EQ(open[1], Dim(8));
}

TEST(ShapeFnTensor, ReshapeErrorsNameTheOpAndInput) {
  EXPECT_TRUE(fails_with(reshape_shape<int64_t>({2, 3}, {-1, -1}, false),
                         ErrorCode::kInvalidArgument, "Reshape: input shape [-1,-1] has two -1"));
  EXPECT_TRUE(fails_with(reshape_shape<int64_t>({2, 3}, {0, 0, 0}, false),
                         ErrorCode::kInvalidArgument, "copies dim 2 that input data [2,3] lacks"));
  EXPECT_TRUE(fails_with(reshape_shape<int64_t>({2, 3}, {-2, 3}, false),
                         ErrorCode::kInvalidArgument, "has a negative dim"));
  EXPECT_TRUE(fails_with(reshape_shape<int64_t>({2, 3}, {4, 2}, false), ErrorCode::kInvalidArgument,
                         "differ in element count"));
  EXPECT_TRUE(fails_with(reshape_shape<int64_t>({2, 3}, {4, -1}, false),
                         ErrorCode::kInvalidArgument, "leaves no whole -1 for input data [2,3]"));
  // A symbolic count the rest does not divide exactly: the -1 stays unknown.
  EXPECT_TRUE(reshape_shape<Dim>({kBatch, 6}, {4, -1}, false)->at(1).is_unknown());
}

TEST(ShapeFnTensor, FlattenMultipliesEachSide) {
  EXPECT_EQ(flatten_shape<int64_t>(1, {2, 3, 4}).value(), (Ints{2, 12}));
  EXPECT_EQ(flatten_shape<int64_t>(0, {2, 3, 4}).value(), (Ints{1, 24}));
  EXPECT_EQ(flatten_shape<int64_t>(3, {2, 3, 4}).value(), (Ints{24, 1}));
  EXPECT_EQ(flatten_shape<int64_t>(-1, {2, 3, 4}).value(), (Ints{6, 4}));
  EXPECT_EQ(flatten_shape<Dim>(1, {kBatch, 3, 4}).value(), (Dims{kBatch, 12}));
  EXPECT_EQ(flatten_shape<Dim>(2, {kBatch, 1, 4}).value(), (Dims{kBatch, 4}));
  EXPECT_EQ(flatten_shape<Dim>(2, {kBatch, kSeq, 4})->at(0),
            (SymInt::of(kBatch) * SymInt::of(kSeq)).dim());
  EXPECT_TRUE(fails_with(flatten_shape<int64_t>(4, {2, 3, 4}), ErrorCode::kInvalidArgument,
                         "Flatten: axis 4 is out of range for input 'input' [2,3,4]"));
}

TEST(ShapeFnTensor, SqueezeListedOrEveryOne) {
  EXPECT_EQ(squeeze_shape<int64_t>({1, 3, 1, 4}, {0, -2}).value(), (Ints{3, 4}));
  EXPECT_EQ(squeeze_shape<int64_t>({1, 3, 1, 4}, {}).value(), (Ints{3, 4}));
  EXPECT_EQ(squeeze_shape<Dim>({kBatch, 1, kSeq}, {1}).value(), (Dims{kBatch, kSeq}));
  // A listed symbol is taken to be 1 by the passes.
  EXPECT_EQ(squeeze_shape<Dim>({kBatch, 1, kSeq}, {0}).value(), (Dims{1, kSeq}));
  EXPECT_TRUE(fails_with(squeeze_shape<int64_t>({1, 3}, {1}), ErrorCode::kInvalidArgument,
                         "Squeeze: dim 1 of input data [1,3] is not 1"));
  EXPECT_TRUE(fails_with(squeeze_shape<int64_t>({1, 3}, {2}), ErrorCode::kInvalidArgument,
                         "Squeeze: axes 2 is out of range for rank 2"));
  EXPECT_TRUE(fails_with(squeeze_shape<int64_t>({1, 1}, {0, -2}), ErrorCode::kInvalidArgument,
                         "names axis 0 twice"));
  EXPECT_TRUE(fails_with(squeeze_shape<Dim>({kBatch, 1}, {}), ErrorCode::kUnsupported,
                         "Squeeze: without axes"));
}

TEST(ShapeFnTensor, UnsqueezeCountsAxesInTheOutput) {
  EXPECT_EQ(unsqueeze_shape<int64_t>({3, 4}, {0, 3}).value(), (Ints{1, 3, 4, 1}));
  EXPECT_EQ(unsqueeze_shape<int64_t>({3, 4}, {-1}).value(), (Ints{3, 4, 1}));
  EXPECT_EQ(unsqueeze_shape<Dim>({kBatch, kSeq}, {1}).value(), (Dims{kBatch, 1, kSeq}));
  EXPECT_EQ(unsqueeze_shape<int64_t>({}, {0}).value(), (Ints{1}));
  EXPECT_TRUE(fails_with(unsqueeze_shape<int64_t>({3}, {2}), ErrorCode::kInvalidArgument,
                         "Unsqueeze: axes 2 is out of range for rank 2"));
  EXPECT_TRUE(fails_with(unsqueeze_shape<int64_t>({3}, {0, 0}), ErrorCode::kInvalidArgument,
                         "Unsqueeze: axes [0,0] names axis 0 twice"));
}

TEST(ShapeFnTensor, ReduceKeepsOrDropsAxes) {
  ReduceAttrs keep, drop, noop;
  drop.keepdims = false;
  noop.noop_with_empty_axes = true;
  const Ints axes{1, -1}, none;
  EXPECT_EQ(reduce_shape<int64_t>("ReduceSum", keep, {2, 3, 4}, &axes).value(), (Ints{2, 1, 1}));
  EXPECT_EQ(reduce_shape<int64_t>("ReduceSum", drop, {2, 3, 4}, &axes).value(), (Ints{2}));
  EXPECT_EQ(reduce_shape<int64_t>("ReduceMax", drop, {2, 3, 4}, &none).value(), (Ints{}));
  EXPECT_EQ(reduce_shape<int64_t>("ReduceMax", noop, {2, 3, 4}, &none).value(), (Ints{2, 3, 4}));
  EXPECT_EQ(reduce_shape<Dim>("ReduceMean", keep, {kBatch, kSeq, 8}, &axes).value(),
            (Dims{kBatch, 1, 1}));
  // Axes nobody knows: the rank stays under keepdims, the dims are unknown.
  const Dims open = reduce_shape<Dim>("ReduceMean", keep, {kBatch, 1}, nullptr).value();
  EXPECT_TRUE(open[0].is_unknown());
  EXPECT_EQ(open[1], Dim(1));
  EXPECT_TRUE(fails_with(reduce_shape<Dim>("ReduceMean", drop, {kBatch}, nullptr),
                         ErrorCode::kUnsupported, "ReduceMean: input axes is not a constant"));
  EXPECT_TRUE(fails_with(reduce_shape<int64_t>("ArgMax", keep, {2, 3}, &axes),
                         ErrorCode::kInvalidArgument, "ArgMax: axes [1,-1] names axis 1 twice"));
  const Ints far{3};
  EXPECT_TRUE(fails_with(reduce_shape<int64_t>("ReduceL2", keep, {2, 3}, &far),
                         ErrorCode::kInvalidArgument, "ReduceL2: axes 3 is out of range"));
}

TEST(ShapeFnTensor, GatherReplacesTheAxisByTheIndices) {
  EXPECT_EQ(gather_shape<int64_t>(0, {10, 4}, {2, 3}).value(), (Ints{2, 3, 4}));
  EXPECT_EQ(gather_shape<int64_t>(-1, {10, 4}, {}).value(), (Ints{10}));
  EXPECT_EQ(gather_shape<Dim>(0, {32000, 512}, {kBatch, kSeq}).value(), (Dims{kBatch, kSeq, 512}));
  EXPECT_TRUE(fails_with(gather_shape<int64_t>(2, {10, 4}, {3}), ErrorCode::kInvalidArgument,
                         "Gather: axis 2 is out of range for input data [10,4]"));
  EXPECT_EQ(gather_elements_shape<Dim>(1, {kBatch, 8}, {kBatch, 2}).value(), (Dims{kBatch, 2}));
  EXPECT_TRUE(fails_with(gather_elements_shape<int64_t>(0, {4, 4}, {4}),
                         ErrorCode::kInvalidArgument,
                         "GatherElements: input indices [4] and input data [4,4] differ in rank"));
  EXPECT_TRUE(fails_with(gather_elements_shape<int64_t>(-3, {4, 4}, {4, 4}),
                         ErrorCode::kInvalidArgument, "GatherElements: axis -3"));
}

TEST(ShapeFnTensor, GatherNdKeepsTheTuplesAndTheSliceDims) {
  // Whole-row tuples, single elements, batch_dims 1 and 2.
  EXPECT_EQ(gather_nd_shape<int64_t>(0, {2, 5, 4}, {3, 2}).value(), (Ints{3, 4}));
  EXPECT_EQ(gather_nd_shape<int64_t>(0, {3, 4}, {4, 2}).value(), (Ints{4}));
  EXPECT_EQ(gather_nd_shape<int64_t>(1, {2, 6, 3}, {2, 6, 2, 1}).value(), (Ints{2, 6, 2, 3}));
  EXPECT_EQ(gather_nd_shape<int64_t>(2, {2, 3, 4, 5}, {2, 3, 1}).value(), (Ints{2, 3, 5}));
  // DGCNN's neighbour rows from the dynamo exporter: [(256*batch), 3] by [(2048*batch), 1].
  const Dim rows = Dim::symbol("rows"), picks = Dim::symbol("picks");
  EXPECT_EQ(gather_nd_shape<Dim>(0, {rows, 3}, {picks, 1}).value(), (Dims{picks, 3}));
  EXPECT_EQ(gather_nd_shape<Dim>(1, {kBatch, 6, 3}, {kBatch, 4, 1}).value(), (Dims{kBatch, 4, 3}));
  // Batch dims the type cannot compare: accepted where it has unknown().
  EXPECT_EQ(gather_nd_shape<Dim>(1, {kBatch, 6}, {kSeq, 1}).value(), (Dims{kSeq}));
  EXPECT_TRUE(fails_with(gather_nd_shape<int64_t>(1, {2, 6}, {3, 1}), ErrorCode::kInvalidArgument,
                         "batch dim 0 of data [2,6] and of indices [3,1] differ"));
  EXPECT_TRUE(fails_with(gather_nd_shape<int64_t>(0, {3, 4}, {2, 3}), ErrorCode::kInvalidArgument,
                         "have a last dim outside [1, 2]"));
  EXPECT_TRUE(fails_with(gather_nd_shape<int64_t>(0, {3, 4}, {2, 0}), ErrorCode::kInvalidArgument,
                         "have a last dim outside [1, 2]"));
  EXPECT_TRUE(fails_with(gather_nd_shape<int64_t>(2, {3, 4}, {3, 4, 1}),
                         ErrorCode::kInvalidArgument, "batch_dims 2 must be below"));
  EXPECT_TRUE(fails_with(gather_nd_shape<int64_t>(0, {}, {1}), ErrorCode::kInvalidArgument,
                         "batch_dims 0 must be below"));
  EXPECT_TRUE(fails_with(gather_nd_shape<Dim>(0, {3, 4}, {2, kSeq}), ErrorCode::kUnsupported,
                         "the tuple length (last dim of indices [2,seq]) is not known"));
}

TEST(ShapeFnTensor, RangeCountsOrFollowsItsLimit) {
  EXPECT_EQ(range_shape<int64_t>(0, 10, 3).value(), (Ints{4}));
  EXPECT_EQ(range_shape<int64_t>(10, 0, -2).value(), (Ints{5}));
  EXPECT_EQ(range_shape<int64_t>(5, 0, 1).value(), (Ints{0}));
  EXPECT_EQ(range_shape<Dim>(0, kSeq, 1).value(), (Dims{kSeq}));
  EXPECT_TRUE(range_shape<Dim>(1, kSeq, 1)->at(0).is_unknown());
  EXPECT_TRUE(range_shape<Dim>(std::nullopt, 4, 1)->at(0).is_unknown());
  EXPECT_TRUE(fails_with(range_shape<int64_t>(0, 4, 0), ErrorCode::kInvalidArgument,
                         "Range: input delta is 0"));
}

TEST(ShapeFnTensor, ShapeCountsItsRange) {
  EXPECT_EQ(shape_shape<int64_t>(ShapeRange{1, 3}), (Ints{2}));
  EXPECT_EQ(shape_shape<Dim>(ShapeRange{2, 1}), (Dims{0}));
}

TEST(ShapeFnTensor, SliceOfASymbolicAxisCountedFromItsEndsIsNamed) {
  constexpr int64_t kAll = std::numeric_limits<int64_t>::max();
  // wav2vec2's positional conv trims its last frame: x[:, :, :-1].
  EXPECT_EQ(slice_shape({kBatch, 8, kSeq}, {0}, {-1}, nullptr, nullptr).value()[0],
            Dim::symbol("(batch-1)"));
  const Ints axis2{2};
  EXPECT_EQ(slice_shape({kBatch, 8, kSeq}, {2}, {kAll}, &axis2, nullptr).value()[2],
            Dim::symbol("(seq-2)"));
  // The last three: a number, once seq is at least 3.
  EXPECT_EQ(slice_shape({kBatch, 8, kSeq}, {-3}, {kAll}, &axis2, nullptr).value()[2], Dim(3));
  const auto r = runtime_slice(1, -2, 1);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->start, 1);
  EXPECT_TRUE(r->length_plus_dim);
  EXPECT_EQ(r->length, -3);
  EXPECT_EQ(r->least, 3);
  // An end counted from the front depends on how seq compares with it; a step
  // other than 1 and an unknown dim stay unknown.
  EXPECT_TRUE(slice_shape({kBatch, 8, kSeq}, {0}, {4}, &axis2, nullptr).value()[2].is_unknown());
  const Ints two{2};
  EXPECT_TRUE(slice_shape({kBatch, 8, kSeq}, {0}, {-1}, &axis2, &two).value()[2].is_unknown());
  EXPECT_TRUE(
      slice_shape({kBatch, 8, Dim::unknown()}, {0}, {-1}, &axis2, nullptr).value()[2].is_unknown());
}

TEST(ShapeFnTensor, TransposeKeepsTheOrderWhereOnlyOnesMove) {
  // Batch 1 of a batch-first transformer's [B, S, E] to [S, B, E]: the same bytes.
  EXPECT_TRUE(transpose_keeps_order({1, 197, 768}, {1, 0, 2}));
  EXPECT_TRUE(transpose_keeps_order({197, 1, 768}, {1, 0, 2}));
  EXPECT_TRUE(transpose_keeps_order({2, 3, 4}, {0, 1, 2}));
  EXPECT_TRUE(transpose_keeps_order({2, 1, 1, 4}, {0, 2, 1, 3}));
  EXPECT_FALSE(transpose_keeps_order({1, 5, 1, 7}, {3, 2, 1, 0}));
  EXPECT_TRUE(transpose_keeps_order({1, 5, 1, 7}, {2, 1, 0, 3}));
  // Two axes longer than 1 change places: a copy.
  EXPECT_FALSE(transpose_keeps_order({2, 197, 768}, {1, 0, 2}));
  EXPECT_FALSE(transpose_keeps_order({2, 3}, {1, 0}));
  // A perm out of range is no view.
  EXPECT_FALSE(transpose_keeps_order({2, 3}, {0, 2}));
}

}  // namespace
}  // namespace hone::ops
