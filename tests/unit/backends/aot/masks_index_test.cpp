// Masks, running sums and index arithmetic in aot's code (elements.cpp, the
// typed element-wise entries of eltwise.cpp): the patterns of the zoo's
// Mistral, BLOOM, DeBERTa, GCN and Mixtral exports that fell back to the
// reference. Each graph must run every node compiled and match the
// reference; an index outside its axis fails the run with the index.
#include <limits>

#include "aot_test_util.h"
#include "backends/moe_routing_graph.h"

namespace hone::aot {
namespace {

using testing_util::build_aot;
using testing_util::expect_matches_reference;
using testing_util::uniform;

ValueId mi_scalar(GraphBuilder& b, int64_t v) {
  return b.constant("", Tensor::from<int64_t>({}, {v}));
}
ValueId mi_to_f32(GraphBuilder& b, ValueId v) {
  return b.op("Cast", {v}, {{"to", int64_t{1}}});
}
Tensor mi_i64s(std::vector<int64_t> shape, std::vector<int64_t> v) {
  return Tensor::from<int64_t>(std::move(shape), std::move(v));
}

// Mistral's positions (cumsum of the mask), its padding mask selected by a
// run-time Where (masked_fill, then a Where of i64 branches),
// Equal/Not/And/Or/Xor of run-time masks, an exclusive reversed CumSum of
// floats, over a symbolic sequence.
TEST(AotMasksIndex, MaskArithmeticOfATextModel) {
  std::mt19937 rng(91);
  GraphBuilder b("masks");
  const Shape bs{Dim(1), Dim::symbol("seq")};
  ValueId mask = b.input("mask", DType::kI64, bs);
  ValueId x = b.input("x", DType::kF32, bs);
  ValueId pos = b.sub(b.op("CumSum", {mask, mi_scalar(b, 1)}), mi_scalar(b, 1));
  ValueId pad = b.op("Equal", {mask, mi_scalar(b, 0)});
  ValueId real = b.op("Not", {pad});
  ValueId odd = b.op("Equal", {b.op("CumSum", {mask, mi_scalar(b, -1)}, {{"reverse", int64_t{1}}}),
                               mi_scalar(b, 3)});
  ValueId both = b.op("And", {real, odd});
  ValueId either = b.op("Or", {pad, odd});
  ValueId one = b.op("Xor", {real, odd});
  ValueId less = b.op("Less", {x, b.constant("", Tensor::from<float>({}, {0.25f}))});
  ValueId excl =
      b.op("CumSum", {x, mi_scalar(b, -1)}, {{"exclusive", int64_t{1}}, {"reverse", int64_t{1}}});
  ValueId filled = b.op("Where", {pad, b.constant("", Tensor::from<float>({}, {-1e9f})), x});
  ValueId pos_or_1 = b.op("Where", {real, pos, mi_scalar(b, 1)});  // i64 branches
  ValueId sum = b.add(b.relu(x), mi_to_f32(b, pos_or_1));
  for (ValueId m : {both, either, one, less}) sum = b.add(sum, mi_to_f32(b, m));
  b.output(b.add(sum, excl), "y");
  b.output(filled, "filled");
  b.output(pos, "positions");
  const Graph g = *std::move(b).build();
  std::vector<std::vector<Tensor>> runs;
  for (int64_t s : {1, 6}) {
    std::vector<int64_t> m(static_cast<size_t>(s), 1);
    if (s > 2) m[0] = m[4] = 0;
    runs.push_back({mi_i64s({1, s}, m), uniform(rng, {1, s})});
  }
  expect_matches_reference(g, runs);
}

// DeBERTa's disentangled attention: relative positions clamped (Clip of
// i64) and gathered from the scores (GatherElements along the last and a
// negative axis), negative indices counting from the end.
TEST(AotMasksIndex, ClampedRelativeIndicesGatherScores) {
  std::mt19937 rng(92);
  GraphBuilder b("deberta");
  ValueId scores = b.input("scores", DType::kF32, Shape{Dim::symbol("batch"), 4, 8});
  ValueId rel = b.input("rel", DType::kI64, Shape{Dim::symbol("batch"), 4, 4});
  ValueId idx = b.op("Clip", {b.add(rel, mi_scalar(b, 4)), mi_scalar(b, -2), mi_scalar(b, 7)});
  ValueId c2p = b.op("GatherElements", {b.relu(scores), idx}, {{"axis", int64_t{-1}}});
  ValueId rows = b.op("Clip", {rel, mi_scalar(b, -4)});  // a lower bound only
  ValueId p2c = b.op("GatherElements", {scores, b.op("Clip", {rows, kNoValue, mi_scalar(b, 3)})},
                     {{"axis", int64_t{-2}}});
  b.output(b.add(c2p, p2c), "y");
  const Graph g = *std::move(b).build();
  std::vector<int64_t> r;
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t i = 0; i < 4; ++i)
      for (int64_t j = 0; j < 4; ++j) r.push_back((i - j) * 3 + n);  // clamps at both ends
  expect_matches_reference(g, {{uniform(rng, {2, 4, 8}), mi_i64s({2, 4, 4}, r)}});
}

// A GCN's aggregation and Mixtral's index_add_: updates scattered into their
// targets along axis 0 with every reduction, duplicate targets included (the
// last wins without one), a negative index; an index out of range fails the
// run naming it, and the block runs again afterwards.
TEST(AotMasksIndex, ScatterElementsReducesDuplicateTargetsInOrder) {
  std::mt19937 rng(93);
  for (const char* reduction : {"add", "none", "max", "min", "mul"}) {
    SCOPED_TRACE(reduction);
    GraphBuilder b("gcn", 18);
    ValueId msg = b.input("msg", DType::kF32, Shape{Dim::symbol("edges"), 3});
    ValueId dst = b.input("dst", DType::kI64, Shape{Dim::symbol("edges"), 3});
    ValueId base = b.constant("", uniform(rng, {4, 3}));
    ValueId out = b.op("ScatterElements", {base, dst, b.relu(msg)},
                       {{"axis", int64_t{0}}, {"reduction", std::string(reduction)}});
    b.output(b.sigmoid(out), "y");
    const Graph g = *std::move(b).build();
    const Tensor targets =
        mi_i64s({6, 3}, {2, 0, 2, -1, 2, 0, 2, 0, 2, 0, 1, 1, 2, 2, 2, -4, 0, 3});
    expect_matches_reference(g, {{uniform(rng, {6, 3}), targets}});
    if (std::string(reduction) != "add") continue;
    auto be = build_aot(g);
    ASSERT_TRUE(be);
    auto got = be->infer({uniform(rng, {2, 3}), mi_i64s({2, 3}, {0, 1, 4, 0, 0, 0})});
    ASSERT_FALSE(got);
    EXPECT_EQ(got.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(got.error().message().find("ScatterElements: index 4 (element 2"), std::string::npos)
        << got.error().message();
    auto ok = be->infer({uniform(rng, {1, 3}), mi_i64s({1, 3}, {3, -4, 0})});
    EXPECT_TRUE(ok) << ok.error().to_string();
  }
  // Integers wrap as the reference's do.
  GraphBuilder b("wrap", 18);
  ValueId data = b.input("data", DType::kI64, Shape{2, 2});
  ValueId idx = b.input("idx", DType::kI64, Shape{2, 2});
  b.output(b.op("ScatterElements", {data, idx, data},
                {{"axis", int64_t{1}}, {"reduction", std::string("add")}}),
           "y");
  const Graph g = *std::move(b).build();
  const int64_t big = std::numeric_limits<int64_t>::max();
  expect_matches_reference(g, {{mi_i64s({2, 2}, {big, 1, -3, 5}), mi_i64s({2, 2}, {0, 0, 1, -1})}});
}

// Mixtral's routing (backend_test::moe_routing_graph) over a symbolic number
// of tokens and of positions, at two of each.
TEST(AotMasksIndex, OneHotRoutingAndIntegerSplit) {
  std::mt19937 rng(94);
  const Graph g = backend_test::moe_routing_graph(Dim::symbol("tokens"), Dim::symbol("hits"));
  expect_matches_reference(
      g, {{uniform(rng, {3, 5}), mi_i64s({4, 2}, {0, 1, 1, 0, 2, 2, 3, 1}),
           mi_i64s({4}, {1, -1, 3, 0})},
          {uniform(rng, {1, 5}), mi_i64s({1, 2}, {7, 9}), mi_i64s({4}, {-3, 2, 2, -4})}});
}

}  // namespace
}  // namespace hone::aot
