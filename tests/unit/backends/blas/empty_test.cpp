// Zero-sized tensors in blas blocks (common/empty_values.h, as onednn's
// OnednnEmpty): a block whose input has a zero dim at run time plans like any
// other, its empty values read by no kernel, and matches the reference at the
// same signature and at a non-empty one, with no run on the reference. The
// cases: a detector's merge of RoI levels where one level has no box
// (torchvision's MultiScaleRoIAlign under tracing), reductions and products
// over an empty axis (ONNX's rules for an empty set: sum 0, product 1, max
// -inf; K = 0 gives beta * C), and Slice/Split parts that come out empty from
// non-empty inputs.
#include <limits>

#include "backends/empty_graphs.h"
#include "blas_test_util.h"

namespace hone::blas {
namespace {

using backend_test::expect_same_without_fallback;
using backend_test::ints;
using testing_util::build_blas;
using testing_util::close;
using testing_util::uniform;

// The RoIs of one feature level picked by run-time indices (NonZero's, [n];
// blas leaves that Gather to the reference, so the blas block's input is
// the picked [n, 4] rows), scaled, joined with another level's boxes and read
// by the box head's Gemm. With n = 0 the level is empty: the Mul, the Relu
// and the Tanh are empty values, the Concat is its other part, the Gemm
// runs as usual, the ReduceSum over the empty rows is 0.
TEST(BlasEmpty, RoiLevelWithNoBoxKeepsTheBlockOnBlas) {
  GraphBuilder b("roi_levels", 16);
  ValueId idx = b.input("idx", DType::kI64, Shape{Dim::symbol("n")});
  ValueId rois = b.input("rois", DType::kF32, Shape{6, 4});
  ValueId other = b.input("other", DType::kF32, Shape{3, 4});
  std::mt19937 rng(5);
  ValueId picked = b.op("Gather", {rois, idx}, {{"axis", int64_t{0}}});
  ValueId scaled = b.relu(b.mul(picked, b.constant("s", uniform(rng, {4}))));
  ValueId joined = b.concat({scaled, b.sigmoid(other)}, 0);
  ValueId w = b.constant("w", uniform(rng, {5, 4}));
  ValueId bias = b.constant("bias", uniform(rng, {5}));
  b.output(b.relu(b.gemm(joined, w, bias, {.trans_b = true})), "scores");
  b.output(b.add(b.op("ReduceSum", {scaled, ints(b, {0})}, {{"keepdims", int64_t{1}}}), other),
           "summed");
  b.output(b.tanh(scaled), "level");
  const Graph g = *std::move(b).build();
  auto be = build_blas(g);
  const Tensor r = uniform(rng, {6, 4}), o = uniform(rng, {3, 4});
  {
    SCOPED_TRACE("n = 0");
    expect_same_without_fallback(*be, g, {Tensor::zeros(DType::kI64, {0}), r, o});
    auto out = be->infer({Tensor::zeros(DType::kI64, {0}), r, o});
    ASSERT_TRUE(out);
    EXPECT_EQ((*out)[0].shape(), (std::vector<int64_t>{3, 5}));
    EXPECT_EQ((*out)[2].shape(), (std::vector<int64_t>{0, 4}));
    EXPECT_GT(be->kernel_executions(), 0u) << "no blas kernel ran";
  }
  SCOPED_TRACE("n = 2");
  expect_same_without_fallback(*be, g, {Tensor::from<int64_t>({2}, {4, 1}), r, o});
}

// x is [m, 3] with m = 0 at run time: reductions over the empty axis and
// products whose K is 0, added to a value that is not empty.
TEST(BlasEmpty, ReductionsAndProductsOverAnEmptyAxis) {
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
  b.output(b.matmul(xt, x), "matmul");
  b.output(b.gemm(xt, x, c, {.alpha = 2.0f, .beta = 0.5f}), "gemm");
  b.output(reduce("ReduceMax"), "max");
  b.output(b.softmax(x, 1), "softmax");
  const Graph g = *std::move(b).build();
  auto be = build_blas(g);
  EXPECT_TRUE(backend_test::all_nodes_on_backend(*be, g));
  const Tensor yv = uniform(rng, {3, 3});
  auto out = be->infer({Tensor::zeros(DType::kF32, {0, 3}), yv});
  ASSERT_TRUE(out) << out.error().to_string();
  ASSERT_EQ(out->size(), 7u);
  for (int64_t i = 0; i < 9; ++i) {
    const float yi = yv.data<float>()[i], ci = g.value(c).initializer->data<float>()[i];
    EXPECT_FLOAT_EQ((*out)[0].data<float>()[i], yi);         // sum 0, broadcast over y's rows
    EXPECT_FLOAT_EQ((*out)[1].data<float>()[i], 1 + yi);     // product 1
    EXPECT_FLOAT_EQ((*out)[2].data<float>()[i], yi);         // L2 0
    EXPECT_FLOAT_EQ((*out)[3].data<float>()[i], 0.0f);       // K = 0: zeros
    EXPECT_FLOAT_EQ((*out)[4].data<float>()[i], 0.5f * ci);  // beta * C
  }
  for (int64_t i = 0; i < 3; ++i)
    EXPECT_EQ((*out)[5].data<float>()[i], -std::numeric_limits<float>::infinity());
  EXPECT_EQ((*out)[6].shape(), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(be->fallback_runs(), 0u) << "a block ran on the reference";
  EXPECT_GT(be->kernel_executions(), 0u) << "the Adds with y ran no blas kernel";
  SCOPED_TRACE("m = 2");
  expect_same_without_fallback(*be, g, {uniform(rng, {2, 3}), yv});
}

// A Slice, a Split part, a Gather of no index and an Expand to a zero dim
// that come out empty from inputs that are not: empty values inside the
// plan, joined back by a Concat.
TEST(BlasEmpty, EmptySliceSplitGatherAndExpandInsideAPlan) {
  const Graph g = backend_test::empty_parts_graph();
  auto be = build_blas(g);
  EXPECT_TRUE(backend_test::all_nodes_on_backend(*be, g));
  std::mt19937 rng(7);
  expect_same_without_fallback(*be, g, {uniform(rng, {4, 3})});
  EXPECT_GT(be->kernel_executions(), 0u) << "no blas kernel ran";
}

// A Gemm of K = 0 whose epilogue reads a value known only at run time (the
// Add fused into it): blas has no rule for that unit, so that signature runs
// on the reference (and says so), while a non-empty one stays on blas.
TEST(BlasEmpty, FusedEpilogueAfterAnEmptyProductRunsOnTheReference) {
  GraphBuilder b("k0_epilogue", 17);
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("m"), 3});
  ValueId y = b.input("y", DType::kF32, Shape{3, 3});
  b.output(b.add(b.matmul(b.transpose(x, {1, 0}), x), y), "z");
  const Graph g = *std::move(b).build();
  auto be = build_blas(g);
  std::mt19937 rng(8);
  const Tensor yv = uniform(rng, {3, 3});
  auto out = be->infer({Tensor::zeros(DType::kF32, {0, 3}), yv});
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_TRUE(close((*out)[0], yv));
  EXPECT_EQ(be->fallback_runs(), 1u);
  const uint64_t before = be->kernel_executions();
  const Tensor xv = uniform(rng, {2, 3});
  auto want = eval::Interpreter().run_tensors(g, {xv, yv});
  ASSERT_TRUE(want);
  auto got = be->infer({xv, yv});
  ASSERT_TRUE(got) << got.error().to_string();
  EXPECT_TRUE(close((*got)[0], (*want)[0]));
  EXPECT_EQ(be->fallback_runs(), 1u);
  EXPECT_GT(be->kernel_executions(), before);
}

}  // namespace
}  // namespace hone::blas
