// Zero-sized tensors in onednn blocks (lower_empty.cpp): a block whose input
// has a zero dim at run time plans like any other, its empty values flowing
// through no primitive (oneDNN 2.6 divides by zero on them), and matches the
// reference at the same signature and at a non-empty one, with no run on the
// reference. The cases: a detector's merge of RoI levels where one level has
// no box (torchvision's MultiScaleRoIAlign under tracing), reductions and
// products over an empty axis (ONNX's rules for an empty set: sum 0, product
// 1, max -inf; K = 0 gives beta * C), and Slice/Split parts that come out
// empty from non-empty inputs.
#include <limits>

#include "backends/empty_graphs.h"
#include "onednn_test_util.h"

namespace hone::onednn {
namespace {

using backend_test::expect_same_without_fallback;
using backend_test::ints;
using testing_util::build_onednn;
using testing_util::close;
using testing_util::uniform;

// The RoIs of one feature level picked by run-time indices (NonZero's, [n]),
// pooled by RoiAlign, and scattered into the merged result by an Expand of
// the indices; the box head's Gemm reads the result. With n = 0 the level
// is empty: Gather, RoiAlign, Expand and the pooled output are empty, the
// ScatterElements is its data, the Concat its other part, and the Gemm runs.
TEST(OnednnEmpty, RoiLevelWithNoBoxKeepsTheBlockOnOnednn) {
  GraphBuilder b("roi_levels", 16);
  ValueId idx = b.input("idx", DType::kI64, Shape{Dim::symbol("n")});
  ValueId rois = b.input("rois", DType::kF32, Shape{6, 4});
  ValueId feat = b.input("feat", DType::kF32, Shape{1, 3, 8, 8});
  ValueId base = b.input("base", DType::kF32, Shape{6, 3, 2, 2});
  ValueId picked = b.op("Gather", {rois, idx}, {{"axis", int64_t{0}}});
  ValueId batch = b.sub(idx, idx);
  ValueId pooled = b.op("RoiAlign", {feat, picked, batch},
                        {{"output_height", int64_t{2}},
                         {"output_width", int64_t{2}},
                         {"sampling_ratio", int64_t{2}},
                         {"spatial_scale", 0.5f}});
  ValueId index = b.op("Expand", {b.reshape(idx, {-1, 1, 1, 1}), b.op("Shape", {pooled})});
  ValueId merged = b.op("ScatterElements", {b.relu(base), index, pooled}, {{"axis", int64_t{0}}});
  std::mt19937 rng(5);
  ValueId w = b.constant("w", uniform(rng, {5, 12}));
  ValueId bias = b.constant("bias", uniform(rng, {5}));
  b.output(b.gemm(b.flatten(merged), w, bias, {.trans_b = true}), "scores");
  b.output(b.relu(b.concat({b.flatten(pooled), b.flatten(merged)}, 0)), "joined");
  b.output(b.sigmoid(pooled), "pooled");
  const Graph g = *std::move(b).build();
  auto be = build_onednn(g);
  Tensor boxes = uniform(rng, {6, 4}, 0, 3);
  for (int64_t i = 0; i < 6; ++i)
    boxes.data<float>()[i * 4 + 2] += 4, boxes.data<float>()[i * 4 + 3] += 4;
  const Tensor f = uniform(rng, {1, 3, 8, 8}), r = uniform(rng, {6, 3, 2, 2});
  {
    SCOPED_TRACE("n = 0");
    expect_same_without_fallback(*be, g, {Tensor::zeros(DType::kI64, {0}), boxes, f, r});
    auto out = be->infer({Tensor::zeros(DType::kI64, {0}), boxes, f, r});
    ASSERT_TRUE(out);
    EXPECT_EQ((*out)[2].shape(), (std::vector<int64_t>{0, 3, 2, 2}));
    EXPECT_EQ((*out)[1].shape(), (std::vector<int64_t>{6, 12}));
  }
  SCOPED_TRACE("n = 2");
  expect_same_without_fallback(*be, g, {Tensor::from<int64_t>({2}, {4, 1}), boxes, f, r});
}

// x is [m, 3] with m = 0 at run time: reductions over the empty axis and
// products whose K is 0, added to a value that is not empty.
TEST(OnednnEmpty, ReductionsAndProductsOverAnEmptyAxis) {
  GraphBuilder b("empty_axis", 17);
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("m"), 3});
  ValueId y = b.input("y", DType::kF32, Shape{3, 3});
  std::mt19937 rng(6);
  ValueId c = b.constant("c", uniform(rng, {3, 3}));
  ValueId xt = b.transpose(x, {1, 0});
  auto reduce = [&](const std::string& op) {
    return b.op(op, {x}, {{"axes", std::vector<int64_t>{0}}, {"keepdims", int64_t{0}}});
  };
  b.output(b.add(b.op("ReduceSum", {x, ints(b, {0})}, {{"keepdims", int64_t{0}}}), y), "sum");
  b.output(b.add(reduce("ReduceProd"), y), "prod");
  b.output(b.add(reduce("ReduceL2"), y), "l2");
  b.output(b.add(b.matmul(xt, x), y), "matmul");
  b.output(b.add(b.gemm(xt, x, c, {.alpha = 2.0f, .beta = 0.5f}), y), "gemm");
  b.output(reduce("ReduceMax"), "max");
  b.output(b.op("ArgMax", {x}, {{"axis", int64_t{1}}}), "argmax");
  b.output(b.softmax(x, 1), "softmax");
  const Graph g = *std::move(b).build();
  auto be = build_onednn(g);
  const Tensor yv = uniform(rng, {3, 3});
  auto out = be->infer({Tensor::zeros(DType::kF32, {0, 3}), yv});
  ASSERT_TRUE(out) << out.error().to_string();
  ASSERT_EQ(out->size(), 8u);
  for (int64_t i = 0; i < 9; ++i) {
    const float yi = yv.data<float>()[i], ci = g.value(c).initializer->data<float>()[i];
    EXPECT_FLOAT_EQ((*out)[0].data<float>()[i], yi);              // sum 0, broadcast over y's rows
    EXPECT_FLOAT_EQ((*out)[1].data<float>()[i], 1 + yi);          // product 1
    EXPECT_FLOAT_EQ((*out)[2].data<float>()[i], yi);              // L2 0
    EXPECT_FLOAT_EQ((*out)[3].data<float>()[i], yi);              // K = 0: zeros
    EXPECT_FLOAT_EQ((*out)[4].data<float>()[i], 0.5f * ci + yi);  // beta * C
  }
  for (int64_t i = 0; i < 3; ++i)
    EXPECT_EQ((*out)[5].data<float>()[i], -std::numeric_limits<float>::infinity());
  EXPECT_EQ((*out)[6].shape(), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ((*out)[6].dtype(), DType::kI64);
  EXPECT_EQ((*out)[7].shape(), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(be->fallback_runs(), 0u) << "a block ran on the reference";
  SCOPED_TRACE("m = 2");
  expect_same_without_fallback(*be, g, {uniform(rng, {2, 3}), yv});
}

// A Slice, a Split part, a Gather of no index and an Expand to a zero dim
// that come out empty from inputs that are not: empty values inside the
// plan, joined back by a Concat.
TEST(OnednnEmpty, EmptySliceSplitGatherAndExpandInsideAPlan) {
  const Graph g = backend_test::empty_parts_graph();
  auto be = build_onednn(g);
  std::mt19937 rng(7);
  expect_same_without_fallback(*be, g, {uniform(rng, {4, 3})});
}

}  // namespace
}  // namespace hone::onednn
