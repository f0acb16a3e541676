// TopK of a run-time K in aot's code (topk.cpp, ops/run_length.h): K is read
// when the code runs, the output length along the axis is a symbol the run
// sets, at most the axis' length at the block's bounds, the block ends with
// the TopK and the block after it binds that length from its input, 0
// included. Every node runs compiled and matches the reference.
#include "aot_test_util.h"
#include "backends/nonzero_graphs.h"
#include "hone/graph_builder.h"

namespace hone::aot {
namespace {

using backend_test::ints;
using testing_util::build_aot;
using testing_util::expect_matches_reference;
using testing_util::expect_run_fails;

/// Whether every TopK of `be`'s partition is the last node of a block run on
/// the backend (the executor's cut, ops::length_known_after_run).
::testing::AssertionResult topk_ends_blocks(const AotBackend& be, const Graph& g) {
  const Partition& p = be.partition();
  return backend_test::nonzero_ends_blocks(p, p.graph ? *p.graph : g, "TopK");
}

/// torchvision's detection tail, one class: the scores above 0.5 of x [n]
/// (NonZero, GatherND), their top min(3, count) (K from the count's Shape,
/// ReduceMin of a Concat), the scores doubled and the boxes [n, 2] of the
/// chosen ones gathered by the indices.
Graph detection_tail() {
  GraphBuilder b("topk_detection_tail", 13);
  const Dim n = Dim::symbol("n");
  const ValueId x = b.input("x", DType::kF32, Shape{n});
  const ValueId boxes = b.input("boxes", DType::kF32, Shape{n, 2});
  const auto [at, scores, k] = backend_test::kept_scores(b, x, 3);
  auto top = b.op_n("TopK", {scores, k}, 2, {{"axis", int64_t{-1}}});
  b.output(b.mul(top[0], b.constant("", Tensor::from<float>({}, {2.0f}))), "top");
  b.output(b.op("Gather", {b.op("GatherND", {boxes, at}), top[1]}, {{"axis", int64_t{0}}}),
           "picked");
  return *std::move(b).build();
}

std::vector<Tensor> tail_inputs(std::vector<float> x) {
  const auto n = static_cast<int64_t>(x.size());
  std::vector<float> boxes;
  for (int64_t i = 0; i < 2 * n; ++i) boxes.push_back(0.25f * static_cast<float>(i));
  return {Tensor::from<float>({n}, std::move(x)), Tensor::from<float>({n, 2}, std::move(boxes))};
}

// Five scores above 0.5 (K = 3), two (K = 2, equal scores to the lower
// position) and none (K = 0: the blocks after it read [0] and [0, 2]).
TEST(AotTopKRunTime, DetectionTailRunsCompiledForEveryCount) {
  const Graph g = detection_tail();
  const std::vector<std::pair<std::string, std::string>> config = {{"dim_bounds", "n=8"},
                                                                   {"min_block_size", "1"}};
  expect_matches_reference(
      g,
      {tail_inputs({0.9f, 0.1f, 0.7f, 0.8f, 0.95f, 0.6f, 0.2f}),
       tail_inputs({0.1f, 0.75f, 0.3f, 0.75f}), tail_inputs({0.1f, 0.2f, 0.0f})},
      config);
  auto be = build_aot(g, config);
  ASSERT_TRUE(be);
  for (const std::string& why : be->lowering_fallbacks()) ADD_FAILURE() << why;
  EXPECT_TRUE(topk_ends_blocks(*be, g));
}

/// x [2, n] and K a model input: TopK along axis 1 (smallest first), the
/// values plus 1 and the indices.
Graph topk_of_input_k() {
  GraphBuilder b("topk_input_k", 13);
  const ValueId x = b.input("x", DType::kF32, Shape{2, Dim::symbol("n")});
  const ValueId k = b.input("k", DType::kI64, Shape{1});
  auto top = b.op_n("TopK", {x, k}, 2, {{"axis", int64_t{1}}, {"largest", int64_t{0}}});
  b.output(b.add(top[0], b.constant("", Tensor::from<float>({}, {1.0f}))), "values");
  b.output(top[1], "indices");
  return *std::move(b).build();
}

// K of 0, of some and of the whole axis; K past the axis fails the run as the
// reference does, with both numbers, and writes nothing past the buffers.
TEST(AotTopKRunTime, KAsAnInputFromNoneToTheWholeAxis) {
  const Graph g = topk_of_input_k();
  const std::vector<std::pair<std::string, std::string>> config = {{"dim_bounds", "n=6"},
                                                                   {"min_block_size", "1"}};
  const Tensor x = Tensor::from<float>({2, 5}, {3, 1, 4, 1, 5, 9, 2, 6, 5, 3});
  expect_matches_reference(g,
                           {{x, testing_util::i64s({0})},
                            {x, testing_util::i64s({2})},
                            {x, testing_util::i64s({5})},
                            {Tensor::from<float>({2, 1}, {7, 8}), testing_util::i64s({1})}},
                           config);
  auto be = build_aot(g, config);
  ASSERT_TRUE(be);
  EXPECT_TRUE(topk_ends_blocks(*be, g));
  EXPECT_FALSE(eval::Interpreter().run_tensors(g, {x, testing_util::i64s({6})}));
  expect_run_fails(*be, {x, testing_util::i64s({6})}, {"TopK: K of 6 is out of range [0, 5]"});
  expect_run_fails(*be, {x, testing_util::i64s({-1})}, {"TopK: K of -1"});
}

// The sort keeps its positions on the stack: a run-time K over an axis longer
// than aot sorts is left to the reference, with the reason.
TEST(AotTopKRunTime, AnAxisPastTheSortsRoomFallsBackWithItsReason) {
  auto be = build_aot(topk_of_input_k(), {{"dim_bounds", "n=5000"}, {"min_block_size", "1"}});
  ASSERT_TRUE(be);
  std::string why;
  for (const std::string& w : be->lowering_fallbacks()) why += w + "\n";
  EXPECT_NE(why.find("TopK of a run-time K over an axis of up to 5000 (aot sorts up to 4096)"),
            std::string::npos)
      << why;
}

}  // namespace
}  // namespace hone::aot
