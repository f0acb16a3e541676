// lower_control_flow on what PyTorch's TorchScript exporter writes for
// torch.tensor_split and a squeeze of a dim it cannot see
// (tests/unit/graph/data/tensor_split.onnx, made by make_tensor_split.py): the
// Loop building a sequence of Slices and the If on dim == 1 become plain
// nodes, with the reference's answer; a Loop or If whose course depends on
// the data stays.
#include <gtest/gtest.h>

#include <random>

#include "hone/onnx.h"
#include "hone/optimize.h"
#include "hone/passes.h"
#include "passes_test_util.h"

namespace hone {
namespace {

using passes_test::count_op;
using passes_test::same_outputs;
using passes_test::uniform;

Graph exported() {
  auto g = onnx::load_model(HONE_SOURCE_DIR "/tests/unit/graph/data/tensor_split.onnx");
  EXPECT_TRUE(g) << g.error().to_string();
  return g ? *std::move(g) : Graph();
}

TEST(PassesControlFlow, TensorSplitsLoopAndTheSqueezesIfBecomePlainNodes) {
  Graph g = exported();
  ASSERT_EQ(count_op(g, "Loop"), 1u);
  ASSERT_EQ(count_op(g, "If"), 3u);
  // The pass alone: the Loop unrolled, the Ifs stay until their condition folds.
  PassStats st;
  auto out = lower_control_flow(g, &st);
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_EQ(count_op(*out, "Loop"), 0u);
  EXPECT_EQ(count_op(*out, "SequenceAt"), 0u);
  EXPECT_EQ(count_op(*out, "SequenceInsert"), 0u);
  EXPECT_EQ(count_op(*out, "If"), 3u);
  EXPECT_EQ(st.rewritten, 1);
  // The whole pipeline: the shape folders make each If's dim == 1 constant.
  Graph opt = g;
  auto report = optimize(opt);
  ASSERT_TRUE(report) << report.error().to_string();
  EXPECT_EQ(count_op(opt, "Loop"), 0u);
  EXPECT_EQ(count_op(opt, "If"), 0u);
  EXPECT_EQ(count_op(opt, "SequenceEmpty"), 0u);
  std::mt19937 rng(3);
  for (int64_t batch : {1, 2, 5}) {
    SCOPED_TRACE(batch);
    const Tensor x = uniform(rng, {batch, 5, 4});
    EXPECT_TRUE(same_outputs(g, *out, {x}, 0.0, true));
    EXPECT_TRUE(same_outputs(g, opt, {x}, 0.0, true));
  }
}

TEST(PassesControlFlow, ALoopOrIfThatDependsOnTheDataStays) {
  // The trip count and the If's condition made graph inputs.
  Graph g = exported();
  const ValueId trips = g.add_input("trips", DType::kI64, Shape{});
  const ValueId cond = g.add_input("cond", DType::kBool, Shape{});
  for (size_t i = 0; i < g.nodes().size(); ++i) {
    Node& n = g.node(static_cast<NodeId>(i));
    if (n.op_type == "Loop") n.inputs[0] = trips;
    if (n.op_type == "If") n.inputs[0] = cond;
  }
  PassStats st;
  auto out = lower_control_flow(g, &st);
  ASSERT_TRUE(out) << out.error().to_string();
  EXPECT_EQ(count_op(*out, "Loop"), 1u);
  EXPECT_EQ(count_op(*out, "If"), 3u);
  EXPECT_EQ(st.rewritten, 0);
}

TEST(PassesControlFlow, AnIfWithAConstantConditionBecomesItsBranch) {
  // The exported graph's Ifs with their conditions replaced by constants:
  // true takes the Squeeze branch, false the Identity one.
  for (const bool take : {true, false}) {
    SCOPED_TRACE(take);
    Graph g = exported();
    const ValueId c = g.add_initializer("const_cond", Tensor::scalar<bool>(take));
    for (size_t i = 0; i < g.nodes().size(); ++i)
      if (Node& n = g.node(static_cast<NodeId>(i)); n.op_type == "If") n.inputs[0] = c;
    PassStats st;
    auto out = lower_control_flow(g, &st);
    ASSERT_TRUE(out) << out.error().to_string();
    EXPECT_EQ(count_op(*out, "If"), 0u);
    EXPECT_EQ(st.rewritten, 4);                            // the Loop and three Ifs
    EXPECT_EQ(count_op(*out, "Squeeze"), take ? 3u : 0u);  // only the then branches squeeze
    if (take) {  // (the else branches keep the unsqueezed axis, which the Concat refuses)
      std::mt19937 rng(4);
      EXPECT_TRUE(same_outputs(g, *out, {uniform(rng, {2, 5, 4})}, 0.0, true));
    }
  }
}

}  // namespace
}  // namespace hone
