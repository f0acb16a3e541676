// oneDNN's own behaviour: which nodes become one primitive or a post-op, and
// what it refuses. Each op's cases on their own run from the op-case table
// (tests/unit/ops/op_cases_*.cpp) on every backend that claims them.
#include "onednn_test_util.h"

namespace hone::onednn {
namespace {

using testing_util::expect_matches_reference;
using testing_util::uniform;

TEST(OnednnOps, ClipWithConstantBoundsAndGelu) {
  std::mt19937 rng(2);
  GraphBuilder b("clip_gelu");
  ValueId x = b.input("x", DType::kF32, Shape{4, 6});
  ValueId c = b.op("Clip", {x, b.scalar_f32("lo", -1.5f), b.scalar_f32("hi", 2.0f)});
  b.output(b.gelu(c), "y");
  Graph g = *std::move(b).build();
  expect_matches_reference(g, {uniform(rng, {4, 6}, -3.0f, 3.0f)});
  auto be = testing_util::build_onednn(g);
  const auto plans = be->plan_descriptions();
  ASSERT_EQ(plans.size(), 1u);
  EXPECT_EQ(plans[0], "eltwise, eltwise")
      << "Clip and the 5-node GELU pattern as two eltwise primitives";
}

TEST(OnednnOps, RefusesFirstOperandBroadcastForSub) {
  GraphBuilder b("sub");
  ValueId s = b.input("s", DType::kF32, Shape{4});
  ValueId x = b.input("x", DType::kF32, Shape{3, 4});
  b.output(b.sub(s, x), "y");
  Graph g = *std::move(b).build();
  auto votes = OnednnBackend().propose(g);
  ASSERT_EQ(votes.size(), 1u);
  EXPECT_FALSE(votes[0].supported);
  EXPECT_NE(votes[0].reason.find("first operand"), std::string::npos) << votes[0].reason;
  // It still runs correctly, on the reference.
  std::mt19937 rng(4);
  auto be = testing_util::build_onednn(g);
  std::vector<Tensor> in{uniform(rng, {4}), uniform(rng, {3, 4})};
  auto got = be->infer(in);
  ASSERT_TRUE(got);
  EXPECT_TRUE(testing_util::close((*got)[0], (*eval::Interpreter().run_tensors(g, in))[0]));
  EXPECT_EQ(be->kernel_executions(), 0u);
}

TEST(OnednnOps, LayoutOps) {
  std::mt19937 rng(10);
  GraphBuilder b("layout");
  ValueId x = b.input("x", DType::kF32, Shape{2, 3, 4});
  ValueId t = b.transpose(x, {2, 0, 1});
  ValueId r = b.reshape(t, {0, -1});
  ValueId f = b.flatten(b.op("Identity", {b.relu(r)}), 1);
  b.output(f, "y");
  b.output(t, "t");
  expect_matches_reference(*std::move(b).build(), {uniform(rng, {2, 3, 4})});
}

}  // namespace
}  // namespace hone::onednn

namespace hone::onednn {
namespace {

/// y -> Add(3) -> Clip(0, 6) -> Mul(y) -> Div(divisor): HardSwish as PaddlePaddle writes it
/// (with divisor 6).
ValueId paddle_hardswish(GraphBuilder& b, ValueId y, float divisor) {
  ValueId c = b.op("Clip", {b.add(y, b.scalar_f32("three", 3.0f)), b.scalar_f32("lo", 0.0f),
                            b.scalar_f32("hi", 6.0f)});
  return b.div(b.mul(y, c), b.scalar_f32("six", divisor));
}

TEST(OnednnOps, SpelledOutHardSwishIsOneEltwiseOrAConvPostOp) {
  std::mt19937 rng(11);
  {
    GraphBuilder b("conv_hs");
    ValueId x = b.input("x", DType::kF32, Shape{2, 4, 6, 6});
    ValueId y = b.conv(x, b.constant("w", uniform(rng, {8, 4, 3, 3})),
                       b.constant("bias", uniform(rng, {8})), {.pads = {1, 1, 1, 1}});
    b.output(paddle_hardswish(b, y, 6.0f), "out");
    Graph g = *std::move(b).build();
    expect_matches_reference(g, {uniform(rng, {2, 4, 6, 6}, -4.0f, 4.0f)});
    auto be = testing_util::build_onednn(g);
    const std::string plan = be->plan_descriptions().at(0);
    EXPECT_NE(plan.find("conv+eltwise"), std::string::npos) << plan;
    EXPECT_EQ(plan.find("binary"), std::string::npos)
        << "Add, Clip, Mul, Div are one post-op: " << plan;
  }
  for (float divisor : {6.0f, 5.0f}) {
    SCOPED_TRACE(divisor);
    GraphBuilder b("hs");
    ValueId x = b.input("x", DType::kF32, Shape{3, 7});
    b.output(paddle_hardswish(b, x, divisor), "out");
    Graph g = *std::move(b).build();
    expect_matches_reference(g, {uniform(rng, {3, 7}, -5.0f, 5.0f)});
    auto be = testing_util::build_onednn(g);
    // Only the exact pattern collapses; Div by 5 runs node by node.
    EXPECT_EQ(be->plan_descriptions().at(0) == "eltwise", divisor == 6.0f)
        << be->plan_descriptions().at(0);
  }
}

}  // namespace
}  // namespace hone::onednn
