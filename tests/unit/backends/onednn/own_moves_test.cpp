// hone's own steps for OneHot and the Transpose and Split of integer or bool
// values (own_moves.cpp): a Mixtral router's expert mask and the token
// positions its NonZero finds. Each graph must plan every node on onednn,
// match the reference and run no block on the reference; NonZero stays with
// the reference, with the reason.
#include "onednn_test_util.h"

namespace hone::onednn {
namespace {

using testing_util::expect_matches_reference;
using testing_util::uniform;

ValueId om_ints(GraphBuilder& b, std::vector<int64_t> v) {
  const auto n = static_cast<int64_t>(v.size());
  return b.constant("", Tensor::from<int64_t>({n}, std::move(v)));
}
Tensor om_i64s(std::vector<int64_t> shape, std::vector<int64_t> v) {
  return Tensor::from<int64_t>(std::move(shape), std::move(v));
}

// one_hot of TopK's indices ([tokens, 2, experts]), permuted to [experts, 2,
// tokens] and cast to bool; the positions split into i64 columns and
// combined; f32 values on axis 0 with a negative and an out-of-range index.
TEST(OnednnOwnMoves, OneHotRoutingAndIntegerSplit) {
  std::mt19937 rng(95);
  GraphBuilder b("route");
  ValueId logits = b.input("logits", DType::kF32, Shape{3, 5});
  auto top = b.op_n("TopK", {logits, om_ints(b, {2})}, 2, {{"axis", int64_t{-1}}});
  ValueId hot =
      b.op("OneHot", {top[1], b.constant("", Tensor::from<int64_t>({}, {5})), om_ints(b, {0, 1})},
           {{"axis", int64_t{-1}}});
  ValueId perm = b.op("Transpose", {hot}, {{"perm", std::vector<int64_t>{2, 1, 0}}});
  b.output(b.op("Cast", {perm}, {{"to", int64_t{9}}}), "expert_mask");
  b.output(b.op("Transpose", {b.op("Cast", {perm}, {{"to", int64_t{9}}})},
                {{"perm", std::vector<int64_t>{1, 0, 2}}}),
           "bool_transposed");
  ValueId pairs = b.input("pairs", DType::kI64, Shape{4, 2});
  auto cols = b.op_n("Split", {pairs, om_ints(b, {1, 1})}, 2, {{"axis", int64_t{1}}});
  b.output(b.add(cols[0], b.mul(cols[1], b.constant("", Tensor::from<int64_t>({}, {10})))), "flat");
  ValueId ids = b.input("ids", DType::kI64, Shape{4});
  b.output(b.op("OneHot",
                {ids, b.constant("", Tensor::from<int64_t>({}, {3})),
                 b.constant("", Tensor::from<float>({2}, {-0.5f, 2.0f}))},
                {{"axis", int64_t{0}}}),
           "scaled");
  const Graph g = *std::move(b).build();
  expect_matches_reference(g, {uniform(rng, {3, 5}), om_i64s({4, 2}, {0, 1, 1, 0, 2, 2, 3, 1}),
                               om_i64s({4}, {1, -1, 3, 0})});
}

TEST(OnednnOwnMoves, NonZeroStaysWithTheReferenceWithItsReason) {
  GraphBuilder b("nonzero");
  ValueId x = b.input("x", DType::kBool, Shape{4});
  b.output(b.op("NonZero", {x}), "y");
  const Graph g = *std::move(b).build();
  const NodeSupport s = supports_node(g, g.nodes()[0]);
  EXPECT_FALSE(s.supported);
  EXPECT_NE(s.reason.find("count of non-zero inputs, known only when it has run"),
            std::string::npos)
      << s.reason;
}

}  // namespace
}  // namespace hone::onednn
