// The MoE-shaped graph that aot's masks_index_test and onednn's
// own_moves_test both run: a Mixtral router's expert mask and the integer
// moves around it, each of which fell back to the reference once.
//
//   const Graph g = backend_test::moe_routing_graph(Dim::symbol("tokens"), Dim(4));
//   // inputs: logits [tokens, 5] f32, pairs [hits, 2] i64, ids [4] i64
#pragma once

#include <utility>
#include <vector>

#include "backends/backend_test_util.h"
#include "hone/graph_builder.h"

namespace hone::backend_test {

/// Mixtral's routing: one_hot of TopK's i64 indices ([tokens, 2, 5]),
/// permuted to [experts, 2, tokens] and cast to bool ("expert_mask"; also
/// transposed again as bool, "bool_transposed"); the positions ([hits, 2])
/// split into two i64 columns, combined as col0 + 10 * col1 ("flat") and the
/// second alone ("second"); a OneHot of f32 values on axis 0 over 4 ids,
/// where a negative index counts from the end and one out of range leaves
/// its column off ("scaled"). `tokens`, `hits`: numbers or symbols.
inline Graph moe_routing_graph(Dim tokens, Dim hits) {
  auto scalar = [](GraphBuilder& b, int64_t v) {
    return b.constant("", Tensor::from<int64_t>({}, {v}));
  };
  GraphBuilder b("route");
  ValueId logits = b.input("logits", DType::kF32, Shape{tokens, 5});
  auto top = b.op_n("TopK", {logits, ints(b, {2})}, 2, {{"axis", int64_t{-1}}});
  ValueId hot = b.op("OneHot", {top[1], scalar(b, 5), ints(b, {0, 1})}, {{"axis", int64_t{-1}}});
  ValueId perm = b.op("Transpose", {hot}, {{"perm", std::vector<int64_t>{2, 1, 0}}});
  ValueId mask = b.op("Cast", {perm}, {{"to", int64_t{9}}});
  b.output(mask, "expert_mask");
  b.output(b.op("Transpose", {mask}, {{"perm", std::vector<int64_t>{1, 0, 2}}}), "bool_transposed");
  ValueId pairs = b.input("pairs", DType::kI64, Shape{hits, 2});
  auto cols = b.op_n("Split", {pairs, ints(b, {1, 1})}, 2, {{"axis", int64_t{1}}});
  b.output(b.add(cols[0], b.mul(cols[1], scalar(b, 10))), "flat");
  b.output(cols[1], "second");
  ValueId ids = b.input("ids", DType::kI64, Shape{4});
  b.output(
      b.op("OneHot", {ids, scalar(b, 3), b.constant("", Tensor::from<float>({2}, {-0.5f, 2.0f}))},
           {{"axis", int64_t{0}}}),
      "scaled");
  return *std::move(b).build();
}

}  // namespace hone::backend_test
