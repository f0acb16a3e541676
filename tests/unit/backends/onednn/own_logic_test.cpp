// hone's own steps for masks and index arithmetic (own_logic.cpp): the
// patterns of the zoo's Mistral, BLOOM, DeBERTa, GCN and style-transfer
// exports that fell back to the reference. Each graph must plan every node on
// onednn, match the reference and run no block on the reference.
#include <limits>

#include "backends/onednn/plan.h"
#include "onednn_test_util.h"

namespace hone::onednn {
namespace {

using backend_test::ints;
using testing_util::build_onednn;
using testing_util::expect_matches_reference;
using testing_util::uniform;

ValueId scalar(GraphBuilder& b, int64_t v) {
  return b.constant("", Tensor::from<int64_t>({}, {v}));
}
ValueId to_f32(GraphBuilder& b, ValueId v) {
  return b.op("Cast", {v}, {{"to", int64_t{1}}});
}

Tensor mask_of(std::vector<int64_t> v) {
  const auto n = static_cast<int64_t>(v.size());
  return Tensor::from<int64_t>({1, n}, std::move(v));
}

// Mistral's positions (cumsum of the mask, padding at 1) and its
// sliding-window mask: Equal, Not, And of a run-time mask with a constant
// one, Or, Xor, and the f32 comparisons, each made f32 and summed into x.
TEST(OnednnOwnLogic, MaskArithmeticOfATextModel) {
  std::mt19937 rng(81);
  GraphBuilder b("masks");
  ValueId mask = b.input("mask", DType::kI64, Shape{Dim(1), Dim::symbol("seq")});
  ValueId x = b.input("x", DType::kF32, Shape{Dim(1), Dim::symbol("seq")});
  ValueId pos = b.sub(b.op("CumSum", {mask, scalar(b, 1)}), scalar(b, 1));
  ValueId pad = b.op("Equal", {mask, scalar(b, 0)});
  ValueId real = b.op("Not", {pad});
  ValueId odd = b.op(
      "Equal", {b.op("CumSum", {mask, scalar(b, -1)}, {{"reverse", int64_t{1}}}), scalar(b, 3)});
  ValueId both = b.op("And", {real, odd});
  ValueId either = b.op("Or", {pad, odd});
  ValueId one = b.op("Xor", {real, odd});
  ValueId less = b.op("Less", {x, b.constant("", Tensor::from<float>({}, {0.25f}))});
  ValueId ge = b.op("GreaterOrEqual", {x, b.relu(x)});
  ValueId excl = b.op("CumSum", {x, scalar(b, 1)}, {{"exclusive", int64_t{1}}});
  ValueId sum = b.add(b.relu(x), to_f32(b, pos));
  for (ValueId m : {both, either, one, less, ge}) sum = b.add(sum, to_f32(b, m));
  b.output(b.add(sum, excl), "y");
  const Graph g = *std::move(b).build();
  for (int64_t s : {1, 6}) {
    std::vector<int64_t> m(static_cast<size_t>(s), 1);
    if (s > 2) m[4] = m[5] = 0;
    expect_matches_reference(g, {mask_of(m), uniform(rng, {1, s})});
  }
}

// DeBERTa's disentangled attention: relative positions clamped (Clip of
// i64), expanded over the heads (Expand of i64) and gathered from the scores
// (GatherElements along the last axis), negative indices counting from the end.
TEST(OnednnOwnLogic, ClampedRelativeIndicesGatherScores) {
  std::mt19937 rng(82);
  GraphBuilder b("deberta");
  ValueId scores = b.input("scores", DType::kF32, Shape{2, 4, 8});
  ValueId rel = b.input("rel", DType::kI64, Shape{1, 4, 4});
  ValueId idx = b.op("Clip", {b.add(rel, scalar(b, 4)), scalar(b, -2), scalar(b, 7)});
  ValueId wide = b.op("Expand", {idx, ints(b, {2, 4, 4})});
  ValueId c2p = b.op("GatherElements", {b.relu(scores), wide}, {{"axis", int64_t{-1}}});
  ValueId rows = b.op("Clip", {rel, scalar(b, -4), scalar(b, 3)});
  ValueId p2c = b.op("GatherElements", {scores, b.op("Expand", {rows, ints(b, {2, 1, 4})})},
                     {{"axis", int64_t{1}}});
  b.output(b.add(c2p, p2c), "y");
  const Graph g = *std::move(b).build();
  std::vector<int64_t> r;
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 4; ++j) r.push_back((i - j) * 3);  // clamps at both ends
  expect_matches_reference(g, {uniform(rng, {2, 4, 8}), Tensor::from<int64_t>({1, 4, 4}, r)});
}

// A GCN's aggregation: messages summed into their target nodes by
// ScatterElements with reduction add, duplicate targets included; none, max
// and min, and an index out of range named as the caller's error.
TEST(OnednnOwnLogic, ScatterElementsSumsDuplicateTargets) {
  std::mt19937 rng(83);
  for (const char* reduction : {"add", "none", "max", "min", "mul"}) {
    SCOPED_TRACE(reduction);
    GraphBuilder b("gcn");
    ValueId msg = b.input("msg", DType::kF32, Shape{6, 3});
    ValueId dst = b.input("dst", DType::kI64, Shape{6, 1});
    ValueId idx = b.op("Expand", {dst, ints(b, {6, 3})});
    ValueId zeros = b.constant("", uniform(rng, {4, 3}));
    ValueId out = b.op("ScatterElements", {zeros, idx, b.relu(msg)},
                       {{"axis", int64_t{0}}, {"reduction", std::string(reduction)}});
    b.output(b.sigmoid(out), "y");
    const Graph g = *std::move(b).build();
    // With duplicates, 'none' leaves the last update, as the reference does.
    const Tensor targets = Tensor::from<int64_t>({6, 1}, {2, 0, 2, -1, 2, 0});
    expect_matches_reference(g, {uniform(rng, {6, 3}), targets});
    if (std::string(reduction) == "add") {
      auto be = build_onednn(g);
      auto got =
          be->infer({uniform(rng, {6, 3}), Tensor::from<int64_t>({6, 1}, {0, 1, 4, 0, 0, 0})});
      ASSERT_FALSE(got);
      EXPECT_EQ(got.error().code(), ErrorCode::kInvalidArgument);
      EXPECT_NE(got.error().to_string().find("index 4 is out of range"), std::string::npos)
          << got.error().to_string();
    }
  }
}

// Expand of integers and bools row by row: a column repeated along the last
// axis (i32, i64, bool), whole rows copied (a middle axis broadcast), and a
// scalar; each made f32 and summed with x.
TEST(OnednnOwnLogic, ExpandOfIntegersAndBoolsByRows) {
  std::mt19937 rng(85);
  GraphBuilder b("expands");
  ValueId x = b.input("x", DType::kF32, Shape{2, 3, 5});
  ValueId col = b.input("col", DType::kI32, Shape{3, 1});
  ValueId row = b.input("row", DType::kI64, Shape{2, 1, 5});
  ValueId flag = b.op("Greater", {b.input("f", DType::kF32, Shape{1, 3, 1}),
                                  b.constant("", Tensor::from<float>({}, {0.0f}))});
  ValueId sum = b.relu(x);
  for (ValueId v : {col, row, flag, scalar(b, 7)})
    sum = b.add(sum, to_f32(b, b.op("Expand", {v, ints(b, {2, 3, 5})})));
  b.output(sum, "y");
  const Graph g = *std::move(b).build();
  expect_matches_reference(g, {uniform(rng, {2, 3, 5}), Tensor::from<int32_t>({3, 1}, {4, -2, 9}),
                               Tensor::from<int64_t>({2, 1, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10}),
                               uniform(rng, {1, 3, 1})});
}

// Style transfer's ReflectionPad2d, and the edge and wrap modes, around
// convolutions; a reflect pad with a crop on another axis.
TEST(OnednnOwnLogic, ReflectEdgeAndWrapPads) {
  std::mt19937 rng(84);
  for (const char* mode : {"reflect", "edge", "wrap"}) {
    SCOPED_TRACE(mode);
    GraphBuilder b("pads", 19);
    ValueId x = b.input("x", DType::kF32, Shape{1, 4, 6, 7});
    ValueId p = b.op("Pad", {x, ints(b, {0, 0, 2, 3, 0, 0, 1, -1})}, {{"mode", std::string(mode)}});
    ValueId c = b.conv(p, b.constant("", uniform(rng, {4, 4, 3, 3})),
                       b.constant("", uniform(rng, {4})), {});
    b.output(b.relu(c), "y");
    const Graph g = *std::move(b).build();
    expect_matches_reference(g, {uniform(rng, {1, 4, 6, 7})});
  }
}

}  // namespace
}  // namespace hone::onednn
