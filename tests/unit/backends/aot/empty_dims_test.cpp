// Symbolic dims that are 0 when the code runs (emit.cpp's symbol_min): a
// block's input after a NonZero that found nothing, a TopK of a run-time K or
// a model input of batch 0 is an empty tensor, legal ONNX. The compiled code
// runs no iteration of an empty loop, calls oneDNN on no empty operand
// (runtime/core.c's hone_sgemm, dnnl_conv.c), and gives the ONNX value where
// the output is not empty: a sum over an empty axis is 0, a product over an
// empty K is beta * C, Concat keeps its other parts. Each run is compared
// with the reference, empty and non-empty runs on one library.
#include "aot_test_util.h"

namespace hone::aot {
namespace {

using testing_util::build_aot;
using testing_util::expect_runs_match_reference;
using testing_util::i64s;
using testing_util::uniform;

ValueId reduce_sum(GraphBuilder& b, ValueId x, int64_t axis, const std::string& tag) {
  return b.op("ReduceSum", {x, b.constant(tag, i64s({axis}))}, {{"keepdims", int64_t{0}}});
}

// A detector head over a batch of boxes that may be empty: conv (oneDNN),
// pool, Gemm, Softmax, a Concat with a constant row, a sum over the batch.
TEST(AotEmptyDims, EmptyBatchRunsThroughConvGemmAndReductions) {
  std::mt19937 rng(81);
  GraphBuilder b("empty_batch");
  const ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 4, 8, 8});
  const GraphBuilder::ConvOptions pad1{
      .strides = {1, 1}, .pads = {1, 1, 1, 1}, .dilations = {1, 1}, .group = 1};
  ValueId h = b.relu(b.conv(x, b.constant("w", uniform(rng, {8, 4, 3, 3})),
                            b.constant("bias", uniform(rng, {8})), pad1));
  h = b.flatten(b.global_average_pool(h));  // [batch, 8]
  const ValueId logits =
      b.gemm(h, b.constant("fc", uniform(rng, {8, 5})), b.constant("fc_b", uniform(rng, {5})));
  b.output(b.concat({b.constant("row", uniform(rng, {1, 5})), b.softmax(logits)}, 0), "scores");
  b.output(reduce_sum(b, logits, 0, "over_batch"), "total");
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  auto be = build_aot(*g, {{"dim_bounds", "batch=3"}, {"min_block_size", "1"}});
  ASSERT_TRUE(be);
  EXPECT_TRUE(backend_test::all_nodes_on_backend(*be, *g));
  std::vector<std::vector<Tensor>> runs;
  for (int64_t n : {0, 2, 0, 3}) runs.push_back({uniform(rng, {n, 4, 8, 8})});
  expect_runs_match_reference(*be, *g, runs);
  auto empty = be->infer({uniform(rng, {0, 4, 8, 8})});
  ASSERT_TRUE(empty) << empty.error().to_string();
  EXPECT_EQ((*empty)[0].shape(), (std::vector<int64_t>{1, 5}));
  ASSERT_EQ((*empty)[1].shape(), (std::vector<int64_t>{5}));
  for (float v : (*empty)[1].span<float>()) EXPECT_EQ(v, 0.0f);
}

// A contraction over an axis that is 0 at run time: MatMul gives zeros, plus
// its bias; the sum over that axis is 0.
TEST(AotEmptyDims, EmptyContractionAxisGivesZerosAndBias) {
  std::mt19937 rng(82);
  GraphBuilder b("empty_k");
  const ValueId a = b.input("a", DType::kF32, Shape{Dim::symbol("m"), Dim::symbol("k")});
  const ValueId w = b.input("w", DType::kF32, Shape{Dim::symbol("k"), 3});
  const Tensor bias = uniform(rng, {3});
  b.output(b.add(b.matmul(a, w), b.constant("bias", bias)), "y");
  b.output(reduce_sum(b, b.mul(a, a), 1, "over_k"), "norms");
  auto g = std::move(b).build();
  ASSERT_TRUE(g) << g.error().to_string();
  auto be = build_aot(*g, {{"dim_bounds", "m=4,k=3"}, {"min_block_size", "1"}});
  ASSERT_TRUE(be);
  EXPECT_TRUE(backend_test::all_nodes_on_backend(*be, *g));
  std::vector<std::vector<Tensor>> runs;
  for (auto [m, k] : {std::pair<int64_t, int64_t>{2, 0}, {0, 3}, {4, 3}, {3, 0}})
    runs.push_back({uniform(rng, {m, k}), uniform(rng, {k, 3})});
  expect_runs_match_reference(*be, *g, runs);
  auto got = be->infer(runs[0]);
  ASSERT_TRUE(got) << got.error().to_string();
  for (int64_t i = 0; i < 2 * 3; ++i)
    EXPECT_EQ((*got)[0].span<float>()[i], bias.span<float>()[i % 3]);
  for (float v : (*got)[1].span<float>()) EXPECT_EQ(v, 0.0f);
}

}  // namespace
}  // namespace hone::aot
