// Each op family on oneDNN against the reference interpreter, seeded random inputs.
#include "onednn_test_util.h"

namespace hone::onednn {
namespace {

using testing_util::expect_matches_reference;
using testing_util::uniform;

Graph one_op(const std::string& op, const std::vector<int64_t>& shape,
             std::map<std::string, Attribute> attrs = {}) {
  GraphBuilder b(op);
  ValueId x = b.input("x", DType::kF32, Shape::of(shape));
  b.output(b.op(op, {x}, std::move(attrs)), "y");
  return *std::move(b).build();
}

TEST(OnednnOps, Activations) {
  std::mt19937 rng(1);
  const std::vector<std::pair<std::string, std::map<std::string, Attribute>>> cases = {
      {"Relu", {}},
      {"LeakyRelu", {{"alpha", 0.2f}}},
      {"Sigmoid", {}},
      {"Tanh", {}},
      {"Elu", {{"alpha", 0.7f}}},
      {"HardSwish", {}},
      {"HardSigmoid", {{"alpha", 0.3f}, {"beta", 0.4f}}},
      {"Clip", {{"min", -0.5f}, {"max", 0.25f}}},
  };
  for (const auto& [op, attrs] : cases) {
    SCOPED_TRACE(op);
    Graph g = one_op(op, {2, 3, 5}, attrs);
    g.opsets()[""] = op == "Clip" ? 6 : 17;  // Clip with attributes is opset 6
    expect_matches_reference(g, {uniform(rng, {2, 3, 5}, -4.0f, 4.0f)});
  }
}

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

TEST(OnednnOps, BinaryWithBroadcasting) {
  std::mt19937 rng(3);
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
    SCOPED_TRACE(op);
    GraphBuilder b(op);
    ValueId x = b.input("x", DType::kF32, Shape{2, 3, 4});
    ValueId y = b.input("y", DType::kF32, Shape{3, 1});
    ValueId z = b.input("z", DType::kF32, Shape{2, 3, 4});
    ValueId k = b.constant("k", uniform(rng, {4}, 0.5f, 1.5f));
    ValueId t = b.op(op, {b.op(op, {x, y}), k});
    b.output(b.op(op, {t, z}), "out");
    Graph g = *std::move(b).build();
    expect_matches_reference(g, {uniform(rng, {2, 3, 4}), uniform(rng, {3, 1}, 0.5f, 2.0f),
                                 uniform(rng, {2, 3, 4}, 0.5f, 2.0f)});
  }
  // Commutative ops may broadcast their first operand: oneDNN sees them swapped.
  GraphBuilder b("swap");
  ValueId s = b.input("s", DType::kF32, Shape{4});
  ValueId x = b.input("x", DType::kF32, Shape{3, 4});
  b.output(b.add(s, x), "y");
  expect_matches_reference(*std::move(b).build(), {uniform(rng, {4}), uniform(rng, {3, 4})});
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

TEST(OnednnOps, RefusesReflectPad) {
  GraphBuilder b("reflect");
  ValueId x = b.input("x", DType::kF32, Shape{1, 2, 4, 4});
  ValueId pads = b.constant("pads", Tensor::from<int64_t>({8}, {0, 0, 1, 1, 0, 0, 1, 1}));
  b.output(b.op("Pad", {x, pads}, {{"mode", std::string("reflect")}}), "y");
  auto votes = OnednnBackend().propose(*std::move(b).build());
  ASSERT_EQ(votes.size(), 1u);
  EXPECT_FALSE(votes[0].supported);
  EXPECT_NE(votes[0].reason.find("reflect"), std::string::npos) << votes[0].reason;
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

TEST(OnednnOps, ConvVariants) {
  std::mt19937 rng(5);
  struct Case {
    std::string name;
    int64_t c_in, c_out, group, k;
    std::map<std::string, Attribute> attrs;
    bool bias;
  };
  const std::vector<Case> cases = {
      {"plain", 3, 4, 1, 3, {}, true},
      {"strided_padded",
       4,
       6,
       1,
       3,
       {{"strides", std::vector<int64_t>{2, 2}}, {"pads", std::vector<int64_t>{1, 0, 1, 2}}},
       true},
      {"dilated", 2, 3, 1, 3, {{"dilations", std::vector<int64_t>{2, 1}}}, false},
      {"groups",
       4,
       6,
       2,
       3,
       {{"group", int64_t{2}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}},
       true},
      {"depthwise",
       4,
       4,
       4,
       3,
       {{"group", int64_t{4}}, {"auto_pad", std::string("SAME_UPPER")}},
       true},
      {"same_lower_strided",
       3,
       2,
       1,
       2,
       {{"auto_pad", std::string("SAME_LOWER")}, {"strides", std::vector<int64_t>{2, 2}}},
       false},
      {"valid", 3, 2, 1, 3, {{"auto_pad", std::string("VALID")}}, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    GraphBuilder b(c.name);
    ValueId x = b.input("x", DType::kF32, Shape{2, c.c_in, 7, 8});
    std::vector<ValueId> ins{x,
                             b.constant("w", uniform(rng, {c.c_out, c.c_in / c.group, c.k, c.k}))};
    if (c.bias) ins.push_back(b.constant("b", uniform(rng, {c.c_out})));
    b.output(b.op("Conv", ins, c.attrs), "y");
    expect_matches_reference(*std::move(b).build(), {uniform(rng, {2, c.c_in, 7, 8})});
  }
  // Weights and bias as graph inputs (as ONNX node tests have them): reordered per run.
  GraphBuilder b("runtime_weights");
  ValueId x = b.input("x", DType::kF32, Shape{1, 4, 5, 5});
  ValueId w = b.input("w", DType::kF32, Shape{6, 2, 3, 3});
  ValueId bias = b.input("b", DType::kF32, Shape{6});
  b.output(b.relu(b.conv(x, w, bias, {.pads = {1, 1, 1, 1}, .group = 2})), "y");
  expect_matches_reference(*std::move(b).build(), {uniform(rng, {1, 4, 5, 5}),
                                                   uniform(rng, {6, 2, 3, 3}), uniform(rng, {6})});
}

TEST(OnednnOps, GemmAndMatMul) {
  std::mt19937 rng(6);
  {
    GraphBuilder b("gemm");
    ValueId a = b.input("a", DType::kF32, Shape{4, 5});
    ValueId w = b.constant("w", uniform(rng, {3, 4}));
    ValueId c = b.constant("c", uniform(rng, {3}));
    ValueId y = b.gemm(a, w, c, {.trans_a = true, .trans_b = true, .alpha = 0.5f, .beta = 2.0f});
    ValueId d = b.input("d", DType::kF32, Shape{3, 5});  // non-constant B
    b.output(b.gemm(y, d, kNoValue), "out");
    expect_matches_reference(*std::move(b).build(), {uniform(rng, {4, 5}), uniform(rng, {3, 5})});
  }
  {
    GraphBuilder b("matmul");
    ValueId a = b.input("a", DType::kF32, Shape{2, 3, 4, 5});
    ValueId w = b.constant("w", uniform(rng, {5, 6}));
    ValueId k = b.input("k", DType::kF32, Shape{3, 6, 2});  // batched, broadcast over the first dim
    ValueId v = b.input("v", DType::kF32, Shape{2});        // 1-D second operand
    b.output(b.matmul(b.matmul(b.matmul(a, w), k), v), "out");
    expect_matches_reference(*std::move(b).build(), {uniform(rng, {2, 3, 4, 5}),
                                                     uniform(rng, {3, 6, 2}), uniform(rng, {2})});
  }
}

TEST(OnednnOps, Pooling) {
  std::mt19937 rng(7);
  const std::vector<std::pair<std::string, std::map<std::string, Attribute>>> cases = {
      {"MaxPool",
       {{"kernel_shape", std::vector<int64_t>{3, 3}},
        {"strides", std::vector<int64_t>{2, 2}},
        {"pads", std::vector<int64_t>{1, 1, 1, 1}}}},
      {"MaxPool",
       {{"kernel_shape", std::vector<int64_t>{2, 2}},
        {"ceil_mode", int64_t{1}},
        {"strides", std::vector<int64_t>{2, 2}}}},
      {"MaxPool",
       {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"dilations", std::vector<int64_t>{2, 2}}}},
      {"AveragePool",
       {{"kernel_shape", std::vector<int64_t>{3, 3}}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}}},
      {"AveragePool",
       {{"kernel_shape", std::vector<int64_t>{3, 3}},
        {"pads", std::vector<int64_t>{1, 1, 1, 1}},
        {"count_include_pad", int64_t{1}}}},
      {"AveragePool",
       {{"kernel_shape", std::vector<int64_t>{2, 2}},
        {"auto_pad", std::string("SAME_UPPER")},
        {"strides", std::vector<int64_t>{2, 2}}}},
      {"GlobalAveragePool", {}},
      {"GlobalMaxPool", {}},
  };
  for (const auto& [op, attrs] : cases) {
    SCOPED_TRACE(op);
    expect_matches_reference(one_op(op, {2, 3, 7, 6}, attrs), {uniform(rng, {2, 3, 7, 6})});
  }
}

TEST(OnednnOps, SoftmaxFamily) {
  std::mt19937 rng(8);
  for (const char* op : {"Softmax", "LogSoftmax"})
    for (int64_t axis : {-1, 1, 0}) {
      SCOPED_TRACE(std::string(op) + " axis " + std::to_string(axis));
      expect_matches_reference(one_op(op, {2, 3, 4}, {{"axis", axis}}),
                               {uniform(rng, {2, 3, 4}, -3.0f, 3.0f)});
      Graph legacy = one_op(op, {2, 3, 4}, {{"axis", axis}});
      legacy.opsets()[""] = 11;  // softmax over the flattened [:axis] x [axis:] view
      expect_matches_reference(legacy, {uniform(rng, {2, 3, 4}, -3.0f, 3.0f)});
    }
}

TEST(OnednnOps, Normalizations) {
  std::mt19937 rng(9);
  {
    GraphBuilder b("bn");
    ValueId x = b.input("x", DType::kF32, Shape{2, 3, 4, 5});
    ValueId y =
        b.op("BatchNormalization",
             {x, b.constant("s", uniform(rng, {3})), b.constant("b", uniform(rng, {3})),
              b.constant("m", uniform(rng, {3})), b.constant("v", uniform(rng, {3}, 0.5f, 2.0f))},
             {{"epsilon", 1e-3f}});
    b.output(y, "y");
    expect_matches_reference(*std::move(b).build(), {uniform(rng, {2, 3, 4, 5})});
  }
  for (int64_t axis : {-1, 1}) {
    GraphBuilder b("ln");
    ValueId x = b.input("x", DType::kF32, Shape{2, 3, 4});
    const std::vector<int64_t> norm =
        axis == -1 ? std::vector<int64_t>{4} : std::vector<int64_t>{3, 4};
    b.output(b.layer_norm(x, b.constant("s", uniform(rng, norm)),
                          b.constant("b", uniform(rng, norm)), axis),
             "y");
    expect_matches_reference(*std::move(b).build(), {uniform(rng, {2, 3, 4}, -2.0f, 2.0f)});
  }
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
