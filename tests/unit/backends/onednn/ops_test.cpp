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

TEST(OnednnOps, FirstOperandOrBothBroadcast) {
  // oneDNN broadcasts only a binary op's second operand: Sub and Div whose
  // first operand broadcasts, and any op where both do, widen it in the step.
  std::mt19937 rng(4);
  for (const char* op : {"Sub", "Div", "Add", "Mul"}) {
    SCOPED_TRACE(op);
    GraphBuilder b(op);
    ValueId s = b.input("s", DType::kF32, Shape{4});
    ValueId x = b.input("x", DType::kF32, Shape{3, 4});
    ValueId c = b.input("c", DType::kF32, Shape{3, 1});
    ValueId r = b.input("r", DType::kF32, Shape{1, 4});
    ValueId first = b.op(op, {s, x});  // [4] op [3,4]
    ValueId both = b.op(op, {c, r});   // [3,1] op [1,4]
    b.output(b.op(op, {b.scalar_f32("one", 1.5f), b.add(first, both)}), "y");
    expect_matches_reference(*std::move(b).build(),
                             {uniform(rng, {4}, 0.5f, 2.0f), uniform(rng, {3, 4}, 0.5f, 2.0f),
                              uniform(rng, {3, 1}, 0.5f, 2.0f), uniform(rng, {1, 4}, 0.5f, 2.0f)});
  }
}

TEST(OnednnOps, SplitAndPad) {
  std::mt19937 rng(7);
  GraphBuilder b("split_pad");
  ValueId x = b.input("x", DType::kF32, Shape{2, 6, 5});
  ValueId sizes = b.constant("sizes", Tensor::from<int64_t>({3}, {1, 2, 3}));
  const std::vector<ValueId> parts = b.op_n("Split", {x, sizes}, 3, {{"axis", int64_t{1}}});
  ValueId pads = b.constant("pads", Tensor::from<int64_t>({6}, {0, 1, 2, 0, 0, 1}));
  ValueId padded = b.op("Pad", {b.relu(parts[2]), pads, b.scalar_f32("v", 0.5f)});
  b.output(parts[0], "a");
  b.output(b.relu(parts[1]), "b");
  b.output(padded, "c");
  expect_matches_reference(*std::move(b).build(), {uniform(rng, {2, 6, 5})});
}

TEST(OnednnOps, RefusesAReflectPadOfPadsReadAtRunTime) {
  // Reflect pads run as an own step since own_logic.cpp (OnednnOwnLogic.*);
  // pads read at run time still cannot be planned.
  GraphBuilder b("reflect");
  ValueId x = b.input("x", DType::kF32, Shape{1, 2, 4, 4});
  ValueId pads = b.input("pads", DType::kI64, Shape{8});
  b.output(b.op("Pad", {x, pads}, {{"mode", std::string("reflect")}}), "y");
  auto votes = OnednnBackend().propose(*std::move(b).build());
  ASSERT_EQ(votes.size(), 1u);
  EXPECT_FALSE(votes[0].supported);
  EXPECT_NE(votes[0].reason.find("pads, value and axes must be constants"), std::string::npos)
      << votes[0].reason;
}

TEST(OnednnOps, ShapeArithmeticFromAnotherBlockIsPlanned) {
  // Block 1 computes a Reshape target from x's dims; an Erf outside the GELU
  // pattern (no oneDNN lowering) splits the graph; block 2 reads the target
  // as an i64 input and still plans, taking its values as constants.
  std::mt19937 rng(8);
  GraphBuilder b("split_blocks");
  ValueId x = b.input("x", DType::kF32, Shape{2, 3, 4});
  ValueId dims = b.op("Shape", {x});
  ValueId first = b.op("Gather", {dims, b.constant("zero", Tensor::scalar<int64_t>(0))});
  ValueId target =
      b.concat({b.op("Unsqueeze", {first, b.constant("ax", Tensor::from<int64_t>({1}, {0}))}),
                b.constant("rest", Tensor::from<int64_t>({1}, {-1}))},
               0);
  ValueId e = b.op("Erf", {b.relu(x)});
  b.output(b.op("Reshape", {b.relu(e), target}), "y");
  Graph g = *std::move(b).build();
  expect_matches_reference(g, {uniform(rng, {2, 3, 4})}, /*expect_all_nodes=*/false);
}

TEST(OnednnOps, KnownInputValuesKeyThePlan) {
  // Block 1 turns y's dims into a Reshape target; Erf (no oneDNN lowering)
  // splits the graph; block 2 reshapes x by that i64 input. Two runs give
  // block 2 inputs of the same dims but other target values: each run must
  // get a plan of its own values (BlockRuntime::key_of), not the first one's.
  std::mt19937 rng(9);
  GraphBuilder b("known_key");
  ValueId y = b.input("y", DType::kF32, Shape{Dim::symbol("a"), Dim::symbol("b")});
  ValueId x = b.input("x", DType::kF32, Shape{2, 12});
  ValueId target = b.op("Shape", {y});
  ValueId e = b.op("Erf", {b.relu(x)});
  b.output(b.op("Reshape", {b.relu(e), target}), "out");
  Graph g = *std::move(b).build();
  auto be = testing_util::build_onednn(g);
  const Tensor xs = uniform(rng, {2, 12});
  for (const std::vector<int64_t>& dims : {std::vector<int64_t>{4, 6}, {3, 8}, {4, 6}}) {
    const std::vector<Tensor> in{Tensor::zeros(DType::kF32, dims), xs};
    auto got = be->infer(in);
    ASSERT_TRUE(got) << got.error().to_string();
    EXPECT_EQ((*got)[0].shape(), dims);
    EXPECT_TRUE(testing_util::close((*got)[0], (*eval::Interpreter().run_tensors(g, in))[0]));
  }
  EXPECT_EQ(be->fallback_runs(), 0u) << "a block fell back to the reference";
  // Each block has one plan per key: block 1 per y's dims, block 2 per
  // target; the third run reuses both of the first run's.
  EXPECT_EQ(be->plan_descriptions().size(), 4u);
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
